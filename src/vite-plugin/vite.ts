/**
 * @module
 * `hearth-llm/vite`: Hearth's files in a Vite site without `npx hearth init`. In `vite dev` the
 * plugin serves `{base}hearth-sw.js` and `{base}hearth/…` straight from the installed package's
 * `files/` folder; at `vite build` it writes them into the output at the base. The files are
 * always the installed package's own, so the bundled entry's build check (`lib/index.js` against
 * `hearth/hearth.js`) passes by construction, and nothing is copied into `public/` to commit.
 *
 * Beside vite-plugin-pwa the site's worker must import Hearth's (`importScripts`) and leave
 * Hearth's files out of its precache. The second is this plugin's doing: it writes the files
 * after vite-plugin-pwa has globbed the output. The first is one line of the site's:
 * vite-plugin-pwa keeps its resolved options to itself (its plugin API has no way to add to
 * `workbox.importScripts`), so this plugin checks the worker that vite-plugin-pwa wrote and says
 * exactly what to add, and at `vite dev` start says what to set when it cannot see
 * vite-plugin-pwa's dev worker switched on.
 *
 * This file runs in Node from the installed package as it is built (lib/vite.js): it imports
 * only Node's modules, and Vite's types (erased), so a site without Vite installs nothing more.
 */
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin, ResolvedConfig } from 'vite';

/** Options of {@link hearth}. */
export interface HearthViteOptions {
  /**
   * Whether to serve and write llama.cpp's compatibility build (`hearth/wllama-compat/`, 19 MB),
   * which only browsers without JSPI or 64-bit WebAssembly memory need (Safari, Firefox before
   * 153). Default `true`; `false` is `npx hearth init --no-compat`.
   */
  compat?: boolean;
}

/**
 * @internal Where the files come from; tests point it at a folder of their own.
 */
export interface HearthViteInternals {
  filesDir?: string;
}

/** The service worker's file name, at the base. */
const SW_FILE = 'hearth-sw.js';
/** Hearth's own folder, at the base. */
const HEARTH_DIR = 'hearth';
/** llama.cpp's compatibility build, under `hearth/`: what `compat: false` leaves out. */
const COMPAT_DIR = 'wllama-compat';
/** The package's `files/`: this module is `<package>/lib/vite.js`. */
const PACKAGE_FILES = fileURLToPath(new URL('../files/', import.meta.url));

/** What vite-plugin-pwa's options need for Hearth, as the site writes them (generateSW). */
const PWA_LINES = `VitePWA({
  workbox: {
    importScripts: ['hearth-sw.js'], // first: Hearth answers {base}v1/ and {base}hearth/, and nothing else
  },
})`;

/** What vite-plugin-pwa needs in `vite dev` for a worker that imports Hearth's. */
const PWA_DEV_LINE = `VitePWA({ devOptions: { enabled: true } })`;

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  // WebAssembly.instantiateStreaming refuses any other type.
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** The part of vite-plugin-pwa's plugin API (`VitePluginPWAAPI`) this plugin reads. */
interface PwaApi {
  disabled?: boolean;
  registerSWData?: () => unknown;
  webManifestData?: () => unknown;
}

/**
 * Hearth's files in a Vite site: served by `vite dev`, written by `vite build`, at Vite's `base`.
 *
 * ```js
 * // vite.config.js
 * import { hearth } from 'hearth-llm/vite';
 * export default defineConfig({ base: '/repo/', plugins: [hearth()] });
 * ```
 */
export function hearth(options: HearthViteOptions = {}): Plugin {
  return createHearthPlugin(options, {});
}

/**
 * {@link hearth}, with where its files come from.
 * @internal
 */
