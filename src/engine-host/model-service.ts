/**
 * @module
 * The models on the device, as the engine worker manages them: downloads (jobs of their own),
 * deletions and unloads (refused while requests use the model, then run alone in turn with the
 * requests), what a model's files look like to Hearth and to WebLLM, what was lost to eviction
 * since the last host, and a model marked failing tried again when the user loads it.
 */
import { Channel } from '../bridge/channel';
import type { ChatOptions, ModelInspection, ModelService } from '../protocol/host/backend';
import type { CatalogEntry } from '../models/catalog';
import { finished, type DownloadProgress } from '../protocol/host/downloads';
import { OpenAIError } from '../protocol/errors';
import { notDownloaded } from '../models/model-hints';
import { missingFiles, type CacheStorageLike } from '../models/on-device';
import { sweepOrphanFiles, type SweepCaches } from '../models/added/orphan-files';
import type { Downloads } from './downloads/downloads';
import type { ModelSet } from './engine-db';
import type { EngineQueue } from './queue';

/** An engine's part in managing the models on the device. */
export interface ManagedEngine {
  /** Whether `model` is this engine's; without it, every model of the service is. */
  serves?(model: string): boolean;
  readonly loadedModel: string | null;
  /** A model loaded beside `loadedModel` (llama.cpp's embedding model), if any. */
  readonly besideModel?: string | null;
  /** The models whose every file is on the device, as of the last refresh. */
  readonly models: readonly string[];
  /** Models marked as failing on this device (GPU device lost twice), with why; none if absent. */
  readonly failing?: Readonly<Record<string, string>>;
  unload(): Promise<void>;
  refresh(): Promise<void>;
  /** Resolves once the refreshes asked for so far are done. */
  settled(): Promise<void>;
  /** WebLLM's own check of its cache; an engine without one has nothing to say. */
  hasModelInCache?(model: string): Promise<boolean>;
}

/** What the service drives. */
export interface ModelServiceDeps {
  /** Read at each use: the worker's catalogue grows as the user adds models (live-catalog.ts). */
  catalog: readonly CatalogEntry[];
  appUrl: string;
  caches: CacheStorageLike;
  downloads: Downloads;
  queue: EngineQueue;
  /** The engines that load models (WebLLM, llama.cpp), each for the models it serves. */
  engines?: readonly ManagedEngine[];
  /** One engine alone, whose every model is: the same as `engines: [engine]`. */
  engine?: ManagedEngine;
  /** Forgets a model's GPU device losses. */
  forgetLosses(model: string): Promise<void>;
  downloaded: ModelSet;
  onChange: () => void;
  /**
   * The files every added model uses, read from the store itself; it must throw when the store
   * cannot be read (a catalogue that merely lacks the added models would sweep their files).
   * Without it, orphaned uploads are not swept.
   */
  usedFiles?: () => Promise<ReadonlySet<string>>;
}

function inUse(model: string): OpenAIError {
  return new OpenAIError(
    'model_in_use',
    `Requests are using ${model}; try again when they are done.`,
    { param: 'model' },
  );
}

/** The engine worker's `ModelService`. */
export class LocalModels implements ModelService {
  readonly #deps: ModelServiceDeps;
  readonly #engines: readonly ManagedEngine[];
  #evicted: Record<string, string> = {};

  constructor(deps: ModelServiceDeps) {
    this.#deps = deps;
    this.#engines = deps.engines ?? (deps.engine ? [deps.engine] : []);
  }

  /** The catalogue by id as it is now (models the user adds join it while the worker runs). */
  get #byId(): ReadonlyMap<string, CatalogEntry> {
    return new Map(this.#deps.catalog.map((e) => [e.id, e]));
  }

