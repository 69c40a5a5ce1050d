/**
 * @module
 * The API's Files and Vector Stores as the app uses them (docs/api.md, Files and Vector stores):
 * over HTTP with the app's key, as any client, errors as `ApiError`.
 */
import type { FileObject, VectorStoreFileObject, VectorStoreObject } from '../../documents/types';
import { ApiError, call, callJson } from '../shared/api-client';

export type { FileObject, VectorStoreFileObject, VectorStoreObject };

/** The types and extensions of the documents a conversation takes: PDF, Markdown, text, HTML. */
export const DOCUMENT_TYPES = [
  'application/pdf',
  'text/markdown',
  'text/x-markdown',
  'text/plain',
  'text/html',
];
export const DOCUMENT_EXTENSIONS = ['.pdf', '.md', '.markdown', '.txt', '.text', '.html', '.htm'];

/** Whether `file` is a document the vector stores read, by its type or else its extension. */
export function isDocument(file: File): boolean {
  if (DOCUMENT_TYPES.includes(file.type)) return true;
  const name = file.name.toLowerCase();
  return DOCUMENT_EXTENSIONS.some((ext) => name.endsWith(ext));
}

interface List<T> {
  data: T[];
}

const store = (id: string) => `openai/vector_stores/${encodeURIComponent(id)}`;

/** `POST /files`, as the SDK sends it: a form with the file and `purpose: assistants`. */
export function uploadFile(file: File): Promise<FileObject> {
  const form = new FormData();
  form.append('purpose', 'assistants');
  form.append('file', file, file.name);
  return callJson<FileObject>('openai/files', { method: 'POST', form });
}

export async function listFiles(): Promise<FileObject[]> {
  return (await callJson<List<FileObject>>('openai/files')).data;
}

export async function deleteFile(id: string): Promise<void> {
  await call(`openai/files/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** `POST /vector_stores` with its first files; `embedding_model` names the model to index with. */
export function createStore(body: {
  name: string;
  file_ids: string[];
  metadata?: Record<string, string>;
  embedding_model?: string;
}): Promise<VectorStoreObject> {
  return callJson<VectorStoreObject>('openai/vector_stores', { method: 'POST', body });
}

export async function listStores(): Promise<VectorStoreObject[]> {
  return (await callJson<List<VectorStoreObject>>('openai/vector_stores?limit=100')).data;
}

export async function deleteStore(id: string): Promise<void> {
  await call(store(id), { method: 'DELETE' });
}

export async function listStoreFiles(id: string): Promise<VectorStoreFileObject[]> {
  return (await callJson<List<VectorStoreFileObject>>(`${store(id)}/files?limit=100`)).data;
}

export function addToStore(id: string, fileId: string): Promise<VectorStoreFileObject> {
  return callJson<VectorStoreFileObject>(`${store(id)}/files`, {
    method: 'POST',
    body: { file_id: fileId },
  });
}

export function storeFile(id: string, fileId: string): Promise<VectorStoreFileObject> {
  return callJson<VectorStoreFileObject>(`${store(id)}/files/${encodeURIComponent(fileId)}`);
}

/** Takes a file out of a store (its chunks go; the file stays in Files). Gone already: done. */
export async function removeFromStore(id: string, fileId: string): Promise<void> {
  try {
    await call(`${store(id)}/files/${encodeURIComponent(fileId)}`, { method: 'DELETE' });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
}

/** Re-indexes a file of a store: out of it, then in again (`in_progress` until it is done). */
export async function reindex(id: string, fileId: string): Promise<VectorStoreFileObject> {
  await removeFromStore(id, fileId);
  return addToStore(id, fileId);
}

/** The error the API gives where no embedding model is on the device to index with. */
export const needsEmbeddingModel = (err: unknown): boolean =>
  err instanceof ApiError && err.code === 'embedding_model_required';
