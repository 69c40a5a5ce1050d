import { describe, expect, it } from 'vitest';
import type { HostStatus } from '../../../src/protocol/host/status';
import { catalogModel } from './models/catalog-model';
import {
  fitForDevice,
  SOFTWARE_ADAPTER_REASON,
  softwareAdapter,
} from '../../../src/app/device-fit';
import { recommendedModel } from '../../../src/app/models/model-facts';
import { runsHere } from '../../../src/app/models/model-search';

const model = catalogModel;

/** A host on an adapter that is (`fallback`) or is not a software one. */
const host = (fallback: boolean) =>
  ({
    device: {
      webgpu: true,
      adapter: { vendor: 'google', architecture: '', fallback, features: [] },
    },
  }) as unknown as HostStatus;

const webllm = model('mlc-ai/Qwen3-0.6B-q4f32_1-MLC');
const big = model('mlc-ai/Qwen3-8B-q4f32_1-MLC', { size_mb: 5000 });
const gguf = model('Qwen/Qwen3-0.6B-GGUF:Q8_0', { engine: 'llama.cpp', source: 'curated' });

describe('fitForDevice', () => {
  it('judges a software adapter as no GPU: WebLLM models are slow here, with why; GGUFs are not', () => {
    const offered = fitForDevice([webllm, big, gguf], host(true));
    expect(offered.map((m) => m.slow_here)).toEqual([
      SOFTWARE_ADAPTER_REASON,
      SOFTWARE_ADAPTER_REASON,
      undefined,
    ]);
    expect(softwareAdapter(host(true))).toBe(true);
  });

  it('recommends the GGUF on the CPU on a software adapter, and WebLLM on a real GPU', () => {
    expect(recommendedModel(fitForDevice([webllm, gguf], host(true)))?.id).toBe(gguf.id);
    expect(recommendedModel(fitForDevice([webllm, gguf], host(false)))?.id).toBe(webllm.id);
  });

  it('keeps WebLLM models under "What runs here" on a software adapter: they run, with a warning', () => {
    const [small, file] = fitForDevice([webllm, gguf], host(true));
    expect([small, file].map((m) => runsHere(m!))).toEqual([true, true]);
  });

  it('gives back the same catalogue on a real GPU, or before the device is measured', () => {
    const catalog = [webllm, gguf];
    expect(fitForDevice(catalog, host(false))).toBe(catalog);
    expect(fitForDevice(catalog, null)).toBe(catalog);
  });
});