  /** The engine that serves `model`, if any. */
  #engineOf(model: string): ManagedEngine | undefined {
    return this.#engines.find((e) => e.serves?.(model) ?? true);
  }

  /** Every engine reads again which models are on the device. */
  async #refreshAll(): Promise<void> {
    await Promise.all(this.#engines.map((e) => e.refresh()));
  }

  /** Models that were downloaded and have lost files since, with what is gone. */
  get evicted(): Readonly<Record<string, string>> {
    return this.#evicted;
  }

  #entry(model: string): CatalogEntry {
    const entry = this.#byId.get(model);
    if (entry) return entry;
    throw new OpenAIError(
      'model_not_found',
      `The model '${model}' is not one Hearth can download.`,
      {
        param: 'model',
      },
    );
  }

  download(model: string, { signal }: ChatOptions): Channel<DownloadProgress> {
    const progress = new Channel<DownloadProgress>();
    this.#entry(model);
    const stop = this.#deps.downloads.start(model, (report) => {
      progress.push(report);
      if (!finished(report.phase)) return;
      stop();
      progress.close();
    });
    // Whoever listens may go; the download goes on.
    signal.addEventListener('abort', () => {
      stop();
      progress.close();
    });
    return progress;
  }

  /** A download ended (whoever started it): a model that is complete now is no longer lost. */
  async downloadEnded(progress: DownloadProgress): Promise<void> {
    if (progress.phase === 'done') delete this.#evicted[progress.model];
    await this.#refreshAll();
  }

  cancelDownload(model: string): Promise<void> {
    return this.#deps.downloads.cancel(model);
  }

  /**
   * Removes the model's files. Refused while requests use it; otherwise it waits, alone on the
   * queue, for the request running and a load under way (a new host's preload), so that WebLLM
   * neither loads a model whose files are going nor fetches them again once they are gone.
   */
  async deleteModel(model: string): Promise<void> {
    const entry = this.#entry(model);
    const { queue, downloads } = this.#deps;
    if (queue.inUse(model)) throw inUse(model);
    await queue.alone(async () => {
      try {
        await downloads.cancel(model);
        const engine = this.#engineOf(model);
        if (engine && [engine.loadedModel, engine.besideModel].includes(model))
          await engine.unload();
        await downloads.remove(entry);
        await this.#deps.forgetLosses(model);
        delete this.#evicted[model];
        await (engine ? engine.refresh() : this.#refreshAll());
      } finally {
        // Requests for it that came meanwhile passed the service worker's check while the files
        // were there: loading it now would download it again.
        queue.refuse(
          model,
          notDownloaded(model, new URL(this.#deps.appUrl).pathname, 'was deleted from this device'),
        );
      }
    });
    this.#deps.onChange();
  }

  /**
   * Takes the model off the GPU. Refused while requests use the model on the GPU or the one
   * being put there; otherwise it waits, alone on the queue, for the request running and a
   * load under way. A second unload finds nothing left and disposes nothing.
   */
  async unload(): Promise<void> {
    const { queue } = this.#deps;
    const engines = this.#engines;
    const loaded = engines.flatMap((e) => [e.loadedModel, e.besideModel ?? null]);
    const models = [...loaded, queue.loading].filter((m) => m !== null);
    if (models.length === 0) return;
    const used = models.find((m) => queue.inUse(m));
    if (used !== undefined) throw inUse(used);
    await queue.alone(async () => {
      // Whichever engine holds a model: one at a time, but a load under way may have put it there.
      for (const engine of engines) {
        if (engine.loadedModel !== null || (engine.besideModel ?? null) !== null)
          await engine.unload();
      }
    });
    this.#deps.onChange();
  }

  /**
   * The user asked to load `model`: a mark of failing (GPU device lost twice) is lifted and the
   * model tried again, without a new download. Requests alone never lift it.
   */
  async clearFailing(model: string): Promise<void> {
    const engine = this.#engineOf(model);
    if (engine?.failing?.[model] === undefined) return;
    await this.#deps.forgetLosses(model);
    await engine.refresh();
    this.#deps.onChange();
  }

  async inspect(model: string): Promise<ModelInspection> {
    const entry = this.#entry(model);
    const { appUrl, caches } = this.#deps;
    const engine = this.#engineOf(model);
    return {
      missing_files: await missingFiles(entry, appUrl, caches),
      // A GGUF is not WebLLM's to judge.
      webllm_has_model_in_cache: (await engine?.hasModelInCache?.(model)) ?? false,
      loaded: this.#engines.some((e) => e.loadedModel === model),
      download: this.#deps.downloads.active.find((d) => d.model === model) ?? null,
      evicted: this.#evicted[model] ?? null,
    };
  }

  /**
   * Compares what was downloaded with what is stored: a model whose files the browser evicted is
   * reported, not assumed to be there. A model found complete is counted as downloaded, however
   * it got there (a load fetches what is missing, too).
   */
  async reconcile(): Promise<void> {
    const { downloaded, appUrl, caches } = this.#deps;
    const engines = this.#engines;
    // The engines read what is on the device as they start: one pass over the catalogue serves both.
    await Promise.all(engines.map((e) => e.settled()));
    const present = new Set(engines.flatMap((e) => e.models));
    const before = new Set(await downloaded.list());
    const evicted: Record<string, string> = {};
    for (const model of present) {
      if (!before.has(model)) await downloaded.add(model);
    }
    for (const model of before) {
      if (present.has(model)) continue;
      const entry = this.#byId.get(model);
      if (!entry) {
        await downloaded.delete(model); // no longer in the catalogue
        continue;
      }
      const missing = await missingFiles(entry, appUrl, caches);
      evicted[model] =
        `${missing.length} of its files are gone from the device (the browser may have evicted them to free space); download it again.`;
    }
    this.#evicted = evicted;
    this.#deps.onChange();
    await this.#sweepUploads();
  }

  /** Removes files from the computer that no model uses (orphan-files.ts); never fails the start. */
  async #sweepUploads(): Promise<void> {
    const { usedFiles, caches, appUrl } = this.#deps;
    if (!usedFiles) return;
    try {
      await sweepOrphanFiles(caches as SweepCaches, appUrl, await usedFiles());
    } catch {
      // The next start tries again; the files take room, and nothing else.
    }
  }
}
