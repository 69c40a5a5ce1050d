/**
 * @module
 * How llama.cpp runs here: on WebGPU or the CPU, with how many threads, which build, and how long
 * a load may take; facts of the platform, decided apart from the engine that uses them so that
 * the bench and the status say the same.
 */
import { llamaOnGpu, type GpuFacts } from '../../models/catalog';
import { llamaNeedsCompat } from '../../models/llama-compat';
import type { LlamaRuntime } from '../../protocol/host/status';

/** Layers to offload when llama.cpp runs on WebGPU: all of them. */
const ALL_LAYERS = 999;
/** Threads llama.cpp gets at most: a phone's other cores keep the page responsive. */
const MAX_THREADS = 4;
/**
 * A load's deadline: a minute, plus the time to read the file at 10 MB/s. When the page's CSP
 * blocks WebAssembly or `blob:` workers, wllama's `loadModel` never settles (notes/wllama-3.13.md).
 */
export function defaultLoadDeadlineMs(bytes: number): number {
  return 60_000 + Math.ceil(bytes / 10_000);
}

/**
 * Threads llama.cpp gets: several only where the page is cross-origin isolated, and then half the
 * cores (at most four), as wllama itself chooses: `hardwareConcurrency` counts logical processors,
 * and llama.cpp's threads wait on each other at every step, so one whose core is taken (by the
 * browser, a sibling hyperthread) stalls them all. On a 2-core machine two threads decoded 1.29×
 * faster than one while it was quiet, and 7–20× slower while other work ran (bench:
 * real_mt_speedup).
 */
export function llamaThreads(isolated: boolean, cores: number): number {
  return isolated ? Math.max(1, Math.min(Math.floor(cores / 2), MAX_THREADS)) : 1;
}

/** What decides llama.cpp's threads and build. */
export interface LlamaPlatform {
  isolated: boolean;
  cores: number;
  /** Whether the browser lacks what wllama's default build needs (llama-compat.ts). */
  compat: boolean;
  /** Threads to use where isolation allows several, in place of the rule (the bench sets it). */
  threads?: number;
}

/** This worker's isolation and cores. */
export function thisPlatform(): LlamaPlatform {
  return {
    isolated: globalThis.crossOriginIsolated === true,
    cores: globalThis.navigator?.hardwareConcurrency ?? 1,
    compat: llamaNeedsCompat(),
  };
}

/** How a load would run, and the layers it offloads to the GPU. */
export interface LlamaPlan {
  runtime: LlamaRuntime;
  gpuLayers: number;
}

/** What a load would use on `platform` with `gpu`: GPU or CPU, threads, build. */
export function llamaPlan(platform: LlamaPlatform, gpu: GpuFacts | null): LlamaPlan {
  const { isolated, cores, threads, compat } = platform;
  const onGpu = llamaOnGpu(gpu);
  return {
    runtime: {
      backend: onGpu ? 'webgpu' : 'cpu',
      threads: isolated && threads !== undefined ? threads : llamaThreads(isolated, cores),
      isolated,
      build: compat ? 'compat' : 'default',
    },
    gpuLayers: onGpu ? ALL_LAYERS : 0,
  };
}
