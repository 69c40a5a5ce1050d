/**
 * `hearth-llm/vite` under real Vite, from a small `files/` tree of its own: `vite dev` (in
 * middleware mode, behind a Node server on a free port) serves it at the base with the right
 * types, `vite build` writes it at the output's root, and the checks of a vite-plugin-pwa worker
 * name what is missing. The fixture Vite site (tests/e2e/site.spec.ts) runs it with the packed
 * tarball, vite-plugin-pwa and browsers.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { build, createLogger, createServer, type Plugin } from 'vite';
import {
  checkSiteWorkers,
  createHearthPlugin,
  hearthPath,
  listFiles,
} from '../../../src/vite-plugin/vite';

/** The package's `files/`, small: the worker, the loader, a wasm, the compatibility build. */
const FILES: Record<string, string> = {
  'hearth-sw.js': 'self.addEventListener("fetch", () => {});\n',
  'hearth/hearth.js': 'export const VERSION = "1.2.3+test";\n',
  'hearth/wllama.wasm': '\0asm\x01\0\0\0',
  'hearth/wllama-compat/3.13.0/wllama.js': 'export const compat = true;\n',
};

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-vite-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true });
    await writeFile(join(root, path), text);
  }
}

/** A site: one page, and the package's files in a folder of their own. */
async function makeSite(): Promise<{ root: string; filesDir: string }> {
  const dir = await tempDir();
  const root = join(dir, 'site');
  const filesDir = join(dir, 'files');
  await writeTree(filesDir, FILES);
  await writeTree(root, { 'index.html': '<!doctype html><title>site</title>\n' });
  return { root, filesDir };
}

/** A logger that keeps what is said, for the hint's tests and to keep the output quiet. */
function keepingLogger(): { logger: ReturnType<typeof createLogger>; said: string[] } {
  const logger = createLogger('warn');
  const said: string[] = [];
  logger.warn = logger.error = (message) => void said.push(message);
  return { logger, said };
}

/** `vite dev` for `root` with `plugins`, behind a Node server; returns its origin. */
async function serve(
  root: string,
  plugins: Plugin[],
  base = '/repo/',
): Promise<{ origin: string; said: string[] }> {
  const { logger, said } = keepingLogger();
  const vite = await createServer({
    configFile: false,
    root,
    base,
    plugins,
    customLogger: logger,
    cacheDir: join(root, '.vite'),
    server: { middlewareMode: true, ws: false },
    optimizeDeps: { noDiscovery: true },
  });
  const http: Server = createHttpServer(vite.middlewares);
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    http.closeAllConnections(); // fetch's kept-alive sockets would hold close() open
    await new Promise((resolve) => http.close(resolve));
    await vite.close();
  });
  const address = http.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { origin: `http://127.0.0.1:${address.port}`, said };
}

describe('vite dev', () => {
  it('serves hearth-sw.js and hearth/ from the package at the base, with their types', async () => {
    const { root, filesDir } = await makeSite();
    const { origin } = await serve(root, [createHearthPlugin({}, { filesDir })]);

    const sw = await fetch(`${origin}/repo/hearth-sw.js?isolate`);
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    expect(await sw.text()).toBe(FILES['hearth-sw.js']);

    const wasm = await fetch(`${origin}/repo/hearth/wllama.wasm`);
    expect(wasm.headers.get('content-type')).toBe('application/wasm');
    expect(Buffer.from(await wasm.arrayBuffer()).toString()).toBe(FILES['hearth/wllama.wasm']);

    const loader = await fetch(`${origin}/repo/hearth/hearth.js`);
    // The package's bytes, not a module transformed by Vite.
    expect(await loader.text()).toBe(FILES['hearth/hearth.js']);
    const compat = await fetch(`${origin}/repo/hearth/wllama-compat/3.13.0/wllama.js`);
    expect(compat.status).toBe(200);
  });

  it('answers 404 for a file the package lacks, and leaves compat out when asked', async () => {
    const { root, filesDir } = await makeSite();
    const { origin } = await serve(root, [createHearthPlugin({ compat: false }, { filesDir })]);
    expect((await fetch(`${origin}/repo/hearth/missing.js`)).status).toBe(404);
    expect((await fetch(`${origin}/repo/hearth/wllama-compat/3.13.0/wllama.js`)).status).toBe(404);
    // Outside the base, Hearth's names are the site's own business.
    expect(await (await fetch(`${origin}/hearth-sw.js`)).text()).not.toBe(FILES['hearth-sw.js']);
    // The site's pages are Vite's.
    const page = await fetch(`${origin}/repo/`);
    expect(await page.text()).toContain('<title>site</title>');
  });

  it('says what to set when vite-plugin-pwa is there and its dev worker is not seen on, and nothing when it is', async () => {
    const pwa = (on: boolean): Plugin => ({
      name: 'vite-plugin-pwa',
      api: { disabled: false, registerSWData: () => (on ? { mode: 'script' } : undefined) },
    });
    const { root, filesDir } = await makeSite();
    const off = await serve(root, [createHearthPlugin({}, { filesDir }), pwa(false)]);
    expect(off.said).toHaveLength(1);
    expect(off.said[0]).toContain('VitePWA({ devOptions: { enabled: true } })');
    const on = await serve(root, [createHearthPlugin({}, { filesDir }), pwa(true)]);
    expect(on.said).toEqual([]);
  });
});

