/**
 * @module
 * The models this device knows, can run, and has: the catalogue made at build time and the GGUF
 * models the user added, checked against the WebGPU adapter the host's engine worker measured
 * and against the caches. It is the service worker's `ModelDirectory`, the source of
 * `/v1/hearth/catalog`, and the catalogue that `POST /v1/hearth/models` adds to.
 */
import type { AddableCatalog, AddedModels, AddedRecord } from '../src/models/added/added-models';
import {
  catalogModelInfo,
  unavailableReason,
  type CatalogEntry,
  type CatalogModel,
  type GpuFacts,
} from '../src/models/catalog';
import { catalogFit, type DeviceFacts, type UnknownFacts } from '../src/models/fit';
import { OpenAIError } from '../src/protocol/errors';
import { notDownloaded, type Absence, type KnownModel } from '../src/models/model-hints';
import {
  ECHO_MODEL,
  type ModelDirectory,
  remoteModelInfo,
  type ModelInfo,
  type ModelPrice,
  type ResolvedModel,
} from '../src/models/models';
import {
  allFilesStored,
  planFiles,
  presentCaches,
  type CacheStorageLike,
} from '../src/models/on-device';
import type { ServerModel, Servers } from '../src/servers/servers';
import type { ChatBackend } from '../src/protocol/host/backend';
import type { CpuFacts } from '../src/protocol/host/cpu-facts';
import type { HostStatus, StorageStatus } from '../src/protocol/host/status';
import { echoCatalogModel, remoteCatalogModel } from './catalog-models';
import { fitFacts } from './device';

/** What the directory needs from the service worker. */
export interface DeviceModelsOptions {
  catalog: readonly CatalogEntry[];
  /** The app's address, against which self-hosted URLs resolve. */
  appUrl: string;
  caches: CacheStorageLike;
  /**
   * What the host's engine worker measured of WebGPU (null: not yet). It asks for a host and
   * waits for one as a request does, and fails as a request would (503 `engine_unavailable`).
   */
  device: () => Promise<GpuFacts | null>;
  /** The host's status, if a host answers (asking for one as a request does). */
  host: () => Promise<Pick<
    HostStatus,
    'loaded_model' | 'loaded_embedding_model' | 'failing_models' | 'evicted_models'
  > | null>;
  /** The price per token the owner set for a model (for `usage.estimated_cost`). */
  price?: (model: string) => Promise<ModelPrice | undefined>;
  /** The GGUF models the user added, which join the catalogue after the built-in ones. */
  added?: AddedModels;
  /** The servers the user added, whose models come last (they leave the device). */
  servers?: Servers;
  /** The backend that forwards a server model's requests to its server (`UpstreamBackend.to`). */
  forward?: (target: ServerModel) => ChatBackend;
  /** Whether the device is online (a server's models are unavailable when it is not). */
  online?: () => boolean;
  /**
   * What the host's engine worker measured of the processor and memory (null: not yet), which
   * the catalogue's `fit` of llama.cpp's models is judged from; it fails without a host, as
   * `device` does. Without it, every fit stays unknown.
   */
  cpu?: () => Promise<CpuFacts | null | undefined>;
  /** The origin's storage, for the room left to download a model (`fit`). */
  storage?: () => Promise<StorageStatus>;
}

const OFFLINE = 'This device is offline: the server cannot be reached until it is back online.';

/** How long a "files are all there" answer is trusted before the caches are read again. */
const ON_DEVICE_TTL_MS = 10_000;

/** Why a model's fit is not known, when it is not. */
const NO_HOST =
  'Not known yet: no tab of Hearth hosts the engine, whose worker measures what this GPU can do. Open the app in a tab.';
const NOT_MEASURED = 'Not known yet: the engine worker has not finished measuring this GPU.';

/** The device's facts, or why they are not known. */
type Fit = GpuFacts | { unknown: string };
/** What the host's status says of the models (null: no host answered). */
type HostFacts = Awaited<ReturnType<DeviceModelsOptions['host']>>;

