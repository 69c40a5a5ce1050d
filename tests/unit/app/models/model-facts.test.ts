import { describe, expect, it } from 'vitest';
import type { HostStatus } from '../../../../src/protocol/host/status';
import { catalogModel } from './catalog-model';
import {
  engineLabel,
  factsOf,
  llamaPlace,
  recommendedModel,
  sourceOf,
} from '../../../../src/app/models/model-facts';

const model = catalogModel;

/** A host status with only what these functions read. */
const host = (fields: Partial<HostStatus>) => ({ device: null, ...fields }) as HostStatus;
const gpu = (features: string[]) => ({ adapter: { features } }) as unknown as HostStatus['device'];

describe('sourceOf', () => {
  it('takes a Hugging Face id as an hf: source', () => {
    expect(sourceOf('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M')).toBe(
      'hf:bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M',
    );
    expect(sourceOf('  user/repo ')).toBe('hf:user/repo');
  });

  it('keeps a URL, a path of the app, and an hf: source as they are', () => {
    expect(sourceOf('https://example.com/m/model-Q4_K_M.gguf')).toBe(
      'https://example.com/m/model-Q4_K_M.gguf',
    );
    expect(sourceOf('models/tiny.gguf')).toBe('models/tiny.gguf');
    expect(sourceOf('/models/tiny.gguf')).toBe('/models/tiny.gguf');
    expect(sourceOf('hf:user/repo:Q8_0')).toBe('hf:user/repo:Q8_0');
    expect(sourceOf('HF:user/repo:Q8_0')).toBe('hf:user/repo:Q8_0');
  });

  it('passes anything else on for the API to judge', () => {
    expect(sourceOf('')).toBe('');
    expect(sourceOf('not a model')).toBe('not a model');
  });
});

describe('engineLabel and llamaPlace', () => {
  it('names the engine of WebLLM and GGUF models, and none for the echo engine', () => {
    expect(engineLabel(model('mlc-ai/x'))).toBe('WebLLM');
    expect(engineLabel(model('u/r:Q4_K_M', { engine: 'llama.cpp' }))).toBe('llama.cpp');
    expect(engineLabel(model('hearth/echo', { engine: 'echo' }))).toBeNull();
  });

  it("takes the host's word on where llama.cpp runs, threads and the compatibility build included", () => {
    expect(
      llamaPlace(host({ llama: { backend: 'cpu', threads: 4, isolated: true, build: 'default' } })),
    ).toEqual({
      label: 'CPU',
      detail: 'runs on the CPU (4 threads)',
    });
    expect(
      llamaPlace(host({ llama: { backend: 'cpu', threads: 1, isolated: false, build: 'default' } }))
        ?.detail,
    ).toBe('runs on the CPU (1 thread)');
    expect(
      llamaPlace(
        host({ llama: { backend: 'webgpu', threads: 1, isolated: true, build: 'default' } }),
      )?.label,
    ).toBe('GPU');
    expect(
      llamaPlace(host({ llama: { backend: 'cpu', threads: 1, isolated: true, build: 'compat' } }))
        ?.detail,
    ).toBe('runs on the CPU (1 thread, compatibility build)');
  });

  it("falls back on the device's facts: the GPU only with shader-f16; unknown without a host", () => {
    expect(llamaPlace(host({ device: gpu(['shader-f16']) }))?.label).toBe('GPU');
    expect(llamaPlace(host({ device: gpu([]) }))?.label).toBe('CPU');
    expect(llamaPlace(host({}))).toBeNull();
    expect(llamaPlace(null)).toBeNull();
  });
});

describe('factsOf', () => {
  it('gives a WebLLM model its GPU memory, and a GGUF where it runs', () => {
    expect(factsOf(model('mlc-ai/x'), null)).toMatch(
      /^Download about 300 MB · GPU memory 600 MB · context 4,096 tokens$/,
    );
    const gguf = model('u/r:Q4_K_M', { engine: 'llama.cpp', vram_required_mb: null });
    expect(factsOf(gguf, host({ device: gpu([]) }))).toBe(
      'Download about 300 MB · runs on the CPU · context 4,096 tokens',
    );
    expect(factsOf({ ...gguf, downloaded: true }, null)).toBe(
      'Size about 300 MB · runs on the GPU or the CPU · context 4,096 tokens',
    );
  });
});

describe('recommendedModel', () => {
  it('prefers WebLLM where it runs, f16 first', () => {
    const pick = recommendedModel([
      model('bartowski/Qwen3-0.6B-GGUF:Q4_K_M', { engine: 'llama.cpp' }),
      model('mlc-ai/Qwen3-0.6B-q4f32_1-MLC'),
      model('mlc-ai/Qwen3-0.6B-q4f16_1-MLC', { required_features: ['shader-f16'] }),
    ]);
    expect(pick?.id).toBe('mlc-ai/Qwen3-0.6B-q4f16_1-MLC');
  });

  it('suggests the GGUF when no WebLLM model runs here', () => {
    const pick = recommendedModel([
      model('mlc-ai/Qwen3-0.6B-q4f32_1-MLC', { available: false }),
      model('bartowski/Qwen3-0.6B-GGUF:Q4_K_M', { engine: 'llama.cpp' }),
    ]);
    expect(pick?.id).toBe('bartowski/Qwen3-0.6B-GGUF:Q4_K_M');
  });

  it('suggests the smallest of the GGUFs worth starting with where only llama.cpp runs', () => {
    const pick = recommendedModel([
      model('mlc-ai/Qwen3-0.6B-q4f32_1-MLC', { available: false }),
      model('bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', { engine: 'llama.cpp', size_mb: 808 }),
      model('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M', { engine: 'llama.cpp', size_mb: 398 }),
      model('e2e/fixture-GGUF:F32', { engine: 'llama.cpp', size_mb: 1 }),
    ]);
    expect(pick?.id).toBe('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M');
  });
});
