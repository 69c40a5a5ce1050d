/**
 * @module
 * The models this device knows, can run, and has: the catalogue made at build time, checked
 * against this browser's WebGPU adapter and against WebLLM's caches. It is the service worker's
 * `ModelDirectory`, and the source of `/v1/hearth/catalog`.
 */
import {
  catalogModelInfo,
  unavailableReason,
  type CatalogEntry,
  type GpuFacts,
} from '../src/openai/catalog';
import { OpenAIError } from '../src/openai/errors';
import {
  ECHO_MODEL,
  type ModelDirectory,
  type ModelInfo,
  type ModelPrice,
} from '../src/openai/models';
import { missingFiles, type CacheStorageLike } from '../src/openai/on-device';
import type { HostStatus } from '../src/openai/status';

/** A catalogue model as `/v1/hearth/catalog` shows it. */
export interface CatalogModel {
  id: string;
  object: 'model';
  owned_by: string;
  size_mb: number | null;
  vram_required_mb: number | null;
  context_window: number;
  required_features: string[];
  /** Whether this device can run it; when not, `unavailable_reason` says why. */
  available: boolean;
  unavailable_reason?: string;
  /** Every file is on the device. */
  downloaded: boolean;
  /** It was downloaded and has lost files since (evicted by the browser): why. */
  evicted?: string;
  /** It is on the GPU now. */
  loaded: boolean;
  source: CatalogEntry['source'] | 'built-in';
  tools: boolean;
  reasoning: boolean;
}

/** What the directory needs from the service worker. */
export interface DeviceModelsOptions {
  catalog: readonly CatalogEntry[];
  /** The app's address, against which self-hosted URLs resolve. */
  appUrl: string;
  caches: CacheStorageLike;
  /** This browser's WebGPU, as far as model fit goes. */
  gpu: () => Promise<GpuFacts>;
  /** The host's status, if there is a host (without waiting for one). */
  host: () => Promise<Pick<
    HostStatus,
    'loaded_model' | 'failing_models' | 'evicted_models'
  > | null>;
  /** The price per token the owner set for a model (for `usage.estimated_cost`). */
  price?: (model: string) => Promise<ModelPrice | undefined>;
}

/** How long a "files are all there" answer is trusted before the caches are read again. */
const ON_DEVICE_TTL_MS = 10_000;

/** The service worker's model directory. */
export class DeviceModels implements ModelDirectory {
  readonly #options: DeviceModelsOptions;
  readonly #byId: Map<string, CatalogEntry>;
  readonly #onDevice = new Map<string, { at: number; downloaded: boolean }>();

  constructor(options: DeviceModelsOptions) {
    this.#options = options;
    this.#byId = new Map(options.catalog.map((e) => [e.id, e]));
  }

  /** Whether every file of the model is in the caches. */
  async #downloaded(entry: CatalogEntry): Promise<boolean> {
    const known = this.#onDevice.get(entry.id);
    if (known && Date.now() - known.at < ON_DEVICE_TTL_MS) return known.downloaded;
    const missing = await missingFiles(entry, this.#options.appUrl, this.#options.caches);
    const downloaded = missing.length === 0;
    this.#onDevice.set(entry.id, { at: Date.now(), downloaded });
    return downloaded;
  }

  /** Forgets what is known of the caches (after a download or a deletion). */
  forget(): void {
    this.#onDevice.clear();
  }

  async list(): Promise<ModelInfo[]> {
    const gpu = await this.#options.gpu();
    const ready: ModelInfo[] = [ECHO_MODEL];
    for (const entry of this.#options.catalog) {
      if (unavailableReason(entry, gpu) === null && (await this.#downloaded(entry))) {
        ready.push(catalogModelInfo(entry));
      }
    }
    return ready;
  }

  async find(id: string): Promise<ModelInfo | undefined> {
    const entry = this.#byId.get(id);
    const model = id === ECHO_MODEL.id ? ECHO_MODEL : entry && catalogModelInfo(entry);
    const price = model && (await this.#options.price?.(model.id));
    return model && price ? { ...model, price } : model;
  }

  async ensureReady(model: ModelInfo, { files } = { files: true }): Promise<void> {
    const entry = this.#byId.get(model.id);
    if (!entry) return; // the echo engine needs nothing
    const reason = unavailableReason(entry, await this.#options.gpu());
    if (reason !== null) {
      throw new OpenAIError('webgpu_unavailable', `${model.id} cannot run here: ${reason}`, {
        shouldRetry: false,
      });
    }
    if (files && !(await this.#downloaded(entry))) {
      throw new OpenAIError(
        'model_not_downloaded',
        `The model '${model.id}' is not on this device; download it first.`,
        { param: 'model' },
      );
    }
  }

  /** Every model, with whether this device can run it, has it, and has it loaded. */
  async catalog(): Promise<CatalogModel[]> {
    const [gpu, host] = await Promise.all([this.#options.gpu(), this.#options.host()]);
    const loaded = host?.loaded_model ?? null;
    const echo: CatalogModel = {
      id: ECHO_MODEL.id,
      object: 'model',
      owned_by: ECHO_MODEL.owned_by,
      size_mb: 0,
      vram_required_mb: 0,
      context_window: ECHO_MODEL.context_window,
      required_features: [],
      available: true,
      downloaded: true,
      loaded: false,
      source: 'built-in',
      tools: false,
      reasoning: false,
    };
    const models = [echo];
    for (const entry of this.#options.catalog) {
      // A model that lost the GPU device twice here is refused by the host: show why.
      const reason = host?.failing_models[entry.id] ?? unavailableReason(entry, gpu);
      const evicted = host?.evicted_models[entry.id];
      models.push({
        id: entry.id,
        object: 'model',
        owned_by: entry.owned_by,
        size_mb: entry.size_mb,
        vram_required_mb: entry.vram_required_mb,
        context_window: entry.context_window,
        required_features: entry.required_features,
        available: reason === null,
        ...(reason !== null && { unavailable_reason: reason }),
        downloaded: await this.#downloaded(entry),
        ...(evicted !== undefined && { evicted }),
        loaded: loaded === entry.id,
        source: entry.source,
        tools: entry.tools,
        reasoning: entry.reasoning,
      });
    }
    return models;
  }
}
