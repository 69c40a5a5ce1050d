import { describe, expect, it } from 'vitest';
import { CURATED_GGUF } from '../../../src/models/curated-gguf';
import { catalogEntry, ggufEntry, type GpuFacts } from '../../../src/models/catalog';
import {
  estimateTokensPerSecond,
  FLOOR_TOKENS_PER_SECOND,
  GOOD_TOKENS_PER_SECOND,
  judgeFit,
  SOFTWARE_ADAPTER_REASON,
  threadSpeedup,
  WEIGHT_EFFICIENCY,
  type DeviceFacts,
} from '../../../src/models/fit';
import type { CpuFacts } from '../../../src/protocol/host/cpu-facts';
import { ROOMY_LIMITS } from '../helpers';

const GB = 1e9;

/** An adapter with WebLLM's limits met: a software one (`fallback`) or not, with `features`. */
function gpu(fallback: boolean, features: string[] = []): GpuFacts {
  return {
    webgpu: true,
    adapter: {
      vendor: 'v',
      architecture: fallback ? 'swiftshader' : 'a',
      fallback,
      features,
      limits: ROOMY_LIMITS,
    },
  };
}

/** A processor whose probe read `bytesPerSecond`, giving llama.cpp `threads` threads. */
function cpu(threads: number, bytesPerSecond: number, memory_gb: number | null = null): CpuFacts {
  return {
    cores: threads * 2,
    threads,
    isolated: threads > 1,
    bytes_per_second: bytesPerSecond,
    memory_gb,
    measured_at: 0,
  };
}

/** A device: no GPU llama.cpp can use (SwiftShader), `cpu`, and plenty of storage. */
function device(processor: CpuFacts, over: Partial<DeviceFacts> = {}): DeviceFacts {
  return { gpu: gpu(true), cpu: processor, storage_left_bytes: 100 * GB, ...over };
}

/** A curated GGUF by its id's start. */
function curated(prefix: string) {
  const record = CURATED_GGUF.find((r) => r.id.startsWith(prefix));
  if (!record) throw new Error(`no curated GGUF ${prefix}`);
  return ggufEntry(record, 'curated');
}

const qwen4b = curated('unsloth/Qwen3-4B-GGUF');
const qwen05 = curated('bartowski/Qwen2.5-0.5B-Instruct-GGUF');
const webllm = (modelId: string) =>
  catalogEntry(
    { model: `https://hf.example/${modelId}`, model_id: modelId, model_lib: 'lib.wasm' },
    { owner: 'mlc-ai', source: 'prebuilt', tools: false },
  );

