import * as webllm from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import {
  catalogEntry,
  catalogModelInfo,
  estimateSizeMb,
  ggufEntry,
  parseGgufId,
  prebuiltCatalog,
  unavailableReason,
  type GpuFacts,
} from '../../../src/models/catalog';
import { readSelfHosted } from '../../../scripts/catalog-plugin';
import { planFiles } from '../../../src/models/on-device';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { ROOMY_LIMITS } from '../helpers';

const catalog = prebuiltCatalog(
  webllm.prebuiltAppConfig.model_list,
  webllm.functionCallingModelIds,
);
const byId = (id: string) => catalog.find((e) => e.id === id)!;

/** SwiftShader in Chromium 156, as its engine worker measures it: just enough for WebLLM. */
const swiftshader: GpuFacts = {
  webgpu: true,
  adapter: {
    vendor: 'google',
    architecture: 'swiftshader',
    fallback: true,
    features: ['subgroups', 'timestamp-query'],
    limits: ROOMY_LIMITS,
  },
};
/** SwiftShader with some of its limits changed. */
const withLimits = (limits: Partial<NonNullable<GpuFacts['adapter']>['limits']>): GpuFacts => ({
  ...swiftshader,
  adapter: { ...swiftshader.adapter!, limits: { ...swiftshader.adapter!.limits, ...limits } },
});

describe('the prebuilt catalogue', () => {
  it('lists WebLLM 0.2.86’s 159 chat, 2 vision and 4 embedding models as mlc-ai/<model_id>', () => {
    expect(catalog).toHaveLength(165);
    expect(catalog.every((e) => e.id === `mlc-ai/${e.model_id}` && e.owned_by === 'mlc-ai')).toBe(
      true,
    );
    expect(catalog.filter((e) => e.vision).map((e) => e.model_id)).toEqual([
      'Phi-3.5-vision-instruct-q4f16_1-MLC',
      'Phi-3.5-vision-instruct-q4f32_1-MLC',
    ]);
    const embedding = catalog.filter((e) => e.embedding);
    expect(embedding.map((e) => e.model_id).every((id) => id.startsWith('snowflake-'))).toBe(true);
    expect(embedding).toHaveLength(4);
  });

  it('describes the embedding models: their vectors, pooling, context and size', () => {
    expect(byId('mlc-ai/snowflake-arctic-embed-m-q0f32-MLC-b4')).toMatchObject({
      context_window: 512,
      size_mb: 436,
      tools: false,
      embedding: { dimensions: 768, pooling: 'cls', normalized: true, matryoshka: [] },
    });
    expect(byId('mlc-ai/snowflake-arctic-embed-s-q0f32-MLC-b32')?.embedding?.dimensions).toBe(384);
    expect(byId('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC')?.embedding).toBeUndefined();
  });

  it('keeps what WebLLM needs to load a model, and its size and context window', () => {
    expect(byId('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC')).toMatchObject({
      model_url: 'https://huggingface.co/mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC',
      model_lib: expect.stringMatching(/SmolLM2-360M-Instruct-q4f32_1_cs1k-webgpu\.wasm$/),
      context_window: 4096,
      vram_required_mb: 579.61,
      size_mb: 203,
      required_features: [],
      low_resource: true,
      tools: false,
      reasoning: false,
      source: 'prebuilt',
    });
  });

  it('marks every f16 quantisation as needing shader-f16, declared or not', () => {
    // gemma3-1b-it-q4f16_1 does not declare it (notes/webllm §5.7).
    expect(byId('mlc-ai/gemma3-1b-it-q4f16_1-MLC').required_features).toEqual(['shader-f16']);
    const f16 = catalog.filter((e) => /q\df16/.test(e.model_id));
    expect(f16.length).toBeGreaterThan(80);
    expect(f16.every((e) => e.required_features.includes('shader-f16'))).toBe(true);
    expect(
      catalog
        .filter((e) => /q\df32/.test(e.model_id))
        .every((e) => e.required_features.length === 0),
    ).toBe(true);
  });

  it('knows which models take tools and which think aloud', () => {
    expect(
      catalog
        .filter((e) => e.tools)
        .map((e) => e.model_id)
        .sort(),
    ).toEqual([...webllm.functionCallingModelIds].sort());
    expect(byId('mlc-ai/DeepSeek-R1-Distill-Qwen-7B-q4f32_1-MLC').reasoning).toBe(true);
    expect(byId('mlc-ai/Qwen3-0.6B-q4f32_1-MLC').reasoning).toBe(true);
    expect(byId('mlc-ai/Llama-3.2-1B-Instruct-q4f32_1-MLC').reasoning).toBe(false);
  });

  it.each([
    ['SmolLM2-135M-Instruct-q0f32-MLC', 540],
    ['Qwen2.5-0.5B-Instruct-q4f16_1-MLC', 281],
    ['TinyLlama-1.1B-Chat-v1.0-q4f16_1-MLC-1k', 619],
    ['gemma-4-E2B-it-q4f32_1-MLC', 1125],
    ['Phi-3.5-mini-instruct-q4f16_1-MLC', null],
  ])('estimates the download of %s as %s MB', (id, mb) => {
    expect(estimateSizeMb(id)).toBe(mb);
  });

  it('gives the API a model that honours tools only where WebLLM does', () => {
    const info = catalogModelInfo(byId('mlc-ai/Hermes-3-Llama-3.1-8B-q4f32_1-MLC'));
    expect(info.capabilities).toMatchObject({ tools: true, stream_n: false, logprobs: true });
    expect(
      catalogModelInfo(byId('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC')).capabilities.tools,
    ).toBe(false);
  });
});

