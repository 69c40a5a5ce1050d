/**
 * @module
 * Which of the WebLLM catalogue's models are on the device now (all their files in the cache)
 * and which are failing on it (device losses), read again on demand. Reads run one after
 * another, so that an older one never overwrites what a newer one found.
 */
import type { WebLLMEntry } from '../../models/catalog';
import { missingFiles, type CacheStorageLike } from '../../models/on-device';
import type { LossStore } from './webllm-devices';

/** Where the models' files and losses are read. */
export interface OnDeviceSource {
  catalog: readonly WebLLMEntry[];
  /** The app's address, against which self-hosted URLs resolve. */
  appUrl: string;
  caches: CacheStorageLike;
  losses: Pick<LossStore, 'failing'>;
  /** Told after every read. */
  onChange: () => void;
}

/** The catalogue's models on the device, and those failing on it. */
export class ModelsOnDevice {
  readonly #source: OnDeviceSource;
  #models: string[] = [];
  #failing: Record<string, string> = {};
  #refreshed: Promise<void> = Promise.resolve();

  constructor(source: OnDeviceSource) {
    this.#source = source;
  }

  /** The downloaded models. */
  get models(): readonly string[] {
    return this.#models;
  }

  /** Models marked as failing on this device, with why. */
  get failing(): Readonly<Record<string, string>> {
    return this.#failing;
  }

  /** Reads again, after the reads asked for before. */
  refresh(): Promise<void> {
    this.#refreshed = this.#refreshed.then(() => this.#read());
    return this.#refreshed;
  }

  /** Resolves once the reads asked for so far are done. */
  settled(): Promise<void> {
    return this.#refreshed;
  }

  async #read(): Promise<void> {
    const { caches, appUrl } = this.#source;
    const present: string[] = [];
    for (const entry of this.#source.catalog) {
      if ((await missingFiles(entry, appUrl, caches).catch(() => ['?'])).length === 0) {
        present.push(entry.id);
      }
    }
    this.#models = present;
    this.#failing = await this.#source.losses.failing().catch(() => ({}));
    this.#source.onChange();
  }
}
