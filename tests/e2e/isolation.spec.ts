/**
 * Cross-origin isolation on a static host that sends no headers (the tests' server sends none):
 * the service worker adds COOP and COEP to the documents and worker scripts it serves, so the page
 * and the engine worker are `crossOriginIsolated` (llama.cpp's threads need it). A first visit,
 * loaded before the service worker existed, reloads once to get it. What COEP could break keeps
 * working: the app's assets, a model from another origin downloaded in the engine worker, the
 * relay's WebSocket, and the page's Content Security Policy reports nothing.
 */
import { expect, test, type Page, type Worker } from '@playwright/test';
import { KEY, openApp } from './helpers';
import { ISOLATION_HEADERS } from '../../sw/isolation';
import { ModelServer, TINY_ID, TINY_URL } from './model-server';
import { curl, pairTab, startRelay } from './relay';
import { cspViolations, watchLeaks } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

/** The engine worker (the app's only dedicated worker with a script of its own). */
async function engineWorker(page: Page): Promise<Worker> {
  await expect
    .poll(() => page.workers().some((w) => w.url().includes('/hearth/worker.js')))
    .toBe(true);
  return page.workers().find((w) => w.url().includes('/hearth/worker.js'))!;
}

/** What isolation gives a context: the flag, and shared memory. */
const probe = () => ({
  isolated: globalThis.crossOriginIsolated,
  sharedMemory:
    typeof SharedArrayBuffer === 'function' &&
    Atomics.load(new Int32Array(new SharedArrayBuffer(4)), 0) === 0,
});

/** The isolation of the page, or of one of its workers. */
const isolationOf = (context: Page | Worker) =>
  'mainFrame' in context ? context.evaluate(probe) : context.evaluate(probe);

const ISOLATED = { isolated: true, sharedMemory: true };

/**
 * What llama.cpp does in the engine worker that a Content Security Policy could forbid: compile
 * WebAssembly, and start a `blob:` worker (wllama's, and Emscripten's threads), which is isolated
 * as its creator is.
 */
const wasmAndBlobWorker = async () => {
  const empty = new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
  const wasm = await WebAssembly.compile(empty).then(
    () => 'compiled',
    (err: Error) => err.name,
  );
  const source = URL.createObjectURL(
    new Blob(['postMessage(self.crossOriginIsolated)'], { type: 'text/javascript' }),
  );
  const blobWorker = await new Promise<string>((resolve) => {
    try {
      const worker = new Worker(source);
      worker.onmessage = (event) => resolve(event.data === true ? 'isolated' : 'not isolated');
      worker.onerror = () => resolve('failed');
    } catch (err) {
      resolve((err as Error).name);
    }
    setTimeout(() => resolve('no answer'), 5000);
  });
  return { wasm, blobWorker };
};

test('a first visit reloads once and ends isolated, in the page and in the engine worker', async ({
  page,
}) => {
  const loads: string[] = [];
  page.on('load', () => loads.push(page.url()));
  await watchLeaks(page);
  await openApp(page);
  expect(loads).toHaveLength(2);
  expect(await isolationOf(page)).toEqual(ISOLATED);
  const worker = await engineWorker(page);
  expect(await isolationOf(worker)).toEqual(ISOLATED);
  // The page's policy is not the engine worker's: llama.cpp's wasm and blob workers run there,
  // while the page itself may compile no WebAssembly (scripts/csp-plugin.ts).
  expect(await worker.evaluate(wasmAndBlobWorker)).toEqual({
    wasm: 'compiled',
    blobWorker: 'isolated',
  });
  // The isolated page loads every asset and view; the policy reports nothing.
  for (const view of ['Models', 'Settings', 'Developer', 'Chat']) {
    await page.getByRole('link', { name: view }).click();
    await expect(page.getByRole('heading').first()).toBeVisible();
  }
  expect(await cspViolations(page)).toEqual([]);
  expect((await page.evaluate(wasmAndBlobWorker)).wasm).toBe('CompileError');

  // Later visits are isolated from the start: no reload.
  const response = await page.reload();
  expect(response?.fromServiceWorker()).toBe(true);
  expect(await response?.allHeaders()).toMatchObject({
    'cross-origin-opener-policy': ISOLATION_HEADERS['Cross-Origin-Opener-Policy'],
    'cross-origin-embedder-policy': ISOLATION_HEADERS['Cross-Origin-Embedder-Policy'],
  });
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  expect(loads).toHaveLength(3);
  expect(await isolationOf(page)).toEqual(ISOLATED);
});

test('a document the precache does not hold, and a hard reload, end isolated too', async ({
  page,
}) => {
  await openApp(page);
  // An address with a query is not in the precache: it comes from the network, with the headers.
  await page.goto('./?from=elsewhere');
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  expect(await isolationOf(page)).toEqual(ISOLATED);
  // A hard reload bypasses the service worker: the page reloads for control, and is isolated.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Page.reload', { ignoreCache: true });
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  expect(await isolationOf(page)).toEqual(ISOLATED);
  expect(await isolationOf(await engineWorker(page))).toEqual(ISOLATED);
});

test('the isolated engine worker downloads a model from another origin (CORS)', async ({
  page,
}) => {
  await openApp(page);
  expect(new URL(TINY_URL).origin).not.toBe(new URL(page.url()).origin);
  const outcome = await page.evaluate(
    async ({ KEY, id }) => {
      const response = await fetch(`v1/hearth/models/${id}/download`, {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ stream: false }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    { KEY, id: TINY_ID },
  );
  expect(outcome.status, JSON.stringify(outcome.body)).toBe(200);
  expect(server.requests).toContain('resolve/main/tensor-cache.json');
  expect(server.requests).toContain('lib/tiny.wasm');
  const model = await page.evaluate(
    async ({ KEY, id }) =>
      (await (await fetch(`v1/hearth/models/${id}`, { headers: KEY })).json()) as {
        missing_files: string[];
      },
    { KEY, id: TINY_ID },
  );
  expect(model.missing_files).toEqual([]);
});

test('a tab paired with the relay by its link is isolated, and curl reaches it', async ({
  page,
  baseURL,
}) => {
  const relay = await startRelay(baseURL ?? '');
  try {
    // The link is a first visit: the pairing survives the reload for isolation.
    await pairTab(page, relay);
    expect(await isolationOf(page)).toEqual(ISOLATED);
    const reply = await curl([
      '-H',
      `authorization: Bearer ${relay.key}`,
      '-H',
      'content-type: application/json',
      '--data-binary',
      JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'through an isolated tab' }],
      }),
      `${relay.baseUrl}/chat/completions`,
    ]);
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body).choices[0].message.content).toBe('through an isolated tab');
  } finally {
    await relay.stop();
  }
});
