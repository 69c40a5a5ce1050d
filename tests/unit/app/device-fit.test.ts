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

/** WebLLM's models as the catalogue judges them on a software adapter: slow, with why. */
const onSoftware = { fit: 'slow', fit_reason: SOFTWARE_ADAPTER_REASON } as const;
const webllm = model('mlc-ai/Qwen3-0.6B-q4f32_1-MLC');
const big = model('mlc-ai/Qwen3-8B-q4f32_1-MLC', { size_mb: 5000 });
const gguf = model('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M', {
  engine: 'llama.cpp',
  source: 'curated',
});
const slowGguf = model('bartowski/Qwen3-4B-GGUF:Q4_K_M', {
  engine: 'llama.cpp',
  source: 'curated',
  fit: 'slow',
  fit_reason: 'About 1.3 tokens a second on this device’s CPU.',
});

describe('fitForDevice', () => {
  it('marks every model whose fit here is slow as slow here, with the catalogue’s reason', () => {
    const offered = fitForDevice([
      { ...webllm, ...onSoftware },
      { ...big, ...onSoftware },
      gguf,
      slowGguf,
    ]);
    expect(offered.map((m) => m.slow_here)).toEqual([
      SOFTWARE_ADAPTER_REASON,
      SOFTWARE_ADAPTER_REASON,
      undefined,
      slowGguf.fit_reason,
    ]);
    expect(softwareAdapter(host(true))).toBe(true);
    expect(softwareAdapter(host(false))).toBe(false);
  });

  it('recommends the GGUF that runs well over WebLLM that is slow on a software adapter, and WebLLM where it runs well', () => {
    expect(recommendedModel(fitForDevice([{ ...webllm, ...onSoftware }, gguf]))?.id).toBe(gguf.id);
    expect(recommendedModel(fitForDevice([webllm, gguf]))?.id).toBe(webllm.id);
  });

  it('keeps WebLLM models under "What runs here" on a software adapter: they run, with a warning', () => {
    const [small, file] = fitForDevice([{ ...webllm, ...onSoftware }, gguf]);
    expect([small, file].map((m) => runsHere(m!))).toEqual([true, true]);
  });

  it('gives back the same catalogue where no model is slow here', () => {
    const catalog = [webllm, gguf];
    expect(fitForDevice(catalog)).toBe(catalog);
  });
});
