import { describe, expect, it } from 'vitest';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { EngineQueue } from '../../../src/engine-host/queue';
import {
  AddedModels,
  memoryAddedStore,
  type AddedModelStore,
  type AddedRecord,
} from '../../../src/models/added/added-models';
import { ggufEntry } from '../../../src/models/catalog';
import { OpenAIError } from '../../../src/protocol/errors';
import type { FetchLike } from '../../../src/models/added/gguf-source';
import { createApi } from '../../../src/api/router';
import { DeviceModels } from '../../../sw/models';
import { MemoryCaches } from '../fake-storage';
import { URL_BASE } from '../helpers';

const APP = `${URL_BASE}/`;
const HUB = 'https://hub.example';
const GGUF = new Uint8Array([0x47, 0x47, 0x55, 0x46, 3, 0, 0, 0, 1, 2, 3, 4]);
const FILE = 'https://models.example/tiny-Q8_0.gguf';

const u32 = (n: number) => [...new Uint8Array(new Uint32Array([n]).buffer)];
const u64 = (n: number) => [...new Uint8Array(new BigUint64Array([BigInt(n)]).buffer)];
const text = (s: string) => [
  ...u64(new TextEncoder().encode(s).length),
  ...new TextEncoder().encode(s),
];
/**
 * The beginning of a GGUF v3 file of this architecture with these u32 keys of its own (a
 * vocabulary of 200 000 bytes after them, which the header's first 256 KiB do not hold whole).
 */
function ggufOf(arch: string, own: Record<string, number>): Uint8Array<ArrayBuffer> {
  const pairs = Object.entries(own);
  const bytes = [0x47, 0x47, 0x55, 0x46, ...u32(3), ...u64(0), ...u64(pairs.length + 2)];
  bytes.push(...text('general.architecture'), ...u32(8), ...text(arch));
  for (const [key, value] of pairs) bytes.push(...text(`${arch}.${key}`), ...u32(4), ...u32(value));
  bytes.push(...text('tokenizer.ggml.token_type'), ...u32(9), ...u32(0), ...u64(300_000));
  return new Uint8Array([...bytes, ...new Uint8Array(200_000)]);
}
/** A BERT-like embedding model (mean pooling) and a chat model, by URL. */
const EMBED_FILE = 'https://models.example/embed-Q8_0.gguf';
const CHAT_FILE = 'https://models.example/chat-Q8_0.gguf';
/** A vision projector (llama.cpp's `clip` architecture) by URL. */
const PROJECTOR_FILE = 'https://models.example/mmproj-chat-f16.gguf';
/** A Hub repo with a model in two quantisations and a projector in two. */
const VISION_REPO = `${HUB}/acme/Vision-GGUF/resolve/main`;
const FILES: Record<string, Uint8Array<ArrayBuffer>> = {
  [EMBED_FILE]: ggufOf('bert', { embedding_length: 384, pooling_type: 1, context_length: 512 }),
  [CHAT_FILE]: ggufOf('qwen3', { embedding_length: 1024, context_length: 40960 }),
  [PROJECTOR_FILE]: ggufOf('clip', { 'vision.image_size': 224 }),
  [`${VISION_REPO}/vision-Q4_K_M.gguf`]: ggufOf('qwen3', { embedding_length: 1024 }),
  [`${VISION_REPO}/vision-Q8_0.gguf`]: ggufOf('qwen3', { embedding_length: 1024 }),
  [`${VISION_REPO}/mmproj-vision-Q8_0.gguf`]: ggufOf('clip', { 'vision.image_size': 224 }),
  [`${VISION_REPO}/mmproj-vision-f16.gguf`]: ggufOf('clip', { 'vision.image_size': 224 }),
};
const BUILT_IN = ggufEntry(
  { id: 'acme/Built-GGUF:Q4_0', files: ['https://m.example/b.gguf'] },
  'curated',
);

const record = (id: string, files = [FILE]): AddedRecord => ({
  id,
  files,
  origin: files[0]!,
  added_at: 1,
});

