import { describe, expect, it } from 'vitest';
import { catalogEntry, ggufEntry } from '../../../src/models/catalog';
import { ggufPartKey, ggufSizeKey } from '../../../src/models/gguf-parts';
import {
  allFilesStored,
  ggufBlobs,
  missingFiles,
  modelBaseUrl,
  planFiles,
  presentCaches,
  type CacheStorageLike,
} from '../../../src/models/on-device';

/** CacheStorage as a map of cache name → url → body. */
function fakeCaches(contents: Record<string, Record<string, unknown>>): CacheStorageLike {
  return {
    async open(name) {
      const cache = contents[name] ?? {};
      return {
        async match(url: string) {
          if (!(url in cache)) return undefined;
          const body = cache[url];
          if (body instanceof Uint8Array) return new Response(new Uint8Array(body));
          return new Response(typeof body === 'string' ? body : JSON.stringify(body));
        },
      };
    },
  };
}

const APP = 'https://app.example/hearth/';
const hf = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Smol-q4f32_1-MLC',
    model_id: 'Smol-q4f32_1-MLC',
    model_lib: 'https://libs.example/smol-webgpu.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
const BASE = 'https://huggingface.co/mlc-ai/Smol-q4f32_1-MLC/resolve/main/';

function complete() {
  return {
    'webllm/config': { [`${BASE}mlc-chat-config.json`]: { tokenizer_files: ['tokenizer.json'] } },
    'webllm/model': {
      [`${BASE}tensor-cache.json`]: {
        records: [{ dataPath: 'params_shard_0.bin' }, { dataPath: 'params_shard_1.bin' }],
      },
      [`${BASE}params_shard_0.bin`]: 'x',
      [`${BASE}params_shard_1.bin`]: 'x',
      [`${BASE}tokenizer.json`]: '{}',
    },
    'webllm/wasm': { 'https://libs.example/smol-webgpu.wasm': 'x' },
  } as Record<string, Record<string, unknown>>;
}

