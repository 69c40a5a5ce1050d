/**
 * @module
 * A download's files into the caches: the ones a model lacks, a few at a time; MLC files whole,
 * each retried from its start, and a file with an SRI hash checked before it is kept; a GGUF in
 * parts (gguf-download.ts). Apart from the downloads (downloads.ts), which decide what a model
 * needs and what a failure means.
 */
import type { ModelFile } from '../../models/on-device';
import { GGUF_PART_BYTES } from '../../models/gguf-parts';
import type { StorageEstimator } from '../../models/storage-room';
import { pause, Permanent, transient, unreachable } from './download-errors';
import type { CacheLike, DownloadCaches, DownloadFetch } from './download-io';
import { countTotal, type Job } from './download-job';
import { downloadGguf } from './gguf-download';

/** What fetching a download's files needs from the worker (part of `DownloadOptions`). */
export interface FileFetchOptions {
  caches: DownloadCaches;
  fetch: DownloadFetch;
  /** Tries per file (a GGUF: per part) before the download fails (network errors and 5xx only). */
  attempts?: number;
  /** Pause before the first retry; it doubles each time. */
  retryMs?: number;
  /** The storage's quota and usage, checked before a GGUF is begun (the browser's by default). */
  estimate?: StorageEstimator;
  /** Files fetched at once (WebLLM fetches four shards at a time). */
  parallel?: number;
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

/**
 * Fetches the files the caches lack, a few at a time. When one fails for good, the others are
 * stopped, and only once all have settled does the failure go on: nothing is stored after the
 * download has ended (a full disk's cleanup must not race a file still arriving).
 */
export async function fetchAll(
  options: FileFetchOptions,
  files: readonly ModelFile[],
  job: Job,
): Promise<void> {
  const queue = [...files];
  const stop = new AbortController();
  const signal = AbortSignal.any([job.abort.signal, stop.signal]);
  let failure: { error: unknown } | undefined;
  const worker = async () => {
    for (let file = queue.shift(); file && !signal.aborted; file = queue.shift()) {
      try {
        await fetchFile(options, file, job, signal);
      } catch (error) {
        failure ??= { error };
        stop.abort();
        return;
      }
      job.progress.files_done += 1;
      job.report();
    }
  };
  await Promise.all(Array.from({ length: options.parallel ?? 4 }, worker));
  if (failure) throw failure.error;
  job.abort.signal.throwIfAborted();
}

/** Puts one file in its cache, unless it is there; retries network failures. */
export async function fetchFile(
  options: FileFetchOptions,
  file: ModelFile,
  job: Job,
  signal = job.abort.signal,
): Promise<void> {
  if (job.stored.has(file.url)) return; // a manifest, read while planning
  const cache = await options.caches.open(file.cache);
  if (file.kind === 'gguf') {
    await fetchGguf(options, file, cache, job, signal);
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
  const attempts = options.attempts ?? 3;
  let delay = options.retryMs ?? 500;
  for (let attempt = 1; ; attempt += 1) {
    const counted = { bytes: 0 };
    try {
      await storeFile(options, file, cache, job, signal, counted);
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
async function fetchGguf(
  options: FileFetchOptions,
  file: ModelFile,
  cache: CacheLike,
  job: Job,
  signal: AbortSignal,
) {
  const progress = job.progress;
  progress.file = file.url;
  job.report();
  let size = 0;
  await downloadGguf({
    url: file.url,
    cache,
    fetch: options.fetch,
    signal,
    partBytes: options.ggufPartBytes ?? BUILD_PART_BYTES,
    attempts: options.attempts ?? 3,
    retryMs: options.retryMs ?? 500,
    onSize: (bytes) => {
      // A file that changed on the server replaces its old size.
      if (progress.bytes_total !== null) progress.bytes_total += bytes - size;
      size = bytes;
    },
    onBytes: (bytes) => {
      progress.bytes_done += bytes;
      job.report();
    },
    estimate: options.estimate,
  });
}

/** Fetches one whole file into its cache, its bytes counted as they come. */
async function storeFile(
  options: FileFetchOptions,
  file: ModelFile,
  cache: CacheLike,
  job: Job,
  signal: AbortSignal,
  counted: { bytes: number },
): Promise<void> {
  const progress = job.progress;
  progress.file = file.url;
  job.report();
  const response = await options.fetch(file.url, { signal });
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
  const body = watched(response.body);
  try {
    await cache.put(file.url, new Response(body.stream.pipeThrough(counter), { headers }));
  } catch (err) {
    // The body's own failure, if it failed: the network's, which the cache's error hides.
    throw body.failure ? body.failure.error : err;
  }
}

/**
 * `body` passed on as it is read, with why reading it failed, if it did (a broken connection:
 * fetch's `TypeError`). A `Cache.put` given a body that fails rejects with an error of its own
 * (Chromium's `NetworkError`, Firefox's `NS_ERROR_FAILURE`), which does not say that the network
 * failed; `failure` does.
 */
function watched(body: ReadableStream<Uint8Array>): {
  stream: ReadableStream<Uint8Array>;
  readonly failure: { error: unknown } | undefined;
} {
  const reader = body.getReader();
  const watch: { failure: { error: unknown } | undefined } = { failure: undefined };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let step: ReadableStreamReadResult<Uint8Array>;
        try {
          step = await reader.read();
        } catch (error) {
          watch.failure ??= { error };
          throw error;
        }
        if (step.done) controller.close();
        else controller.enqueue(step.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    get failure() {
      return watch.failure;
    },
  };
}
