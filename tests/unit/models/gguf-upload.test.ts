import { describe, expect, it } from 'vitest';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { EngineQueue } from '../../../src/engine-host/queue';
import { AddedModels, memoryAddedStore } from '../../../src/models/added/added-models';
import { ggufEntry } from '../../../src/models/catalog';
import { ggufFileStored } from '../../../src/models/gguf-parts';
import { ggufBlobs } from '../../../src/models/on-device';
import { createApi } from '../../../src/api/router';
import { DeviceModels } from '../../../sw/models';
import { MemoryCaches } from '../fake-storage';
import { URL_BASE } from '../helpers';

const APP = `${URL_BASE}/hearth/`;
const KEY = { authorization: 'Bearer k' };
/** A GGUF's first bytes, and then `size` bytes more (counting up). */
const gguf = (size = 8) => {
  const bytes = new Uint8Array(4 + size).map((_, i) => i % 251);
  bytes.set([0x47, 0x47, 0x55, 0x46]);
  return bytes;
};
/** Parts of 5 bytes, so that a file of a few bytes is kept in several. */
const PART_BYTES = 5;

function stack(partBytes = PART_BYTES) {
  const caches = new MemoryCaches();
  const models = new DeviceModels({
    catalog: [],
    appUrl: APP,
    caches,
    device: async () => null,
    host: async () => null,
    added: new AddedModels(memoryAddedStore()),
  });
  const api = createApi({
    backend: Object.assign(new EngineQueue([new EchoEngine()]), {
      deleteModel: async () => undefined,
    }),
    models,
    base: '/hearth/',
    adding: {
      catalog: models,
      appUrl: APP,
      caches,
      fetch: async () => new Response('', { status: 404 }),
      partBytes,
    },
  });
  return { api, caches, models };
}

const put = (name: string, body: BodyInit, headers: Record<string, string> = {}) =>
  new Request(`${APP}v1/hearth/files/${name}`, {
    method: 'PUT',
    headers: { ...KEY, ...headers },
    body,
  });

interface Stored {
  object: string;
  path: string;
  url: string;
  bytes: number;
}

describe('PUT /v1/hearth/files/{name}.gguf', () => {
  it('stores the body in the GGUF cache, in parts as downloads are, under a path of its own', async () => {
    const { api, caches } = stack();
    const response = await api.fetch(put('my%20model-Q8_0.gguf', gguf()));
    expect(response.status).toBe(201);
    const stored = (await response.json()) as Stored;
    expect(stored).toMatchObject({ object: 'hearth.file', bytes: 12 });
    expect(stored.path).toMatch(/^v1\/hearth\/files\/[0-9a-f-]{36}\/my%20model-Q8_0\.gguf$/);
    expect(stored.url).toBe(`${APP}${stored.path}`);
    expect(await ggufFileStored(await caches.open('hearth/gguf'), stored.url, true)).toBe(true);
    // The size record and three parts of 5, 5 and 2 bytes.
    expect(caches.urls).toHaveLength(4);
    const entry = ggufEntry({ id: 'local/m:GGUF', files: [stored.url] }, 'added');
    const [blob] = (await ggufBlobs(entry, APP, caches))!;
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(gguf());
  });

  it('gives two files of one name two places', async () => {
    const { api } = stack();
    const first = (await (await api.fetch(put('m.gguf', gguf()))).json()) as Stored;
    const second = (await (await api.fetch(put('m.gguf', gguf()))).json()) as Stored;
    expect(first.url).not.toBe(second.url);
  });

  it('takes a raw body of any type, larger than the 4 MiB limit of JSON bodies', async () => {
    const { api } = stack(1024 * 1024);
    const big = gguf(5 * 1024 * 1024);
    const response = await api.fetch(
      put('big.gguf', big, { 'content-type': 'application/octet-stream' }),
    );
    expect(response.status).toBe(201);
    expect(((await response.json()) as Stored).bytes).toBe(big.byteLength);
  });

  it('refuses a body that is not a GGUF and stores nothing', async () => {
    const { api, caches } = stack();
    const response = await api.fetch(put('page.gguf', '<!doctype html>'));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: 'invalid_value' });
    expect(caches.urls).toEqual([]);
  });

  it.each([
    ['a name without .gguf', 'model.bin'],
    ['a name with a folder', 'a%2Fb.gguf'],
    ['a nested path', 'a/b.gguf'],
  ])('refuses %s with 400', async (_what, name) => {
    const { api } = stack();
    const response = await api.fetch(put(name, gguf()));
    expect(response.status).toBe(400);
    expect((await response.json()).error.code).toBe('invalid_value');
  });

  it('answers 507 storage_full when the device cannot hold the file, and keeps nothing of it', async () => {
    const { api, caches } = stack();
    // Room for the size record and a part, not for the whole file.
    caches.quotaBytes = 52;
    const response = await api.fetch(put('m.gguf', gguf()));
    expect(response.status).toBe(507);
    expect((await response.json()).error.code).toBe('storage_full');
    expect(caches.urls).toEqual([]);
  });

  it('stores a file that POST /v1/hearth/models then adds as a model already on the device', async () => {
    const { api } = stack();
    const stored = (await (await api.fetch(put('tiny-Q8_0.gguf', gguf()))).json()) as Stored;
    const response = await api.fetch(
      new Request(`${APP}v1/hearth/models`, {
        method: 'POST',
        headers: { ...KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ source: stored.path }),
      }),
    );
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      id: 'local/tiny:Q8_0',
      engine: 'llama.cpp',
      downloaded: true,
      source: 'added',
    });
  });
});

describe('DELETE /v1/hearth/files/{…}', () => {
  const del = (path: string) => new Request(`${APP}${path}`, { method: 'DELETE', headers: KEY });

  it('removes a stored file that no model uses', async () => {
    const { api, caches } = stack();
    const stored = (await (await api.fetch(put('m.gguf', gguf()))).json()) as Stored;
    const response = await api.fetch(del(stored.path));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: 'hearth.file',
      path: stored.path,
      deleted: true,
    });
    expect(caches.urls).toEqual([]);
    expect((await api.fetch(del(stored.path))).status).toBe(404);
  });

  it('keeps a file a model uses (409 model_in_use), naming the model to delete instead', async () => {
    const { api, caches } = stack();
    const stored = (await (await api.fetch(put('m.gguf', gguf()))).json()) as Stored;
    await api.fetch(
      new Request(`${APP}v1/hearth/models`, {
        method: 'POST',
        headers: { ...KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ source: stored.path }),
      }),
    );
    const response = await api.fetch(del(stored.path));
    expect(response.status).toBe(409);
    const error = (await response.json()).error as { code: string; message: string };
    expect(error.code).toBe('model_in_use');
    expect(error.message).toContain('local/m:GGUF');
    expect(await ggufFileStored(await caches.open('hearth/gguf'), stored.url)).toBe(true);
  });
});
