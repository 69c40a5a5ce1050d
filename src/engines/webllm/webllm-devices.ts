/**
 * @module
 * The GPU devices WebLLM runs on, and their loss: Hearth hears of every device the adapter
 * hands out, since WebLLM does not report a loss after loading (notes §4), and says what a loss
 * means to the client. WebGPU, not WebLLM: this module needs no import of the library.
 */
import { OpenAIError } from '../../protocol/errors';

/** The slice of the WebGPU API used to watch devices (TypeScript's DOM types lack WebGPU). */
export interface GpuDeviceLike {
  lost: Promise<{ reason?: string; message?: string }>;
}

/** Who hears of devices and their loss; the adapter is patched once, whatever the engines. */
export interface DeviceWatch {
  created(device: GpuDeviceLike): void;
  lost(device: GpuDeviceLike, info: { reason?: string; message?: string }): void;
}
const deviceWatches = new Set<DeviceWatch>();

/**
 * Tells `watch` of every GPU device the adapter hands out and of its loss, whatever the reason.
 * WebLLM unloads the model and only logs when a device is lost after loading, and answers a
 * failed allocation (out of memory) by destroying the device itself (notes §4), so a
 * `destroyed` device is a loss too unless Hearth disposed of it.
 */
export function watchDevices(watch: DeviceWatch): void {
  deviceWatches.add(watch);
  const proto = (globalThis as { GPUAdapter?: { prototype: Record<string, unknown> } }).GPUAdapter
    ?.prototype;
  if (!proto || typeof proto.requestDevice !== 'function' || proto.hearthWatched) return;
  const requestDevice = proto.requestDevice as (...args: unknown[]) => Promise<GpuDeviceLike>;
  proto.hearthWatched = true;
  proto.requestDevice = async function (this: unknown, ...args: unknown[]) {
    const device = await requestDevice.apply(this, args);
    for (const w of deviceWatches) w.created(device);
    void device.lost.then((info) => {
      for (const w of deviceWatches) w.lost(device, info);
    });
    return device;
  };
}

/** A reply cut short by the loss of its device. */
export function deviceLostError(model: string, detail: string): OpenAIError {
  return new OpenAIError(
    'webgpu_unavailable',
    `The GPU device was lost while running ${model} (most often: not enough GPU memory): ${detail}. Try a smaller model or a shorter conversation; the model loads again for the next request.`,
    { shouldRetry: false },
  );
}

/** A load whose device was lost: the model does not fit. */
export function outOfMemory(model: string, detail: string): OpenAIError {
  return new OpenAIError(
    'webgpu_unavailable',
    `${model} does not fit this device: the GPU device was lost while loading it (most often: not enough GPU memory; ${detail}). Try a smaller model, or one with a shorter context.`,
    { shouldRetry: false },
  );
}

/** A promise that rejects when the current device is lost, and the hand that rejects it. */
export interface LossWatch {
  promise: Promise<never>;
  reject: (err: OpenAIError) => void;
}

/** A fresh loss watch, for a new load; nobody need await it (its rejection is caught). */
export function lossWatch(): LossWatch {
  let reject: (err: OpenAIError) => void = () => undefined;
  const promise = new Promise<never>((_, r) => (reject = r));
  promise.catch(() => undefined);
  return { promise, reject };
}
