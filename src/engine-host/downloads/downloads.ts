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
import { GGUF_PART_BYTES, removeGgufFile } from '../../models/gguf-parts';
import { cachedJson, missingFiles, planFiles, type ModelFile } from '../../models/on-device';
import type { StorageEstimator } from '../../models/storage-room';
import { isQuotaError, pause, Permanent, transient, unreachable } from './download-errors';
import type { CacheLike, DownloadCaches, DownloadFetch } from './download-io';
import { downloadGguf } from './gguf-download';

// Kept in download-io.ts, which gguf-download.ts imports too, so that it need not import this file.
export type { CacheLike, DownloadCaches, DownloadFetch } from './download-io';
import type { ModelSet } from '../engine-db';

/** What the downloads need from the worker. */
export interface DownloadOptions {
  /** Read at each use: the worker's catalogue grows as the user adds models (live-catalog.ts). */
  catalog: readonly CatalogEntry[];
  appUrl: string;
  caches: DownloadCaches;
  fetch: DownloadFetch;
  /** Downloads under way, kept so that a new host resumes them. */
  pending: ModelSet;
  /** Models downloaded, kept so that one lost to eviction is noticed. */
  downloaded: ModelSet;
  /** Told whenever a download makes progress (at most every `progressMs`). */
  onChange: () => void;
  /** Told when a download ends, however it ends. */
  onEnd?: (progress: DownloadProgress) => void;
  /** Tries per file (a GGUF: per part) before the download fails (network errors and 5xx only). */
  attempts?: number;
  /** Pause before the first retry; it doubles each time. */
  retryMs?: number;
  progressMs?: number;
  /** The storage's quota and usage, checked before a GGUF is begun (the browser's by default). */
  estimate?: StorageEstimator;
  /** Files fetched at once (WebLLM fetches four shards at a time). */
  parallel?: number;
  /** Whether the device says it is online (`navigator.onLine`): offline, a download fails at once. */
  online?: () => boolean;
  /** The part size of GGUF files begun from now on (default: `BUILD_PART_BYTES`). */
  ggufPartBytes?: number;
}

/**
 * GGUF parts' size in this build: `GGUF_PART_BYTES`, unless a test build sets
 * `VITE_HEARTH_GGUF_PART_BYTES` (at least 64 KiB) so that a small model has several parts.
 */
const BUILD_PART_BYTES = ((): number => {
  const set = Number(import.meta.env.VITE_HEARTH_GGUF_PART_BYTES);
  return Number.isSafeInteger(set) && set >= 64 * 1024 ? set : GGUF_PART_BYTES;
})();

/** `sha256-…`, `sha384-…` or `sha512-…` of `data`, to compare with an SRI string. */
async function sriOf(algorithm: string, data: ArrayBuffer): Promise<string> {
  const name = { sha256: 'SHA-256', sha384: 'SHA-384', sha512: 'SHA-512' }[algorithm];
  if (!name) throw new Permanent(`unknown integrity algorithm ${algorithm}`);
  const digest = new Uint8Array(await crypto.subtle.digest(name, data));
  let binary = '';
  for (const byte of digest) binary += String.fromCharCode(byte);
  return `${algorithm}-${btoa(binary)}`;
}

/** A stored file's size: its `content-length`, or its bytes counted. */
async function sizeOf(response: Response): Promise<number> {
  const length = Number(response.headers.get('content-length'));
  return length > 0 ? length : (await response.arrayBuffer()).byteLength;
}

/** Adds a file's size to the total once (a retried or resumed file counts once). */
function countTotal(job: Job, url: string, bytes: number): void {
  if (job.progress.bytes_total === null || job.sized.has(url)) return;
  job.sized.add(url);
  job.progress.bytes_total += bytes;
}

/** One download. */
class Job {
  readonly progress: DownloadProgress;
  readonly abort = new AbortController();
  readonly listeners = new Set<(progress: DownloadProgress) => void>();
  /** Files whose size is in `bytes_total` already (a retried file counts once). */
  readonly sized = new Set<string>();
  /** Files stored or found by this download, and counted in `bytes_done`. */
  readonly stored = new Set<string>();
  done: Promise<void> = Promise.resolve();
  #lastReport = 0;
  #reportScheduled = false;

  constructor(
    model: string,
    readonly progressMs: number,
    readonly onChange: () => void,
  ) {
    this.progress = {
      object: 'hearth.download',
      model,
      phase: 'queued',
      bytes_done: 0,
      bytes_total: null,
      files_done: 0,
      files_total: null,
      file: null,
    };
  }