describe("WebLLM's vision-language models", () => {
  it('are in the catalogue as chat models that take images, and no other WebLLM model does', () => {
    const seeing = catalog.filter((e) => catalogModelInfo(e).capabilities.vision).map((e) => e.id);
    expect(seeing).toEqual([
      'mlc-ai/Phi-3.5-vision-instruct-q4f16_1-MLC',
      'mlc-ai/Phi-3.5-vision-instruct-q4f32_1-MLC',
    ]);
    expect(byId(seeing[1]!)).toMatchObject({ engine: 'webllm', vision: true });
    expect(byId(seeing[1]!).embedding).toBeUndefined();
  });
});

describe('a GGUF with a vision projector', () => {
  const files = [
    'https://m.example/v-00001-of-00002.gguf',
    'https://m.example/v-00002-of-00002.gguf',
  ];
  const mmproj = 'https://m.example/mmproj-v-f16.gguf';

  it('takes images, and a GGUF without one does not', () => {
    const entry = ggufEntry({ id: 'acme/V-GGUF:Q4_0', files, mmproj }, 'added');
    expect(catalogModelInfo(entry).capabilities.vision).toBe(true);
    const plain = ggufEntry({ id: 'acme/V-GGUF:Q4_0', files }, 'added');
    expect(catalogModelInfo(plain).capabilities.vision).toBe(false);
  });

  it('downloads the projector with the model, as one model, after its parts', async () => {
    const entry = ggufEntry({ id: 'acme/V-GGUF:Q4_0', files, mmproj }, 'added');
    const { files: planned, complete } = await planFiles(entry, 'https://app.example/', () => {
      throw new Error('a GGUF reads no manifest');
    });
    expect(complete).toBe(true);
    expect(planned.map((f) => [f.url, f.kind])).toEqual([
      [files[0], 'gguf'],
      [files[1], 'gguf'],
      [mmproj, 'gguf'],
    ]);
  });
});

describe('device fit', () => {
  const f32 = byId('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC');
  const f16 = byId('mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC');

  it('runs f32 models on SwiftShader, which lacks shader-f16, and not f16 ones', () => {
    expect(unavailableReason(f32, swiftshader)).toBeNull();
    expect(unavailableReason(f16, swiftshader)).toMatch(/shader-f16/);
  });

  it('says why when there is no WebGPU or no adapter', () => {
    expect(unavailableReason(f32, { webgpu: false, adapter: null })).toMatch(/no WebGPU/);
    expect(unavailableReason(f32, { webgpu: true, adapter: null })).toMatch(
      /no usable GPU adapter/,
    );
  });

  it('refuses a GPU whose storage buffer bindings are under the 128 MiB WebLLM falls back to', () => {
    expect(unavailableReason(f32, withLimits({ maxStorageBufferBindingSize: 64 << 20 }))).toMatch(
      /maxStorageBufferBindingSize is 64 MiB; WebLLM needs at least 128 MiB/,
    );
    expect(
      unavailableReason(f32, withLimits({ maxStorageBufferBindingSize: 128 << 20 })),
    ).toBeNull();
  });

  it('refuses a GPU whose buffers are under the 256 MiB WebLLM falls back to', () => {
    expect(unavailableReason(f32, withLimits({ maxBufferSize: 255 << 20 }))).toMatch(
      /maxBufferSize is 255 MiB; WebLLM needs at least 256 MiB/,
    );
    expect(unavailableReason(f32, withLimits({ maxBufferSize: 256 << 20 }))).toBeNull();
  });

  it('refuses a GPU with less than 32 KiB of workgroup storage', () => {
    expect(
      unavailableReason(f32, withLimits({ maxComputeWorkgroupStorageSize: 16 << 10 })),
    ).toMatch(/maxComputeWorkgroupStorageSize is 16 KiB; WebLLM needs at least 32 KiB/);
  });

  it('refuses a GPU with fewer than 10 storage buffers per shader stage', () => {
    expect(unavailableReason(f32, withLimits({ maxStorageBuffersPerShaderStage: 8 }))).toMatch(
      /maxStorageBuffersPerShaderStage is 8; WebLLM needs at least 10/,
    );
  });

  it('names every limit that falls short, not only the first', () => {
    const reason = unavailableReason(
      f32,
      withLimits({ maxBufferSize: 128 << 20, maxStorageBuffersPerShaderStage: 8 }),
    );
    expect(reason).toMatch(/maxBufferSize/);
    expect(reason).toMatch(/maxStorageBuffersPerShaderStage/);
  });

  it('does not hold a small invocation count against a GPU, as WebLLM only warns about it', () => {
    expect(
      unavailableReason(f32, withLimits({ maxComputeInvocationsPerWorkgroup: 128 })),
    ).toBeNull();
  });
});

