/**
 * @module
 * src/engine-host/downloads/ is model downloads in the engine worker: MLC files whole, GGUF files
 * in parts by Range, retries and what a failure means. It imports src/protocol, src/models and
 * the engine worker's IndexedDB (../engine-db.ts), and itself.
 *
 * Model downloads as jobs of the host's engine worker, not of any request: they run while pages
 * come and go, every tab sees them, and a new host resumes the ones its predecessor left. MLC
 * files go into the caches WebLLM reads, under the keys it looks up, one whole file at a time, so
 * an interrupted download resumes at the first file it lacks; a GGUF file is stored in parts
 * fetched by Range (gguf-download.ts), so it resumes at the first part it lacks. A model is
 * downloaded only when every file is there; a full disk fails the download and frees what it had
 * stored. Removing a model keeps the files other models on the device list: several catalogue
 * models share one set.
 */
import type { CatalogEntry } from '../../models/catalog';
import type { DownloadProgress } from '../../protocol/host/downloads';
import { OpenAIError } from '../../protocol/errors';
import { removeGgufFile } from '../../models/gguf-parts';
import { cachedJson, missingFiles, planFiles, type ModelFile } from '../../models/on-device';
import { isQuotaError, Unreachable } from './download-errors';
import { Job } from './download-job';
import { fetchAll, fetchFile, type FileFetchOptions } from './file-fetch';

// Kept in download-io.ts, which gguf-download.ts imports too, so that it need not import this file.
export type { CacheLike, DownloadCaches, DownloadFetch } from './download-io';
import type { ModelSet } from '../engine-db';

/** What the downloads need from the worker (with what fetching the files needs). */
export interface DownloadOptions extends FileFetchOptions {
  /** Read at each use: the worker's catalogue grows as the user adds models (live-catalog.ts). */
  catalog: readonly CatalogEntry[];
  appUrl: string;
  /** Downloads under way, kept so that a new host resumes them. */
  pending: ModelSet;
  /** Models downloaded, kept so that one lost to eviction is noticed. */
  downloaded: ModelSet;
  /** Told whenever a download makes progress (at most every `progressMs`). */
  onChange: () => void;
  /** Told when a download ends, however it ends. */
  onEnd?: (progress: DownloadProgress) => void;
  progressMs?: number;
  /** Whether the device says it is online (`navigator.onLine`): offline, a download fails at once. */
  online?: () => boolean;
}

/** The downloads of one engine worker. */
export class Downloads {
  readonly #options: DownloadOptions;
  readonly #jobs = new Map<string, Job>();

  constructor(options: DownloadOptions) {
    this.#options = options;
  }

  /** The catalogue by id as it is now (models the user adds join it while the worker runs). */
  get #byId(): ReadonlyMap<string, CatalogEntry> {
    return new Map(this.#options.catalog.map((e) => [e.id, e]));
  }

  /** The downloads under way, for the host's status. */
  get active(): DownloadProgress[] {
    return [...this.#jobs.values()].map((job) => ({ ...job.progress }));
  }

  /**
   * Starts downloading `model`, or joins the download under way; `listener` hears every report
   * until the end, the current one first. Returns how to stop listening (which does not stop the
   * download).
   */
  start(model: string, listener?: (progress: DownloadProgress) => void): () => void {
    const entry = this.#byId.get(model);
    if (!entry) throw new OpenAIError('model_not_found', `The model '${model}' does not exist.`);
    let job = this.#jobs.get(model);
    if (!job) {
      const created = new Job(model, this.#options.progressMs ?? 100, this.#options.onChange);
      this.#jobs.set(model, created);
      job = created;
      created.done = this.#run(entry, created).finally(() => {
        this.#jobs.delete(model);
        created.report(true);
        created.listeners.clear();
        this.#options.onEnd?.({ ...created.progress });
        this.#options.onChange();
      });
    }
    if (!listener) return () => undefined;
    const joined = job;
    joined.listeners.add(listener);
    listener({ ...joined.progress });
    return () => joined.listeners.delete(listener);
  }

  /** Stops the download of `model`; its complete files stay, for a later resume. */
  cancel(model: string): Promise<void> {
    const job = this.#jobs.get(model);
    if (!job) return Promise.resolve();
    job.abort.abort();
    return job.done;
  }

