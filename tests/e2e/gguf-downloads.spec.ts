/**
 * GGUF downloads in Chromium: the bench-size fixture GGUF (~50 MB) from the test's model server,
 * fetched by Range into parts (256 KiB in the e2e build, ~200 of them), with true progress;
 * broken midway, the download resumes with the parts it lacks only, in the same host or the next;
 * cancel keeps the parts, delete and a full disk leave none; the bytes stored are the file's.
 */
import { createHash } from 'node:crypto';
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import type { DownloadProgress } from '../../src/protocol/host/downloads';
import { chromiumOnly, downloadInPage, hostStatus, KEY, openApp } from './helpers';
import {
  BENCH_GGUF_ID,
  BENCH_GGUF_PATH,
  BENCH_GGUF_URL,
  ModelServer,
  rangedFile,
} from './model-server';

const server = new ModelServer();
const MODEL_PATH = `v1/hearth/models/${BENCH_GGUF_ID}`;
/** The e2e build's part size (playwright.config.ts). */
const PART = 256 * 1024;
const file = rangedFile(BENCH_GGUF_PATH)!;
const SIZE = file.byteLength;
const SHA = createHash('sha256').update(file).digest('hex');
/** Every part's Range header, in order. */
const RANGES = Array.from(
  { length: Math.ceil(SIZE / PART) },
  (_, i) => `bytes=${i * PART}-${Math.min((i + 1) * PART, SIZE) - 1}`,
);
/** The part the tests break or hold: mid-file. */
const MID = Math.floor(RANGES.length / 2);

test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

/** Starts (or joins) the download in the page and reads its SSE stream to the end. */
async function download(page: Page) {
  return (await downloadInPage<DownloadProgress>(page, MODEL_PATH)).events;
}

/** Starts the download from the page without waiting for it. */
function startDownload(page: Page) {
  return page.evaluate(
    ({ path, KEY }) => void fetch(`${path}/download`, { method: 'POST', headers: KEY }),
    { path: MODEL_PATH, KEY },
  );
}

/** `GET /v1/hearth/models/e2e/fixture-bench-GGUF:F32`. */
function inspect(page: Page) {
  return page.evaluate(async ({ path, KEY }) => (await fetch(path, { headers: KEY })).json(), {
    path: MODEL_PATH,
    KEY,
  }) as Promise<{ downloaded: boolean; missing_files: string[]; evicted: string | null }>;
}

/**
 * What `hearth/gguf` holds of the file: whether its size record is there, the Range of each
 * part stored (in order), and the SHA-256 of the parts joined when they cover the file.
 */
function stored(page: Page) {
  return page.evaluate(async (url) => {
    const cache = await caches.open('hearth/gguf');
    const keys = (await cache.keys()).map((r) => r.url).filter((key) => key.startsWith(url));
    const parts = keys
      .map((key) => /\?hearth-gguf=(\d+)-(\d+)$/.exec(key))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ key: m[0], first: Number(m[1]), last: Number(m[2]) }))
      .sort((a, b) => a.first - b.first);
    const record = keys.includes(`${url}?hearth-gguf=size`);
    const whole = parts.every((p, i) => p.first === (i === 0 ? 0 : parts[i - 1]!.last + 1));
    let sha: string | null = null;
    if (parts.length > 0 && whole) {
      const blobs = await Promise.all(
        parts.map(async (p) => (await cache.match(`${url}${p.key}`))!.blob()),
      );
      const digest = await crypto.subtle.digest('SHA-256', await new Blob(blobs).arrayBuffer());
      sha = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
    }
    return {
      record,
      ranges: parts.map((p) => `bytes=${p.first}-${p.last}`),
      sha,
      other: keys.length - parts.length - (record ? 1 : 0),
    };
  }, BENCH_GGUF_URL);
}

test('a GGUF downloads in parts by Range with true progress, the bytes stored are the file, and delete removes them', async ({
  page,
}) => {
  await openApp(page);
  expect(await inspect(page)).toMatchObject({ downloaded: false, missing_files: [BENCH_GGUF_URL] });
  const events = await download(page);
  expect(events.at(-1)).toMatchObject({
    model: BENCH_GGUF_ID,
    phase: 'done',
    bytes_done: SIZE,
    bytes_total: SIZE,
    files_done: 1,
    files_total: 1,
  });
  const during = events.filter((e) => e.phase === 'files');
  expect(during.length).toBeGreaterThan(10);
  const bytes = events.map((e) => e.bytes_done);
  expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
  expect(during.some((e) => e.bytes_done > 0 && e.bytes_done < SIZE / 2)).toBe(true);
  expect(during.every((e) => e.bytes_total === SIZE || e.bytes_done === 0)).toBe(true);
  // One request per part, in order, each once.
  expect(server.rangesOf(BENCH_GGUF_PATH)).toEqual(RANGES);
  expect(await stored(page)).toEqual({ record: true, ranges: RANGES, sha: SHA, other: 0 });
  expect(await inspect(page)).toMatchObject({ downloaded: true, missing_files: [] });

  const deleted = await page.evaluate(
    async ({ path, KEY }) => (await fetch(path, { method: 'DELETE', headers: KEY })).json(),
    { path: MODEL_PATH, KEY },
  );
  expect(deleted).toEqual({ id: BENCH_GGUF_ID, object: 'model', deleted: true });
  expect(await stored(page)).toEqual({ record: false, ranges: [], sha: null, other: 0 });
  expect(await inspect(page)).toMatchObject({ downloaded: false, missing_files: [BENCH_GGUF_URL] });
});