/** A network serving GGUF bytes at FILE, a web page at …/page.gguf, and a Hub listing. */
const network: FetchLike = async (url) => {
  if (url === FILE || url.startsWith(`${HUB}/acme/Tiny-GGUF/resolve/main/`)) {
    return new Response(GGUF, { headers: { 'content-length': String(GGUF.length) } });
  }
  if (url === 'https://models.example/page.gguf') return new Response('<!doctype html>');
  if (url === `${HUB}/api/models/acme/Tiny-GGUF`) {
    return Response.json({ siblings: [{ rfilename: 'tiny-Q8_0.gguf' }] });
  }
  if (url === `${HUB}/api/models/acme/Vision-GGUF`) {
    const names = ['vision-Q4_K_M.gguf', 'vision-Q8_0.gguf', 'mmproj-vision-Q8_0.gguf'];
    return Response.json({
      siblings: [...names, 'mmproj-vision-f16.gguf'].map((rfilename) => ({ rfilename })),
    });
  }
  if (url.startsWith('https://down.example/')) throw new TypeError('Failed to fetch');
  const file = FILES[url];
  if (file) return new Response(file, { headers: { 'content-length': String(file.length) } });
  return new Response('', { status: 404, statusText: 'Not Found' });
};

/** The API of a service worker whose directory keeps added models in `store`. */
function stack(
  store: AddedModelStore = memoryAddedStore(),
  options: { inUse?: string; fetch?: FetchLike } = {},
) {
  const caches = new MemoryCaches();
  const deleted: string[] = [];
  const models = new DeviceModels({
    catalog: [BUILT_IN],
    appUrl: APP,
    caches,
    device: async () => null,
    host: async () => null,
    added: new AddedModels(store),
  });
  const backend = Object.assign(new EngineQueue([new EchoEngine()]), {
    async deleteModel(model: string) {
      if (model === options.inUse) {
        throw new OpenAIError('model_in_use', `Requests are using ${model}.`, { param: 'model' });
      }
      deleted.push(model);
    },
  });
  const api = createApi({
    backend,
    models,
    catalog: () => models.catalog(),
    adding: { catalog: models, appUrl: APP, fetch: options.fetch ?? network, caches, hubUrl: HUB },
  });
  return { api, models, caches, deleted };
}

