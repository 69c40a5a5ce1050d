/**
 * @module
 * What the service worker knows of the device: the origin's storage, which it shares with the
 * engine worker, and the WebGPU facts the host's engine worker measured. It never reads its own
 * `navigator.gpu` (docs/architecture.md, Bird's-eye view): Firefox has none in service workers, and
 * on a machine with two GPUs the default adapter is not the one WebLLM asks for.
 */
/// <reference lib="webworker" />
import type { DeviceFacts, UnknownFacts } from '../src/models/fit';
import type { CpuFacts } from '../src/protocol/host/cpu-facts';
import type { GpuFacts } from '../src/protocol/host/gpu-facts';
import type { HostStatus, StorageStatus } from '../src/protocol/host/status';

/** The `storage` part of `/v1/hearth/status`. */
export async function storageStatus(): Promise<StorageStatus> {
  const [estimate, persisted] = await Promise.all([
    navigator.storage?.estimate().catch(() => undefined),
    navigator.storage?.persisted().catch(() => false),
  ]);
  return {
    usage_bytes: estimate?.usage ?? null,
    quota_bytes: estimate?.quota ?? null,
    persisted: persisted ?? false,
  };
}

/** What `hostDevice` and `hostCpu` need: the host link and the host's status. */
export interface HostDeviceOptions {
  /** The host port: waits for a host as a request does, 503 `engine_unavailable` without one. */
  port: () => Promise<unknown>;
  /** The current host's id, once it has handed over a port. */
  hostId: () => string | undefined;
  /** The host's status; rejects when it does not answer in time. */
  status: () => Promise<Pick<HostStatus, 'host' | 'device' | 'cpu'>>;
}

/**
 * The WebGPU facts of the current host's engine worker, or null while it has not measured them
 * (or does not answer). Asked once per host: they do not change while it lives, and a worker
 * busy loading a model may be slow to answer, which must not fail the requests that wait.
 */
export function hostDevice(options: HostDeviceOptions): () => Promise<GpuFacts | null> {
  let known: { hostId: string; device: GpuFacts } | undefined;
  return async () => {
    await options.port();
    if (known && known.hostId === options.hostId()) return known.device;
    const status = await options.status().catch(() => null);
    if (!status?.device) return null;
    known = { hostId: status.host.id, device: status.device };
    return status.device;
  };
}

/**
 * The CPU facts of the current host's engine worker (its probe, cores, threads, memory), as
 * `hostDevice` does for the GPU's, asked once per host: null while it has not measured them (or
 * does not answer), undefined when it will not say (its probe failed, or it is a host of an
 * older build).
 */
export function hostCpu(options: HostDeviceOptions): () => Promise<CpuFacts | null | undefined> {
  let known: { hostId: string; cpu: CpuFacts | undefined } | undefined;
  return async () => {
    await options.port();
    if (known && known.hostId === options.hostId()) return known.cpu;
    const status = await options.status().catch(() => null);
    if (!status || status.cpu === null) return null;
    known = { hostId: status.host.id, cpu: status.cpu };
    return status.cpu;
  };
}

const CPU_NOT_MEASURED =
  "Not known yet: the engine worker has not finished measuring this device's processor.";

/**
 * What the catalogue's fit is judged from (src/models/fit.ts): the GPU's facts, the processor's
 * (`cpu`, which fails without a host) and the storage left; or why they are not known.
 */
export async function fitFacts(
  gpu: GpuFacts | UnknownFacts,
  cpu?: () => Promise<CpuFacts | null | undefined>,
  storage?: () => Promise<StorageStatus>,
): Promise<DeviceFacts | UnknownFacts> {
  if ('unknown' in gpu) return gpu;
  const [processor, room] = await Promise.all([
    cpu?.().catch(() => null) ?? null,
    storage?.().catch(() => null) ?? null,
  ]);
  // Not measured yet; a host that will not say (undefined) is judged without the speed.
  if (processor === null) return { unknown: CPU_NOT_MEASURED };
  const { quota_bytes: quota, usage_bytes: usage } = room ?? {};
  const left = quota != null && usage != null ? Math.max(0, quota - usage) : null;
  return { gpu, cpu: processor ?? null, storage_left_bytes: left };
}