test('a download whose connection breaks midway resumes with only the parts it lacks', async ({
  page,
}) => {
  await openApp(page);
  // The middle part breaks halfway each time it is tried: the download fails.
  server.troubleRange(BENCH_GGUF_PATH, MID * PART, 'break', 'break', 'break');
  const failed = (await download(page)).at(-1)!;
  // The connection that keeps breaking is the network's failure, not the engine's.
  expect(failed).toMatchObject({ phase: 'failed', error: { code: 'download_unreachable' } });
  expect(server.rangesOf(BENCH_GGUF_PATH)).toEqual([
    ...RANGES.slice(0, MID + 1),
    RANGES[MID],
    RANGES[MID],
  ]);
  expect(await stored(page)).toMatchObject({ record: true, ranges: RANGES.slice(0, MID) });
  expect(await inspect(page)).toMatchObject({ downloaded: false, missing_files: [BENCH_GGUF_URL] });

  server.ranged.length = 0;
  const resumed = await download(page);
  expect(resumed.at(-1)).toMatchObject({ phase: 'done', bytes_done: SIZE, bytes_total: SIZE });
  // The parts stored count as done from the start of the new download.
  const firstCounted = resumed.find((e) => e.bytes_done > 0)!;
  expect(firstCounted.bytes_done).toBeGreaterThanOrEqual(PART);
  expect(server.rangesOf(BENCH_GGUF_PATH)).toEqual(RANGES.slice(MID));
  expect(await stored(page)).toEqual({ record: true, ranges: RANGES, sha: SHA, other: 0 });
  expect(await inspect(page)).toMatchObject({ downloaded: true });
});

test('a host tab closed mid-download: the next host resumes at the first part it lacks', async ({
  page,
}) => {
  await openApp(page);
  server.troubleRange(BENCH_GGUF_PATH, MID * PART, 'hold');
  await startDownload(page);
  await expect.poll(() => server.holding).toBe(1);
  await page.reload();
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  server.release();
  await expect.poll(async () => (await inspect(page)).downloaded, { timeout: 30_000 }).toBe(true);
  // Every part once, but the one that was arriving when the host went. (Firefox kept what had
  // come of that part, cut short, in the cache: the next host must fetch it again all the same.)
  expect(server.rangesOf(BENCH_GGUF_PATH)).toEqual([
    ...RANGES.slice(0, MID + 1),
    ...RANGES.slice(MID),
  ]);
  expect(await stored(page)).toEqual({ record: true, ranges: RANGES, sha: SHA, other: 0 });
});

test('a cancelled download keeps its parts, and deleting the model removes them', async ({
  page,
}) => {
  await openApp(page);
  server.troubleRange(BENCH_GGUF_PATH, MID * PART, 'hold');
  const stream = download(page);
  await expect.poll(() => server.holding).toBe(1);
  const cancelled = await page.evaluate(
    async ({ path, KEY }) =>
      (await fetch(`${path}/download`, { method: 'DELETE', headers: KEY })).json(),
    { path: MODEL_PATH, KEY },
  );
  expect(cancelled).toEqual({ id: BENCH_GGUF_ID, object: 'hearth.download', cancelled: true });
  expect((await stream).at(-1)!.phase).toBe('cancelled');
  server.release();
  expect(await stored(page)).toMatchObject({ record: true, ranges: RANGES.slice(0, MID) });
  expect(await inspect(page)).toMatchObject({ downloaded: false });
  await page.evaluate(async ({ path, KEY }) => fetch(path, { method: 'DELETE', headers: KEY }), {
    path: MODEL_PATH,
    KEY,
  });
  expect(await stored(page)).toEqual({ record: false, ranges: [], sha: null, other: 0 });
});

test.describe('in a fresh profile', () => {
  // The quota is set from the usage the browser reports, which after a warm context's reset
  // still counts what the tests before downloaded and deleted (44 MB where a fresh profile has
  // 18): under load the space came back during the download, and it fit.
  test.use({ freshContext: true });

  test('a full disk fails a GGUF download with storage_full and leaves no part stored', async ({
    page,
    context,
    browserName,
  }) => {
    chromiumOnly(browserName, 'CDP Storage.overrideQuotaForOrigin makes the disk full');
    await openApp(page);
    const origin = new URL(page.url()).origin;
    const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + SIZE / 2 });
    try {
      const last = (await download(page)).at(-1)!;
      expect(last).toMatchObject({ phase: 'failed', error: { code: 'storage_full' } });
      expect(server.rangesOf(BENCH_GGUF_PATH).length).toBeGreaterThan(10);
      expect(await stored(page)).toEqual({ record: false, ranges: [], sha: null, other: 0 });
      expect(await inspect(page)).toMatchObject({ downloaded: false });
    } finally {
      await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    }
  });
});

/** The host's `evicted_models`. */
async function evicted(page: Page): Promise<Record<string, string>> {
  return ((await hostStatus(page)) as unknown as { evicted_models: Record<string, string> })
    .evicted_models;
}

test('a downloaded GGUF that lost a part is reported evicted at the next start', async ({
  page,
}) => {
  await openApp(page);
  expect((await download(page)).at(-1)!.phase).toBe('done');
  // Whole, it is still on the device after a reload.
  await page.reload();
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  await expect.poll(async () => (await inspect(page)).downloaded).toBe(true);
  expect(await evicted(page)).toEqual({});
  // What the browser would do if it evicted one entry (it evicts an origin's storage whole).
  await page.evaluate(
    async (key) => {
      await (await caches.open('hearth/gguf')).delete(key);
    },
    `${BENCH_GGUF_URL}?hearth-gguf=${RANGES[MID]!.slice('bytes='.length)}`,
  );
  await page.reload();
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  await expect
    .poll(() => evicted(page))
    .toEqual({ [BENCH_GGUF_ID]: expect.stringMatching(/gone from the device/) });
});
