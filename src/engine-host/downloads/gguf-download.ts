/**
 * @module
 * One GGUF file into the cache, in parts (src/models/gguf-parts.ts), each fetched with a
 * `Range: bytes=first-last` request: a download that stops (a broken connection, a cancel, a
 * closed host) resumes at the first part the cache lacks, in this worker or the next host's.
 *
 * The first answer gives the file's size (`Content-Range`; where CORS hides it, a short last part
 * or a HEAD request) and its first bytes, which must be `GGUF` before anything is stored; then the
 * size record is written, then the parts, then the record is marked complete. A server that
 * answers a Range request with 200 sends the whole file: it is cut into parts as it arrives, the
 * parts stored already passed over. A file whose size or ETag differs from its record changed on
 * the server: its old parts go and it starts over, once.
 */
import { OpenAIError } from '../../protocol/errors';
import {
  ggufParts,
  ggufSizeKey,
  readGgufRecord,
  removeGgufFile,
  type GgufFileRecord,
  type GgufPart,
} from '../../models/gguf-parts';
import { ByteSource } from './byte-source';
import { assertRoom, defaultEstimator, type StorageEstimator } from '../../models/storage-room';
import { pause, Permanent, transient, unreachable } from './download-errors';
import type { CacheLike, DownloadFetch } from './download-io';

/** What downloading one GGUF file needs. */
export interface GgufFileOptions {
  url: string;
  cache: CacheLike;
  fetch: DownloadFetch;
  signal: AbortSignal;
  /** The part size, for a file not begun yet (one begun keeps its own). */
  partBytes: number;
  /** Tries in a row that store nothing before the download fails (network errors and 5xx only). */
  attempts: number;
  /** Pause before the first retry; it doubles each time. */
  retryMs: number;
  /** Told the file's size as soon as it is known (and again if the file changed). */
  onSize(bytes: number): void;
  /** Told of bytes stored or found stored; negative when bytes counted are lost. */
  onBytes(bytes: number): void;
  /** The storage's quota and usage (`navigator.storage.estimate` by default). */
  estimate?: StorageEstimator | undefined;
}

/** The file changed on the server since its first parts were stored (no retry: start over). */
class Changed extends Permanent {}

const MAGIC = 'GGUF';

/** Stores the file's missing parts; returns once every part is stored and the record says so. */
export async function downloadGguf(options: GgufFileOptions): Promise<void> {
  const file = new GgufFile(options);
  try {
    await file.fill();
  } catch (err) {
    if (!(err instanceof Changed)) throw err;
    // Parts of two versions would make a broken model: the old ones go.
    file.uncount();
    await removeGgufFile(options.cache, options.url);
    try {
      await new GgufFile(options).fill();
    } catch (again) {
      if (!(again instanceof Changed)) throw again;
      throw new Permanent(`${options.url} changed on the server while it was being downloaded`);
    }
  }
}

const partSize = (part: { first: number; last: number }) => part.last - part.first + 1;

/** A positive `content-length`, or 0. */
function contentLength(response: Response): number {
  const length = Number(response.headers.get('content-length'));
  return Number.isSafeInteger(length) && length > 0 ? length : 0;
}

