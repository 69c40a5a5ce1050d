/**
 * A page for running a GGUF made at test time through the real llama.cpp: wllama 3.13, one
 * thread, no WebGPU, the models from Blobs. The page lives on an origin of its own that
 * `page.route` serves from memory and node_modules, so none of the app is involved. Shared by
 * tests/e2e/fixture-gguf.spec.ts and tests/e2e/fixture-vision.spec.ts (Playwright does not let one
 * test file import another).
 */
import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import type { LoadModelParams, Wllama as WllamaClass } from '@wllama/wllama';

const WLLAMA = new URL('../../node_modules/@wllama/wllama/esm/', import.meta.url);

/**
 * Where a spec's page lives: its origin (https: `new Wllama()` throws in an insecure context,
 * where its model cache has no storage), the folder its files are served under (`/${folder}/`),
 * and the page's title.
 */
export interface WllamaSite {
  origin: string;
  folder: string;
  title: string;
}

/** What the page keeps between calls, on `globalThis`. */
export interface WllamaPage {
  Wllama: typeof WllamaClass;
  wllama: WllamaClass;
}

/** Serves the page, wllama and `files` (by name under `/${site.folder}/`) on the site's origin. */
export async function servePage(
  page: Page,
  site: WllamaSite,
  files: Record<string, Uint8Array>,
): Promise<void> {
  const [script, wasm] = await Promise.all([
    readFile(new URL('index.js', WLLAMA)),
    readFile(new URL('wasm/wllama.wasm', WLLAMA)),
  ]);
  const prefix = `/${site.folder}/`;
  await page.route(`${site.origin}/**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    const file = path.startsWith(prefix) ? files[path.slice(prefix.length)] : undefined;
    if (path === '/') {
      return route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><meta charset="utf-8"><title>${site.title}</title><script type="module">
          import { Wllama } from '/wllama/index.js';
          globalThis.Wllama = Wllama;
        </script>`,
      });
    }
    if (path === '/wllama/index.js')
      return route.fulfill({ contentType: 'text/javascript', body: script });
    if (path === '/wllama/wllama.wasm')
      return route.fulfill({ contentType: 'application/wasm', body: wasm });
    if (file)
      return route.fulfill({ contentType: 'application/octet-stream', body: Buffer.from(file) });
    return route.fulfill({ status: 404 });
  });
  await page.goto(`${site.origin}/`);
  await page.waitForFunction(() => 'Wllama' in globalThis);
}

/**
 * Loads the named files as Blobs, in order (a model; a split model's parts; a model and its
 * projector), into a new wllama instance that replaces the page's, with `params` over the
 * defaults; resolves to the load's ms.
 */
export function loadModel(
  page: Page,
  site: WllamaSite,
  names: string[],
  params: Partial<LoadModelParams> = {},
): Promise<number> {
  return page.evaluate(
    async ({ folder, names, params }) => {
      const scope = globalThis as unknown as WllamaPage;
      await scope.wllama?.exit();
      const wllama = new scope.Wllama(
        { default: new URL('/wllama/wllama.wasm', location.href).href },
        { suppressNativeLog: true },
      );
      const blobs = await Promise.all(
        names.map(async (name) => (await fetch(`/${folder}/${name}`)).blob()),
      );
      const started = performance.now();
      // loadModel never settles when the wasm or the worker is blocked (notes/wllama-3.13.md).
      await Promise.race([
        wllama.loadModel(blobs, { n_threads: 1, n_gpu_layers: 0, n_ctx: 1024, ...params }),
        new Promise((_, reject) => setTimeout(() => reject(new Error('load timed out')), 20_000)),
      ]);
      // loadModel resolves even when llama.cpp failed to load: only the context info tells.
      if (wllama.getLoadedContextInfo().n_vocab === 0) throw new Error(`${names} did not load`);
      scope.wllama = wllama;
      return performance.now() - started;
    },
    { folder: site.folder, names, params },
  );
}
