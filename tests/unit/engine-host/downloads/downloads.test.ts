import { describe, expect, it, vi } from 'vitest';
import { Downloads } from '../../../../src/engine-host/downloads/downloads';
import {
  isNetworkFailure,
  unreachable,
  Unreachable,
} from '../../../../src/engine-host/downloads/download-errors';
import { catalogEntry, type CatalogEntry } from '../../../../src/models/catalog';
import { finished, type DownloadProgress } from '../../../../src/protocol/host/downloads';
import { missingFiles } from '../../../../src/models/on-device';
import { tinyModel, type TinyModel } from '../../../tiny-model';
import { FakeNetwork, MemoryCaches, memorySet } from '../../fake-storage';
import { eventually } from '../../helpers';

const APP = 'https://app.example/';
const BASE = 'https://models.example/tiny/';
const model = tinyModel({ shards: 4, shardBytes: 200 * 1024 });

function entryOf(
  extra: { integrity?: object; lib?: string; id?: string; url?: string } = {},
): CatalogEntry {
  return catalogEntry(
    {
      model: extra.url ?? 'https://models.example/tiny',
      model_id: (extra.id ?? 'acme/tiny').split('/')[1]!,
      model_lib: extra.lib ?? `${BASE}lib/tiny.wasm`,
      ...(extra.integrity && { integrity: extra.integrity }),
    },
    { owner: 'acme', id: extra.id ?? 'acme/tiny', source: 'self-hosted', tools: false },
  );
}

function setup(
  options: {
    entries?: CatalogEntry[];
    tiny?: TinyModel;
    pending?: string[];
    attempts?: number;
    caches?: MemoryCaches;
  } = {},
) {
  const caches = options.caches ?? new MemoryCaches();
  const network = new FakeNetwork(options.tiny ?? model, BASE);
  const pending = memorySet(...(options.pending ?? []));
  const downloaded = memorySet();
  const ended: DownloadProgress[] = [];
  const entries = options.entries ?? [entryOf()];
  const downloads = new Downloads({
    catalog: entries,
    appUrl: APP,
    caches,
    fetch: network.fetch,
    pending,
    downloaded,
    onChange: () => undefined,
    onEnd: (progress) => ended.push(progress),
    attempts: options.attempts ?? 3,
    retryMs: 1,
    progressMs: 0,
  });
  return { caches, network, pending, downloaded, downloads, ended, entries };
}

/** Every report of a download, until it ends. */
function follow(downloads: Downloads, id = 'acme/tiny'): Promise<DownloadProgress[]> {
  return new Promise((resolve) => {
    const reports: DownloadProgress[] = [];
    downloads.start(id, (report) => {
      reports.push(report);
      if (finished(report.phase)) resolve(reports);
    });
  });
}

