/**
 * @module
 * Which of the WebLLM catalogue's models are on the device now (all their files in the cache)
 * and which are failing on it (device losses), read again on demand (stored-models.ts).
 */
import type { WebLLMEntry } from '../../models/catalog';
import { allFilesStored, presentCaches, type CacheStorageLike } from '../../models/on-device';
import { SerialReads, storedIds } from '../stored-models';
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
  readonly #reads = new SerialReads(() => this.#read());

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
    return this.#reads.refresh();
  }

  /** Resolves once the reads asked for so far are done. */
  settled(): Promise<void> {
    return this.#reads.settled();
  }

  async #read(): Promise<void> {
    const { appUrl } = this.#source;
    const caches = await presentCaches(this.#source.caches);
    this.#models = await storedIds(this.#source.catalog, (entry) =>
      allFilesStored(entry, appUrl, caches),
    );
    this.#failing = await this.#source.losses.failing().catch(() => ({}));
    this.#source.onChange();
  }
}
