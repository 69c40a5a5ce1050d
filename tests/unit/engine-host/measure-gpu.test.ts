import { describe, expect, it } from 'vitest';
import {
  measureGpu,
  type GpuAdapterLike,
  type GpuLike,
} from '../../../src/engine-host/measure-gpu';
import type { GpuLimits } from '../../../src/protocol/host/gpu-facts';
import { ROOMY_LIMITS } from '../helpers';

/** SwiftShader's limits in Chromium 156, as a GPUSupportedLimits gives them: getters. */
class Limits implements GpuLimits {
  get maxBufferSize() {
    return 1 << 30;
  }
  get maxStorageBufferBindingSize() {
    return 1 << 30;
  }
  get maxComputeWorkgroupStorageSize() {
    return 32 << 10;
  }
  get maxStorageBuffersPerShaderStage() {
    return 10;
  }
  get maxComputeInvocationsPerWorkgroup() {
    return 256;
  }
  get maxTextureDimension2D() {
    return 8192;
  }
}

const swiftshader: GpuAdapterLike = {
  features: new Set(['timestamp-query', 'subgroups']),
  limits: new Limits(),
  info: { vendor: 'google', architecture: 'swiftshader', isFallbackAdapter: true },
};

/** A `navigator.gpu` that grants `adapter` and records what it was asked. */
function gpuWith(adapter: GpuAdapterLike | null | Error) {
  const asked: unknown[] = [];
  const gpu: GpuLike = {
    async requestAdapter(options) {
      asked.push(options);
      if (adapter instanceof Error) throw adapter;
      return adapter;
    },
  };
  return { gpu, asked };
}

describe('measureGpu', () => {
  it('asks for the high-performance adapter, as WebLLM does', async () => {
    const { gpu, asked } = gpuWith(swiftshader);
    await measureGpu(gpu);
    expect(asked).toEqual([{ powerPreference: 'high-performance' }]);
  });

  it('reads the adapter, its sorted features and the limits WebLLM checks as plain numbers', async () => {
    const facts = await measureGpu(gpuWith(swiftshader).gpu);
    expect(facts).toEqual({
      webgpu: true,
      adapter: {
        vendor: 'google',
        architecture: 'swiftshader',
        fallback: true,
        features: ['subgroups', 'timestamp-query'],
        limits: ROOMY_LIMITS,
      },
    });
    // It crosses to the service worker by postMessage: it must survive a structured clone.
    expect(structuredClone(facts)).toEqual(facts);
  });

  it('reads the fallback flag where older browsers put it', async () => {
    const old = { ...swiftshader, info: { vendor: 'google' }, isFallbackAdapter: true };
    expect((await measureGpu(gpuWith(old).gpu)).adapter).toMatchObject({
      architecture: '',
      fallback: true,
    });
  });

  it('tells no WebGPU from WebGPU without an adapter', async () => {
    expect(await measureGpu(undefined)).toEqual({ webgpu: false, adapter: null });
    expect(await measureGpu(gpuWith(null).gpu)).toEqual({ webgpu: true, adapter: null });
  });

  it('takes an adapter request that throws for no adapter', async () => {
    expect(await measureGpu(gpuWith(new Error('GPU process lost')).gpu)).toEqual({
      webgpu: true,
      adapter: null,
    });
  });
});