  /** Tells the listeners; byte counts at most every `progressMs`, phases at once. */
  report(now = false): void {
    const due = now || Date.now() - this.#lastReport >= this.progressMs;
    if (!due) {
      if (this.#reportScheduled) return;
      this.#reportScheduled = true;
      setTimeout(() => {
        this.#reportScheduled = false;
        this.report(true);
      }, this.progressMs);
      return;
    }
    this.#lastReport = Date.now();
    const snapshot = { ...this.progress };
    for (const listener of this.listeners) listener(snapshot);
    this.onChange();
  }
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
          'engine_error',
          `The device is offline: connect to the network to download ${entry.id}.`,
        );
      }
      progress.phase = 'manifest';
      job.report(true);
      const { files } = await planFiles(entry, this.#options.appUrl, async (file) => {
        await this.#fetchFile(file, job);
        return cachedJson(this.#options.caches)(file);
      });
      progress.phase = 'files';
      progress.files_total = files.length;
      progress.bytes_total = this.#knownBytes(files, progress.bytes_done);
      await this.#fetchAll(files, job);
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
   * Fetches the files the caches lack, a few at a time. When one fails for good, the others are
   * stopped, and only once all have settled does the failure go on: nothing is stored after the
   * download has ended (a full disk's cleanup must not race a file still arriving).
   */
  async #fetchAll(files: readonly ModelFile[], job: Job): Promise<void> {
    const queue = [...files];
    const stop = new AbortController();
    const signal = AbortSignal.any([job.abort.signal, stop.signal]);
    let failure: { error: unknown } | undefined;
    const worker = async () => {
      for (let file = queue.shift(); file && !signal.aborted; file = queue.shift()) {
        try {
          await this.#fetchFile(file, job, signal);
        } catch (error) {
          failure ??= { error };
          stop.abort();
          return;
        }
        job.progress.files_done += 1;
        job.report();
      }
    };
    await Promise.all(Array.from({ length: this.#options.parallel ?? 4 }, worker));
    if (failure) throw failure.error;
    job.abort.signal.throwIfAborted();
  }

  /** Puts one file in its cache, unless it is there; retries network failures. */
  async #fetchFile(file: ModelFile, job: Job, signal = job.abort.signal): Promise<void> {
    if (job.stored.has(file.url)) return; // a manifest, read while planning
    const cache = await this.#options.caches.open(file.cache);
    if (file.kind === 'gguf') {
      await this.#fetchGguf(file, cache, job, signal);
      job.stored.add(file.url);
      return;
    }
    const cached = await cache.match(file.url);
    if (cached) {
      job.stored.add(file.url);
      // Already on the device (a resumed download): its bytes count as done.
      const size = file.kind === 'shard' ? (file.bytes ?? 0) : await sizeOf(cached);
      if (file.kind !== 'shard') countTotal(job, file.url, size);
      job.progress.bytes_done += size;
      return;
    }
    const attempts = this.#options.attempts ?? 3;
    let delay = this.#options.retryMs ?? 500;
    for (let attempt = 1; ; attempt += 1) {
      const counted = { bytes: 0 };
      try {
        await this.#store(file, cache, job, signal, counted);
        job.stored.add(file.url);
        return;
      } catch (err) {
        // The bytes of a failed attempt do not count: the file starts over.
        job.progress.bytes_done -= counted.bytes;
        if (signal.aborted || !transient(err)) throw err;
        if (attempt >= attempts) throw unreachable(file.url, err);
        await pause(delay, signal);
        delay *= 2;
      }
    }
  }

  /** Stores a GGUF file's missing parts; its size joins the total once known. */
  async #fetchGguf(file: ModelFile, cache: CacheLike, job: Job, signal: AbortSignal) {
    const progress = job.progress;
    progress.file = file.url;
    job.report();
    let size = 0;
    await downloadGguf({
      url: file.url,
      cache,
      fetch: this.#options.fetch,
      signal,
      partBytes: this.#options.ggufPartBytes ?? BUILD_PART_BYTES,
      attempts: this.#options.attempts ?? 3,
      retryMs: this.#options.retryMs ?? 500,
      onSize: (bytes) => {
        // A file that changed on the server replaces its old size.
        if (progress.bytes_total !== null) progress.bytes_total += bytes - size;
        size = bytes;
      },
      onBytes: (bytes) => {
        progress.bytes_done += bytes;
        job.report();
      },
      estimate: this.#options.estimate,
    });
  }

  async #store(
    file: ModelFile,
    cache: CacheLike,
    job: Job,
    signal: AbortSignal,
    counted: { bytes: number },
  ): Promise<void> {
    const progress = job.progress;
    progress.file = file.url;
    job.report();
    const response = await this.#options.fetch(file.url, { signal });
    if (!response.ok || !response.body) {
      const message = `${file.url} answered ${response.status} ${response.statusText}`.trim();
      // A server error may pass; a missing file will not.
      if (response.status >= 500) throw new Error(message);
      throw new Permanent(message);
    }
    const length = Number(response.headers.get('content-length'));
    // Shards are counted from the manifest; other files once their size is known.
    if (file.kind !== 'shard' && length > 0) countTotal(job, file.url, length);
    const headers: Record<string, string> = {
      'content-type': response.headers.get('content-type') ?? 'application/octet-stream',
    };
    if (length > 0) headers['content-length'] = String(length);
    if (file.integrity) {
      // A model library is code: a file with an SRI hash is checked before it is kept.
      const data = await response.arrayBuffer();
      const algorithm = file.integrity.split('-', 1)[0] ?? '';
      if ((await sriOf(algorithm, data)) !== file.integrity) {
        const message = `${file.url} does not match its integrity hash ${file.integrity}`;
        if (!file.integrityWarnOnly) throw new Permanent(message);
        console.warn(`Hearth: ${message} (kept: the catalogue says onFailure "warn").`);
      }
      progress.bytes_done += data.byteLength;
      counted.bytes += data.byteLength;
      await cache.put(file.url, new Response(data, { headers }));
      return;
    }
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        progress.bytes_done += chunk.byteLength;
        counted.bytes += chunk.byteLength;
        job.report();
        controller.enqueue(chunk);
      },
    });
    // The cache takes the body as it streams: a shard never sits whole in the worker's memory.
    await cache.put(file.url, new Response(response.body.pipeThrough(counter), { headers }));
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
