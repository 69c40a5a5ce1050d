/**
 * @module
 * The check, before an added GGUF is accepted, that each of its files is there and begins with
 * the bytes `GGUF` (`inspectGguf` also reads the first file's beginning, whose metadata say what
 * kind of model it is); a file the page stored is read from the cache, not fetched. Refusals are
 * gguf-source.ts's 400s on `source`.
 */
import { ggufParts, readGgufRecord } from '../gguf-parts';
import { MODEL_CACHES } from '../on-device';
import { OpenAIError } from '../../protocol/errors';
import { readGgufHeader } from './gguf-header';
import { reach, refuse, type SourceDeps } from './gguf-source';

/** What every GGUF file begins with. */
const MAGIC = 'GGUF';
/** What `checkGguf` reads of each file. */
const MAGIC_BYTES = 8;
/** How many of a split GGUF's parts are checked at once: a server is not sent them all together. */
const CHECKS_AT_ONCE = 4;

/** The first bytes of a body, at most `count`; the rest is not read. */
async function head(response: Response, count: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(count);
  let got = 0;
  const reader = response.body?.getReader();
  if (!reader) return bytes.subarray(0, 0);
  try {
    while (got < count) {
      const { done, value } = await reader.read();
      if (done) break;
      const take = value.subarray(0, count - got);
      bytes.set(take, got);
      got += take.byteLength;
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return bytes.subarray(0, got);
}

/** Throws 400 unless `bytes` begin with `GGUF`, showing what they begin with instead. */
function assertMagic(bytes: Uint8Array, url: string): void {
  const text = String.fromCharCode(...bytes.subarray(0, MAGIC.length));
  if (text === MAGIC) return;
  const shown =
    bytes.length === 0
      ? 'it is empty'
      : /^[\x20-\x7e]*$/.test(text)
        ? `it begins with '${text}'`
        : `it begins with the bytes ${[...bytes.subarray(0, 4)].map((b) => b.toString(16).padStart(2, '0')).join(' ')}`;
  throw refuse(`${url} is not a GGUF file: a GGUF begins with '${MAGIC}', and ${shown}.`);
}

/** The size a response gives for the whole file (a range's total, or the length), or null. */
function totalSize(response: Response): number | null {
  const range = /\/(\d+)\s*$/.exec(response.headers.get('content-range') ?? '');
  if (response.status === 206) return range?.[1] ? Number(range[1]) : null;
  const length = Number(response.headers.get('content-length'));
  return length > 0 ? length : null;
}

/** What checking one file found: its size (null when nothing says) and its first bytes. */
interface CheckedFile {
  size: number | null;
  /** At most the bytes asked for: fewer when the file is shorter or its parts are not stored. */
  head: Uint8Array;
}

/** The first `count` bytes of a file the page stored, across its parts; null when not stored. */
async function storedHead(
  url: string,
  count: number,
  deps: SourceDeps,
): Promise<CheckedFile | null> {
  const cache = await deps.caches.open(MODEL_CACHES.gguf);
  const stored = await readGgufRecord(cache, url);
  if (!stored?.complete) return null;
  const chunks: Uint8Array[] = [];
  let got = 0;
  for (const part of ggufParts(url, stored)) {
    if (got >= count) break;
    const response = await cache.match(part.key);
    if (!response) {
      if (got === 0) return null;
      break;
    }
    const chunk = new Uint8Array(await (await response.blob()).slice(0, count - got).arrayBuffer());
    chunks.push(chunk);
    got += chunk.byteLength;
  }
  const head = new Uint8Array(got);
  chunks.reduce((at, chunk) => (head.set(chunk, at), at + chunk.byteLength), 0);
  return { size: stored.bytes, head };
}

/** Checks one file, reading its first `count` bytes (at least the 8 the check needs). */
async function checkFile(url: string, count: number, deps: SourceDeps): Promise<CheckedFile> {
  if (new URL(url).origin === new URL(deps.appUrl).origin) {
    // A file the page stored (a GGUF from the computer) is in the cache, not on any server.
    const stored = await storedHead(url, count, deps);
    if (stored) {
      assertMagic(stored.head, url);
      return stored;
    }
  }
  const response = await reach(url, { headers: { range: `bytes=0-${count - 1}` } }, deps);
  if (response.status !== 200 && response.status !== 206) {
    void response.body?.cancel();
    throw refuse(`${url} answered ${response.status} ${response.statusText}`.trim() + '.');
  }
  // A server that ignores the range sends the whole file: only `count` bytes of it are read.
  const bytes = await head(response, count);
  assertMagic(bytes, url);
  const total = totalSize(response);
  if (total !== null || response.status !== 206) return { size: total, head: bytes };
  // A cross-origin server that does not expose Content-Range still shows a HEAD's length.
  const described = await reach(url, { method: 'HEAD' }, deps).catch(() => null);
  return { size: described?.ok ? totalSize(described) : null, head: bytes };
}

/** The bytes of a file's beginning that `inspectGguf` reads: its metadata, tokenizer aside. */
export const HEADER_BYTES = 256 * 1024;

/** What `inspectGguf` found: the size of all the files, and the first file's first bytes. */
export interface GgufInspection {
  /** The size of them all, or null when a server does not say. */
  size: number | null;
  /** The first `HEADER_BYTES` of the first file, or fewer (see `readGgufHeader`). */
  head: Uint8Array;
}

/** `work` on each item, at most `limit` at once, the results in the items' order. */
async function mapAtMost<T, R>(
  limit: number,
  items: readonly T[],
  work: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Each file checked (`count(i)` bytes of the i-th read); the sizes added up. */
async function checkAll(
  files: readonly string[],
  count: (index: number) => number,
  deps: SourceDeps,
): Promise<GgufInspection> {
  const checked = await mapAtMost(CHECKS_AT_ONCE, files, (url, i) =>
    checkFile(url, count(i), deps),
  );
  const sizes = checked.map((c) => c.size);
  return {
    size: sizes.every((s) => s !== null) ? sizes.reduce((a, b) => a + b, 0) : null,
    head: checked[0]?.head ?? new Uint8Array(0),
  };
}

/**
 * Checks that every file is there and begins with `GGUF` (reading 8 bytes of each with a Range
 * request); the size of them all, or null when a server does not say.
 */
export async function checkGguf(
  files: readonly string[],
  deps: SourceDeps,
): Promise<number | null> {
  return (await checkAll(files, () => MAGIC_BYTES, deps)).size;
}

/**
 * Checks the files as `checkGguf` does, reading the first `HEADER_BYTES` of the first file (one
 * Range request, which the check of its magic uses too) for its metadata.
 */
export async function inspectGguf(
  files: readonly string[],
  deps: SourceDeps,
): Promise<GgufInspection> {
  return checkAll(files, (i) => (i === 0 ? HEADER_BYTES : MAGIC_BYTES), deps);
}

/**
 * Checks that `url` is a vision projector: a GGUF whose `general.architecture` is `clip` (what
 * llama.cpp's multimodal library loads). Its size, or null when the server does not say. A
 * refusal names `param`: `mmproj` when the user gave the file, `source` when the repo did.
 */
export async function inspectProjector(
  url: string,
  param: 'mmproj' | 'source',
  deps: SourceDeps,
): Promise<number | null> {
  try {
    const { size, head } = await checkFile(url, HEADER_BYTES, deps);
    const arch = readGgufHeader(head).metadata.get('general.architecture');
    if (arch !== 'clip') {
      const what = typeof arch === 'string' ? `a '${arch}' model` : 'no model llama.cpp names';
      throw refuse(
        `${url} is not a vision projector: its general.architecture says ${what}, and a projector's says 'clip'.`,
      );
    }
    return size;
  } catch (err) {
    if (!(err instanceof OpenAIError) || err.param === param) throw err;
    throw new OpenAIError(err.code, err.message, { param });
  }
}
