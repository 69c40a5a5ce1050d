/**
 * A GGUF download checks the device's room before it stores anything, and makes its parts one at
 * a time: a server's claimed size must not fill the storage, nor the engine worker's memory.
 */
import { describe, expect, it } from 'vitest';
import { Downloads } from '../../../../src/engine-host/downloads/downloads';
import { ggufEntry } from '../../../../src/models/catalog';
import { finished, type DownloadProgress } from '../../../../src/protocol/host/downloads';
import { ggufParts, ggufSizeKey } from '../../../../src/models/gguf-parts';
import { MemoryCaches, memorySet } from '../../fake-storage';

const URL_ = 'https://models.example/huge.gguf';
const ID = 'acme/huge-GGUF:F32';
const HUGE = 2 ** 50;

/** A server that claims `size` bytes for every range and sends GGUF bytes. */
function claiming(size: number) {
  const requests: string[] = [];
  const fetch = async (url: string, init: { headers?: Record<string, string> }) => {
    const range = init.headers?.range ?? '';
    requests.push(range);
    const [, first = '0', last = '0'] = /bytes=(\d+)-(\d+)/.exec(range) ?? [];
    const bytes = new Uint8Array(Number(last) - Number(first) + 1).fill(1);
    bytes.set([0x47, 0x47, 0x55, 0x46]);
    return new Response(bytes, {
      status: 206,
      headers: { 'content-range': `bytes ${first}-${last}/${size}` },
    });
  };
  return { fetch, requests };
}

function setup(caches = new MemoryCaches(), pending = memorySet()) {
  const server = claiming(HUGE);
  const downloads = new Downloads({
    catalog: [ggufEntry({ id: ID, files: [URL_] }, 'added')],
    appUrl: 'https://app.example/',
    caches,
    fetch: server.fetch,
    pending,
    downloaded: memorySet(),
    onChange: () => undefined,
    attempts: 1,
    retryMs: 1,
    progressMs: 0,
    ggufPartBytes: 1024,
    estimate: async () => ({ quota: 10e9, usage: 4e9 }),
  });
  return { downloads, server, caches, pending };
}

function follow(downloads: Downloads): Promise<DownloadProgress> {
  return new Promise((resolve) => {
    downloads.start(ID, (report) => {
      if (finished(report.phase)) resolve(report);
    });
  });
}

describe('the room a GGUF download needs', () => {
  it('makes the parts of a file one at a time, not a list of them all', () => {
    const parts = ggufParts(URL_, { bytes: HUGE, part_bytes: 1, complete: false });
    expect(Array.isArray(parts)).toBe(false);
    const [first] = parts;
    expect(first).toMatchObject({ first: 0, last: 0 });
  });

  it('fails a file larger than the free space with 507 storage_full saying what it needs, storing nothing', async () => {
    const { downloads, caches, pending } = setup();
    const end = await follow(downloads);
    expect(end.phase).toBe('failed');
    expect(end.error?.code).toBe('storage_full');
    expect(end.error?.message).toMatch(/needs 1,125,900 GB, and 6 GB is free/);
    const cache = await caches.open('hearth/gguf');
    expect(await cache.match(ggufSizeKey(URL_))).toBeUndefined();
    expect(pending.models.size).toBe(0);
  });

  it('drops a pending download that can no longer fit at host start, and the next start is clean', async () => {
    const caches = new MemoryCaches();
    const cache = await caches.open('hearth/gguf');
    // Begun before the check: the record claims 2^50 bytes of parts of 1 KiB.
    await cache.put(
      ggufSizeKey(URL_),
      Response.json({ bytes: HUGE, part_bytes: 1024, complete: false }),
    );
    const pending = memorySet(ID);
    const { downloads, server } = setup(caches, pending);
    const ended = follow(downloads);
    await downloads.resume();
    const end = await ended;
    expect(end.phase).toBe('failed');
    expect(end.error?.code).toBe('storage_full');
    expect(server.requests).toEqual([]);
    expect(await cache.match(ggufSizeKey(URL_))).toBeUndefined();
    expect(pending.models.size).toBe(0);
  });
});
