/**
 * GGUF downloads: each file stored in parts of a fixed size, each part fetched with a Range
 * request, so that a download that stops resumes at the first part it lacks. The model is the
 * real fixture GGUF (scripts/fixture-gguf.mjs), cut into parts of 64 KiB here.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fixtureGguf, splitGguf } from '../../../../scripts/fixture-gguf.mjs';
import { Downloads } from '../../../../src/engine-host/downloads/downloads';
import { ggufEntry, type GgufEntry } from '../../../../src/models/catalog';
import { finished, type DownloadProgress } from '../../../../src/protocol/host/downloads';
import { ggufPartKey, ggufSizeKey } from '../../../../src/models/gguf-parts';
import { ggufBlobs, missingFiles } from '../../../../src/models/on-device';
import { MemoryCaches, memorySet, RangeServer } from '../../fake-storage';

const APP = 'https://app.example/';
const URL_ = 'https://models.example/fixture.gguf';
const CACHE = 'hearth/gguf';
const PART = 64 * 1024;
const model = fixtureGguf();
/** The parts' ranges, as Range headers. */
const RANGES = Array.from({ length: Math.ceil(model.byteLength / PART) }, (_, i) => {
  const last = Math.min((i + 1) * PART, model.byteLength) - 1;
  return `bytes=${i * PART}-${last}`;
});

function entryOf(id = 'acme/fixture-GGUF:F32', files = [URL_]): GgufEntry {
  return ggufEntry({ id, files }, 'added');
}

function setup(
  options: { entries?: GgufEntry[]; caches?: MemoryCaches; server?: RangeServer } = {},
) {
  const caches = options.caches ?? new MemoryCaches();
  const server = options.server ?? new RangeServer();
  if (!options.server) server.serve(URL_, model);
  const pending = memorySet();
  const downloaded = memorySet();
  const entries = options.entries ?? [entryOf()];
  const downloads = new Downloads({
    catalog: entries,
    appUrl: APP,
    caches,
    fetch: server.fetch,
    pending,
    downloaded,
    onChange: () => undefined,
    attempts: 3,
    retryMs: 1,
    progressMs: 0,
    ggufPartBytes: PART,
  });
  return { caches, server, pending, downloaded, downloads, entries };
}

/** Every report of a download, until it ends. */
function follow(downloads: Downloads, id = 'acme/fixture-GGUF:F32'): Promise<DownloadProgress[]> {
  return new Promise((resolve) => {
    const reports: DownloadProgress[] = [];
    downloads.start(id, (report) => {
      reports.push(report);
      if (finished(report.phase)) resolve(reports);
    });
  });
}

/** Bytes by their SHA-256 (comparing 380 KB arrays element by element is slow). */
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** The SHA-256 of each file as llama.cpp would get it from the cache. */
async function loaded(entry: GgufEntry, caches: MemoryCaches): Promise<string[] | null> {
  const blobs = await ggufBlobs(entry, APP, caches);
  return blobs && Promise.all(blobs.map(async (b) => sha(new Uint8Array(await b.arrayBuffer()))));
}

/** The cache keys of the file's parts, in order. */
const partKeys = (url = URL_, bytes = model.byteLength) =>
  Array.from({ length: Math.ceil(bytes / PART) }, (_, i) =>
    ggufPartKey(url, i * PART, Math.min((i + 1) * PART, bytes) - 1),
  );

