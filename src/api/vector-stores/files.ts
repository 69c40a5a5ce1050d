/**
 * @module
 * OpenAI's Files, kept on the device: `POST /files` (a multipart form, as the SDK sends it:
 * `file` and `purpose`), `GET /files`, `GET /files/{id}`, `GET /files/{id}/content` and
 * `DELETE /files/{id}`, over the `DocumentStore` the service worker gives (IndexedDB, per
 * install). Bounded by the storage quota (507 `storage_full`, before anything is stored) and by
 * `MAX_FILE_BYTES` a file. Deleting a file takes it out of every vector store that holds it,
 * its chunks with it (docs/api.md, Files).
 */
import type { DocumentStore } from '../../documents/store';
import type { FileObject, FileRecord } from '../../documents/types';
import { OpenAIError } from '../../protocol/errors';
import { jsonHeaders, jsonResponse } from '../../protocol/respond';
import { cursorPage, cursorQuery, idAndTail } from '../resources';
import { assertRoom, defaultEstimator, type StorageEstimator } from '../../models/storage-room';

/** The largest file kept: OpenAI's limit, 512 MB (as MiB). */
export const MAX_FILE_BYTES = 512 * 1024 * 1024;

/**
 * OpenAI's purposes, all accepted. `batch` and `fine-tune` files are kept like any other:
 * nothing on the device runs a batch or a fine-tune, but a client that uploads one is answered.
 */
export const FILE_PURPOSES = ['assistants', 'user_data', 'batch', 'fine-tune', 'vision', 'evals'];

/** What the file endpoints need. */
export interface FilesDeps {
  store: DocumentStore;
  /** The storage's quota and usage (`navigator.storage.estimate` by default). */
  estimate?: StorageEstimator;
  /** The largest file kept (default `MAX_FILE_BYTES`). */
  maxFileBytes?: number;
}

const ID_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `file-` and 24 random letters and digits, each equally likely. */
export function newFileId(): string {
  let id = '';
  while (id.length < 24) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      // 248 = 4 × 62: bytes above it would favour the first characters.
      if (byte < 248 && id.length < 24) id += ID_CHARS[byte % 62];
    }
  }
  return `file-${id}`;
}

/** The file as OpenAI answers it, without what only Hearth keeps. */
function fileObject(record: FileRecord): FileObject {
  const { content_type: _, ...file } = record;
  return file;
}

/** OpenAI's 404 for a file that is not kept (its type `invalid_request_error`). */
export function fileNotFound(id: string): OpenAIError {
  return new OpenAIError('file_not_found', `No such File object: ${id}`, { param: 'id' });
}

const isQuotaError = (err: unknown): boolean =>
  err instanceof Error &&
  (err.name === 'QuotaExceededError' ||
    (err.cause instanceof Error && err.cause.name === 'QuotaExceededError'));

/** Some room for the form around the file: its boundaries and the `purpose` field. */
const FORM_SLACK = 64 * 1024;

/** The upload's parts, read from a multipart body: 415 for another body, 400 for a bad form. */
async function readForm(request: Request, maxFileBytes: number): Promise<FormData> {
  const type = request.headers.get('content-type') ?? '';
  if (type.split(';', 1)[0]?.trim().toLowerCase() !== 'multipart/form-data') {
    const got = type === '' ? 'no content type' : `'${type.slice(0, 100)}'`;
    throw new OpenAIError(
      'unsupported_media_type',
      `The request body must be sent as 'multipart/form-data', with the fields 'file' and 'purpose' (got ${got}).`,
    );
  }
  const length = Number(request.headers.get('content-length'));
  if (Number.isSafeInteger(length) && length > maxFileBytes + FORM_SLACK)
    throw tooLarge(maxFileBytes);
  try {
    return await request.formData();
  } catch {
    throw new OpenAIError(
      'invalid_value',
      "The body could not be read as 'multipart/form-data': send the fields 'file' and 'purpose' as a form.",
    );
  }
}

function tooLarge(maxFileBytes: number): OpenAIError {
  return new OpenAIError(
    'request_too_large',
    `The file is larger than the limit of ${maxFileBytes} bytes a file.`,
    { param: 'file' },
  );
}