/** The ETag, weak or strong alike (a CDN may weaken it), or undefined. */
function etagOf(response: Response): string | undefined {
  return response.headers.get('etag')?.replace(/^W\//, '') ?? undefined;
}

/** `bytes first-last/total` (total null when `*`), or null when absent or unreadable. */
function contentRange(
  response: Response,
): { first: number; last: number; total: number | null } | null {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
  if (!match) return null;
  return {
    first: Number(match[1]),
    last: Number(match[2]),
    total: match[3] === '*' ? null : Number(match[3]),
  };
}

/** The record as the cache keeps it. */
function recordResponse(record: GgufFileRecord): Response {
  return new Response(JSON.stringify(record), { headers: { 'content-type': 'application/json' } });
}

/** Throws unless the body begins with `GGUF`. */
async function checkMagic(source: ByteSource, url: string): Promise<void> {
  const head = await source.peek(MAGIC.length);
  const text = String.fromCharCode(...head);
  if (text === MAGIC) return;
  throw new OpenAIError(
    'invalid_value',
    `${url} is not a GGUF file: it begins with ${JSON.stringify(text)}, not "GGUF". Check the model's address (an error or sign-in page is not a model).`,
  );
}

/** One download of one file. */
class GgufFile {
  readonly #o: GgufFileOptions;
  #record: GgufFileRecord | undefined;
  /** Parts this download stored or found stored, and counted. */
  readonly #seen = new Set<string>();
  #counted = 0;

  constructor(options: GgufFileOptions) {
    this.#o = options;
  }

  #count(bytes: number): void {
    this.#counted += bytes;
    this.#o.onBytes(bytes);
  }

  /** Takes back every byte this download counted (its parts are about to go). */
  uncount(): void {
    this.#count(-this.#counted);
  }

  async fill(): Promise<void> {
    const o = this.#o;
    this.#record = await readGgufRecord(o.cache, o.url);
    if (this.#record && !this.#record.complete) await this.#assertFits(this.#record);
    if (this.#record) o.onSize(this.#record.bytes);
    let tries = 0;
    let delay = o.retryMs;
    for (let next = await this.#next(); next; next = await this.#next()) {
      const before = this.#seen.size;
      try {
        await this.#fetch(next);
        tries = 0;
        delay = o.retryMs;
      } catch (err) {
        if (o.signal.aborted || !transient(err)) throw err;
        // Tries in a row that stored nothing: a whole-file answer that broke after some parts
        // made progress, and starts the count again.
        tries = this.#seen.size > before ? 1 : tries + 1;
        if (tries >= o.attempts) throw unreachable(o.url, err);
        await pause(delay, o.signal);
        delay *= 2;
      }
    }
    const record = this.#record;
    if (record && !record.complete) {
      await o.cache.put(ggufSizeKey(o.url), recordResponse({ ...record, complete: true }));
    }
  }

  /**
   * The first part not stored (those found stored on the way count as done), or, while the size
   * is not known, the range of the first part.
   */
  async #next(): Promise<Pick<GgufPart, 'first' | 'last'> | undefined> {
    const o = this.#o;
    if (!this.#record) return { first: 0, last: o.partBytes - 1 };
    for (const part of ggufParts(o.url, this.#record)) {
      if (this.#seen.has(part.key)) continue;
      if (!(await this.#storedWhole(part.key, partSize(part)))) return part;
      this.#seen.add(part.key);
      this.#count(partSize(part));
    }
    return undefined;
  }

  /** Requests `first`–`last` and stores what comes: that part, or every part of a whole file. */
  async #fetch({ first, last }: Pick<GgufPart, 'first' | 'last'>): Promise<void> {
    const o = this.#o;
    const response = await o.fetch(o.url, {
      signal: o.signal,
      headers: { range: `bytes=${first}-${last}` },
      // The HTTP cache would keep a second copy of the model, and answer a range from what it
      // kept of a broken answer, asking the server for sub-ranges of its own (seen in Chromium).
      cache: 'no-store',
    });
    const whole = response.status === 200;
    if ((!whole && response.status !== 206) || !response.body) {
      if (response.status === 416) {
        if (this.#record) throw new Changed(); // shorter than it was
        throw new OpenAIError('invalid_value', `${o.url} is not a GGUF file: it is empty.`);
      }
      const message = `${o.url} answered ${response.status} ${response.statusText}`.trim();
      // A server error may pass; a missing file will not.
      if (response.status >= 500 || response.ok) throw new Error(message || 'no body');
      throw new Permanent(message);
    }
    const source = new ByteSource(response.body);
    try {
      // A server that ignores Range sends the file from its first byte.
      const start = whole ? 0 : first;
      const total = whole ? contentLength(response) : await this.#sizeOf(response, first, last);
      if (!total) {
        throw new Permanent(`${o.url} neither honours Range requests nor says its size`);
      }
      if (this.#record) {
        const etag = etagOf(response);
        const other = etag !== undefined && this.#record.etag !== undefined;
        if (total !== this.#record.bytes || (other && etag !== this.#record.etag)) {
          throw new Changed();
        }
      }
      if (start === 0) await checkMagic(source, o.url);
      const record = this.#record ?? (await this.#begin(total, etagOf(response)));
      for (const part of ggufParts(o.url, record)) {
        if (part.first < start) continue;
        if (!whole && part.first > first) break;
        await this.#store(part, source);
      }
    } catch (err) {
      // The body's own failure, if it failed: the network's, which the cache's error hides.
      throw source.failure ? source.failure.error : err;
    } finally {
      source.close();
    }
  }

  /** The size a 206 answer tells (its `Content-Range`, else a short last part, else HEAD). */
  async #sizeOf(response: Response, first: number, last: number): Promise<number> {
    const o = this.#o;
    const range = contentRange(response);
    if (range && range.first !== first) {
      throw new Permanent(
        `${o.url} answered bytes ${range.first}-${range.last} to a request for bytes ${first}-${last}`,
      );
    }
    if (range?.total) return range.total;
    // CORS hides Content-Range unless the server exposes it.
    if (this.#record) return this.#record.bytes;
    const length = contentLength(response);
    if (length > 0 && length < last - first + 1) return first + length;
    const head = await o.fetch(o.url, { signal: o.signal, method: 'HEAD', cache: 'no-store' });
    const size = head.ok ? contentLength(head) : 0;
    if (size) return size;
    throw new Permanent(
      `${o.url} does not say its size: its server must expose Content-Range (Access-Control-Expose-Headers) or answer HEAD with a Content-Length`,
    );
  }

  /**
   * A download begun before that can never fit (a size a server claimed before the check was
   * made) goes, record and the parts stored in order from the first, and fails: left pending, it
   * would fail again at every host start.
   */
  async #assertFits(record: GgufFileRecord): Promise<void> {
    const o = this.#o;
    try {
      await assertRoom(record.bytes, o.url, o.estimate ?? defaultEstimator(), true);
    } catch (err) {
      for (const part of ggufParts(o.url, record)) {
        if (!(await o.cache.delete(part.key))) break;
      }
      await o.cache.delete(ggufSizeKey(o.url));
      this.#record = undefined;
      throw err;
    }
  }

  /** Writes the size record, before any part: the parts are found through it. */
  async #begin(bytes: number, etag: string | undefined): Promise<GgufFileRecord> {
    const o = this.#o;
    await assertRoom(bytes, o.url, o.estimate ?? defaultEstimator());
    const record: GgufFileRecord = { bytes, part_bytes: o.partBytes, complete: false };
    if (etag !== undefined) record.etag = etag;
    await o.cache.put(ggufSizeKey(o.url), recordResponse(record));
    this.#record = record;
    o.onSize(bytes);
    return record;
  }

  /**
   * Whether the part is stored, every byte of it. A part cut short is deleted: Firefox can keep
   * what a `Cache.put` had taken when its worker ended mid-part (a host tab reloaded), and the
   * next host must fetch it again, not pass over it.
   */
  async #storedWhole(key: string, bytes: number): Promise<boolean> {
    const cache = this.#o.cache;
    const stored = await cache.match(key);
    if (!stored) return false;
    if ((await stored.blob()).size === bytes) return true;
    await cache.delete(key);
    return false;
  }

  /** Stores the part from the body, or passes over it when it is stored already. */
  async #store(part: GgufPart, source: ByteSource): Promise<void> {
    const o = this.#o;
    const bytes = partSize(part);
    if (this.#seen.has(part.key) || (await this.#storedWhole(part.key, bytes))) {
      if (!this.#seen.has(part.key)) {
        this.#seen.add(part.key);
        this.#count(bytes);
      }
      await source.skip(bytes);
      return;
    }
    let partial = 0;
    const body = source.take(bytes, (n) => {
      partial += n;
      this.#count(n);
    });
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(bytes) };
    try {
      await o.cache.put(part.key, new Response(body, { headers }));
    } catch (err) {
      // The bytes of a part not stored do not count.
      this.#count(-partial);
      throw err;
    }
    this.#seen.add(part.key);
  }
}
