/**
 * @module
 * The engine host's status: what the host publishes on the `hearth:status` BroadcastChannel
 * whenever it changes, for every tab of the origin, and with the storage's, the body of
 * `GET /v1/hearth/status`.
 */

import type { DownloadProgress } from './downloads';
import type { ErrorBody } from '../errors';
import type { CpuFacts } from './cpu-facts';
import { webgpuStatus, type GpuFacts, type WebgpuStatus } from './gpu-facts';

import { installName } from '../install';

/** The BroadcastChannel on which the host publishes its `HostStatus` (one per install). */
export const statusChannelName = (): string => installName('hearth:status');

/** The engine host as it stands now. */
export interface HostStatus {
  /** The tab hosting the engine: its id (new for every page load) and its build. */
  host: { id: string; build: string };
  /** The models the host can answer with now. */
  models: string[];
  /** The model on the GPU, if any. */
  loaded_model: string | null;
  /**
   * The embedding model kept loaded beside it (llama.cpp), if any: its memory comes on top of the
   * chat model's.
   */
  loaded_embedding_model?: string | null;
  /** Models this host has put in memory since it started (a model switch shows as one more). */
  loads?: number;
  /** A model load in progress: the phase (`fetch`, `load`, `compile`) and how far (0–1) in it. */
  loading: { model: string; phase: string; progress: number; text: string } | null;
  /** The last load that failed, and why; cleared by the next load that succeeds. */
  load_error: { model: string; error: ErrorBody['error'] } | null;
  /** Models that lost the GPU device twice on this device, with why; they are refused. */
  failing_models: Record<string, string>;
  /** The engine's own speed figures for the last reply, for people. */
  last_speed: {
    prefill_tokens_per_s: number;
    decode_tokens_per_s: number;
    time_to_first_token_s: number;
  } | null;
  /** Downloads under way (they run in the host, whichever tab started them). */
  downloads: DownloadProgress[];
  /**
   * Models that were downloaded and have lost files since (the browser evicts storage that is
   * not persisted when the disk runs low), with what is gone: they need downloading again.
   */
  evicted_models: Record<string, string>;
  /** Requests running (0 or 1) and waiting behind it. */
  queue: { running: number; waiting: number };
  /** Request ports the engine worker holds open: requests that have not ended. */
  open_ports: number;
  /**
   * What the engine worker measured of WebGPU, where the engines run; null until it has (it
   * waits a moment for the adapter before the host takes requests, but no longer).
   */
  device: GpuFacts | null;
  /**
   * What the engine worker measured of the processor and memory (src/engines/llama/cpu-probe.ts),
   * which the fit of llama.cpp's models is judged from; null until it has; undefined when this
   * host will not say (its probe failed, or it is of an older build, which has no such field).
   */
  cpu?: CpuFacts | null | undefined;
  /** Where llama.cpp runs GGUF models: the loaded one's, else what the next load would use. */
  llama?: LlamaRuntime;
}

/** How llama.cpp runs here. */
export interface LlamaRuntime {
  /** WebGPU when the adapter has `shader-f16` (llama.cpp's WebGPU backend needs it), else the CPU. */
  backend: 'webgpu' | 'cpu';
  /** CPU threads; more than one only in a cross-origin-isolated page. */
  threads: number;
  /** Whether the engine worker is cross-origin isolated (SharedArrayBuffer, wasm threads). */
  isolated: boolean;
  /**
   * Which of llama.cpp's WebAssembly builds: `default` (needs JSPI and 64-bit memory) or `compat`
   * (for browsers without them: slower; src/models/llama-compat.ts).
   */
  build: 'default' | 'compat';
}

/** What the origin's storage holds (measured by the service worker: same origin, same storage). */
export interface StorageStatus {
  usage_bytes: number | null;
  quota_bytes: number | null;
  persisted: boolean;
}

/** The body of `GET /v1/hearth/status`: the host's status, its device facts as `webgpu`. */
export type HearthStatus = Omit<HostStatus, 'device' | 'cpu'> & {
  webgpu: WebgpuStatus;
  /** The processor as the engine worker measured it; null while it has not. */
  cpu: CpuFacts | null;
  storage: StorageStatus;
};

/** The status body from the host's status and the storage's. */
export function hearthStatus(host: HostStatus, storage: StorageStatus): HearthStatus {
  const { device, cpu, ...rest } = host;
  return { ...rest, webgpu: webgpuStatus(device), cpu: cpu ?? null, storage };
}

/** What travels on the status channel. */
export type StatusMessage =
  /** The host's status, sent whenever it changes (at most a few times a second). */
  | { type: 'status'; status: HostStatus }
  /** A tab that just opened asks the host to send its status now. */
  | { type: 'status/wanted' };