export function createHearthPlugin(
  { compat = true }: HearthViteOptions,
  { filesDir = PACKAGE_FILES }: HearthViteInternals,
): Plugin {
  let config: ResolvedConfig | undefined;
  let pwa: PwaApi | undefined;

  return {
    name: 'hearth-llm',

    async configResolved(resolved) {
      config = resolved;
      pwa = findPwa(resolved.plugins);
      // A site that moves from `init` to the plugin keeps the copied files until it deletes them:
      // they would be served and deployed beside (and under) the plugin's, and postinstall would
      // keep copying them.
      if (resolved.publicDir && (await exists(join(resolved.publicDir, HEARTH_DIR)))) {
        resolved.logger.warn(
          `hearth-llm: ${join(resolved.publicDir, HEARTH_DIR)} is there, from \`npx hearth init\`; ` +
            'the Vite plugin serves and writes Hearth’s files itself. Delete hearth/ and hearth-sw.js ' +
            'from your public folder, and the "hearth-llm" field from package.json (postinstall ' +
            'copies them again while it is there).',
        );
      }
    },

    configureServer(server) {
      const base = pathBase(server.config.base);
      const headers = server.config.server.headers ?? {};
      // Before Vite's own middlewares: its transform would otherwise take `hearth/*.js` for
      // modules of the site, and its HTML fallback answer a missing file with index.html.
      server.middlewares.use((req, res, next) => {
        if (req.method !== 'GET' && req.method !== 'HEAD') return next();
        const path = hearthPath(req.url ?? '/', base, compat);
        if (path === undefined) return next();
        const file = path === null ? null : join(filesDir, ...path.split('/'));
        void serveFile(file, req.method === 'HEAD').then(
          ({ status, type, size, body }) => {
            res.statusCode = status;
            for (const [name, value] of Object.entries(headers)) {
              if (value !== undefined) res.setHeader(name, value);
            }
            res.setHeader('Content-Type', type);
            // Revalidated on every load: after an upgrade (and the restart that bundles the new
            // entry), the browser never pairs a cached file of the old build with the new ones.
            res.setHeader('Cache-Control', 'no-cache');
            res.setHeader('Content-Length', size);
            if (typeof body === 'string') res.end(body);
            else if (body) body.pipe(res);
            else res.end();
          },
          (error: unknown) => next(error),
        );
      });
      return () => {
        // After every plugin's configureServer: vite-plugin-pwa knows it runs in dev by now.
        if (!pwa || pwa.disabled) return;
        // Either answer is there only when its dev worker is on; without a manifest and with
        // `injectRegister: false` neither is, on or off, and the hint below says so.
        const devWorkerOn =
          pwa.registerSWData?.() !== undefined || pwa.webManifestData?.() !== undefined;
        if (devWorkerOn) return;
        server.config.logger.warn(
          'hearth-llm: vite-plugin-pwa is in this config, and in `vite dev` Hearth answers ' +
            'through its worker, which vite-plugin-pwa makes in dev only when asked. Set ' +
            `${PWA_DEV_LINE} — also suppressWarnings: true with navigateFallback: null (else its ` +
            "dev worker precaches nothing, which Workbox refuses), and type: 'classic' with " +
            'injectManifest (importScripts needs a classic worker) — or pages wait for a worker ' +
            'that never comes. (vite-plugin-pwa shows other plugins whether it is set only ' +
            'through a manifest or injectRegister; with neither, Hearth cannot tell: if it is ' +
            'set, all is well.)',
        );
      };
    },

    closeBundle: {
      // Written when the bundle is closed, after vite-plugin-pwa's closeBundle has globbed the
      // output for its precache: Hearth's files are never precached (Hearth caches them itself as
      // they are used, and vite-plugin-pwa fails a build over its 2 MiB limit on hearth/lib.js),
      // with no globIgnores for the site to write.
      order: 'post',
      sequential: true,
      async handler(error?: Error) {
        // A failed build writes nothing more, and has no worker to check.
        if (error || !config || !isClientBuild(this, config) || config.build.write === false) {
          return;
        }
        const outDir = resolve(config.root, config.build.outDir);
        await copyFiles(filesDir, outDir, compat);
        if (!pwa || pwa.disabled) return;
        for (const problem of await checkSiteWorkers(outDir)) config.logger.warn(problem);
      },
    },
  };
}