  /** Resumes the downloads a previous host left unfinished. */
  async resume(): Promise<void> {
    for (const model of await this.#options.pending.list()) {
      if (this.#byId.has(model)) this.start(model);
      else await this.#options.pending.delete(model);
    }
  }

  async #run(entry: CatalogEntry, job: Job): Promise<void> {
    const { pending, downloaded } = this.#options;
    const progress = job.progress;
    await pending.add(entry.id);
    try {
      if (this.#options.online?.() === false) {
        throw new OpenAIError(
          'download_unreachable',
          `The device is offline: connect to the network to download ${entry.id}.`,
        );
      }
      progress.phase = 'manifest';
      job.report(true);
      const { files } = await planFiles(entry, this.#options.appUrl, async (file) => {
        await fetchFile(this.#options, file, job);
        return cachedJson(this.#options.caches)(file);
      });
      progress.phase = 'files';
      progress.files_total = files.length;
      progress.bytes_total = this.#knownBytes(files, progress.bytes_done);
      await fetchAll(this.#options, files, job);
      progress.phase = 'verify';
      progress.file = null;
      job.report(true);
      const missing = await missingFiles(entry, this.#options.appUrl, this.#options.caches, {
        thorough: true,
      });
      if (missing.length > 0) {
        throw new OpenAIError(
          'engine_error',
          `Files still missing after the download: ${missing.join(', ')}`,
        );
      }
      // A manifest that misstates a shard's size must not leave the total below what came.
      progress.bytes_total = Math.max(progress.bytes_total ?? 0, progress.bytes_done);
      await downloaded.add(entry.id);
      await pending.delete(entry.id);
      // The final phase is set last, with nothing awaited after it: a report that goes out
      // meanwhile must not announce an end whose details are not there yet.
      progress.phase = 'done';
    } catch (err) {
      if (job.abort.signal.aborted) {
        await pending.delete(entry.id);
        progress.phase = 'cancelled';
        return;
      }
      let error: OpenAIError;
      if (isQuotaError(err)) {
        // Nothing half-stored: a full disk gets its space back, and the model is not on the device.
        await this.remove(entry);
        error = new OpenAIError(
          'storage_full',
          `The device's storage is full: ${entry.id} could not be downloaded, and what it had stored was removed to free the space.`,
        );
      } else if (err instanceof OpenAIError) {
        error = err;
      } else if (err instanceof Unreachable) {
        error = new OpenAIError(
          'download_unreachable',
          `Downloading ${entry.id} failed: ${err.message}`,
        );
      } else {
        const detail = err instanceof Error ? err.message : String(err);
        error = new OpenAIError('engine_error', `Downloading ${entry.id} failed: ${detail}`);
      }
      // A failed download is not retried by the next host: the user (or code) starts it again.
      await pending.delete(entry.id);
      progress.error = error.toBody().error;
      progress.phase = 'failed';
    }
  }

  /** The bytes known so far: the shards' sizes from the manifest, and what is already counted. */
  #knownBytes(files: readonly ModelFile[], counted: number): number {
    return counted + files.reduce((n, f) => n + (f.kind === 'shard' ? (f.bytes ?? 0) : 0), 0);
  }

  /**
   * Removes the files of `entry` that no other model needs. A file that another model downloaded,
   * being downloaded or left pending lists stays: WebLLM's `X` and `X-1k` are one set of files
   * under two ids, and deleting one must not evict the other. A library another catalogue model
   * names stays too.
   */
  async remove(entry: CatalogEntry): Promise<void> {
    const { caches, appUrl, catalog } = this.#options;
    // Read before anything is deleted: the other models' plans come from the same manifests.
    const { files } = await planFiles(entry, appUrl, cachedJson(caches));
    const needed = await this.#filesOfOthers(entry.id);
    for (const file of files) {
      if (needed.has(file.url)) continue;
      if (file.kind === 'library') {
        const shared = catalog.some(
          (e) =>
            e.id !== entry.id &&
            e.engine === 'webllm' &&
            new URL(e.model_lib, appUrl).href === file.url,
        );
        if (shared) continue;
      }
      const cache = await caches.open(file.cache);
      if (file.kind === 'gguf') await removeGgufFile(cache, file.url);
      else await cache.delete(file.url);
    }
    await this.#options.downloaded.delete(entry.id);
  }

  /** The URLs the models other than `model` list that are downloaded, downloading or pending. */
  async #filesOfOthers(model: string): Promise<Set<string>> {
    const { caches, appUrl, downloaded, pending } = this.#options;
    const ids = new Set([
      ...(await downloaded.list()),
      ...(await pending.list()),
      ...this.#jobs.keys(),
    ]);
    ids.delete(model);
    const urls = new Set<string>();
    for (const id of ids) {
      const other = this.#byId.get(id);
      if (!other) continue;
      const { files } = await planFiles(other, appUrl, cachedJson(caches));
      for (const file of files) urls.add(file.url);
    }
    return urls;
  }
}