describe('missingFiles', () => {
  it('finds nothing missing when config, weights, every shard, tokenizer and library are cached', async () => {
    expect(await missingFiles(hf, APP, fakeCaches(complete()))).toEqual([]);
  });

  it('names a missing shard, which is all WebLLM’s own check would see', async () => {
    const caches = complete();
    delete caches['webllm/model']![`${BASE}params_shard_1.bin`];
    expect(await missingFiles(hf, APP, fakeCaches(caches))).toEqual([`${BASE}params_shard_1.bin`]);
  });

  it.each([
    ['the chat config', 'webllm/config', `${BASE}mlc-chat-config.json`],
    ['the tokenizer', 'webllm/model', `${BASE}tokenizer.json`],
    ['the model library', 'webllm/wasm', 'https://libs.example/smol-webgpu.wasm'],
  ])('names %s when it is missing, although every shard is there', async (_what, cache, url) => {
    const caches = complete();
    delete caches[cache]![url];
    expect(await missingFiles(hf, APP, fakeCaches(caches))).toContain(url);
  });

  it('reports everything when nothing is cached', async () => {
    const missing = await missingFiles(hf, APP, fakeCaches({}));
    expect(missing).toEqual([
      `${BASE}mlc-chat-config.json`,
      `${BASE}tensor-cache.json`,
      'https://libs.example/smol-webgpu.wasm',
    ]);
  });

  it('resolves a self-hosted model against the app, library included', async () => {
    const local = catalogEntry(
      { model: 'models/smol', model_id: 'smol', model_lib: 'models/smol.wasm' },
      { owner: 'acme', source: 'self-hosted', tools: false },
    );
    expect(modelBaseUrl(local, APP)).toBe('https://app.example/hearth/models/smol/resolve/main/');
    expect(await missingFiles(local, APP, fakeCaches({}))).toContain(
      'https://app.example/hearth/models/smol.wasm',
    );
  });

  it('expects a library on localhost in Hearth’s own cache, since WebLLM never caches those', async () => {
    const local = catalogEntry(
      { model: 'models/smol', model_id: 'smol', model_lib: 'models/smol.wasm' },
      { owner: 'acme', source: 'self-hosted', tools: false },
    );
    const lib = 'http://localhost:4173/models/smol.wasm';
    const config = 'http://localhost:4173/models/smol/resolve/main/';
    const caches = {
      'webllm/config': {
        [`${config}mlc-chat-config.json`]: { tokenizer_files: ['tokenizer.json'] },
      },
      'webllm/model': {
        [`${config}tensor-cache.json`]: { records: [] },
        [`${config}tokenizer.json`]: '{}',
      },
    } as Record<string, Record<string, unknown>>;
    expect(await missingFiles(local, 'http://localhost:4173/', fakeCaches(caches))).toEqual([lib]);
    caches['hearth/files'] = { [lib]: 'x' };
    expect(await missingFiles(local, 'http://localhost:4173/', fakeCaches(caches))).toEqual([]);
  });

  it('plans the files of a model with a package manifest from that manifest', async () => {
    const packaged = catalogEntry(
      {
        model: 'https://hf.example/g',
        model_id: 'g',
        model_lib: 'https://libs.example/g.wasm',
        model_manifest: 'mlc-model-manifest.json',
      },
      { owner: 'mlc-ai', source: 'prebuilt', tools: false },
    );
    const base = 'https://hf.example/g/resolve/main/';
    const { files } = await planFiles(packaged, APP, async (file) =>
      file.kind === 'manifest'
        ? { chat_config: 'chat.json', weights: { manifest: 'w/tensor-cache.json' } }
        : file.kind === 'config'
          ? { tokenizer_files: ['tokenizer.model'] }
          : { records: [{ dataPath: 's0.bin', nbytes: 10 }] },
    );
    expect(files.map((f) => [f.kind, f.url, f.cache, f.bytes])).toEqual([
      ['manifest', `${base}mlc-model-manifest.json`, 'webllm/config', undefined],
      ['config', `${base}chat.json`, 'webllm/config', undefined],
      ['weights-manifest', `${base}w/tensor-cache.json`, 'webllm/model', undefined],
      ['tokenizer', `${base}tokenizer.model`, 'webllm/model', undefined],
      ['shard', `${base}w/s0.bin`, 'webllm/model', 10],
      ['library', 'https://libs.example/g.wasm', 'webllm/wasm', undefined],
    ]);
  });

  it('carries the catalogue’s SRI hashes to the files they cover', async () => {
    const pinned = catalogEntry(
      {
        model: 'https://hf.example/p',
        model_id: 'p',
        model_lib: 'https://libs.example/p.wasm',
        integrity: {
          config: 'sha256-AAA',
          model_lib: 'sha256-BBB',
          tokenizer: { 'tokenizer.json': 'sha256-CCC' },
        },
      },
      { owner: 'mlc-ai', source: 'prebuilt', tools: false },
    );
    const { files } = await planFiles(pinned, APP, async (file) =>
      file.kind === 'config' ? { tokenizer_files: ['tokenizer.json'] } : { records: [] },
    );
    expect(Object.fromEntries(files.map((f) => [f.kind, f.integrity]))).toEqual({
      config: 'sha256-AAA',
      'weights-manifest': undefined,
      tokenizer: 'sha256-CCC',
      library: 'sha256-BBB',
    });
  });
});

describe('allFilesStored', () => {
  /** `fakeCaches`, counting its lookups. */
  function counted(contents: Record<string, Record<string, unknown>>) {
    const inner = fakeCaches(contents);
    const seen = { matches: 0 };
    const caches: CacheStorageLike = {
      async open(name) {
        const cache = await inner.open(name);
        return {
          match: (url: string) => {
            seen.matches += 1;
            return cache.match(url);
          },
        };
      },
    };
    return { caches, seen };
  }

  it('agrees with missingFiles: true when every file is there, false when one is missing', async () => {
    expect(await allFilesStored(hf, APP, fakeCaches(complete()))).toBe(true);
    const caches = complete();
    delete caches['webllm/wasm']!['https://libs.example/smol-webgpu.wasm'];
    expect(await allFilesStored(hf, APP, fakeCaches(caches))).toBe(false);
    expect(await missingFiles(hf, APP, fakeCaches(caches))).toHaveLength(1);
  });

  it('stops at the first file missing, where missingFiles looks at them all', async () => {
    const none = counted({});
    expect(await allFilesStored(hf, APP, none.caches)).toBe(false);
    const all = counted({});
    await missingFiles(hf, APP, all.caches);
    expect(none.seen.matches).toBeLessThan(all.seen.matches);
    // The manifests read to plan the files, then the first file of the plan.
    expect(none.seen.matches).toBe(3);
  });
});