const KEY = { authorization: 'Bearer k' };
const add = (body: unknown) =>
  new Request(`${URL_BASE}/v1/hearth/models`, {
    method: 'POST',
    headers: { ...KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const del = (path: string) => new Request(`${URL_BASE}${path}`, { method: 'DELETE', headers: KEY });

async function catalogIds(api: ReturnType<typeof stack>['api']): Promise<string[]> {
  const response = await api.fetch(new Request(`${URL_BASE}/v1/hearth/catalog`, { headers: KEY }));
  return ((await response.json()) as { data: { id: string }[] }).data.map((m) => m.id);
}

describe('AddedModels', () => {
  it('reads the store once and writes every change through', async () => {
    const store = memoryAddedStore([record('acme/One-GGUF:Q4_0')]);
    let reads = 0;
    const counting: AddedModelStore = { ...store, list: () => (reads++, store.list()) };
    const added = new AddedModels(counting);
    expect((await added.entries()).map((e) => e.id)).toEqual(['acme/One-GGUF:Q4_0']);
    await added.add(record('acme/Two-GGUF:Q4_0'));
    await added.remove('acme/One-GGUF:Q4_0');
    expect((await added.entries()).map((e) => e.id)).toEqual(['acme/Two-GGUF:Q4_0']);
    expect(reads).toBe(1);
    expect((await store.list()).map((r) => r.id)).toEqual(['acme/Two-GGUF:Q4_0']);
  });

  it('gives each added model an entry llama.cpp serves, marked as added', async () => {
    const added = new AddedModels(memoryAddedStore());
    const entry = await added.add({ ...record('acme/One-GGUF:Q4_0'), context_window: 8192 });
    expect(entry).toMatchObject({
      id: 'acme/One-GGUF:Q4_0',
      engine: 'llama.cpp',
      owned_by: 'acme',
      quant: 'Q4_0',
      files: [FILE],
      context_window: 8192,
      source: 'added',
    });
  });

  it('refuses an id it holds with 409 model_exists, twice at once included', async () => {
    const added = new AddedModels(memoryAddedStore());
    const both = await Promise.allSettled([
      added.add(record('acme/One-GGUF:Q4_0')),
      added.add(record('acme/One-GGUF:Q4_0')),
    ]);
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect((both[1] as PromiseRejectedResult).reason).toMatchObject({
      status: 409,
      code: 'model_exists',
    });
  });

  it('reads the store again when told another context changed it', async () => {
    const store = memoryAddedStore();
    const reader = new AddedModels(store);
    expect(await reader.entries()).toEqual([]);
    await new AddedModels(store).add(record('acme/One-GGUF:Q4_0'));
    expect(await reader.entries()).toEqual([]);
    reader.reload();
    expect((await reader.entries()).map((e) => e.id)).toEqual(['acme/One-GGUF:Q4_0']);
  });

  it('skips a stored record that is not a GGUF model any more, rather than failing', async () => {
    const added = new AddedModels(memoryAddedStore([record('not-an-id'), record('a/b:Q4_0')]));
    expect((await added.entries()).map((e) => e.id)).toEqual(['a/b:Q4_0']);
  });

  it('tells its listener of each change', async () => {
    let changes = 0;
    const added = new AddedModels(memoryAddedStore(), { onChange: () => (changes += 1) });
    await added.add(record('a/b:Q4_0'));
    await added.remove('a/b:Q4_0');
    await added.remove('a/b:Q4_0');
    expect(changes).toBe(2);
  });
});

describe('POST /v1/hearth/models', () => {
  it('adds a GGUF by URL and answers 201 with its catalogue entry', async () => {
    const { api } = stack();
    const response = await api.fetch(add({ source: FILE }));
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({
      id: 'models.example/tiny:Q8_0',
      object: 'model',
      owned_by: 'models.example',
      engine: 'llama.cpp',
      size_mb: 0,
      downloaded: false,
      loaded: false,
      source: 'added',
    });
    expect(await catalogIds(api)).toContain('models.example/tiny:Q8_0');
  });

  it('adds a model from the Hugging Face Hub by id', async () => {
    const { api, models } = stack();
    const response = await api.fetch(add({ source: 'hf:acme/Tiny-GGUF:q8_0' }));
    expect(response.status).toBe(201);
    expect(((await response.json()) as { id: string }).id).toBe('acme/Tiny-GGUF:Q8_0');
    expect((await models.find('acme/Tiny-GGUF:Q8_0'))?.owned_by).toBe('acme');
  });

  it('takes the id, context window and flags the caller gives', async () => {
    const { api, models } = stack();
    const response = await api.fetch(
      add({
        source: FILE,
        id: 'me/Tiny-GGUF:Q8_0',
        context_window: 2048,
        tools: true,
        reasoning: true,
      }),
    );
    expect(await response.json()).toMatchObject({
      id: 'me/Tiny-GGUF:Q8_0',
      context_window: 2048,
      tools: true,
      reasoning: true,
    });
    expect((await models.find('me/Tiny-GGUF:Q8_0'))?.capabilities.tools).toBe(true);
  });

  it.each([
    [
      'an id that is not <user>/<repo>:<quant>',
      { source: FILE, id: 'tiny' },
      'invalid_value',
      'id',
    ],
    ['a body without source', { id: 'a/b:Q8_0' }, 'missing_field', 'source'],
    ['a source that is not a string', { source: 3 }, 'invalid_type', 'source'],
    [
      'a field it does not know',
      { source: FILE, weights: 'x' },
      'unsupported_parameter',
      'weights',
    ],
    [
      'embeddings that are not a boolean',
      { source: FILE, embeddings: 'yes' },
      'invalid_type',
      'embeddings',
    ],
    [
      'a context window of 0',
      { source: FILE, context_window: 0 },
      'invalid_value',
      'context_window',
    ],
    [
      'a file that is not GGUF',
      { source: 'https://models.example/page.gguf' },
      'invalid_value',
      'source',
    ],
    [
      'a file that is not there',
      { source: 'https://models.example/none.gguf' },
      'invalid_value',
      'source',
    ],
    [
      'a server it cannot reach',
      { source: 'https://down.example/m.gguf' },
      'invalid_value',
      'source',
    ],
  ])('refuses %s with 400', async (_what, body, code, param) => {
    const { api } = stack();
    const response = await api.fetch(add(body));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code, param });
  });

  /** The model added with this body: its status, and its catalogue entry as kept. */
  async function adding(body: Record<string, unknown>, fetch?: FetchLike) {
    const store = memoryAddedStore();
    const { api } = stack(store, { fetch });
    const response = await api.fetch(add(body));
    const [record] = await store.list();
    const entry = record && (await new AddedModels(store).get(record.id));
    return { status: response.status, entry };
  }

  const MEAN_384 = { dimensions: 384, pooling: 'mean', normalized: true, matryoshka: [] };

  it('adds a GGUF whose metadata give a pooling type as an embedding model', async () => {
    const { status, entry } = await adding({ source: EMBED_FILE });
    expect(status).toBe(201);
    expect(entry).toMatchObject({ id: 'models.example/embed:Q8_0', embedding: MEAN_384 });
  });

  it('adds a chat GGUF as a chat model, without embedding', async () => {
    const { status, entry } = await adding({ source: CHAT_FILE });
    expect(status).toBe(201);
    expect(entry).not.toHaveProperty('embedding');
  });

  it('makes a chat GGUF an embedding model when told "embeddings": true', async () => {
    const { entry } = await adding({ source: CHAT_FILE, embeddings: true });
    expect(entry?.embedding).toEqual({
      dimensions: 1024,
      pooling: 'unknown',
      normalized: true,
      matryoshka: [],
    });
  });

  it('keeps what the metadata say when told "embeddings": true of an embedding model', async () => {
    const { entry } = await adding({ source: EMBED_FILE, embeddings: true });
    expect(entry?.embedding).toEqual(MEAN_384);
  });

  it('gives null dimensions to "embeddings": true when the header says nothing', async () => {
    const { entry } = await adding({ source: FILE, embeddings: true });
    expect(entry?.embedding).toEqual({
      dimensions: null,
      pooling: 'unknown',
      normalized: true,
      matryoshka: [],
    });
  });

  it('makes a GGUF that pools a chat model when told "embeddings": false', async () => {
    const { status, entry } = await adding({ source: EMBED_FILE, embeddings: false });
    expect(status).toBe(201);
    expect(entry).toBeDefined();
    expect(entry).not.toHaveProperty('embedding');
  });

  it('reads the first 256 KiB of the first file with one Range request, 8 bytes of the others', async () => {
    const ranges: (string | null)[] = [];
    const parts = [1, 2].map((i) => `https://models.example/big-Q8_0-0000${i}-of-00002.gguf`);
    const ranged: FetchLike = async (url, init) => {
      const range = new Headers(init?.headers).get('range');
      ranges.push(range);
      const file = FILES[EMBED_FILE]!;
      const end = Number(/^bytes=0-(\d+)$/.exec(range ?? '')?.[1]);
      return new Response(file.slice(0, end + 1), {
        status: 206,
        headers: { 'content-range': `bytes 0-${end}/${file.length}` },
      });
    };
    const { status, entry } = await adding({ source: parts[0] }, ranged);
    expect(status).toBe(201);
    expect(entry?.embedding).toEqual(MEAN_384);
    expect(ranges.sort()).toEqual(['bytes=0-262143', 'bytes=0-7']);
  });

  it('reads only 256 KiB of a server that ignores the range, and stops the rest', async () => {
    let sent = 0;
    let cancelled = false;
    const file = FILES[EMBED_FILE]!;
    const whole: FetchLike = async () => {
      // The header, then zeros without end, 64 KiB at a time.
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const chunk = sent === 0 ? file.slice(0, 65536) : new Uint8Array(65536);
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
        cancel() {
          cancelled = true;
        },
      });
      return new Response(body, { headers: { 'content-length': String(1 << 30) } });
    };
    const { entry } = await adding({ source: EMBED_FILE }, whole);
    expect(entry).toMatchObject({ size_mb: 1073.7, embedding: MEAN_384 });
    expect(cancelled).toBe(true);
    expect(sent).toBeLessThanOrEqual(256 * 1024 + 2 * 65536);
  });

  it('answers 409 model_exists for an id already added, or built in, and keeps the first', async () => {
    const { api, models } = stack();
    expect((await api.fetch(add({ source: FILE }))).status).toBe(201);
    const again = await api.fetch(add({ source: FILE, context_window: 99 }));
    expect(again.status).toBe(409);
    expect((await again.json()).error).toMatchObject({ code: 'model_exists', param: 'id' });
    expect((await models.find('models.example/tiny:Q8_0'))?.context_window).toBe(4096);
    const builtIn = await api.fetch(add({ source: FILE, id: BUILT_IN.id }));
    expect(builtIn.status).toBe(409);
  });

  it('answers the same addition again with 200 and the model it added, asking nothing of the network', async () => {
    let fetches = 0;
    const counting: FetchLike = (url, init) => {
      fetches += 1;
      return network(url, init);
    };
    const { api } = stack(undefined, { fetch: counting });
    const first = await api.fetch(add({ source: FILE }));
    expect(first.status).toBe(201);
    const asked = fetches;
    for (const body of [{ source: FILE }, { source: FILE, id: 'models.example/tiny:Q8_0' }]) {
      const again = await api.fetch(add(body));
      expect(again.status).toBe(200);
      expect(((await again.json()) as { id: string }).id).toBe('models.example/tiny:Q8_0');
    }
    expect(fetches).toBe(asked);
    expect(await catalogIds(api)).toEqual(
      expect.arrayContaining(['models.example/tiny:Q8_0', BUILT_IN.id]),
    );
  });

  it('adds the same source under another id as a second model, and answers either addition again with its own model', async () => {
    const { api } = stack();
    expect((await api.fetch(add({ source: FILE }))).status).toBe(201);
    expect((await api.fetch(add({ source: FILE, id: 'me/tiny:Q8_0' }))).status).toBe(201);
    for (const id of ['me/tiny:Q8_0', 'models.example/tiny:Q8_0']) {
      const again = await api.fetch(add({ source: FILE, id }));
      expect(again.status).toBe(200);
      expect(((await again.json()) as { id: string }).id).toBe(id);
    }
    const ids = await catalogIds(api);
    expect(ids).toContain('models.example/tiny:Q8_0');
    expect(ids).toContain('me/tiny:Q8_0');
  });

  it('answers 415 for a body that is not JSON', async () => {
    const { api } = stack();
    const response = await api.fetch(
      new Request(`${URL_BASE}/v1/hearth/models`, { method: 'POST', headers: KEY, body: 'x' }),
    );
    expect(response.status).toBe(415);
  });

  it('keeps added models for the next service worker: a new directory over the same store', async () => {
    const store = memoryAddedStore();
    await stack(store).api.fetch(add({ source: FILE }));
    const next = stack(store);
    expect(await catalogIds(next.api)).toContain('models.example/tiny:Q8_0');
    expect((await next.models.find('models.example/tiny:Q8_0'))?.id).toBe(
      'models.example/tiny:Q8_0',
    );
  });
});