describe('vite build', () => {
  it('writes hearth-sw.js and hearth/ at the root of the output, without compat when asked', async () => {
    const { root, filesDir } = await makeSite();
    const { logger, said } = keepingLogger();
    await build({
      configFile: false,
      root,
      base: '/repo/',
      customLogger: logger,
      plugins: [createHearthPlugin({ compat: false }, { filesDir })],
    });
    const dist = join(root, 'dist');
    expect(await readFile(join(dist, 'hearth-sw.js'), 'utf8')).toBe(FILES['hearth-sw.js']);
    expect(await listFiles(join(dist, 'hearth'), true)).toEqual(['hearth.js', 'wllama.wasm']);
    expect((await readdir(dist)).sort()).toEqual(['hearth', 'hearth-sw.js', 'index.html']);
    expect(said).toEqual([]);
  });
});

describe('hearthPath', () => {
  it('maps the base’s hearth-sw.js and hearth/ paths to files, refuses escapes, and leaves the rest', () => {
    expect(hearthPath('/repo/hearth-sw.js?isolate', '/repo/', true)).toBe('hearth-sw.js');
    expect(hearthPath('/repo/hearth/a%20b/c.js', '/repo/', true)).toBe('hearth/a b/c.js');
    expect(hearthPath('/hearth-sw.js', '/repo/', true)).toBeUndefined();
    expect(hearthPath('/repo/hearthy.js', '/repo/', true)).toBeUndefined();
    expect(hearthPath('/repo/hearth/../secret', '/repo/', true)).toBeUndefined(); // URL-normalised away
    expect(hearthPath('/repo/hearth/%2e%2e/x', '/repo/', true)).toBeUndefined(); // the same
    expect(hearthPath('/repo/hearth/x%2F..%2F..%2Fsecret', '/repo/', true)).toBeNull();
    expect(hearthPath('/repo/hearth/.hearth-llm', '/repo/', true)).toBeNull();
    expect(hearthPath('/repo/hearth/a%5Cb', '/repo/', true)).toBeNull();
    expect(hearthPath('/repo/hearth/wllama-compat/x.js', '/repo/', false)).toBeNull();
    expect(hearthPath('/repo/hearth/wllama-compat/x.js', '/repo/', true)).toBe(
      'hearth/wllama-compat/x.js',
    );
  });
});

describe('checkSiteWorkers', () => {
  /** A worker as Workbox's generateSW writes it (minified), importing `imports`. */
  const generated = (imports: string[], urls: string[]) =>
    `define(["./workbox-1"],(function(e){"use strict";${imports.length ? `importScripts(${imports.map((i) => JSON.stringify(i)).join(',')}),` : ''}` +
    `e.precacheAndRoute([${urls.map((url) => `{url:"${url}",revision:"1"}`).join(',')}],{})}));\n`;

  async function check(files: Record<string, string>): Promise<string[]> {
    const dir = await tempDir();
    await writeTree(dir, files);
    return checkSiteWorkers(dir);
  }

  it('finds nothing wrong with a worker that imports hearth-sw.js and precaches none of Hearth’s files', async () => {
    const ok = generated(['hearth-sw.js'], ['index.html', 'assets/index-1.js']);
    expect(await check({ 'sw.js': ok, 'hearth-sw.js': 'importScripts("x")' })).toEqual([]);
  });

  it('names the importScripts line when the worker does not import hearth-sw.js', async () => {
    const problems = await check({ 'sw.js': generated([], ['index.html']) });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain("importScripts: ['hearth-sw.js']");
  });

  it('says where precached Hearth files come from, in Workbox’s JSON order too', async () => {
    const injected =
      'importScripts("hearth-sw.js");const m=[{"revision":"1","url":"hearth/hearth.js"}];';
    const problems = await check({
      'sw.js': generated(['hearth-sw.js'], ['hearth/lib.js']),
      'custom-sw.js': injected,
      'main.js': 'console.log("not a worker")',
    });
    expect(problems).toHaveLength(2);
    for (const problem of problems) expect(problem).toContain('npx hearth init');
  });
});