describe('judgeFit', () => {
  it('does not call a 4B GGUF good on two CPU threads, even of a fast processor, and says its speed', () => {
    // 10 GB/s a thread is more than a laptop core reads in the probe.
    const verdict = judgeFit(qwen4b, device(cpu(2, 10 * GB)), false);
    expect(verdict).toMatchObject({ backend: 'cpu', fit: 'slow' });
    expect(verdict.fit_reason).toMatch(/^About \d+\.\d tokens a second on .*CPU \(2 threads/);
  });

  it('calls a 0.5B GGUF good on a fast processor with two threads, and slow on one slow thread', () => {
    expect(judgeFit(qwen05, device(cpu(2, 10 * GB)), false)).toEqual({
      backend: 'cpu',
      fit: 'good',
    });
    expect(judgeFit(qwen05, device(cpu(1, 2 * GB)), false).fit).toBe('slow');
  });

  it('calls a model no when it would decode under the floor, saying so', () => {
    const verdict = judgeFit(qwen4b, device(cpu(1, 1 * GB)), false);
    expect(verdict.fit).toBe('no');
    expect(verdict.fit_reason).toMatch(/too slow to use/);
  });

  it('never calls a WebLLM model good on a software adapter, however small, and says why', () => {
    for (const id of ['SmolLM2-135M-Instruct-q0f32-MLC', 'Qwen3-0.6B-q4f32_1-MLC']) {
      expect(judgeFit(webllm(id), device(cpu(4, 50 * GB)), false)).toEqual({
        backend: 'webgpu',
        fit: 'slow',
        fit_reason: SOFTWARE_ADAPTER_REASON,
      });
    }
  });

  it('calls an f16 WebLLM model no on a GPU without shader-f16, with the GPU’s reason', () => {
    const verdict = judgeFit(webllm('Qwen3-0.6B-q4f16_1-MLC'), device(cpu(1, GB)), false);
    expect(verdict).toMatchObject({ backend: 'webgpu', fit: 'no' });
    expect(verdict.fit_reason).toMatch(/shader-f16/);
  });

  it('calls a WebLLM model good on a hardware adapter, whatever the processor', () => {
    expect(
      judgeFit(
        webllm('Qwen3-0.6B-q4f32_1-MLC'),
        device(cpu(1, 0.1 * GB), { gpu: gpu(false) }),
        false,
      ),
    ).toEqual({ backend: 'webgpu', fit: 'good' });
  });

  it('runs a GGUF on WebGPU where a hardware adapter has shader-f16, and calls it good', () => {
    const facts = device(cpu(1, 0.1 * GB), { gpu: gpu(false, ['shader-f16']) });
    expect(judgeFit(qwen4b, facts, false)).toEqual({ backend: 'webgpu', fit: 'good' });
  });

  it('calls a model no when its download is more than the storage left, unless it is downloaded', () => {
    const facts = device(cpu(4, 50 * GB), { storage_left_bytes: 1 * GB });
    const verdict = judgeFit(qwen4b, facts, false);
    expect(verdict.fit).toBe('no');
    expect(verdict.fit_reason).toBe(
      'Its download (about 2.4 GB) is more than the storage this site has left on this device (about 954 MB).',
    );
    expect(judgeFit(qwen4b, facts, true).fit).not.toBe('no');
    expect(judgeFit(webllm('Qwen3-8B-q4f32_1-MLC'), facts, false).fit).toBe('no');
  });

  it('calls a model no when it needs more memory than the device has, but trusts 8 GB, which means 8 or more', () => {
    const fast = (memory: number) => device(cpu(4, 50 * GB, memory));
    const small = judgeFit(qwen4b, fast(2), false);
    expect(small.fit).toBe('no');
    expect(small.fit_reason).toMatch(/needs about 3\.1 GB of memory; this device has about 2 GB/);
    expect(judgeFit(qwen4b, fast(8), false).fit).not.toBe('no');
  });

  it('cannot estimate a GGUF of unknown size, and says so rather than call it good', () => {
    const unknown = { ...qwen05, size_mb: null };
    expect(judgeFit(unknown, device(cpu(4, 50 * GB)), false)).toMatchObject({
      fit: 'slow',
      fit_reason: expect.stringMatching(/size is not known/),
    });
  });
});

describe('estimateTokensPerSecond', () => {
  it('divides the threads’ speed through weights by the model’s bytes', () => {
    // 8 GiB/s on one thread through 1 GiB of F32 weights: 8 tokens a second, at F32's share.
    const oneThread = cpu(1, 8 * 1024 ** 3);
    expect(estimateTokensPerSecond(1024, 'F32', oneThread)).toBeCloseTo(
      8 * WEIGHT_EFFICIENCY.f32,
      10,
    );
    expect(estimateTokensPerSecond(1024, 'Q4_K_M', oneThread)).toBeCloseTo(
      8 * WEIGHT_EFFICIENCY.quantised,
      10,
    );
    expect(estimateTokensPerSecond(1024, 'BF16', oneThread)).toBeCloseTo(
      8 * WEIGHT_EFFICIENCY.f16,
      10,
    );
    expect(estimateTokensPerSecond(1024, 'F32', { ...oneThread, threads: 4 })).toBeCloseTo(
      8 * WEIGHT_EFFICIENCY.f32 * 4 ** 0.7,
      10,
    );
  });

  it('gains less than linearly from threads, and nothing from none', () => {
    expect(threadSpeedup(1)).toBe(1);
    expect(threadSpeedup(0)).toBe(1);
    expect(threadSpeedup(2)).toBeGreaterThan(1);
    expect(threadSpeedup(2)).toBeLessThan(2);
    expect(threadSpeedup(4)).toBeLessThan(4);
  });

  it('puts good above slow above the floor', () => {
    expect(GOOD_TOKENS_PER_SECOND).toBeGreaterThan(FLOOR_TOKENS_PER_SECOND);
  });
});