describe('POST /v1/hearth/models with a vision projector (mmproj)', () => {
  /**
   * What `/v1/hearth/catalog` says of the model (`/v1/openai/models` lists only downloaded
   * models: the browser tests check it there).
   */
  async function listed(api: ReturnType<typeof stack>['api'], id: string) {
    const response = await api.fetch(
      new Request(`${URL_BASE}/v1/hearth/catalog`, { headers: KEY }),
    );
    const { data } = (await response.json()) as {
      data: { id: string; vision: boolean | null; size_mb: number | null }[];
    };
    return data.find((m) => m.id === id);
  }

  it("adds a Hugging Face model with its repo's projector, and the catalogue says it takes images", async () => {
    const store = memoryAddedStore();
    const { api } = stack(store);
    const response = await api.fetch(add({ source: 'hf:acme/Vision-GGUF:Q4_K_M' }));
    expect(response.status).toBe(201);
    // The repo has no Q4_K_M projector: F16 is taken before Q8_0.
    expect((await store.list())[0]).toMatchObject({
      files: [`${VISION_REPO}/vision-Q4_K_M.gguf`],
      mmproj: `${VISION_REPO}/mmproj-vision-f16.gguf`,
    });
    const catalog = await listed(api, 'acme/Vision-GGUF:Q4_K_M');
    expect(catalog?.vision).toBe(true);
    // The size is the pair's.
    expect(catalog?.size_mb).toBe(Math.round((2 * FILES[PROJECTOR_FILE]!.length) / 1e5) / 10);
  });

  it("takes the repo's projector of the model's own quantisation when there is one", async () => {
    const store = memoryAddedStore();
    const { api } = stack(store);
    expect((await api.fetch(add({ source: 'hf:acme/Vision-GGUF:Q8_0' }))).status).toBe(201);
    expect((await store.list())[0]?.mmproj).toBe(`${VISION_REPO}/mmproj-vision-Q8_0.gguf`);
  });

  it('takes the projector the caller names by URL, for a model given by URL', async () => {
    const store = memoryAddedStore();
    const { api } = stack(store);
    const response = await api.fetch(add({ source: CHAT_FILE, mmproj: PROJECTOR_FILE }));
    expect(response.status).toBe(201);
    expect((await store.list())[0]?.mmproj).toBe(PROJECTOR_FILE);
    expect((await listed(api, 'models.example/chat:Q8_0'))?.vision).toBe(true);
  });

  it('adds the model alone, without images, when told "mmproj": false', async () => {
    const store = memoryAddedStore();
    const { api } = stack(store);
    const body = { source: 'hf:acme/Vision-GGUF:Q4_K_M', mmproj: false };
    expect((await api.fetch(add(body))).status).toBe(201);
    expect((await store.list())[0]?.mmproj).toBeUndefined();
    expect((await listed(api, 'acme/Vision-GGUF:Q4_K_M'))?.vision).toBe(false);
  });

  it.each([
    [{ mmproj: CHAT_FILE }, 'mmproj', "general.architecture says a 'qwen3' model"],
    [{ mmproj: 'https://models.example/mmproj.bin' }, 'mmproj', "'mmproj' must be the http(s) URL"],
    [{ mmproj: 'https://down.example/mmproj.gguf' }, 'mmproj', 'could not reach down.example'],
    [{ mmproj: 'https://models.example/page.gguf' }, 'mmproj', 'is not a GGUF file'],
    [{ mmproj: 3 }, 'mmproj', "Invalid type for 'mmproj'"],
  ])('refuses a bad projector with 400 on its field: %j', async (extra, param, words) => {
    const store = memoryAddedStore();
    const { api } = stack(store);
    const response = await api.fetch(add({ source: CHAT_FILE, ...extra }));
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { param: string; message: string } };
    expect(error.param).toBe(param);
    expect(error.message).toContain(words);
    expect(await store.list()).toEqual([]);
  });

  it("refuses a projector given as the model, saying to give it as 'mmproj'", async () => {
    const { api } = stack();
    const response = await api.fetch(add({ source: PROJECTOR_FILE }));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      code: 'invalid_value',
      param: 'source',
      message: `${PROJECTOR_FILE} is a vision projector (mmproj), not a model: give the model as 'source' and this file as 'mmproj'.`,
    });
  });
});