describe('Downloads', () => {
  it('stores every file under the key WebLLM looks up, and reports true progress', async () => {
    const { caches, downloads, downloaded, pending, entries } = setup();
    const reports = await follow(downloads);
    const last = reports.at(-1)!;
    expect(last).toMatchObject({
      phase: 'done',
      bytes_done: model.totalBytes,
      bytes_total: model.totalBytes,
      files_done: model.files.length,
      files_total: model.files.length,
    });
    expect(reports.map((r) => r.phase).filter((p, i, all) => p !== all[i - 1])).toEqual([
      'queued',
      'manifest',
      'files',
      'verify',
      'done',
    ]);
    const bytes = reports.map((r) => r.bytes_done);
    expect(bytes).toEqual([...bytes].sort((a, b) => a - b));
    // Progress moves inside a shard, not only between files.
    expect(new Set(bytes).size).toBeGreaterThan(model.files.length);
    expect(caches.has('webllm/config', `${BASE}resolve/main/mlc-chat-config.json`)).toBe(true);
    for (const shard of model.shards) expect(caches.has('webllm/model', BASE + shard)).toBe(true);
    expect(caches.has('webllm/wasm', `${BASE}lib/tiny.wasm`)).toBe(true);
    expect(await missingFiles(entries[0]!, APP, caches)).toEqual([]);
    expect(downloaded.models).toEqual(new Set(['acme/tiny']));
    expect(pending.models.size).toBe(0);
  });

  it('keeps a library WebLLM would fetch without caching (on localhost) in Hearth’s own cache', async () => {
    const lib = 'http://localhost:8080/tiny.wasm';
    const { caches, downloads, network } = setup({ entries: [entryOf({ lib })] });
    network.aliases.set(lib, model.lib);
    expect((await follow(downloads)).at(-1)!.phase).toBe('done');
    expect(caches.has('hearth/files', lib)).toBe(true);
    expect(caches.has('webllm/wasm', lib)).toBe(false);
  });

  it('lets a second caller join the download under way, which fetches each file once', async () => {
    const { downloads, network } = setup();
    const release = network.hold(model.shards[1]!);
    const first = follow(downloads);
    await new Promise((resolve) => setTimeout(resolve, 10));
    const joined: DownloadProgress[] = [];
    const stop = downloads.start('acme/tiny', (report) => joined.push(report));
    expect(joined[0]!.phase).toBe('files');
    expect(downloads.active.map((d) => d.model)).toEqual(['acme/tiny']);
    release();
    await first;
    stop();
    expect(joined.at(-1)!.phase).toBe('done');
    for (const file of model.files) expect(network.count(file.path)).toBe(1);
    expect(downloads.active).toEqual([]);
  });

  it('resumes at the first file it lacks: files already stored are not fetched again', async () => {
    const { downloads, network } = setup();
    network.fail(model.shards[2]!, 404);
    expect((await follow(downloads)).at(-1)!.phase).toBe('failed');
    const again = await follow(downloads);
    expect(again.at(-1)).toMatchObject({ phase: 'done', bytes_done: model.totalBytes });
    expect(network.count(model.shards[0]!)).toBe(1);
    expect(network.count(model.shards[2]!)).toBe(2);
  });

  it('retries a file whose connection breaks midway, and counts only the bytes it keeps', async () => {
    const { downloads, network } = setup();
    network.fail(model.shards[1]!, 'midway', 503);
    const reports = await follow(downloads);
    expect(reports.at(-1)).toMatchObject({ phase: 'done', bytes_done: model.totalBytes });
    expect(network.count(model.shards[1]!)).toBe(3);
    const bytes = reports.map((r) => r.bytes_done);
    expect(Math.max(...bytes)).toBe(model.totalBytes);
  });

  it('fails with download_unreachable (503, not an engine error), naming the host, when the retries run out, and keeps what it completed', async () => {
    const { downloads, network, caches, downloaded, pending, ended } = setup({ attempts: 2 });
    network.fail(model.shards[3]!, 'reset', 'reset');
    const last = (await follow(downloads)).at(-1)!;
    expect(last.phase).toBe('failed');
    expect(last.error).toMatchObject({ code: 'download_unreachable', type: 'unavailable_error' });
    expect(last.error!.message).toBe(
      'Downloading acme/tiny failed: could not reach models.example (Failed to fetch): the device may be offline, or the server down',
    );
    expect(caches.has('webllm/model', BASE + model.shards[0]!)).toBe(true);
    expect(downloaded.models.size).toBe(0);
    expect(pending.models.size).toBe(0);
    expect(ended.map((p) => p.phase)).toEqual(['failed']);
  });

  it('fails at once with download_unreachable, saying so, when the device is offline', async () => {
    const caches = new MemoryCaches();
    const network = new FakeNetwork(model, BASE);
    const downloads = new Downloads({
      catalog: [entryOf()],
      appUrl: APP,
      caches,
      fetch: network.fetch,
      pending: memorySet(),
      downloaded: memorySet(),
      onChange: () => undefined,
      online: () => false,
    });
    const last = (await follow(downloads)).at(-1)!;
    expect(last).toMatchObject({ phase: 'failed', error: { code: 'download_unreachable' } });
    expect(last.error!.message).toBe(
      'The device is offline: connect to the network to download acme/tiny.',
    );
    expect(network.requests).toEqual([]);
  });

  it('does not retry a file the server does not have', async () => {
    const { downloads, network } = setup();
    network.fail('resolve/main/tokenizer.json', 404);
    const last = (await follow(downloads)).at(-1)!;
    expect(last.error!.message).toContain(`${BASE}resolve/main/tokenizer.json answered 404`);
    expect(network.count('resolve/main/tokenizer.json')).toBe(1);
  });

  it('keeps a library whose SRI hash matches', async () => {
    const entry = entryOf({ integrity: { model_lib: model.libIntegrity } });
    const { downloads, caches } = setup({ entries: [entry] });
    expect((await follow(downloads)).at(-1)!.phase).toBe('done');
    expect(caches.has('webllm/wasm', `${BASE}lib/tiny.wasm`)).toBe(true);
  });

  it('refuses a library whose SRI hash does not match: a model library is code', async () => {
    const wrong = `sha256-${Buffer.alloc(32).toString('base64')}`;
    const entry = entryOf({ integrity: { model_lib: wrong } });
    const { downloads, caches, downloaded } = setup({ entries: [entry] });
    const last = (await follow(downloads)).at(-1)!;
    expect(last.phase).toBe('failed');
    expect(last.error!.message).toContain('does not match its integrity hash');
    expect(caches.has('webllm/wasm', `${BASE}lib/tiny.wasm`)).toBe(false);
    expect(downloaded.models.size).toBe(0);
  });

  it('keeps a library whose hash does not match when the catalogue says onFailure "warn", as WebLLM does', async () => {
    const wrong = `sha256-${Buffer.alloc(32).toString('base64')}`;
    const entry = entryOf({ integrity: { model_lib: wrong, onFailure: 'warn' } });
    const { downloads, caches } = setup({ entries: [entry] });
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect((await follow(downloads)).at(-1)!.phase).toBe('done');
    expect(caches.has('webllm/wasm', `${BASE}lib/tiny.wasm`)).toBe(true);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('does not match its integrity hash'));
    warn.mockRestore();
  });

  it('reports a full disk as storage_full and leaves nothing of the model stored', async () => {
    const { downloads, caches, downloaded, entries } = setup();
    caches.quotaBytes = model.totalBytes / 2;
    const last = (await follow(downloads)).at(-1)!;
    expect(last.phase).toBe('failed');
    expect(last.error).toMatchObject({ code: 'storage_full' });
    expect(last.error!.message).toMatch(/storage is full/);
    expect(caches.urls).toEqual([]);
    expect(downloaded.models.size).toBe(0);
    expect(await missingFiles(entries[0]!, APP, caches)).toHaveLength(3);
  });

  it('cancels: the download stops, its complete files stay, and a later one resumes', async () => {
    const { downloads, network, pending, caches } = setup();
    const release = network.hold(model.shards[2]!);
    const reports = follow(downloads);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await downloads.cancel('acme/tiny');
    release();
    expect((await reports).at(-1)!.phase).toBe('cancelled');
    expect(pending.models.size).toBe(0);
    expect(caches.has('webllm/model', BASE + model.shards[0]!)).toBe(true);
    expect(caches.has('webllm/model', BASE + model.shards[2]!)).toBe(false);
    expect((await follow(downloads)).at(-1)!.phase).toBe('done');
    expect(network.count(model.shards[0]!)).toBe(1);
  });

  it('resumes the downloads a previous host left unfinished, and forgets unknown ones', async () => {
    const { downloads, pending } = setup({ pending: ['acme/tiny', 'acme/gone'] });
    const ended = new Promise<DownloadProgress>((resolve) =>
      setTimeout(() => downloads.start('acme/tiny', (r) => finished(r.phase) && resolve(r)), 0),
    );
    await downloads.resume();
    expect(downloads.active.map((d) => d.model)).toEqual(['acme/tiny']);
    expect((await ended).phase).toBe('done');
    expect(pending.models.size).toBe(0);
  });

  it('refuses a model that is not in the catalogue', () => {
    const { downloads } = setup();
    expect(() => downloads.start('acme/none')).toThrow(
      expect.objectContaining({ code: 'model_not_found' }),
    );
  });

  it('removes every file of a model, but not a library another model shares', async () => {
    const lib = `${BASE}lib/tiny.wasm`;
    const twin = entryOf({ id: 'acme/twin', url: 'https://models.example/twin', lib });
    const { downloads, caches, downloaded, entries } = setup({ entries: [entryOf(), twin] });
    await follow(downloads);
    await downloads.remove(entries[0]!);
    expect(caches.urls).toEqual([lib]);
    expect(downloaded.models.size).toBe(0);
  });

  describe('removing one of two models that share their weights (WebLLM’s `X` and `X-1k`)', () => {
    // Two catalogue entries, one weights folder: the shape of 28 pairs of WebLLM 0.2.86's prebuilt
    // records. The real pairs share their library too; `ownLib` gives the 1k one its own.
    const LIB_1K = `${BASE}lib/tiny-1k.wasm`;
    const pair = (ownLib = false) => {
      const full = entryOf();
      const short = entryOf({ id: 'acme/tiny-1k', ...(ownLib && { lib: LIB_1K }) });
      const t = setup({ entries: [full, short] });
      t.network.aliases.set(LIB_1K, model.lib);
      return { ...t, full, short };
    };

    it('keeps every file the other downloaded model lists, and it stays downloaded', async () => {
      const { downloads, caches, downloaded, full, short } = pair();
      await follow(downloads, full.id);
      await follow(downloads, short.id);
      await downloads.remove(short);
      expect(await missingFiles(full, APP, caches)).toEqual([]);
      expect(downloaded.models).toEqual(new Set([full.id]));
    });

    it('still deletes the file only the removed model lists', async () => {
      const { downloads, caches, downloaded, full, short } = pair(true);
      await follow(downloads, full.id);
      await follow(downloads, short.id);
      expect(caches.has('webllm/wasm', LIB_1K)).toBe(true);
      await downloads.remove(short);
      expect(caches.has('webllm/wasm', LIB_1K)).toBe(false);
      expect(await missingFiles(short, APP, caches)).toEqual([LIB_1K]);
      expect(await missingFiles(full, APP, caches)).toEqual([]);
      expect(downloaded.models).toEqual(new Set([full.id]));
    });

    it('deletes the shared files once no other model is downloaded', async () => {
      const { downloads, caches, full, short } = pair(true);
      await follow(downloads, short.id);
      await downloads.remove(short);
      // Nothing stays: the 1k model's library is its own, and the full model's was never fetched.
      expect(caches.urls).toEqual([]);
      expect(await missingFiles(full, APP, caches)).toHaveLength(3);
    });

    it('keeps the files of the other model while it is being downloaded', async () => {
      const { downloads, caches, network, full, short } = pair(true);
      await follow(downloads, short.id);
      // The full model finds the shared files stored and waits for its own library.
      const release = network.hold(model.lib);
      const reports = follow(downloads, full.id);
      await eventually(() => network.count(model.lib) === 1);
      await downloads.remove(short);
      release();
      expect((await reports).at(-1)!.phase).toBe('done');
      expect(await missingFiles(full, APP, caches)).toEqual([]);
      expect(caches.has('webllm/wasm', LIB_1K)).toBe(false);
    });

    it('keeps the other model’s files when a full disk fails the download', async () => {
      const { downloads, caches, downloaded, full, short } = pair(true);
      await follow(downloads, full.id);
      // Only the 1k model's own library is left to fetch, and it does not fit.
      caches.quotaBytes = caches.usedBytes;
      const last = (await follow(downloads, short.id)).at(-1)!;
      expect(last.error).toMatchObject({ code: 'storage_full' });
      expect(await missingFiles(full, APP, caches)).toEqual([]);
      expect(downloaded.models).toEqual(new Set([full.id]));
    });

    it('keeps the files of a download a previous host left pending, so it resumes without them', async () => {
      const { downloads, caches, network, pending, full, short } = pair(true);
      await follow(downloads, short.id);
      await pending.add(full.id);
      await downloads.remove(short);
      expect(await missingFiles(full, APP, caches)).toEqual([BASE + model.lib]);
      const ended = new Promise<DownloadProgress>((resolve) =>
        setTimeout(() => downloads.start(full.id, (r) => finished(r.phase) && resolve(r)), 0),
      );
      await downloads.resume();
      expect((await ended).phase).toBe('done');
      for (const shard of model.shards) expect(network.count(shard)).toBe(1);
    });
  });

  it('keeps a library another downloaded model shares, and deletes the weights only it has', async () => {
    const lib = `${BASE}lib/tiny.wasm`;
    const TWIN = 'https://models.example/twin/';
    const twin = entryOf({ id: 'acme/twin', url: 'https://models.example/twin', lib });
    const { downloads, caches, network, downloaded, entries } = setup({
      entries: [entryOf(), twin],
    });
    for (const file of model.files) network.aliases.set(TWIN + file.path, file.path);
    await follow(downloads);
    await follow(downloads, twin.id);
    await downloads.remove(entries[0]!);
    expect(caches.urls.filter((url) => url.startsWith(BASE))).toEqual([lib]);
    expect(await missingFiles(twin, APP, caches)).toEqual([]);
    expect(downloaded.models).toEqual(new Set([twin.id]));
  });
});