/** Whether the device runs the model (null: not known), and why not or why not known. */
function fitOf(
  entry: CatalogEntry,
  fit: Fit,
): { available: boolean | null; reason: string | null } {
  if ('unknown' in fit) return { available: null, reason: fit.unknown };
  const reason = unavailableReason(entry, fit);
  return { available: reason === null, reason };
}

/** What the API says of a server model's origin. */
function remoteOf(model: ServerModel): { server: string; host: string } {
  return { server: model.server.name, host: new URL(model.server.base_url).host };
}

/** The service worker's model directory. */
export class DeviceModels implements ModelDirectory, AddableCatalog {
  readonly #options: DeviceModelsOptions;
  readonly #byId: Map<string, CatalogEntry>;
  readonly #onDevice = new Map<string, { at: number; downloaded: boolean }>();

  constructor(options: DeviceModelsOptions) {
    this.#options = options;
    this.#byId = new Map(options.catalog.map((e) => [e.id, e]));
  }

  /** The app's path (`/`, `/repo/`): the API's routes, which messages name, are under it. */
  get base(): string {
    return new URL(this.#options.appUrl).pathname;
  }

  /** Every model a request may name, downloaded or not (`ModelDirectory.known`). */
  async known(): Promise<KnownModel[]> {
    const servers = (await this.#options.servers?.models()) ?? [];
    return [
      { id: ECHO_MODEL.id },
      ...(await this.#entries()).map((e) => ({
        id: e.id,
        ...(e.engine === 'llama.cpp' && { files: e.files }),
      })),
      ...servers.map((m) => ({ id: m.id })),
    ];
  }

