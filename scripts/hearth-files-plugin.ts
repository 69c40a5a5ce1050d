/**
 * @module
 * The chat app is built on the `hearth-llm` package as a site is: its pages start Hearth with
 * `startHearth()` (src/site/index.ts), which imports the loader from `{base}hearth/hearth.js`.
 * This plugin puts the package's `hearth/` folder there — built by the package's own `loader`
 * build (vite.package.config.ts), with the app's build id, so that the app ships exactly what
 * `npx hearth init` copies into a site: in `vite build` as files of the bundle (so that the app's
 * precache holds them), under `vite` (dev) served from a build made when the server starts
 * (restart the dev server after changing the engine's code).
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'vite';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const TYPES: Record<string, string> = {
  js: 'text/javascript',
  wasm: 'application/wasm',
  json: 'application/json',
};

/** Every file under `dir`, as paths relative to it with `/`. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((path) => statSync(join(dir, path)).isFile())
    .map((path) => path.split('\\').join('/'));
}

/**
 * Builds the package's `hearth/` folder into `outDir` with the app's build id (page, engine
 * worker and service worker are checked against one another by it).
 */
async function buildHearthFiles(outDir: string, buildId: string): Promise<void> {
  const saved = { build: process.env.HEARTH_BUILD, out: process.env.HEARTH_LOADER_OUT };
  process.env.HEARTH_BUILD = buildId;
  process.env.HEARTH_LOADER_OUT = outDir;
  try {
    await build({
      configFile: join(ROOT, 'vite.package.config.ts'),
      mode: 'loader',
      root: ROOT,
      logLevel: 'warn',
    });
  } finally {
    for (const [key, value] of [
      ['HEARTH_BUILD', saved.build],
      ['HEARTH_LOADER_OUT', saved.out],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** The plugin; `buildId` is the app's. */
export function hearthFiles(buildId: string): Plugin {
  let outDir = '';
  let base = '/';
  return {
    name: 'hearth-files',
    configResolved(config) {
      base = config.base;
      // Beside the app's own output, apart per output folder (the e2e builds run side by side).
      const appOut = config.build.outDir.replace(/[\\/]+$/, '');
      outDir = join(ROOT, 'node_modules', '.hearth-files', relative(ROOT, appOut) || 'dist');
    },
    async buildStart() {
      if (this.meta.watchMode) return;
      await buildHearthFiles(outDir, buildId);
    },
    generateBundle() {
      for (const path of filesUnder(outDir)) {
        this.emitFile({
          type: 'asset',
          fileName: `hearth/${path}`,
          source: readFileSync(join(outDir, path)),
        });
      }
    },
    async configureServer(server) {
      mkdirSync(outDir, { recursive: true });
      await buildHearthFiles(outDir, buildId);
      const prefix = `${base}hearth/`;
      server.middlewares.use((req, res, next) => {
        const path = new URL(req.url ?? '/', 'http://x').pathname;
        if (!path.startsWith(prefix)) return next();
        const file = join(outDir, path.slice(prefix.length));
        if (!file.startsWith(outDir) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
          return next();
        }
        res.setHeader(
          'content-type',
          TYPES[file.split('.').pop() ?? ''] ?? 'application/octet-stream',
        );
        res.end(readFileSync(file));
      });
    },
  };
}