describe('DELETE /v1/hearth/models/{id} of an added model', () => {
  it.each([
    '/v1/hearth/models/models.example/tiny:Q8_0',
    '/v1/hearth/models/models.example%2Ftiny%3AQ8_0',
  ])('removes its files and its entry (%s)', async (path) => {
    const store = memoryAddedStore();
    const { api, deleted } = stack(store);
    await api.fetch(add({ source: FILE }));
    const response = await api.fetch(del(path));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      id: 'models.example/tiny:Q8_0',
      object: 'model',
      deleted: true,
    });
    expect(deleted).toEqual(['models.example/tiny:Q8_0']);
    expect(await catalogIds(api)).not.toContain('models.example/tiny:Q8_0');
    expect(await store.list()).toEqual([]);
    expect((await api.fetch(del(path))).status).toBe(404);
  });

  it('keeps a built-in model in the catalogue: only its files go', async () => {
    const { api, deleted } = stack();
    const response = await api.fetch(del(`/v1/hearth/models/${BUILT_IN.id}`));
    expect(response.status).toBe(200);
    expect(deleted).toEqual([BUILT_IN.id]);
    expect(await catalogIds(api)).toContain(BUILT_IN.id);
  });

  it('keeps the entry when requests use the model (409 model_in_use)', async () => {
    const { api } = stack(memoryAddedStore(), { inUse: 'models.example/tiny:Q8_0' });
    await api.fetch(add({ source: FILE }));
    const response = await api.fetch(del('/v1/hearth/models/models.example/tiny:Q8_0'));
    expect(response.status).toBe(409);
    expect((await response.json()).error.code).toBe('model_in_use');
    expect(await catalogIds(api)).toContain('models.example/tiny:Q8_0');
  });
});
