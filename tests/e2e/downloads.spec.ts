/**
 * Models on the device, with the real WebLLM in Chromium: a self-hosted model (config, tokenizer,
 * weight shards and a library that is not WebAssembly) served by the test's own static server,
 * downloaded through the API, checked by Hearth and by WebLLM's own `hasModelInCache`, resumed,
 * deleted, loaded (and failing to), and stopped by a full disk.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import type { DownloadProgress } from '../../src/protocol/host/downloads';
import { ask, downloadInPage, hostStatus, KEY, openApp } from './helpers';
import { ModelServer, TINY_ID, TINY_URL } from './model-server';

const server = new ModelServer();
const { model } = server;
const SHARDS = model.shards;
const LIB_URL = TINY_URL + model.lib;
const MODEL_PATH = `v1/hearth/models/${TINY_ID}`;

test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

/** Starts (or joins) the download in the page and reads its SSE stream to the end. */
function download(page: Page) {
  return downloadInPage<DownloadProgress>(page, MODEL_PATH);
}

/** Starts the download from the page without waiting for it. */
function startDownload(page: Page) {
  return page.evaluate(
    ({ path, KEY }) => void fetch(`${path}/download`, { method: 'POST', headers: KEY }),
    { path: MODEL_PATH, KEY },
  );
}

/** `GET /v1/hearth/models/e2e/tiny`. */
function inspect(page: Page) {
  return page.evaluate(async ({ path, KEY }) => (await fetch(path, { headers: KEY })).json(), {
    path: MODEL_PATH,
    KEY,
  }) as Promise<{
    downloaded: boolean;
    missing_files: string[];
    webllm_has_model_in_cache: boolean;
    loaded: boolean;
    download: DownloadProgress | null;
    evicted: string | null;
  }>;
}

/** Which of the model's files each cache holds. */
function cachedFiles(page: Page) {
  return page.evaluate(async (base) => {
    const found: Record<string, string[]> = {};
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      const urls = (await cache.keys()).map((r) => r.url).filter((url) => url.startsWith(base));
      if (urls.length > 0) found[name] = urls.map((url) => url.slice(base.length)).sort();
    }
    return found;
  }, TINY_URL);
}

/** The host's downloads under way, as its status shows them. */
async function downloadsOf(page: Page): Promise<DownloadProgress[]> {
  return ((await hostStatus(page)) as unknown as { downloads: DownloadProgress[] }).downloads;
}

test.describe('in a fresh profile', () => {
  // Storage made persistent by an earlier test stays so in a warm context, and the page then
  // has no reason to ask again: this test counts that it asks.
  test.use({ freshContext: true });
  test('a self-hosted model downloads with true progress, and both checks find every file', async ({
    page,
  }) => {
    await page.addInitScript(() => {
      // Count the page's requests for persistent storage.
      const persist = navigator.storage.persist.bind(navigator.storage);
      (globalThis as { persists?: number }).persists = 0;
      navigator.storage.persist = () => {
        (globalThis as { persists?: number }).persists! += 1;
        return persist();
      };
    });
    await openApp(page);
    expect(await inspect(page)).toMatchObject({
      downloaded: false,
      webllm_has_model_in_cache: false,
    });
    const { status, type, events } = await download(page);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/event-stream/);
    const last = events.at(-1)!;
    expect(last).toMatchObject({
      object: 'hearth.download',
      model: TINY_ID,
      phase: 'done',
      bytes_done: model.totalBytes,
      bytes_total: model.totalBytes,
      files_done: model.files.length,
      files_total: model.files.length,
    });
    // True progress: many reports, bytes that only grow, and shards reported while they arrive.
    const during = events.filter((e) => e.phase === 'files');
    expect(during.length).toBeGreaterThan(5);
    const bytes = events.map((e) => e.bytes_done);
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    expect(during.some((e) => e.bytes_done > 0 && e.bytes_done < model.totalBytes / 2)).toBe(true);
    // Several files download at once: `file` is the one that started last.
    const reported = new Set(during.map((e) => e.file));
    expect(SHARDS.some((shard) => reported.has(TINY_URL + shard))).toBe(true);

    // Hearth's check and WebLLM's own (the real library's hasModelInCache) agree.
    expect(await inspect(page)).toMatchObject({
      downloaded: true,
      missing_files: [],
      webllm_has_model_in_cache: true,
      download: null,
    });
    // Under the keys WebLLM reads; the library (on localhost, which WebLLM never caches) in
    // Hearth's own cache.
    expect(await cachedFiles(page)).toEqual({
      'webllm/config': ['resolve/main/mlc-chat-config.json'],
      'webllm/model': [
        ...SHARDS,
        'resolve/main/tensor-cache.json',
        'resolve/main/tokenizer.json',
      ].sort(),
      'hearth/files': [model.lib],
    });
    for (const file of model.files) expect(server.count(file.path)).toBe(1);
    await expect
      .poll(async () =>
        page.evaluate(async (KEY) => {
          const response = await fetch('v1/openai/models', { headers: KEY });
          return ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
        }, KEY),
      )
      .toEqual(['hearth/echo', TINY_ID]);
    // A model on the device is worth keeping: the page asked for persistent storage, and says
    // what it got.
    await expect(page.locator('api-status')).toHaveAttribute(
      'persistence',
      /^(persisted|best-effort)$/,
    );
    expect(await page.evaluate(() => (globalThis as { persists?: number }).persists)).toBe(1);
    const storage = await page.evaluate(async (KEY) => {
      const response = await fetch('v1/hearth/status', { headers: KEY });
      return ((await response.json()) as { storage: { usage_bytes: number } }).storage;
    }, KEY);
    expect(storage.usage_bytes).toBeGreaterThan(model.totalBytes);
  });
});

