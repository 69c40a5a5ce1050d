/**
 * @module
 * Whether a model runs well on this device: `good` when it should decode at a comfortable reading
 * speed, `slow` when it runs but slowly, `no` when it cannot, with the reason in words. Judged from
 * what the host's engine worker measured (the WebGPU adapter, the processor, the memory) and the
 * storage left, by the service worker for `/v1/hearth/catalog`; docs/models.md ("How fit is
 * judged") gives the rule and the numbers behind it. Plain data in, plain data out: no DOM, no
 * browser API.
 */
import type { CpuFacts } from '../protocol/host/cpu-facts';
import type { GpuFacts } from '../protocol/host/gpu-facts';
import {
  llamaOnGpu,
  unavailableReason,
  type CatalogEntry,
  type CatalogModel,
  type Fit,
  type FitBackend,
} from './catalog';

// Declared with the catalogue's model, which carries them (a cycle otherwise).
export type { Fit, FitBackend } from './catalog';

/** What the fit is judged from. */
export interface DeviceFacts {
  gpu: GpuFacts;
  /** Null when the host will not say (its probe failed, or it is of an older build). */
  cpu: CpuFacts | null;
  /** The storage this origin may still use (quota − usage), in bytes; null where not known. */
  storage_left_bytes: number | null;
}

/** A model's fit, and where it would run. */
export interface FitVerdict {
  backend: FitBackend | null;
  fit: Fit;
  /** Why the fit is not `good`, in words. */
  fit_reason?: string;
}

/**
 * Tokens a second at and above which a model is `good`. People read about 250 words a minute,
 * ~5.5 tokens a second at ~1.3 tokens a word; 8 leaves room for the tokens a reply spends on
 * markup and a thinking model on its reasoning, so the text still comes faster than it is read.
 */
export const GOOD_TOKENS_PER_SECOND = 8;
/**
 * Below this a model is `no`: a reply of 200 tokens would take over six minutes, which no chat
 * survives.
 */
export const FLOOR_TOKENS_PER_SECOND = 0.5;
/**
 * How much faster llama.cpp decodes with `n` threads than with one: `n^0.7`. Decoding is bound by
 * memory bandwidth, which the threads share, and they wait on each other at every step; on a quiet
 * 2-core machine two threads decoded 1.29× faster than one (docs/performance.md), below this
 * curve's 1.62, but the rule gives threads only on 4 cores or more, each thread a core of its own.
 */
export const THREAD_EXPONENT = 0.7;
/**
 * The share of the probe's speed (bytes of Float32 weights one thread multiplies per second,
 * src/engines/llama/cpu-probe.ts) at which llama.cpp's WebAssembly gets through a model's bytes,
 * by kind of weights. F32, measured on this project's 2-core machine: the probe reads 6.7 GB/s in
 * Chromium, and llama.cpp decoded the ~50 MB F32 fixture at 60–130 tokens a second on one thread
 * (docs/performance.md), 3–6.5 GB/s: 0.45–0.97 of the probe, so 0.7. Quantised weights (Q4_K_M
 * and the like) cost unpacking on top of the read: 0.35, from a public report of wllama decoding a
 * 1.5 GB Q4_K_M model at 6–7 tokens a second on a laptop in Chrome (ngxson/wllama#4: ~10 GB/s
 * over its threads, 2.5–3.5 GB/s a thread, against a probe of ~7–8 GB/s on such a core). F16 and
 * BF16 are widened to F32 as they are read: taken as the quantised share.
 */
export const WEIGHT_EFFICIENCY = { f32: 0.7, f16: 0.35, quantised: 0.35 } as const;

/** The `WEIGHT_EFFICIENCY` of a GGUF quantisation (`F32`, `BF16`, `Q4_K_M`, …). */
export function weightEfficiency(quant: string): number {
  if (/^f32$/i.test(quant)) return WEIGHT_EFFICIENCY.f32;
  if (/^b?f16$/i.test(quant)) return WEIGHT_EFFICIENCY.f16;
  return WEIGHT_EFFICIENCY.quantised;
}

/** How many times one thread's speed `threads` threads decode at (`THREAD_EXPONENT`). */
export function threadSpeedup(threads: number): number {
  return Math.max(1, threads) ** THREAD_EXPONENT;
}

/**
 * Decode tokens a second llama.cpp should reach on this CPU for a model of `sizeMb` MB of
 * `quant` weights: each token reads every weight once, so the speed at which the threads get
 * through weights, divided by the model's bytes.
 */
export function estimateTokensPerSecond(sizeMb: number, quant: string, cpu: CpuFacts): number {
  const bytes = sizeMb * 1024 ** 2;
  if (!(bytes > 0)) return Infinity;
  return (cpu.bytes_per_second * threadSpeedup(cpu.threads) * weightEfficiency(quant)) / bytes;
}

/** Why a WebLLM model is not `good` on a software adapter, in the user's words. */
export const SOFTWARE_ADAPTER_REASON =
  "This device's graphics adapter is a software one, which runs on the processor: WebLLM's models would crawl. GGUF models run on the CPU with llama.cpp instead.";

/** `1.2 GB`, `380 MB`: an amount of storage or memory, as people say it. */
function amount(mb: number): string {
  return mb >= 1024 ? `${+(mb / 1024).toFixed(1)} GB` : `${Math.round(mb)} MB`;
}

/** `4.3`, `0.7`: a speed as people read it. */
function speed(tokensPerSecond: number): string {
  return tokensPerSecond >= 10 ? String(Math.round(tokensPerSecond)) : tokensPerSecond.toFixed(1);
}

/** The memory a model takes to run, in MB: its own figure, else its file and a fifth more. */
function memoryNeededMb(entry: CatalogEntry): number | null {
  return entry.vram_required_mb ?? (entry.size_mb === null ? null : entry.size_mb * 1.2);
}

