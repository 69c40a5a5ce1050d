/**
 * @module
 * What this browser offers the engine: its WebGPU adapter and its storage. Read in the service
 * worker, which sees the same GPU and the same origin storage as the engine worker.
 */
/// <reference lib="webworker" />
import type { GpuFacts } from '../src/openai/catalog';

/** The slice of the WebGPU API read here (TypeScript's DOM types do not include WebGPU yet). */
interface GpuAdapterLike {
  features: ReadonlySet<string>;
  limits: { maxStorageBufferBindingSize: number; maxBufferSize: number };
  info?: { vendor?: string; architecture?: string; isFallbackAdapter?: boolean };
  isFallbackAdapter?: boolean;
}
interface GpuLike {
  requestAdapter(): Promise<GpuAdapterLike | null>;
}

/** The adapter's facts, read once per service-worker start. */
let facts: Promise<GpuFacts> | undefined;

async function readGpu(): Promise<GpuFacts> {
  const gpu = (navigator as { gpu?: GpuLike }).gpu;
  if (!gpu) return { webgpu: false, adapter: null };
  const adapter = await gpu.requestAdapter().catch(() => null);
  if (!adapter) return { webgpu: true, adapter: null };
  return {
    webgpu: true,
    adapter: {
      vendor: adapter.info?.vendor ?? '',
      architecture: adapter.info?.architecture ?? '',
      fallback: adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false,
      features: [...adapter.features].sort(),
      maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
      maxBufferSize: adapter.limits.maxBufferSize,
    },
  };
}

/** This browser's WebGPU, as far as model fit goes. */
export function gpuFacts(): Promise<GpuFacts> {
  facts ??= readGpu();
  return facts;
}

/** The `webgpu` and `storage` parts of `/v1/hearth/status`. */
export async function deviceStatus() {
  const gpu = await gpuFacts();
  const [estimate, persisted] = await Promise.all([
    navigator.storage?.estimate().catch(() => undefined),
    navigator.storage?.persisted().catch(() => false),
  ]);
  return {
    webgpu: {
      available: gpu.adapter !== null,
      adapter: gpu.adapter && {
        vendor: gpu.adapter.vendor,
        architecture: gpu.adapter.architecture,
        fallback: gpu.adapter.fallback,
      },
      features: gpu.adapter?.features ?? [],
    },
    storage: {
      usage_bytes: estimate?.usage ?? null,
      quota_bytes: estimate?.quota ?? null,
      persisted: persisted ?? false,
    },
  };
}