/** The form's `file` and `purpose`, checked in that order (400 naming the field). */
function fieldsOf(form: FormData): { file: File; purpose: string } {
  const file = form.get('file');
  if (file === null) {
    throw new OpenAIError('missing_field', "Missing required parameter: 'file'.", {
      param: 'file',
    });
  }
  if (typeof file === 'string') {
    throw new OpenAIError(
      'invalid_type',
      "Invalid type for 'file': expected a file (a form part with a filename), but got a text field.",
      { param: 'file' },
    );
  }
  const purpose = form.get('purpose');
  if (purpose === null) {
    throw new OpenAIError('missing_field', "Missing required parameter: 'purpose'.", {
      param: 'purpose',
    });
  }
  if (typeof purpose !== 'string' || !FILE_PURPOSES.includes(purpose)) {
    const got = typeof purpose === 'string' ? `'${purpose.slice(0, 100)}'` : 'a file';
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'purpose': ${got}. Supported values are: ${FILE_PURPOSES.map((p) => `'${p}'`).join(', ')}.`,
      { param: 'purpose' },
    );
  }
  return { file, purpose };
}

/** `POST /files`: 200 with the file object. */
export async function createFile(
  request: Request,
  deps: FilesDeps,
  requestId: string,
): Promise<Response> {
  const max = deps.maxFileBytes ?? MAX_FILE_BYTES;
  const estimate = deps.estimate ?? defaultEstimator();
  // Before the body is read: a body the storage cannot hold is not taken in at all.
  const length = Number(request.headers.get('content-length'));
  const form = await readForm(request, max);
  const { file, purpose } = fieldsOf(form);
  if (file.size > max) throw tooLarge(max);
  const filename = file.name.split(/[/\\]/).pop() || 'file';
  await assertRoom(
    Number.isSafeInteger(length) && length > file.size ? length : file.size,
    filename,
    estimate,
  );
  const record: FileRecord = {
    id: newFileId(),
    object: 'file',
    bytes: file.size,
    created_at: Math.floor(Date.now() / 1000),
    filename,
    purpose,
    status: 'processed',
    expires_at: null,
    content_type: file.type || 'application/octet-stream',
  };
  try {
    await deps.store.putFile(record, file);
  } catch (err) {
    // Nothing half-stored: whatever of it was kept goes.
    await deps.store.deleteFile(record.id).catch(() => false);
    if (!isQuotaError(err)) throw err;
    throw new OpenAIError(
      'storage_full',
      `The device's storage is full: ${filename} could not be stored, and nothing of it was kept.`,
    );
  }
  return jsonResponse(fileObject(record), requestId);
}

/** `GET /files`: OpenAI's list, newest first unless `order=asc`. */
export async function listFiles(
  request: Request,
  deps: FilesDeps,
  requestId: string,
): Promise<Response> {
  const purpose = new URL(request.url).searchParams.get('purpose');
  // OpenAI's files list takes up to 10,000 at once, and all of them by default.
  const query = cursorQuery(request.url, 10_000, 10_000);
  const files = (await deps.store.listFiles()).filter(
    (f) => purpose === null || f.purpose === purpose,
  );
  const page = cursorPage(files, query);
  return jsonResponse({ ...page, data: page.data.map(fileObject) }, requestId);
}

/** `filename` as a `content-disposition` header: ASCII, and the name itself in UTF-8. */
function disposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** `GET /files/{id}` and `GET /files/{id}/content`. */
export async function readFile(rest: string, deps: FilesDeps, requestId: string) {
  const { id, tail } = idAndTail(rest);
  if (tail !== '' && tail !== 'content') {
    throw new OpenAIError('unknown_url', `Unknown request URL: GET /v1/files/${rest}.`);
  }
  const record = await deps.store.getFile(id);
  if (!record) throw fileNotFound(id);
  if (tail === '') return jsonResponse(fileObject(record), requestId);
  const bytes = await deps.store.fileBytes(id);
  if (!bytes) throw fileNotFound(id);
  const headers = jsonHeaders(requestId, {
    'content-type': record.content_type,
    'content-length': String(bytes.size),
    'content-disposition': disposition(record.filename),
  });
  return new Response(bytes, { headers });
}

/** `DELETE /files/{id}`: the file, and its entry and chunks in every vector store. */
export async function deleteFile(rest: string, deps: FilesDeps, requestId: string) {
  const { id, tail } = idAndTail(rest);
  if (tail !== '') {
    throw new OpenAIError('unknown_url', `Unknown request URL: DELETE /v1/files/${rest}.`);
  }
  const { store } = deps;
  if (!(await store.getFile(id))) throw fileNotFound(id);
  for (const vectorStore of await store.listStores()) {
    if (await store.getStoreFile(vectorStore.id, id)) {
      await store.deleteStoreFile(vectorStore.id, id);
    }
  }
  await store.deleteFile(id);
  return jsonResponse({ id, object: 'file', deleted: true }, requestId);
}
