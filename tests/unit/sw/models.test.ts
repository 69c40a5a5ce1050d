import { describe, expect, it } from 'vitest';
import { catalogEntry, type GpuFacts } from '../../../src/openai/catalog';
import { ECHO_MODEL } from '../../../src/openai/models';
import type { CacheStorageLike } from '../../../src/openai/on-device';
import { DeviceModels } from '../../../sw/models';

const f32 = catalogEntry(
  {
    model: 'https://hf.example/m32',
    model_id: 'M-q4f32_1',
    model_lib: 'https://libs.example/m32.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
const f16 = catalogEntry(
  {
    model: 'https://hf.example/m16',
    model_id: 'M-q4f16_1',
    model_lib: 'https://libs.example/m16.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
const GPU: GpuFacts = {
  webgpu: true,
  adapter: {
    vendor: 'v',
    architecture: 'a',
    fallback: false,
    features: [],
    maxStorageBufferBindingSize: 1 << 30,
    maxBufferSize: 1 << 30,
  },
};

/** Caches holding every file of the f32 model. */
function cachesWith(entry: typeof f32): CacheStorageLike {
  const base = `${entry.model_url}/resolve/main/`;
  const files: Record<string, Record<string, unknown>> = {
    'webllm/config': { [`${base}mlc-chat-config.json`]: { tokenizer_files: ['tokenizer.json'] } },
    'webllm/model': {
      [`${base}tensor-cache.json`]: { records: [] },
      [`${base}tokenizer.json`]: {},
    },
    'webllm/wasm': { [entry.model_lib]: '' },
  };
  return {
    open: async (name) => ({
      match: async (url: string) =>
        url in (files[name] ?? {}) ? new Response(JSON.stringify(files[name]![url])) : undefined,
    }),
  };
}

function directory(
  host: {
    loaded_model: string | null;
    failing_models: Record<string, string>;
    evicted_models: Record<string, string>;
  } | null = null,
) {
  return new DeviceModels({
    catalog: [f32, f16],
    appUrl: 'https://app.example/',
    caches: cachesWith(f32),
    gpu: async () => GPU,
    host: async () => host,
  });
}

describe('DeviceModels', () => {
  it('lists the echo engine and the downloaded models this GPU can run', async () => {
    expect((await directory().list()).map((m) => m.id)).toEqual([ECHO_MODEL.id, f32.id]);
  });

  it('knows every catalogue model, downloaded or not', async () => {
    expect((await directory().find(f16.id))?.id).toBe(f16.id);
    expect(await directory().find('acme/none')).toBeUndefined();
  });

  it('gives a model the price its owner set, and the others none', async () => {
    const models = new DeviceModels({
      catalog: [f32, f16],
      appUrl: 'https://app.example/',
      caches: cachesWith(f32),
      gpu: async () => GPU,
      host: async () => null,
      price: async (id) => (id === ECHO_MODEL.id ? { prompt: 1e-6, completion: 2e-6 } : undefined),
    });
    expect((await models.find(ECHO_MODEL.id))?.price).toEqual({ prompt: 1e-6, completion: 2e-6 });
    expect((await models.find(f32.id))?.price).toEqual({ prompt: 0, completion: 0 });
  });

  it('refuses an f16 model on a GPU without shader-f16 (503), and a model not on the device (404)', async () => {
    await expect(directory().ensureReady((await directory().find(f16.id))!)).rejects.toMatchObject({
      code: 'webgpu_unavailable',
      status: 503,
    });
    const gpu = { ...GPU, adapter: { ...GPU.adapter!, features: ['shader-f16'] } };
    const withF16 = new DeviceModels({
      catalog: [f16],
      appUrl: 'https://app.example/',
      caches: cachesWith(f32),
      gpu: async () => gpu,
      host: async () => null,
    });
    const model = (await withF16.find(f16.id))!;
    await expect(withF16.ensureReady(model)).rejects.toMatchObject({
      code: 'model_not_downloaded',
      status: 404,
    });
    await expect(withF16.ensureReady(model, { files: false })).resolves.toBeUndefined();
  });

  it('shows in the catalogue what is loaded, a model marked as failing with why, and one evicted', async () => {
    const catalog = await directory({
      loaded_model: f32.id,
      failing_models: { [f32.id]: 'lost the device twice' },
      evicted_models: { [f16.id]: '3 of its files are gone' },
    }).catalog();
    expect(catalog.find((m) => m.id === f16.id)).toMatchObject({
      downloaded: false,
      evicted: '3 of its files are gone',
    });
    expect(catalog.find((m) => m.id === f32.id)).not.toHaveProperty('evicted');
    expect(catalog.find((m) => m.id === f32.id)).toMatchObject({
      loaded: true,
      downloaded: true,
      available: false,
      unavailable_reason: 'lost the device twice',
    });
    expect(catalog[0]).toMatchObject({
      id: ECHO_MODEL.id,
      source: 'built-in',
      available: true,
      downloaded: true,
    });
  });
});
