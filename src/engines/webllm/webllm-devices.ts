/**
 * @module
 * The GPU devices WebLLM runs on, and their loss: Hearth hears of every device the adapter
 * hands out, since WebLLM does not report a loss after loading (docs/models.md, Real models:
 * when things go wrong), tells the model's device from the others, counts a loss against the
 * model that was running, and says what a loss means to the client. WebGPU, not WebLLM: this module needs no import of the library.
 */
import { OpenAIError } from '../../protocol/errors';
import { LOSSES_TO_FAIL, type DeviceLosses } from '../../engine-host/device-losses';

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
 * failed allocation (out of memory) by destroying the device itself (docs/models.md, Real
 * models: when things go wrong), so a `destroyed` device is a loss too unless Hearth disposed
 * of it.
 */
export function watchDevices(watch: DeviceWatch): void {
  deviceWatches.add(watch);
  const proto = (globalThis as unknown as { GPUAdapter?: { prototype: Record<string, unknown> } })
    .GPUAdapter?.prototype;
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

/** Where device losses are counted (IndexedDB in the worker; a fake in tests). */
export type LossStore = Pick<DeviceLosses, 'record' | 'failing' | 'clear'>;

/**
 * The WebLLM engine's GPU device: which device is the model's, what runs on it, and whether its
 * loss counts against the model (LOSSES_TO_FAIL in a row mark it as failing).
 */
export class DeviceGuard {
  /** What runs on the GPU now: a loss then counts against the model. */
  busy: 'load' | 'generate' | null = null;
  readonly #losses: LossStore;
  /** The GPU device of the model loaded or loading; the loss of any other is not ours. */
  #device: GpuDeviceLike | null = null;
  /** Why the device of the load under way was lost, if it was. */
  #lostInLoad: string | null = null;
  /** Models whose loss record is known to be clear since this host started. */
  readonly #clean = new Set<string>();
  /** Rejects when the current device is lost; replaced at every load. */
  #watch: LossWatch = lossWatch();

  /** `onLost` hears of the loss of the model's device, with why. */
  constructor(losses: LossStore, onLost: (detail: string) => void) {
    this.#losses = losses;
    watchDevices({
      created: (device) => {
        // Devices made while a model loads are that model's (WebLLM makes one per load).
        if (this.busy === 'load') this.#device = device;
      },
      lost: (device, info) => {
        if (device !== this.#device) return; // one Hearth disposed of, or not an engine's
        onLost(info.message || info.reason || 'unknown');
      },
    });
  }

  /** Rejects when the current device is lost. */
  get lost(): Promise<never> {
    return this.#watch.promise;
  }

  /** Why the device of the load under way was lost, if it was. */
  get lostInLoad(): string | null {
    return this.#lostInLoad;
  }

  /** The model's device is gone by Hearth's or WebLLM's doing (a dispose): no loss of ours. */
  release(): void {
    this.#device = null;
  }

  /** A load begins: WebLLM's reload disposes the model before, so that device's loss is expected. */
  loadBegins(): void {
    this.#device = null;
    this.#watch = lossWatch();
    this.#lostInLoad = null;
  }

  /**
   * The device was lost: what waits on it fails. A loss while `model` loads or generates counts
   * against it, and this resolves to whether it is failing now; one while it sits idle (a driver
   * reset) does not count, and this returns nothing.
   */
  lose(model: string | null, detail: string): Promise<boolean> | undefined {
    this.#device = null;
    if (this.busy === 'load') this.#lostInLoad = detail;
    this.#watch.reject(deviceLostError(model ?? 'the model', detail));
    if (model === null || this.busy === null) return undefined;
    this.#clean.delete(model);
    return this.#count(model, detail);
  }

  async #count(model: string, detail: string): Promise<boolean> {
    const record = await this.#losses.record(model, detail).catch(() => undefined);
    return record !== undefined && record.losses >= LOSSES_TO_FAIL;
  }

  /** A reply came through: earlier losses of the model were not its fault. */
  async succeeded(model: string): Promise<void> {
    if (this.#clean.has(model)) return;
    this.#clean.add(model);
    await this.#losses.clear(model).catch(() => undefined);
  }
}
