/**
 * @module
 * What the engine worker measured of the device's WebGPU, and how `/v1/hearth/status` shows
 * it. The facts are measured where the engines run, never in the service worker
 * (docs/architecture.md, Bird's-eye view):
 * Firefox has no WebGPU there, and on a machine with two GPUs its default adapter is not the
 * one WebLLM asks for.
 */

/** The adapter limits WebLLM reads before it creates a device (`detectGPUDevice`). */
export interface GpuLimits {
  maxBufferSize: number;
  maxStorageBufferBindingSize: number;
  maxComputeWorkgroupStorageSize: number;
  maxStorageBuffersPerShaderStage: number;
  /** WebLLM only warns below 256 and lets the library's defaults decide: shown, not checked. */
  maxComputeInvocationsPerWorkgroup: number;
}

/** A WebGPU adapter, as far as model fit goes. */
export interface AdapterFacts {
  vendor: string;
  architecture: string;
  /** A software adapter (SwiftShader): it works, slowly. */
  fallback: boolean;
  /** Its features, sorted. */
  features: string[];
  limits: GpuLimits;
}

/** What the engine worker found of WebGPU. */
export interface GpuFacts {
  /** Whether the engine worker has WebGPU (`navigator.gpu`). */
  webgpu: boolean;
  /** The adapter WebLLM gets (`powerPreference: 'high-performance'`), if one was granted. */
  adapter: AdapterFacts | null;
}

/** The `webgpu` part of `/v1/hearth/status`. */
export interface WebgpuStatus {
  /** Whether an adapter was granted; null when that is not known yet. */
  available: boolean | null;
  adapter: { vendor: string; architecture: string; fallback: boolean } | null;
  features: string[];
  limits: GpuLimits | null;
  /** Why it is not available, or why that is not known. */
  reason?: string;
}

/** What `/v1/hearth/status` shows of the facts (null: the host has not measured them yet). */
export function webgpuStatus(gpu: GpuFacts | null): WebgpuStatus {
  if (!gpu) {
    return {
      available: null,
      adapter: null,
      features: [],
      limits: null,
      reason: 'Not known yet: the engine worker has not finished asking WebGPU for an adapter.',
    };
  }
  const { adapter } = gpu;
  if (!adapter) {
    return {
      available: false,
      adapter: null,
      features: [],
      limits: null,
      reason: gpu.webgpu
        ? 'WebGPU found no usable GPU adapter on this device.'
        : 'This browser offers no WebGPU to the engine worker.',
    };
  }
  const { vendor, architecture, fallback, features, limits } = adapter;
  return { available: true, adapter: { vendor, architecture, fallback }, features, limits };
}
