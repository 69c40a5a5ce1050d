/**
 * @module
 * How a GGUF file is kept on the device. A GGUF is one file of 0.4–3 GB: stored whole, a download
 * that stops would start it over. So each file is kept in parts of a fixed size, each its own
 * entry of the `hearth/gguf` cache, beside a small record of the file's size that says which parts
 * there are:
 *
 * - `<url>?hearth-gguf=size`: `{"bytes", "part_bytes", "complete", "etag"?}` (JSON);
 * - `<url>?hearth-gguf=<first>-<last>`: the bytes `first` to `last` of the file (inclusive, as in
 *   the `Range: bytes=first-last` request that fetched them).
 *
 * The keys carry a query, not a fragment: the Cache API matches URLs without their fragment
 * (measured in Chromium 156: `a.gguf#1` and `a.gguf#2` are one entry). The record is written
 * before the first part and marked `complete` after the last one, so a check that reads only the
 * record is cheap (one `match` instead of one per part) and a missing record means nothing usable.
 */

/**
 * Bytes per part of new downloads: a broken connection loses at most one part's bytes, and a 3 GB
 * file is ~100 parts. A stored file keeps the part size it was started with (its record says).
 */
export const GGUF_PART_BYTES = 32 * 1024 * 1024;

/** What is kept under `ggufSizeKey(url)`. */
export interface GgufFileRecord {
  /** The file's size. */
  bytes: number;
  /** Its parts' size (the last part may be shorter). */
  part_bytes: number;
  /** Every part was stored (written after the last one). */
  complete: boolean;
  /** The server's ETag, when it showed one: a file that changes under its URL starts over. */
  etag?: string;
  /** When a file from the computer was last written to (ms): orphan-files.ts spares it a while. */
  written_at?: number;
}

/** One part of a stored file. */
export interface GgufPart {
  /** Its cache key. */
  key: string;
  /** Its first and last byte in the file (inclusive). */
  first: number;
  last: number;
}

/** `url` with `hearth-gguf=<value>` added to its query (and its fragment, never sent, dropped). */
function keyOf(url: string, value: string): string {
  const [bare = url] = url.split('#', 1);
  return `${bare}${bare.includes('?') ? '&' : '?'}hearth-gguf=${value}`;
}

/** The cache key of a GGUF file's size record. */
export function ggufSizeKey(url: string): string {
  return keyOf(url, 'size');
}

/** The cache key of the bytes `first` to `last` (inclusive) of a GGUF file. */
export function ggufPartKey(url: string, first: number, last: number): string {
  return keyOf(url, `${first}-${last}`);
}

/**
 * Every part of the file `record` describes, in order, made one at a time as they are read: a
 * record is whatever size a server claimed, and a list of parts for 2^50 bytes would not fit in
 * memory (a download reads the parts only up to the first one it lacks).
 */
export function* ggufParts(url: string, record: GgufFileRecord): Generator<GgufPart> {
  for (let first = 0; first < record.bytes; first += record.part_bytes) {
    const last = Math.min(first + record.part_bytes, record.bytes) - 1;
    yield { key: ggufPartKey(url, first, last), first, last };
  }
}

const isSize = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) > 0;

/** A record read from the cache, or undefined when it is not one (then nothing is usable). */
export function parseGgufRecord(value: unknown): GgufFileRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { bytes, part_bytes, complete, etag, written_at } = value as Record<string, unknown>;
  if (!isSize(bytes) || !isSize(part_bytes) || typeof complete !== 'boolean') return undefined;
  const record: GgufFileRecord = { bytes, part_bytes, complete };
  if (typeof etag === 'string') record.etag = etag;
  if (typeof written_at === 'number') record.written_at = written_at;
  return record;
}

/** The part of `Cache` the checks read. */
export interface CacheReader {
  match(request: string): Promise<Response | undefined>;
}

/** The part of `Cache` a removal needs. */
export interface CacheRemover extends CacheReader {
  delete(request: string): Promise<boolean>;
}

/** The size record of `url`, or undefined when there is none (or it cannot be read). */
export async function readGgufRecord(
  cache: CacheReader,
  url: string,
): Promise<GgufFileRecord | undefined> {
  const response = await cache.match(ggufSizeKey(url));
  if (!response) return undefined;
  try {
    return parseGgufRecord(await response.json());
  } catch {
    return undefined;
  }
}

/**
 * Whether the whole file is stored. Quick (the default): its record says it is complete, which
 * is written after the last part; the browser evicts an origin's storage whole, so a record
 * without its parts comes only from deleting entries by hand. Thorough: every part is there too,
 * one `match` each (~0.4 ms a part in Chromium: ~40 ms for a 3 GB file).
 */
export async function ggufFileStored(
  cache: CacheReader,
  url: string,
  thorough = false,
): Promise<boolean> {
  const record = await readGgufRecord(cache, url);
  if (!record?.complete) return false;
  if (!thorough) return true;
  for (const part of ggufParts(url, record)) {
    if (!(await cache.match(part.key))) return false;
  }
  return true;
}

/** Removes a file's parts, then its size record (without which the parts could not be found). */
export async function removeGgufFile(cache: CacheRemover, url: string): Promise<void> {
  const record = await readGgufRecord(cache, url);
  if (record) {
    for (const part of ggufParts(url, record)) await cache.delete(part.key);
  }
  await cache.delete(ggufSizeKey(url));
}