describe('presentCaches', () => {
  /** `fakeCaches` that can list its caches, noting each cache it is asked to open. */
  function listed(contents: Record<string, Record<string, unknown>>) {
    const inner = fakeCaches(contents);
    const opened: string[] = [];
    const caches: CacheStorageLike = {
      open(name) {
        opened.push(name);
        return inner.open(name);
      },
      keys: () => Promise.resolve(Object.keys(contents)),
    };
    return { caches, opened };
  }

  it('answers "not stored" for a cache that is not there without opening it, which would make it', async () => {
    const { caches, opened } = listed({ 'webllm/config': {} });
    expect(await allFilesStored(hf, APP, await presentCaches(caches))).toBe(false);
    const missing = await missingFiles(hf, APP, await presentCaches(caches));
    expect(missing).toEqual(await missingFiles(hf, APP, fakeCaches({})));
    expect(missing.length).toBeGreaterThan(0);
    expect(opened.every((name) => name === 'webllm/config')).toBe(true);
  });

  it('opens each cache there is once however many lookups it serves, and finds what it holds', async () => {
    const { caches, opened } = listed(complete());
    const present = await presentCaches(caches);
    const answers = await Promise.all([hf, hf, hf].map((e) => allFilesStored(e, APP, present)));
    expect(answers).toEqual([true, true, true]);
    expect(opened.sort()).toEqual(['webllm/config', 'webllm/model', 'webllm/wasm']);
  });

  it('leaves a storage that cannot list its caches, or fails to, as it is', async () => {
    const caches = fakeCaches(complete());
    expect(await presentCaches(caches)).toBe(caches);
    const failing = { ...caches, keys: () => Promise.reject(new Error('storage went away')) };
    expect(await presentCaches(failing)).toBe(failing);
  });
});

describe('a GGUF on the device', () => {
  const FILE = 'https://models.example/m.gguf';
  const gguf = ggufEntry({ id: 'acme/m-GGUF:Q4_K_M', files: [FILE] }, 'added');
  const bytes = Uint8Array.from({ length: 10 }, (_, i) => 71 + i);
  /** The file stored in parts of 4 bytes: 0–3, 4–7, 8–9. */
  function stored(complete = true): Record<string, Record<string, unknown>> {
    return {
      'hearth/gguf': {
        [ggufSizeKey(FILE)]: { bytes: 10, part_bytes: 4, complete },
        [ggufPartKey(FILE, 0, 3)]: bytes.slice(0, 4),
        [ggufPartKey(FILE, 4, 7)]: bytes.slice(4, 8),
        [ggufPartKey(FILE, 8, 9)]: bytes.slice(8),
      },
    };
  }

  it('hands llama.cpp each file as one Blob made of its parts, byte for byte', async () => {
    const blobs = await ggufBlobs(gguf, APP, fakeCaches(stored()));
    expect(blobs).toHaveLength(1);
    expect(new Uint8Array(await blobs![0]!.arrayBuffer())).toEqual(bytes);
  });

  it('has no Blobs for a file with a part missing, or of the wrong size, or not complete', async () => {
    const missing = stored();
    delete missing['hearth/gguf']![ggufPartKey(FILE, 4, 7)];
    expect(await ggufBlobs(gguf, APP, fakeCaches(missing))).toBeNull();
    const short = stored();
    short['hearth/gguf']![ggufPartKey(FILE, 8, 9)] = bytes.slice(8, 9);
    expect(await ggufBlobs(gguf, APP, fakeCaches(short))).toBeNull();
    expect(await ggufBlobs(gguf, APP, fakeCaches(stored(false)))).toBeNull();
  });

  it('counts a file as there when its size record says complete, and nothing stored as missing', async () => {
    expect(await missingFiles(gguf, APP, fakeCaches(stored()))).toEqual([]);
    expect(await missingFiles(gguf, APP, fakeCaches(stored(false)))).toEqual([FILE]);
    expect(await missingFiles(gguf, APP, fakeCaches({}))).toEqual([FILE]);
  });
});