test('delete removes every file, and both checks say so', async ({ page }) => {
  await openApp(page);
  expect((await download(page)).events.at(-1)!.phase).toBe('done');
  const deleted = await page.evaluate(
    async ({ path, KEY }) => {
      const response = await fetch(path, { method: 'DELETE', headers: KEY });
      return { status: response.status, body: await response.json() };
    },
    { path: MODEL_PATH, KEY },
  );
  expect(deleted).toEqual({ status: 200, body: { id: TINY_ID, object: 'model', deleted: true } });
  const state = await inspect(page);
  expect(state).toMatchObject({ downloaded: false, webllm_has_model_in_cache: false });
  expect(state.missing_files.length).toBeGreaterThan(0);
  expect(await cachedFiles(page)).toEqual({});
});

test('loading it fails with a clear error through the API and the status, and nothing hangs', async ({
  page,
}) => {
  await openApp(page);
  expect((await download(page)).events.at(-1)!.phase).toBe('done');
  // From here on the model's server has nothing: whatever the load needs comes from the device.
  for (const file of model.files) server.refuse(file.path);
  const before = server.requests.length;
  const load = await page.evaluate(
    async ({ path, KEY }) => {
      const response = await fetch(`${path}/load`, { method: 'POST', headers: KEY });
      return { status: response.status, body: await response.json() };
    },
    { path: MODEL_PATH, KEY },
  );
  expect(load.status).toBe(500);
  expect(load.body.error).toMatchObject({ type: 'server_error', code: 'engine_error' });
  expect(load.body.error.message).toMatch(new RegExp(`^Loading ${TINY_ID} failed: `));
  expect(server.requests.length).toBe(before);
  const status = (await hostStatus(page)) as unknown as {
    loaded_model: string | null;
    load_error: { model: string; error: { message: string } } | null;
    queue: { running: number; waiting: number };
    open_ports: number;
  };
  expect(status).toMatchObject({
    loaded_model: null,
    load_error: { model: TINY_ID, error: { message: load.body.error.message } },
    queue: { running: 0, waiting: 0 },
    open_ports: 0,
  });
  // A chat request meets the same failure, quickly, and the echo engine still answers.
  const chat = await page.evaluate(
    async ({ KEY, id }) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ model: id, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return { status: response.status, body: await response.json() };
    },
    { KEY, id: TINY_ID },
  );
  expect(chat).toMatchObject({ status: 500, body: { error: { code: 'engine_error' } } });
  expect(await ask(page, 'still here')).toEqual({ status: 200, content: 'still here' });
  // The library the load read came from Hearth's cache, through the service worker.
  const lib = await page.evaluate(async (url) => {
    const response = await fetch(url);
    return { status: response.status, size: (await response.arrayBuffer()).byteLength };
  }, LIB_URL);
  expect(lib).toEqual({ status: 200, size: model.files.at(-1)!.bytes.byteLength });
});

