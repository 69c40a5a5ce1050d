import { describe, expect, it } from 'vitest';
import { storeFile, type FileDeps } from '../../../src/models/added/gguf-upload';
import { ggufPartKey, ggufSizeKey } from '../../../src/models/gguf-parts';
import { ORPHAN_GRACE_MS, sweepOrphanFiles } from '../../../src/models/added/orphan-files';
import { MemoryCaches, memorySet } from '../fake-storage';
import { LocalModels } from '../../../src/engine-host/model-service';
import type { Downloads } from '../../../src/engine-host/downloads/downloads';
import { EngineQueue } from '../../../src/engine-host/queue';

const APP = 'https://app.example/hearth/';
const gguf = (size = 20) => {
  const bytes = new Uint8Array(4 + size).fill(7);
  bytes.set([0x47, 0x47, 0x55, 0x46]);
  return bytes;
};

function deps(caches: MemoryCaches, estimate?: FileDeps['estimate']): FileDeps {
  return {
    appUrl: APP,
    caches,
    catalog: { modelUsing: async () => undefined } as unknown as FileDeps['catalog'],
    partBytes: 5,
    ...(estimate && { estimate }),
  };
}

describe('uploads that leave nothing behind', () => {
  it('answers 507 from Content-Length and the storage estimate before reading the body', async () => {
    const caches = new MemoryCaches();
    // A body that never ends: reading it would never finish.
    const body = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => undefined) });
    const request = new Request(`${APP}v1/hearth/files/m.gguf`, {
      method: 'PUT',
      headers: { 'content-length': String(5e9) },
      body,
      duplex: 'half',
    } as RequestInit);
    const err = await storeFile(
      request,
      'm.gguf',
      deps(caches, async () => ({ quota: 3e9, usage: 1e9 })),
      'r',
    ).then(
      () => undefined,
      (e: unknown) => e as { status: number; code: string; message: string },
    );
    expect(err?.status).toBe(507);
    expect(err?.code).toBe('storage_full');
    expect(err?.message).toContain('needs 5 GB, and 2 GB is free');
    expect(caches.urls).toEqual([]);
  });

  it('stops storing when the client goes away, and removes the parts it stored', async () => {
    const caches = new MemoryCaches();
    const abort = new AbortController();
    const original = caches.open.bind(caches);
    let puts = 0;
    caches.open = async (name) => {
      const cache = await original(name);
      return {
        ...cache,
        put: async (url, response) => {
          await cache.put(url, response);
          if (++puts === 4) abort.abort();
        },
      };
    };
    const request = new Request(`${APP}v1/hearth/files/m.gguf`, {
      method: 'PUT',
      body: gguf(),
      signal: abort.signal,
    });
    await expect(storeFile(request, 'm.gguf', deps(caches), 'r')).rejects.toThrow();
    expect(puts).toBeLessThan(8);
    expect(caches.urls).toEqual([]);
  });

  it('sweeps uploaded files no model uses, sparing used ones and one written to just now', async () => {
    const caches = new MemoryCaches();
    const cache = await caches.open('hearth/gguf');
    const now = 1_000_000_000;
    const file = (uuid: string) => `${APP}v1/hearth/files/${uuid}/m.gguf`;
    const put = async (url: string, written_at: number) => {
      await cache.put(
        ggufSizeKey(url),
        Response.json({ bytes: 10, part_bytes: 5, complete: false, written_at }),
      );
      await cache.put(ggufPartKey(url, 0, 4), new Response('GGUF!'));
    };
    await put(file('orphan'), now - ORPHAN_GRACE_MS - 1);
    await put(file('used'), now - ORPHAN_GRACE_MS - 1);
    await put(file('uploading'), now - 1000);
    await cache.put('https://models.example/x.gguf?hearth-gguf=size', Response.json({}));
    const withKeys = {
      open: async (name: string) =>
        Object.assign(await caches.open(name), { keys: async () => caches.urls }),
    };
    const removed = await sweepOrphanFiles(withKeys, APP, new Set([file('used')]), now);
    expect(removed).toEqual([file('orphan')]);
    expect(caches.urls.filter((u) => u.includes('/orphan/'))).toEqual([]);
    expect(caches.urls.filter((u) => u.includes('/used/'))).toHaveLength(2);
    expect(caches.urls.filter((u) => u.includes('/uploading/'))).toHaveLength(2);
    expect(caches.urls).toContain('https://models.example/x.gguf?hearth-gguf=size');
  });

  it('sweeps at host start from the store’s list of used files, and sweeps nothing when it cannot be read', async () => {
    const caches = new MemoryCaches();
    const cache = await caches.open('hearth/gguf');
    const orphan = `${APP}v1/hearth/files/a/m.gguf`;
    await cache.put(
      ggufSizeKey(orphan),
      Response.json({ bytes: 5, part_bytes: 5, complete: true }),
    );
    const withKeys = Object.assign(caches, {
      open: async (name: string) =>
        Object.assign(await MemoryCaches.prototype.open.call(caches, name), {
          keys: async () => caches.urls,
        }),
    });
    const models = (usedFiles: () => Promise<ReadonlySet<string>>) =>
      new LocalModels({
        catalog: [],
        appUrl: APP,
        caches: withKeys,
        downloads: {} as Downloads,
        queue: new EngineQueue([]),
        engines: [],
        forgetLosses: async () => undefined,
        downloaded: memorySet(),
        onChange: () => undefined,
        usedFiles,
      });
    await models(() => Promise.reject(new Error('store unreadable'))).reconcile();
    expect(caches.urls).toEqual([ggufSizeKey(orphan)]);
    await models(async () => new Set()).reconcile();
    expect(caches.urls).toEqual([]);
  });
});