  /** Why `list` leaves out `id`, decided as `list` decides (`ModelDirectory.absence`). */
  async absence(id: string): Promise<Absence | undefined> {
    const entry = await this.#entry(id);
    if (!entry) {
      const server = id === ECHO_MODEL.id ? undefined : await this.#options.servers?.resolve(id);
      return server && !this.#online() ? { why: 'unavailable', reason: OFFLINE } : undefined;
    }
    const { available, reason } = fitOf(entry, await this.#fit());
    if (available === false) return { why: 'unavailable', reason: reason ?? '' };
    return (await this.#downloaded(entry)) ? undefined : { why: 'not_downloaded' };
  }

  /** Every catalogue model: the built-in ones, then those the user added. */
  async #entries(): Promise<CatalogEntry[]> {
    const added = (await this.#options.added?.entries()) ?? [];
    return [...this.#options.catalog, ...added];
  }

  /** Every catalogue model, and the caches as they are now, to look all of them up at once. */
  async #lookups(): Promise<{ entries: CatalogEntry[]; caches: CacheStorageLike }> {
    const [entries, caches] = await Promise.all([
      this.#entries(),
      presentCaches(this.#options.caches),
    ]);
    return { entries, caches };
  }

  async #entry(id: string): Promise<CatalogEntry | undefined> {
    return this.#byId.get(id) ?? (await this.#options.added?.get(id));
  }

  async has(id: string): Promise<boolean> {
    return id === ECHO_MODEL.id || (await this.#entry(id)) !== undefined;
  }

  /** Adds a GGUF model the user gave (409 `model_exists` for a taken id); its catalogue entry. */
  async add(record: AddedRecord): Promise<CatalogModel> {
    const { added } = this.#options;
    if (!added) throw new Error('This directory takes no added models.');
    if (record.id === ECHO_MODEL.id || this.#byId.has(record.id)) {
      throw new OpenAIError('model_exists', `The model '${record.id}' is built into Hearth.`, {
        param: 'id',
      });
    }
    const entry = await added.add(record);
    const [fit, host] = await Promise.all([this.#fit(), this.#options.host()]);
    return this.#describe(entry, fit, host);
  }

  async addedFrom(
    origin: string,
    id?: string,
  ): Promise<{ record: AddedRecord; model: CatalogModel } | undefined> {
    const record = await this.#options.added?.addedFrom(origin, id);
    const entry = record && (await this.#options.added?.get(record.id));
    if (!record || !entry) return undefined;
    const [fit, host] = await Promise.all([this.#fit(), this.#options.host()]);
    return { record, model: await this.#describe(entry, fit, host) };
  }

  async remove(id: string): Promise<void> {
    if (await this.#options.added?.remove(id)) this.#onDevice.delete(id);
  }

  async modelUsing(url: string): Promise<string | undefined> {
    const { appUrl } = this.#options;
    for (const entry of await this.#entries()) {
      if (entry.engine !== 'llama.cpp') continue;
      const { files } = await planFiles(entry, appUrl, async () => undefined);
      if (files.some((file) => file.url === url)) return entry.id;
    }
    return undefined;
  }

  /** Whether every file of the model is in the caches. */
  async #downloaded(entry: CatalogEntry, caches = this.#options.caches): Promise<boolean> {
    const known = this.#onDevice.get(entry.id);
    if (known && Date.now() - known.at < ON_DEVICE_TTL_MS) return known.downloaded;
    const downloaded = await allFilesStored(entry, this.#options.appUrl, caches);
    this.#onDevice.set(entry.id, { at: Date.now(), downloaded });
    return downloaded;
  }

  /** Forgets what is known of the caches (after a download or a deletion). */
  forget(): void {
    this.#onDevice.clear();
  }

  /** The device's facts, or why they are not known (no host, or not measured yet). */
  async #fit(): Promise<Fit> {
    return this.#options.device().then(
      (gpu) => gpu ?? { unknown: NOT_MEASURED },
      () => ({ unknown: NO_HOST }),
    );
  }

  /** What the catalogue's fit is judged from besides the GPU's facts, or why not known. */
  #fitFacts(gpu: Fit): Promise<DeviceFacts | UnknownFacts> {
    return fitFacts(gpu, this.#options.cpu, this.#options.storage);
  }

  async list(): Promise<ModelInfo[]> {
    const fit = await this.#fit();
    const ready: ModelInfo[] = [ECHO_MODEL];
    const { entries, caches } = await this.#lookups();
    // Asked of every catalogue model at once: one by one, a catalogue of a hundred models took
    // a second of cache lookups on a fresh install.
    const listed = await Promise.all(
      // A downloaded model whose fit is not known is listed: it was downloaded here, and a
      // request for it waits for a host, which knows.
      entries.map(
        async (entry) =>
          fitOf(entry, fit).available !== false && (await this.#downloaded(entry, caches)),
      ),
    );
    ready.push(...entries.filter((_, i) => listed[i]).map((entry) => catalogModelInfo(entry)));
    if (this.#online()) {
      for (const model of (await this.#options.servers?.models()) ?? []) {
        ready.push(remoteModelInfo(model.id, remoteOf(model)));
      }
    }
    return ready;
  }

  #online(): boolean {
    return this.#options.online?.() ?? true;
  }

  /** The organisations of the catalogue: names a server may not take. */
  async organisations(): Promise<Set<string>> {
    return new Set([ECHO_MODEL.owned_by, ...(await this.#entries()).map((e) => e.owned_by)]);
  }

  /**
   * The one lookup of a request: the catalogue (built-in, then added), then the servers. The
   * result carries what the rest of the request needs — the model with its price, the backend
   * bound to a server model's target, and the readiness check on the entry found here — so
   * nothing looks the id up again.
   */
  async resolve(id: string): Promise<ResolvedModel | undefined> {
    if (id === ECHO_MODEL.id) {
      return { model: await this.#priced(ECHO_MODEL), ready: async () => undefined };
    }
    const entry = await this.#entry(id);
    if (entry) {
      const model = await this.#priced(catalogModelInfo(entry));
      return { model, ready: (options) => this.#ready(entry, model, options) };
    }
    const server = await this.#options.servers?.resolve(id);
    if (!server) return undefined;
    const model = await this.#priced(remoteModelInfo(id, remoteOf(server)));
    const backend = this.#options.forward?.(server);
    return { model, ...(backend && { backend }), ready: async () => this.#reachable(model) };
  }

  /** A known model (downloaded or not), or undefined. */
  async find(id: string): Promise<ModelInfo | undefined> {
    return (await this.resolve(id))?.model;
  }

  /** `model` with the price the owner set for it, if any. */
  async #priced(model: ModelInfo): Promise<ModelInfo> {
    const price = await this.#options.price?.(model.id);
    return price ? { ...model, price } : model;
  }

  /** Throws when this device cannot answer with `model` now (`ResolvedModel.ready`). */
  async ensureReady(model: ModelInfo, options = { files: true }): Promise<void> {
    if (model.remote) return this.#reachable(model);
    const entry = await this.#entry(model.id);
    if (entry) await this.#ready(entry, model, options);
  }

  /** A server's model needs no tab and no files: only the network. */
  #reachable(model: ModelInfo): void {
    if (!this.#online()) {
      throw new OpenAIError('upstream_unavailable', `${model.id}: ${OFFLINE}`, {
        retryAfter: 30,
      });
    }
  }

  async #ready(entry: CatalogEntry, model: ModelInfo, { files } = { files: true }): Promise<void> {
    // Without a host this fails as the request itself would: 503 engine_unavailable.
    const gpu = await this.#options.device();
    // Not measured yet (the adapter was slow to answer): the engine finds out when it loads.
    const reason = gpu && unavailableReason(entry, gpu);
    if (reason) {
      throw new OpenAIError('webgpu_unavailable', `${model.id} cannot run here: ${reason}`, {
        shouldRetry: false,
      });
    }
    if (files && !(await this.#downloaded(entry))) throw notDownloaded(model.id, this.base);
  }

  /** Every model, with whether this device can run it, has it, and has it loaded. */
  async catalog(): Promise<CatalogModel[]> {
    const [fit, host] = await Promise.all([this.#fit(), this.#options.host()]);
    const facts = await this.#fitFacts(fit);
    const echo = echoCatalogModel();
    // Every model described at once, as `list` asks: one by one, the cache lookups of a hundred
    // models took over a second on a fresh install, and every page's boot waits for this list.
    const { entries, caches } = await this.#lookups();
    const described = entries.map((entry) => this.#describe(entry, fit, host, caches, facts));
    const models = [echo, ...(await Promise.all(described))];
    for (const model of (await this.#options.servers?.models()) ?? []) {
      models.push(this.#describeRemote(model));
    }
    return models;
  }

  /** A server's model as the catalogue shows it: leaving the device, for the server's host. */
  #describeRemote(model: ServerModel): CatalogModel {
    return remoteCatalogModel(model, remoteOf(model), this.#online() ? null : OFFLINE);
  }

  /** One model as the catalogue shows it. */
  async #describe(
    entry: CatalogEntry,
    fit: Fit,
    host: HostFacts,
    caches = this.#options.caches,
    facts?: DeviceFacts | UnknownFacts,
  ): Promise<CatalogModel> {
    const downloaded = await this.#downloaded(entry, caches);
    // A model that lost the GPU device twice here is refused by the host: show why.
    const failing = host?.failing_models[entry.id];
    facts ??= await this.#fitFacts(fit);
    const fitted = catalogFit(entry, fit, facts, { downloaded, failing });
    const evicted = host?.evicted_models[entry.id];
    return {
      id: entry.id,
      object: 'model',
      owned_by: entry.owned_by,
      engine: entry.engine,
      size_mb: entry.size_mb,
      vram_required_mb: entry.vram_required_mb,
      context_window: entry.context_window,
      required_features: entry.required_features,
      ...fitted,
      downloaded,
      ...(evicted !== undefined && { evicted }),
      loaded: host?.loaded_model === entry.id || host?.loaded_embedding_model === entry.id,
      source: entry.source,
      tools: entry.tools,
      reasoning: entry.reasoning,
      vision: catalogModelInfo(entry).capabilities.vision,
      ...(entry.embedding && { embedding: { ...entry.embedding } }),
    };
  }
}