/**
 * `navigator.deviceMemory` is rounded down to a power of two and says at most 8: a figure of 8
 * means "8 GB or more", and says nothing against any model.
 */
const DEVICE_MEMORY_CAP_GB = 8;

/** Why the device has no room for the model (storage or memory), or null. */
function roomReason(entry: CatalogEntry, facts: DeviceFacts, downloaded: boolean): string | null {
  const left = facts.storage_left_bytes;
  if (!downloaded && entry.size_mb !== null && left !== null && entry.size_mb * 1024 ** 2 > left) {
    return `Its download (about ${amount(entry.size_mb)}) is more than the storage this site has left on this device (about ${amount(left / 1024 ** 2)}).`;
  }
  const memory = facts.cpu?.memory_gb ?? null;
  const needed = memoryNeededMb(entry);
  if (memory !== null && memory < DEVICE_MEMORY_CAP_GB && needed !== null) {
    if (needed > memory * 1024) {
      return `It needs about ${amount(needed)} of memory; this device has about ${amount(memory * 1024)}.`;
    }
  }
  return null;
}

/** Whether the model runs here, where, and how well. `downloaded`: its files are all here. */
export function judgeFit(entry: CatalogEntry, facts: DeviceFacts, downloaded: boolean): FitVerdict {
  const { gpu, cpu } = facts;
  const software = gpu.adapter?.fallback === true;
  if (entry.engine === 'webllm') {
    const cannot = unavailableReason(entry, gpu) ?? roomReason(entry, facts, downloaded);
    if (cannot) return { backend: 'webgpu', fit: 'no', fit_reason: cannot };
    // The GPU's speed is not probed (a WebGPU benchmark would take seconds and a compile): a
    // hardware adapter that meets WebLLM's limits is taken to run its models well.
    if (software) return { backend: 'webgpu', fit: 'slow', fit_reason: SOFTWARE_ADAPTER_REASON };
    return { backend: 'webgpu', fit: 'good' };
  }
  const backend: FitBackend = llamaOnGpu(gpu) ? 'webgpu' : 'cpu';
  const cannot = roomReason(entry, facts, downloaded);
  if (cannot) return { backend, fit: 'no', fit_reason: cannot };
  if (backend === 'webgpu') {
    if (software) {
      return {
        backend,
        fit: 'slow',
        fit_reason:
          "llama.cpp would run it on this device's software graphics adapter, which runs on the processor.",
      };
    }
    return { backend, fit: 'good' };
  }
  if (entry.size_mb === null) {
    return {
      backend,
      fit: 'slow',
      fit_reason:
        'Its size is not known, so its speed on this CPU cannot be estimated; a large model would be slow.',
    };
  }
  if (cpu === null) {
    return {
      backend,
      fit: 'slow',
      fit_reason:
        "This device's processor was not measured (the tab hosting the engine is of an older Hearth, or its measurement failed), so the model's speed on it cannot be estimated.",
    };
  }
  const tps = estimateTokensPerSecond(entry.size_mb, entry.quant, cpu);
  const where = `this device's CPU (${cpu.threads} thread${cpu.threads === 1 ? '' : 's'} for llama.cpp)`;
  if (tps < FLOOR_TOKENS_PER_SECOND) {
    return {
      backend,
      fit: 'no',
      fit_reason: `About ${speed(tps)} tokens a second on ${where}: too slow to use (under ${FLOOR_TOKENS_PER_SECOND}).`,
    };
  }
  if (tps < GOOD_TOKENS_PER_SECOND) {
    return {
      backend,
      fit: 'slow',
      fit_reason: `About ${speed(tps)} tokens a second on ${where}: slower than reading (${GOOD_TOKENS_PER_SECOND} or more is comfortable).`,
    };
  }
  return { backend, fit: 'good' };
}

/** Why the facts are not known (no host, or not measured yet), in words. */
export interface UnknownFacts {
  unknown: string;
}

/** A catalogue entry's `available`, `backend` and `fit`: `available` false exactly where `fit` no. */
export type CatalogFit = Pick<
  CatalogModel,
  'available' | 'unavailable_reason' | 'backend' | 'fit' | 'fit_reason'
>;

/**
 * The catalogue's fit of `entry`: unknown while the GPU is not measured; what the GPU lacks (or a
 * model that lost the GPU device twice here, `failing`) whatever else is known; then, once the
 * processor is measured too, the rule (`judgeFit`).
 */
export function catalogFit(
  entry: CatalogEntry,
  gpu: GpuFacts | UnknownFacts,
  facts: DeviceFacts | UnknownFacts,
  state: { downloaded: boolean; failing?: string | undefined },
): CatalogFit {
  if ('unknown' in gpu && state.failing === undefined) {
    const why = gpu.unknown;
    return { available: null, unavailable_reason: why, backend: null, fit: null, fit_reason: why };
  }
  const onGpu = entry.engine === 'webllm' || ('adapter' in gpu && llamaOnGpu(gpu));
  const backend: FitBackend = onGpu ? 'webgpu' : 'cpu';
  const refused = state.failing ?? ('unknown' in gpu ? null : unavailableReason(entry, gpu));
  if (refused !== null) {
    return {
      available: false,
      unavailable_reason: refused,
      backend,
      fit: 'no',
      fit_reason: refused,
    };
  }
  if ('unknown' in facts) return { available: true, backend, fit: null, fit_reason: facts.unknown };
  const verdict = judgeFit(entry, facts, state.downloaded);
  return {
    available: verdict.fit !== 'no',
    ...(verdict.fit === 'no' && { unavailable_reason: verdict.fit_reason ?? '' }),
    ...verdict,
  };
}