describe('GGUF downloads', () => {
  it('stores the file in parts, each fetched with a Range request, and reports true progress', async () => {
    const { caches, server, downloads, downloaded, entries } = setup();
    expect(RANGES.length).toBeGreaterThan(4);
    const reports = await follow(downloads);
    expect(reports.at(-1)).toMatchObject({
      phase: 'done',
      bytes_done: model.byteLength,
      bytes_total: model.byteLength,
      files_done: 1,
      files_total: 1,
    });
    const bytes = reports.map((r) => r.bytes_done);
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    expect(new Set(bytes).size).toBeGreaterThan(RANGES.length);
    expect(server.ranges(URL_)).toEqual(RANGES);
    // Every part under its own key, the size record beside them, and nothing under the URL itself.
    expect(caches.urls.sort()).toEqual([...partKeys(), ggufSizeKey(URL_)].sort());
    expect(caches.has(CACHE, URL_)).toBe(false);
    expect(await loaded(entries[0]!, caches)).toEqual([sha(model)]);
    expect(await missingFiles(entries[0]!, APP, caches, { thorough: true })).toEqual([]);
    expect(downloaded.models).toEqual(new Set([entries[0]!.id]));
  });

  it('bypasses the browser’s HTTP cache, which would keep a second copy and ask for ranges of its own', async () => {
    const { server, downloads } = setup();
    server.hideHeaders = true; // a HEAD too
    await follow(downloads);
    expect(server.requests.length).toBeGreaterThan(RANGES.length);
    expect(server.requests.every((r) => r.cache === 'no-store')).toBe(true);
  });

  it('keys parts by a query, not a fragment, which the Cache API ignores', () => {
    expect(ggufPartKey(URL_, 0, 65535)).toBe(`${URL_}?hearth-gguf=0-65535`);
    expect(ggufSizeKey(URL_)).toBe(`${URL_}?hearth-gguf=size`);
    expect(ggufSizeKey('https://x.example/m.gguf?download=1#top')).toBe(
      'https://x.example/m.gguf?download=1&hearth-gguf=size',
    );
  });

  it('retries a part whose connection breaks midway with the same Range, fetching nothing else again', async () => {
    const { server, downloads, caches, entries } = setup();
    server.fail(URL_, 2 * PART, 'midway', 'reset');
    const reports = await follow(downloads);
    expect(reports.at(-1)).toMatchObject({ phase: 'done', bytes_done: model.byteLength });
    expect(server.ranges(URL_)).toEqual([
      ...RANGES.slice(0, 3),
      RANGES[2],
      RANGES[2],
      ...RANGES.slice(3),
    ]);
    expect(Math.max(...reports.map((r) => r.bytes_done))).toBe(model.byteLength);
    expect(await loaded(entries[0]!, caches)).toEqual([sha(model)]);
  });

  it('resumes after a break mid-file at the first missing part, also in a new host', async () => {
    const caches = new MemoryCaches();
    const first = setup({ caches });
    first.server.fail(URL_, 3 * PART, 'midway', 'midway', 'midway');
    const failed = (await follow(first.downloads)).at(-1)!;
    // The connection that keeps breaking is the network's failure, not the engine's.
    expect(failed).toMatchObject({ phase: 'failed', error: { code: 'download_unreachable' } });
    expect(await missingFiles(first.entries[0]!, APP, caches)).toEqual([URL_]);
    // A new host: other Downloads, the same caches and server.
    const next = setup({ caches, server: first.server });
    first.server.requests.length = 0;
    const reports = await follow(next.downloads);
    expect(reports.at(-1)).toMatchObject({
      phase: 'done',
      bytes_done: model.byteLength,
      bytes_total: model.byteLength,
    });
    // Only the missing parts: the stored ones count as done from the start.
    expect(first.server.ranges(URL_)).toEqual(RANGES.slice(3));
    expect(await loaded(next.entries[0]!, caches)).toEqual([sha(model)]);
  });

  it('cuts the whole file into parts when the server answers a Range request with 200', async () => {
    const { server, downloads, caches, entries } = setup();
    server.ignoreRanges = true;
    server.fail(URL_, 'any', 'midway', 'midway', 'midway');
    expect((await follow(downloads)).at(-1)!.phase).toBe('failed');
    // Half the file came before the break: the parts it covered are kept.
    const kept = partKeys().filter((key) => caches.has(CACHE, key));
    expect(kept.length).toBe(Math.floor(model.byteLength / 2 / PART));
    const stored = kept.map((key) => caches.bytesOf(CACHE, key));
    const reports = await follow(downloads);
    expect(reports.at(-1)).toMatchObject({ phase: 'done', bytes_done: model.byteLength });
    // The server still sends the whole file: the parts kept are passed over, not stored again.
    expect(kept.every((key, i) => caches.bytesOf(CACHE, key) === stored[i])).toBe(true);
    expect(await loaded(entries[0]!, caches)).toEqual([sha(model)]);
  });

  it('refuses a file that is not a GGUF, saying so, and stores nothing', async () => {
    const { server, downloads, caches, downloaded } = setup();
    server.serve(URL_, new TextEncoder().encode('<!doctype html><p>Sign in to download</p>'));
    const last = (await follow(downloads)).at(-1)!;
    expect(last.phase).toBe('failed');
    expect(last.error).toMatchObject({ code: 'invalid_value', type: 'invalid_request_error' });
    expect(last.error!.message).toMatch(/not a GGUF file/);
    expect(last.error!.message).toContain(URL_);
    expect(caches.urls).toEqual([]);
    expect(downloaded.models.size).toBe(0);
    // Not retried: a retry would get the same bytes.
    expect(server.ranges(URL_)).toHaveLength(1);
  });

  it('cancels: the parts it completed stay, and a later download fetches only the rest', async () => {
    const { server, downloads, caches, pending } = setup();
    const release = server.hold(URL_, 2 * PART);
    const reports = follow(downloads);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await downloads.cancel('acme/fixture-GGUF:F32');
    release();
    expect((await reports).at(-1)!.phase).toBe('cancelled');
    expect(pending.models.size).toBe(0);
    expect(caches.has(CACHE, partKeys()[1]!)).toBe(true);
    expect(caches.has(CACHE, partKeys()[2]!)).toBe(false);
    server.requests.length = 0;
    expect((await follow(downloads)).at(-1)!.phase).toBe('done');
    expect(server.ranges(URL_)).toEqual(RANGES.slice(2));
  });

  it('removes every part and the size record, and never what another model lists', async () => {
    const twin = entryOf('other/fixture-GGUF:F32');
    const own = 'https://models.example/own.gguf';
    const alone = entryOf('acme/alone-GGUF:F32', [own]);
    const { server, downloads, caches, downloaded, entries } = setup({
      entries: [entryOf(), twin, alone],
    });
    server.serve(own, model);
    await follow(downloads);
    await follow(downloads, twin.id);
    await follow(downloads, alone.id);
    expect(caches.urls.filter((url) => url.startsWith(own))).toHaveLength(RANGES.length + 1);
    await downloads.remove(entries[0]!);
    // The twin lists the same file: it stays whole.
    expect(await missingFiles(twin, APP, caches, { thorough: true })).toEqual([]);
    await downloads.remove(alone);
    expect(caches.urls.filter((url) => url.startsWith(own))).toEqual([]);
    await downloads.remove(twin);
    expect(caches.urls).toEqual([]);
    expect(downloaded.models.size).toBe(0);
  });

  it('reports a full disk as storage_full and removes every part it had stored', async () => {
    const { downloads, caches, downloaded, entries } = setup();
    caches.quotaBytes = model.byteLength / 2;
    const last = (await follow(downloads)).at(-1)!;
    expect(last.error).toMatchObject({ code: 'storage_full' });
    // It had stored its size record and the parts that fitted, then removed them.
    expect(caches.puts).toContain(partKeys()[1]);
    expect(caches.urls).toEqual([]);
    expect(downloaded.models.size).toBe(0);
    expect(await missingFiles(entries[0]!, APP, caches)).toEqual([URL_]);
  });

  it('reads the size with HEAD when CORS hides Content-Range', async () => {
    const { server, downloads, caches, entries } = setup();
    server.hideHeaders = true;
    expect((await follow(downloads)).at(-1)).toMatchObject({
      phase: 'done',
      bytes_total: model.byteLength,
    });
    expect(server.requests.filter((r) => r.method === 'HEAD')).toHaveLength(1);
    expect(await loaded(entries[0]!, caches)).toEqual([sha(model)]);
  });

  it('starts a file over when it changed on the server since its first parts were stored', async () => {
    const { server, downloads, caches, entries } = setup();
    server.fail(URL_, 2 * PART, 404);
    expect((await follow(downloads)).at(-1)!.phase).toBe('failed');
    // A new upload under the same URL: a different size and ETag.
    const other = fixtureGguf({ width: 128 });
    server.serve(URL_, other);
    server.requests.length = 0;
    expect((await follow(downloads)).at(-1)).toMatchObject({
      phase: 'done',
      bytes_done: other.byteLength,
      bytes_total: other.byteLength,
    });
    // The first part it lacked told of the change; then every part of the new file.
    const parts = partKeys(URL_, other.byteLength).map((key) => `bytes=${key.split('=').at(-1)}`);
    expect(server.ranges(URL_)).toEqual([RANGES[2], ...parts]);
    expect(await loaded(entries[0]!, caches)).toEqual([sha(other)]);
    expect(caches.urls.sort()).toEqual(
      [...partKeys(URL_, other.byteLength), ggufSizeKey(URL_)].sort(),
    );
  });

  it('counts a file with a missing part as missing, which only the thorough check sees', async () => {
    const { downloads, caches, entries } = setup();
    await follow(downloads);
    const [, evicted] = partKeys();
    await (await caches.open(CACHE)).delete(evicted!);
    // The quick check reads the size record only; the thorough one finds the hole.
    expect(await missingFiles(entries[0]!, APP, caches)).toEqual([]);
    expect(await missingFiles(entries[0]!, APP, caches, { thorough: true })).toEqual([URL_]);
    expect(await ggufBlobs(entries[0]!, APP, caches)).toBeNull();
  });

  it('fetches again only the part that went missing from a downloaded file', async () => {
    const { server, downloads, caches, entries } = setup();
    await follow(downloads);
    await (await caches.open(CACHE)).delete(partKeys()[3]!);
    server.requests.length = 0;
    expect((await follow(downloads)).at(-1)!.phase).toBe('done');
    expect(server.ranges(URL_)).toEqual([RANGES[3]]);
    expect(await loaded(entries[0]!, caches)).toEqual([sha(model)]);
  });

  it('fetches again a part stored short (as Firefox keeps one when its worker ends mid-part), never passing over it', async () => {
    const caches = new MemoryCaches();
    const first = setup({ caches });
    first.server.fail(URL_, 4 * PART, 'midway', 'midway', 'midway');
    expect((await follow(first.downloads)).at(-1)!.phase).toBe('failed');
    // Parts 0 to 3 are stored; the last of them is cut to half.
    const cache = await caches.open(CACHE);
    const key = partKeys()[3]!;
    const whole = new Uint8Array(await (await cache.match(key))!.arrayBuffer());
    await cache.put(key, new Response(whole.slice(0, PART / 2)));
    const next = setup({ caches, server: first.server });
    first.server.requests.length = 0;
    expect((await follow(next.downloads)).at(-1)!.phase).toBe('done');
    expect(first.server.ranges(URL_)).toEqual(RANGES.slice(3));
    expect(await loaded(next.entries[0]!, caches)).toEqual([sha(model)]);
  });

  it('downloads a split GGUF as several files, each in parts, and hands them over in order', async () => {
    const pieces = splitGguf(model, 3);
    const urls = pieces.map((_, i) => `https://models.example/fixture-0000${i + 1}-of-00003.gguf`);
    const split = entryOf('acme/split-GGUF:F32', urls);
    const server = new RangeServer();
    pieces.forEach((bytes, i) => server.serve(urls[i]!, bytes));
    const { downloads, caches } = setup({ entries: [split], server });
    const total = pieces.reduce((n, p) => n + p.byteLength, 0);
    expect((await follow(downloads, split.id)).at(-1)).toMatchObject({
      phase: 'done',
      bytes_done: total,
      bytes_total: total,
      files_done: 3,
      files_total: 3,
    });
    expect(await loaded(split, caches)).toEqual(pieces.map(sha));
    for (const [i, url] of urls.entries()) {
      expect(caches.has(CACHE, ggufSizeKey(url))).toBe(true);
      expect(partKeys(url, pieces[i]!.byteLength).every((key) => caches.has(CACHE, key))).toBe(
        true,
      );
    }
  });
});