describe('the self-hosted catalogue file', () => {
  const write = (value: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'hearth-')), 'models.json');
    writeFileSync(file, JSON.stringify(value));
    return file;
  };

  it('reads records with their own ids, relative URLs kept for the app to resolve', () => {
    const file = write({
      models: [
        {
          id: 'acme/smol',
          model: 'models/smol/resolve/main/',
          model_id: 'SmolLM2-360M-Instruct-q4f32_1-MLC',
          model_lib: 'models/smol.wasm',
          overrides: { context_window_size: 2048 },
          tools: false,
        },
        {
          model: 'https://mirror.example/m',
          model_id: 'm-q4f16_1',
          model_lib: 'https://mirror.example/m.wasm',
        },
      ],
    });
    const [smol, other] = readSelfHosted(file);
    expect(smol).toMatchObject({
      id: 'acme/smol',
      owned_by: 'acme',
      model_url: 'models/smol/resolve/main/',
      context_window: 2048,
      source: 'self-hosted',
    });
    expect(other).toMatchObject({
      id: 'self-hosted/m-q4f16_1',
      owned_by: 'self-hosted',
      required_features: ['shader-f16'],
    });
  });

  it('is empty when the file does not exist', () => {
    expect(readSelfHosted('/nonexistent/models.json')).toEqual([]);
  });

  it('refuses a record without a model library, naming the field', () => {
    const file = write({ models: [{ model: 'x', model_id: 'y' }] });
    expect(() => readSelfHosted(file)).toThrow(/models\.0\.model_lib/);
  });

  it('takes a record written as WebLLM would, unknown fields included', () => {
    const record = { ...webllm.prebuiltAppConfig.model_list[0]!, id: 'acme/copy' };
    const [entry] = readSelfHosted(write({ models: [record] }));
    expect(entry).toMatchObject(
      catalogEntry(record, { owner: 'acme', id: 'acme/copy', source: 'self-hosted', tools: false }),
    );
  });
});

describe('GGUF entries', () => {
  it('reads a GGUF id as <hf-user>/<repo>:<quant>, and nothing else as one', () => {
    expect(parseGgufId('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M')).toEqual({
      owner: 'bartowski',
      repo: 'Qwen2.5-0.5B-Instruct-GGUF',
      quant: 'Q4_K_M',
    });
    for (const id of ['mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC', 'a/b:', 'a:b', 'a/b/c:Q4']) {
      expect(parseGgufId(id)).toBeNull();
    }
  });

  it('makes an entry served by llama.cpp, owned by the Hugging Face user, that runs without a GPU', () => {
    const entry = ggufEntry(
      { id: 'hearth/fixture-GGUF:F32', files: ['fixture.gguf'], context_window: 2048 },
      'self-hosted',
    );
    expect(entry).toMatchObject({
      engine: 'llama.cpp',
      owned_by: 'hearth',
      quant: 'F32',
      files: ['fixture.gguf'],
      required_features: [],
    });
    expect(unavailableReason(entry, { webgpu: false, adapter: null })).toBeNull();
  });

  it('plans a GGUF as its files, in order, in the GGUF cache', async () => {
    const entry = ggufEntry(
      {
        id: 'a/b-GGUF:Q4_K_M',
        files: ['m-00001-of-00002.gguf', 'https://x.example/m-00002-of-00002.gguf'],
      },
      'added',
    );
    const { files, complete } = await planFiles(
      entry,
      'https://app.example/h/',
      async () => undefined,
    );
    expect(complete).toBe(true);
    expect(files).toEqual([
      { url: 'https://app.example/h/m-00001-of-00002.gguf', cache: 'hearth/gguf', kind: 'gguf' },
      { url: 'https://x.example/m-00002-of-00002.gguf', cache: 'hearth/gguf', kind: 'gguf' },
    ]);
  });
});