/**
 * Firefox's exception, as its `Cache.put` rejects a body whose connection broke: no `Error`, and
 * nothing in it says that the network failed (`NS_ERROR_FAILURE`, seen in the e2e suite).
 */
class XpcomFailure {
  readonly name = 'NS_ERROR_FAILURE';
  readonly message = '[Exception... "Failure"  nsresult: "0x80004005 (NS_ERROR_FAILURE)"]';
}

/** Caches whose `put` of a body that failed rejects as Firefox's does. */
class FirefoxCaches extends MemoryCaches {
  override async open(cacheName: string) {
    const cache = await super.open(cacheName);
    return {
      ...cache,
      put: async (url: string, response: Response) => {
        try {
          await cache.put(url, response);
        } catch (err) {
          throw err instanceof TypeError ? new XpcomFailure() : err;
        }
      },
    };
  }
}

describe('what counts as the network failing a download', () => {
  it('fails with download_unreachable when the connection keeps breaking midway, whatever error the cache puts in its place', async () => {
    const { downloads, network } = setup({ attempts: 2, caches: new FirefoxCaches() });
    network.fail(model.shards[1]!, 'midway', 'midway');
    const last = (await follow(downloads)).at(-1)!;
    expect(last).toMatchObject({ phase: 'failed', error: { code: 'download_unreachable' } });
    expect(last.error!.message).toBe(
      'Downloading acme/tiny failed: could not reach models.example (network error: the connection was reset): the device may be offline, or the server down',
    );
  });

  it.each([
    ['fetch’s TypeError (offline, DNS, refused)', new TypeError('Failed to fetch')],
    [
      'Chromium’s Cache.put NetworkError (the connection broke midway)',
      new DOMException(
        "Failed to execute 'put' on 'Cache': Cache.put() encountered a network error",
        'NetworkError',
      ),
    ],
  ])('takes %s for an unreachable host, naming it', (_what, err) => {
    expect(isNetworkFailure(err)).toBe(true);
    const said = unreachable('https://models.example/tiny/params_shard_0.bin', err);
    expect(said).toBeInstanceOf(Unreachable);
    expect((said as Error).message).toBe(
      `could not reach models.example (${err.message}): the device may be offline, or the server down`,
    );
  });

  it('leaves other failures as they are: a full disk, a missing file', () => {
    for (const err of [new DOMException('full', 'QuotaExceededError'), new Error('answered 404')]) {
      expect(isNetworkFailure(err)).toBe(false);
      expect(unreachable('https://models.example/x', err)).toBe(err);
    }
  });
});