/**
 * Copies `hearth-sw.js` and `hearth/` from `filesDir` into `outDir` (without the compatibility
 * build unless `compat`), the worker last, as `hearth init` does.
 */
async function copyFiles(filesDir: string, outDir: string, compat: boolean): Promise<void> {
  const from = join(filesDir, HEARTH_DIR);
  const to = join(outDir, HEARTH_DIR);
  for (const path of await listFiles(from, compat)) {
    const target = join(to, ...path.split('/'));
    await mkdir(dirname(target), { recursive: true });
    await copyFile(join(from, ...path.split('/')), target);
  }
  await copyFile(join(filesDir, SW_FILE), join(outDir, SW_FILE));
}

/**
 * Vite's base as a path (`/`, `/repo/`): a relative base is `/` in dev, and a URL base's path is
 * where its files are asked for.
 */
function pathBase(base: string): string {
  const path = new URL(base, 'http://localhost/').pathname;
  return path.endsWith('/') ? path : `${path}/`;
}

/**
 * @internal
 * The file of `files/` that `url` asks for, as a path with `/`: `hearth-sw.js` or
 * `hearth/<path>`; `null` for a path of Hearth's that names no file it may serve (404);
 * `undefined` for a URL that is not Hearth's (the rest of the site's).
 */
export function hearthPath(url: string, base: string, compat: boolean): string | null | undefined {
  let path: string;
  try {
    path = decodeURIComponent(new URL(url, 'http://localhost/').pathname);
  } catch {
    return undefined;
  }
  if (!path.startsWith(base)) return undefined;
  const rest = path.slice(base.length);
  if (rest === SW_FILE) return SW_FILE;
  if (!rest.startsWith(`${HEARTH_DIR}/`)) return undefined;
  const parts = rest.slice(HEARTH_DIR.length + 1).split('/');
  // Only plain names: nothing outside `hearth/`, no hidden files, no Windows separators.
  if (parts.some((part) => part === '' || part.startsWith('.') || part.includes('\\'))) return null;
  if (!compat && parts[0] === COMPAT_DIR) return null;
  return `${HEARTH_DIR}/${parts.join('/')}`;
}

interface Served {
  status: number;
  type: string;
  size: number;
  body: string | NodeJS.ReadableStream | null;
}

/** The response for `file` (`null`: none), its body streamed. */
async function serveFile(file: string | null, head: boolean): Promise<Served> {
  const stats = file === null ? undefined : await stat(file).catch(missing);
  if (file === null || !stats?.isFile()) {
    const text = 'Not found: the installed hearth-llm has no such file.\n';
    return {
      status: 404,
      type: 'text/plain; charset=utf-8',
      size: Buffer.byteLength(text),
      body: head ? null : text,
    };
  }
  const type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
  return { status: 200, type, size: stats.size, body: head ? null : createReadStream(file) };
}

/**
 * @internal
 * The files under `dir`, as paths with `/`, sorted; without the compatibility build unless
 * `compat`.
 */
export async function listFiles(dir: string, compat: boolean, prefix = ''): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(join(dir, ...prefix.split('/').filter(Boolean)), {
      withFileTypes: true,
    });
  } catch (error) {
    if (prefix === '' && isMissing(error)) {
      throw new Error(
        `hearth-llm: this copy of the package has no ${dir}; reinstall it (npm i hearth-llm).`,
        { cause: error },
      );
    }
    throw error;
  }
  const files: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = `${prefix}${entry.name}`;
    if (!compat && path === COMPAT_DIR) continue;
    // A package may hold links where npm kept them; what counts is what they point at.
    const isDir =
      entry.isDirectory() ||
      (entry.isSymbolicLink() && (await stat(join(dir, path)).catch(missing))?.isDirectory());
    if (isDir) files.push(...(await listFiles(dir, compat, `${path}/`)));
    else files.push(path);
  }
  return files;
}