test('a download interrupted mid-file resumes without fetching the files it completed', async ({
  page,
}) => {
  await openApp(page);
  // The third shard breaks halfway every time the download tries it.
  server.trouble(SHARDS[2]!, 'break', 'break', 'break');
  const failed = (await download(page)).events.at(-1)!;
  // The connection that keeps breaking is the network's failure, not the engine's.
  expect(failed).toMatchObject({ phase: 'failed', error: { code: 'download_unreachable' } });
  expect(server.count(SHARDS[2]!)).toBe(3);
  const state = await inspect(page);
  expect(state).toMatchObject({ downloaded: false, webllm_has_model_in_cache: false });
  expect(state.missing_files).toContain(TINY_URL + SHARDS[2]);
  const kept = model.files.filter((f) => !state.missing_files.includes(TINY_URL + f.path));
  expect(kept.map((f) => f.path)).toContain(SHARDS[0]);
  const resumed = (await download(page)).events.at(-1)!;
  expect(resumed).toMatchObject({ phase: 'done', bytes_done: model.totalBytes });
  for (const file of kept) expect(server.count(file.path)).toBe(1);
  expect(server.count(SHARDS[2]!)).toBe(4);
  expect(await inspect(page)).toMatchObject({ downloaded: true, webllm_has_model_in_cache: true });
});

test('a download whose model host refuses connections fails with 503 download_unreachable, as JSON and as the stream’s last event', async ({
  page,
}) => {
  await openApp(page);
  // The model server down: every fetch of the model's files is refused (fetch's TypeError).
  await server.stop();
  try {
    const outcome = await page.evaluate(
      async ({ path, KEY }) => {
        const response = await fetch(`${path}/download`, {
          method: 'POST',
          headers: KEY,
          body: JSON.stringify({ stream: false }),
        });
        return { status: response.status, error: (await response.json()).error };
      },
      { path: MODEL_PATH, KEY },
    );
    const host = new URL(TINY_URL).host;
    expect(outcome).toMatchObject({
      status: 503,
      error: { code: 'download_unreachable', type: 'unavailable_error' },
    });
    expect(outcome.error.message).toContain(
      `Downloading ${TINY_ID} failed: could not reach ${host}`,
    );
    const streamed = await download(page);
    expect(streamed.status).toBe(200);
    expect(streamed.events.at(-1)).toMatchObject({
      phase: 'failed',
      error: { code: 'download_unreachable', type: 'unavailable_error' },
    });
  } finally {
    await server.start();
  }
});

test('a reload of the page that started a download does not stop it, and the new page sees it', async ({
  page,
}) => {
  await openApp(page);
  // This tab hosts the engine: its reload ends the worker, and the next host resumes.
  server.trouble(SHARDS[3]!, 'hold', 'hold');
  await startDownload(page);
  await expect
    .poll(async () => (await inspect(page)).missing_files)
    .toEqual([TINY_URL + SHARDS[3]]);
  await page.reload();
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  await expect.poll(() => server.count(SHARDS[3]!)).toBe(2);
  const seen = await downloadsOf(page);
  expect(seen).toMatchObject([{ model: TINY_ID, phase: 'files' }]);
  // Every tab shows it.
  await expect(page.locator('api-status .download')).toContainText(`Downloading ${TINY_ID}: files`);
  // The new page joins it, sees it through to the end, and nothing was fetched twice but the
  // shard that was midway.
  const joined = download(page);
  server.release();
  const { events } = await joined;
  expect(events[0]!.phase).toBe('files');
  expect(events.at(-1)).toMatchObject({ phase: 'done' });
  for (const file of model.files) {
    expect(server.count(file.path)).toBe(file.path === SHARDS[3] ? 2 : 1);
  }
  expect(await inspect(page)).toMatchObject({ downloaded: true });
});

