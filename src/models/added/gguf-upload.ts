/**
 * @module
 * GGUF files from the user's computer: `PUT /v1/hearth/files/{name}.gguf` stores the raw body
 * in the GGUF cache, in parts as a download is stored (gguf-parts.ts), under an address of the
 * app's own (`{base}v1/hearth/files/<uuid>/<name>`), where the engine reads it as it reads a
 * download; `POST /v1/hearth/models {"source": <path>}` then adds it as a model already on the
 * device. The body is a file, not JSON: no content type is required and the 4 MiB limit of JSON
 * bodies does not apply; the device's storage quota does (507 `storage_full`).
 * `DELETE /v1/hearth/files/<uuid>/<name>` removes a stored file that no model uses (one whose
 * adding failed); a model's files go with the model.
 */
import type { AddableCatalog } from './added-models';
import { OpenAIError } from '../../protocol/errors';
import {
  GGUF_PART_BYTES,
  ggufParts,
  ggufSizeKey,
  readGgufRecord,
  removeGgufFile,
  type GgufFileRecord,
} from '../gguf-parts';
import { MODEL_CACHES } from '../on-device';
import { assertRoom, defaultEstimator, type StorageEstimator } from '../storage-room';
import { jsonResponse } from '../../protocol/respond';

/** The part of `Cache` the files need. */
interface FileCache {
  match(request: string): Promise<Response | undefined>;
  put(request: string, response: Response): Promise<void>;
  delete(request: string): Promise<boolean>;
}

/** The part of `CacheStorage` the files need. */
export interface FileCaches {
  open(cacheName: string): Promise<FileCache>;
}

/** What the file endpoints need. */
export interface FileDeps {
  /** The app's address; files are kept under `{appUrl}v1/hearth/files/`. */
  appUrl: string;
  caches: FileCaches;
  catalog: AddableCatalog;
  /** The part size of stored files (tests make it small). */
  partBytes?: number;
  /** The storage's quota and usage (`navigator.storage.estimate` by default). */
  estimate?: StorageEstimator;
}

/** Where stored files live, relative to the app. */
const FILES_PATH = 'v1/hearth/files/';
const MAGIC = [0x47, 0x47, 0x55, 0x46]; // 'GGUF'
const OCTETS = 'application/octet-stream';

function badPath(detail: string): OpenAIError {
  return new OpenAIError('invalid_value', `PUT /v1/hearth/files/{name}.gguf: ${detail}`);
}

/** The file name of the path after `files/`: one segment, ending in `.gguf`. */
function fileName(rest: string): string {
  let name: string;
  try {
    name = decodeURIComponent(rest);
  } catch {
    throw badPath(`the name ${JSON.stringify(rest)} is not valid percent-encoding.`);
  }
  if (/[/\\]/.test(name))
    throw badPath(`the name may not hold a folder (got ${JSON.stringify(name)}).`);
  // eslint-disable-next-line no-control-regex -- control characters are what it refuses
  if (!/^[^\u0000-\u001f]{1,200}\.gguf$/i.test(name)) {
    throw badPath(`the name must end in .gguf (got ${JSON.stringify(name)}).`);
  }
  return name;
}

const isQuotaError = (err: unknown) => err instanceof Error && err.name === 'QuotaExceededError';

/** Throws 400 unless the file begins with `GGUF`. */
async function assertGguf(file: Blob): Promise<void> {
  const head = new Uint8Array(await file.slice(0, MAGIC.length).arrayBuffer());
  if (MAGIC.every((byte, i) => head[i] === byte)) return;
  throw new OpenAIError(
    'invalid_value',
    file.size === 0
      ? 'The body is empty: send the GGUF file itself as the body.'
      : `The body is not a GGUF file: a GGUF begins with 'GGUF'.`,
  );
}

const record = (value: GgufFileRecord) =>
  new Response(JSON.stringify(value), { headers: { 'content-type': 'application/json' } });

/**
 * Stores `file` as a download is stored (gguf-parts.ts): the size record, the parts, then the
 * record marked complete. The record is touched at each part (`written_at`), so that the host's
 * sweep of orphans (orphan-files.ts) spares a file being stored. A full disk, or a client gone
 * (`signal`), keeps nothing of it; a worker stopped mid-store leaves it to that sweep.
 */
async function storeParts(
  cache: FileCache,
  url: string,
  file: Blob,
  partBytes: number,
  signal: AbortSignal,
) {
  const size: GgufFileRecord = { bytes: file.size, part_bytes: partBytes, complete: false };
  try {
    for (const part of ggufParts(url, size)) {
      signal.throwIfAborted();
      await cache.put(ggufSizeKey(url), record({ ...size, written_at: Date.now() }));
      const bytes = file.slice(part.first, part.last + 1);
      await cache.put(part.key, new Response(bytes, { headers: { 'content-type': OCTETS } }));
    }
    signal.throwIfAborted();
    await cache.put(ggufSizeKey(url), record({ ...size, complete: true, written_at: Date.now() }));
  } catch (err) {
    await removeGgufFile(cache, url).catch(() => undefined);
    throw err;
  }
}

/** `PUT /v1/hearth/files/{name}.gguf`: 201 `{object: "hearth.file", path, url, bytes}`. */
export async function storeFile(
  request: Request,
  rest: string,
  deps: FileDeps,
  requestId: string,
): Promise<Response> {
  const name = fileName(rest);
  // Before the body is read: a body the storage cannot hold is not taken in at all.
  const length = Number(request.headers.get('content-length'));
  if (Number.isSafeInteger(length) && length > 0) {
    await assertRoom(length, name, deps.estimate ?? defaultEstimator());
  }
  // A Blob, not a stream: its size is known before the first part, and an uploaded File stays
  // where the browser keeps it rather than in the worker's memory.
  const file = await request.blob();
  await assertGguf(file);
  const path = `${FILES_PATH}${crypto.randomUUID()}/${encodeURIComponent(name)}`;
  const url = new URL(path, deps.appUrl).href;
  const cache = await deps.caches.open(MODEL_CACHES.gguf);
  try {
    await storeParts(cache, url, file, deps.partBytes ?? GGUF_PART_BYTES, request.signal);
  } catch (err) {
    if (!isQuotaError(err)) throw err;
    throw new OpenAIError(
      'storage_full',
      `The device's storage is full: ${name} could not be stored, and what was stored of it was removed.`,
    );
  }
  return jsonResponse({ object: 'hearth.file', path, url, bytes: file.size }, requestId, 201);
}

/** `DELETE /v1/hearth/files/<uuid>/<name>`: removes a stored file no model uses. */
export async function deleteFile(
  rest: string,
  deps: FileDeps,
  requestId: string,
): Promise<Response> {
  const path = `${FILES_PATH}${rest}`;
  const url = new URL(path, deps.appUrl).href;
  const model = await deps.catalog.modelUsing(url);
  if (model !== undefined) {
    throw new OpenAIError(
      'model_in_use',
      `The model '${model}' uses this file: DELETE /v1/hearth/models/${model} removes both.`,
      { param: 'model' },
    );
  }
  const cache = await deps.caches.open(MODEL_CACHES.gguf);
  if (!(await readGgufRecord(cache, url))) {
    throw new OpenAIError('unknown_url', `No file is stored at /${path}.`);
  }
  await removeGgufFile(cache, url);
  return jsonResponse({ object: 'hearth.file', path, deleted: true }, requestId);
}