/**
 * @internal
 * What is wrong with the service workers a build's vite-plugin-pwa wrote at the top of `outDir`
 * (the JavaScript files there that call `importScripts` or hold a precache manifest): one
 * message each, naming the lines to add.
 */
export async function checkSiteWorkers(outDir: string): Promise<string[]> {
  const names = (await readdir(outDir).catch(missing)) ?? [];
  const problems: string[] = [];
  for (const name of names.filter((n) => n.endsWith('.js') && n !== SW_FILE).sort()) {
    const source = await readFile(join(outDir, name), 'utf8').catch(() => '');
    const precaches = PRECACHE_ENTRY.test(source);
    if (!precaches && !source.includes('importScripts')) continue;
    if (!IMPORTS_HEARTH.test(source)) {
      problems.push(
        `hearth-llm: the service worker ${name} does not import hearth-sw.js, so Hearth does ` +
          `not answer on the pages it controls. With vite-plugin-pwa's generateSW:\n${PWA_LINES}\n` +
          "With injectManifest, call importScripts('hearth-sw.js') at the top of your worker.",
      );
    }
    if (HEARTH_PRECACHED.test(source)) {
      problems.push(
        `hearth-llm: the service worker ${name} precaches Hearth's files (hearth/…), which ` +
          'Hearth caches itself as they are used: every visitor would download them twice, and ' +
          "the engines' code before it is needed. The plugin's own copies are written after the " +
          'worker is made, so these come from elsewhere — most likely hearth/ and hearth-sw.js ' +
          'left in your public folder by `npx hearth init`: delete them.',
      );
    }
  }
  return problems;
}

/**
 * An entry of a Workbox precache manifest, JSON or minified: `{url:"…",revision:"…"}` as
 * generateSW writes it, `{"revision":null,"url":"…"}` as injectManifest does.
 */
const PRECACHE_ENTRY =
  /["']?url["']?\s*:\s*["'][^"']*["']\s*,\s*["']?revision["']?\s*:|["']?revision["']?\s*:\s*(?:null|["'][^"']*["'])\s*,\s*["']?url["']?\s*:/;
/** An entry of it for Hearth's files: `hearth/…` or `hearth-sw.js`, relative or under a path. */
const HEARTH_PRECACHED =
  /["']?url["']?\s*:\s*["'](?:\.\/|\/(?:[^"']*\/)?)?hearth(?:\/|-sw\.js["'])/;
/** `importScripts(…, "hearth-sw.js", …)`, by any relative or absolute URL of that name. */
const IMPORTS_HEARTH = /importScripts\([^)]*["'`](?:[^"'`]*\/)?hearth-sw\.js(?:\?[^"'`]*)?["'`]/;

/** Whether the build under way is the client's (not SSR), where Hearth's files belong. */
function isClientBuild(
  context: { environment?: { config: { consumer?: string } } },
  config: ResolvedConfig | undefined,
): boolean {
  if (!config || config.command !== 'build') return false;
  // Vite 6+ builds each environment with the same plugins; Vite 5 has `build.ssr`.
  if (context.environment) return context.environment.config.consumer === 'client';
  return !config.build.ssr;
}

/** vite-plugin-pwa's main plugin's API, if the config has the plugin. */
function findPwa(plugins: readonly Plugin[]): PwaApi | undefined {
  const plugin = plugins.find((p) => p.name === 'vite-plugin-pwa');
  const api: unknown = plugin?.api;
  return typeof api === 'object' && api !== null ? (api as PwaApi) : undefined;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(missing)) !== undefined;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** A `catch` handler that turns "no such file" into `undefined` and rethrows the rest. */
function missing(error: unknown): undefined {
  if (isMissing(error)) return undefined;
  throw error;
}