test('a download started from a tab that does not host the engine goes on when that tab reloads', async ({
  page,
  context,
}) => {
  await openApp(page); // the host
  const other = await context.newPage();
  await openApp(other);
  server.trouble(SHARDS[1]!, 'hold');
  await startDownload(other);
  await expect.poll(() => server.holding).toBe(1);
  await other.reload();
  await expect(other.locator('api-status')).toHaveAttribute('state', 'ready');
  expect(await downloadsOf(other)).toMatchObject([{ model: TINY_ID, phase: 'files' }]);
  server.release();
  await expect.poll(async () => (await inspect(other)).downloaded).toBe(true);
  for (const file of model.files) expect(server.count(file.path)).toBe(1);
});

test('a download cancelled with DELETE stops, and keeps the files it completed', async ({
  page,
}) => {
  await openApp(page);
  server.trouble(SHARDS[3]!, 'hold');
  const stream = download(page);
  await expect
    .poll(async () => (await inspect(page)).missing_files)
    .toEqual([TINY_URL + SHARDS[3]]);
  const cancelled = await page.evaluate(
    async ({ path, KEY }) =>
      (await fetch(`${path}/download`, { method: 'DELETE', headers: KEY })).json(),
    { path: MODEL_PATH, KEY },
  );
  expect(cancelled).toEqual({ id: TINY_ID, object: 'hearth.download', cancelled: true });
  expect((await stream).events.at(-1)!.phase).toBe('cancelled');
  expect(await downloadsOf(page)).toEqual([]);
  const state = await inspect(page);
  expect(state.downloaded).toBe(false);
  expect(state.missing_files).toEqual([TINY_URL + SHARDS[3]]);
});

test.describe('in a fresh profile, with its disk full', () => {
  // The quota is set from the usage the browser reports, which after a warm context's reset
  // still counts what the tests before downloaded and deleted (gguf-downloads.spec.ts).
  test.use({ freshContext: true });

  test('a full disk fails the download clearly and leaves no part of the model stored', async ({
    page,
    context,
  }) => {
    await openApp(page);
    const origin = new URL(page.url()).origin;
    const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
    const cdp = await context.newCDPSession(page);
    // Room for about half the model.
    await cdp.send('Storage.overrideQuotaForOrigin', {
      origin,
      quotaSize: usage + model.totalBytes / 2,
    });
    try {
      const { events } = await download(page);
      const last = events.at(-1)!;
      expect(last).toMatchObject({
        phase: 'failed',
        error: { code: 'storage_full', type: 'server_error' },
      });
      expect(last.error!.message).toMatch(/storage is full/);
      expect(await cachedFiles(page)).toEqual({});
      expect(await inspect(page)).toMatchObject({
        downloaded: false,
        webllm_has_model_in_cache: false,
      });
      // Not marked as downloaded, so a new host does not report it lost either.
      await page.reload();
      await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
      const status = (await hostStatus(page)) as unknown as { evicted_models: object };
      expect(status.evicted_models).toEqual({});
    } finally {
      await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    }
    // With room again, the same download succeeds.
    expect((await download(page)).events.at(-1)!.phase).toBe('done');
  });
});

test('a downloaded model whose files were evicted is reported lost at the next start', async ({
  page,
}) => {
  await openApp(page);
  expect((await download(page)).events.at(-1)!.phase).toBe('done');
  // What the browser does to storage that is not persisted when the disk runs low.
  await page.evaluate(async (url) => {
    await (await caches.open('webllm/model')).delete(url);
  }, TINY_URL + SHARDS[1]);
  await page.reload();
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  await expect
    .poll(
      async () =>
        ((await hostStatus(page)) as unknown as { evicted_models: object }).evicted_models,
    )
    .toEqual({ [TINY_ID]: expect.stringMatching(/gone from the device/) });
  expect(await inspect(page)).toMatchObject({ downloaded: false, evicted: expect.any(String) });
  const entry = await page.evaluate(
    async ({ KEY, id }) => {
      const response = await fetch('v1/hearth/catalog', { headers: KEY });
      const { data } = (await response.json()) as { data: { id: string }[] };
      return data.find((m) => m.id === id);
    },
    { KEY, id: TINY_ID },
  );
  expect(entry).toMatchObject({ downloaded: false, evicted: expect.stringMatching(/evicted/) });
});
