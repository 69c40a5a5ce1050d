/**
 * @module
 * Measures the device's WebGPU in the engine worker, where the engines run, with the adapter
 * options WebLLM uses: the service worker decides model fit from these facts (docs/architecture.md,
 * Bird's-eye view; docs/models.md, How fit is judged).
 */
import type { GpuFacts, GpuLimits } from '../protocol/host/gpu-facts';

/** The slice of a WebGPU adapter read here (TypeScript's DOM types do not include WebGPU yet). */
export interface GpuAdapterLike {
  features: ReadonlySet<string>;
  limits: GpuLimits;
  info?: { vendor?: string; architecture?: string; isFallbackAdapter?: boolean };
  /** Before `info.isFallbackAdapter` (Chromium < 131). */
  isFallbackAdapter?: boolean;
}

/** The slice of `navigator.gpu` used here. */
export interface GpuLike {
  requestAdapter(options?: { powerPreference?: string }): Promise<GpuAdapterLike | null>;
}

/**
 * WebLLM's `detectGPUDevice` asks for this: on a machine with two GPUs the default adapter may
 * be the integrated one, and its limits and features are not the engine's.
 */
const POWER_PREFERENCE = 'high-performance';

/** This context's WebGPU facts: `gpu` is its `navigator.gpu`. */
export async function measureGpu(gpu: GpuLike | undefined): Promise<GpuFacts> {
  if (!gpu) return { webgpu: false, adapter: null };
  // A browser may throw rather than answer null (a blocklisted driver, a lost GPU process).
  const adapter = await gpu.requestAdapter({ powerPreference: POWER_PREFERENCE }).catch(() => null);
  if (!adapter) return { webgpu: true, adapter: null };
  // GPUSupportedLimits is not cloneable and its values are getters on its prototype: copy them.
  const { limits: l } = adapter;
  const limits: GpuLimits = {
    maxBufferSize: l.maxBufferSize,
    maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
    maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
    maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
  };
  return {
    webgpu: true,
    adapter: {
      vendor: adapter.info?.vendor ?? '',
      architecture: adapter.info?.architecture ?? '',
      fallback: adapter.info?.isFallbackAdapter ?? adapter.isFallbackAdapter ?? false,
      features: [...adapter.features].sort(),
      limits,
    },
  };
}
