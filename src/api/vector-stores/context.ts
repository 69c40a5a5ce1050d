/**
 * @module
 * What every vector-store handler shares: what they need (`DocumentDeps`, `VectorStoreContext`),
 * which embedding model indexes a new store, and a store's object as OpenAI's (its counts and
 * status read from its files).
 */
import { OpenAIError } from '../../protocol/errors';
import type { DocumentStore } from '../../documents/store';
import type { FileCounts, VectorStoreFileObject, VectorStoreObject } from '../../documents/types';
import type { DocumentDeps, Indexer } from './indexing';

export type { DocumentDeps } from './indexing';

/** The deps and the indexer every handler of this folder gets. */
export interface VectorStoreContext {
  deps: DocumentDeps;
  indexer: Indexer;
  requestId: string;
  /** Extends the service worker's life while indexing runs (`FetchEvent.waitUntil`). */
  keepAlive?: ((work: Promise<unknown>) => void) | undefined;
}

/**
 * The embedding model that indexes a new store: the one asked for, else the owner's choice in
 * Settings, else the only one on the device; never one that must be fetched first (409 saying
 * how to get one).
 */
export async function chooseEmbeddingModel(
  deps: DocumentDeps,
  asked: string | undefined,
): Promise<string> {
  const ready = (await deps.models.list()).filter((m) => m.embedding && !m.remote);
  const ids = ready.map((m) => m.id);
  if (asked !== undefined) {
    if (ids.includes(asked)) return asked;
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'embedding_model': ${asked} is not an embedding model on this device${ids.length > 0 ? `; these are: ${ids.join(', ')}` : ''}.`,
      { param: 'embedding_model' },
    );
  }
  const chosen = await deps.embeddingModel?.();
  if (chosen !== undefined && ids.includes(chosen)) return chosen;
  if (ids.length === 1 && ids[0] !== undefined) return ids[0];
  throw new OpenAIError(
    'embedding_model_required',
    ids.length === 0
      ? 'No embedding model is on this device to index documents with: download one first (GET /v1/hearth/catalog lists them with "embedding"; POST /v1/hearth/models/{id}/download gets one, or Models in the app).'
      : `Several embedding models are on this device (${ids.join(', ')}): choose one in Settings, or name it as 'embedding_model'.`,
    { param: 'embedding_model' },
  );
}

/** A store's counts, status and size, from its files. */
export function withCounts(
  store: VectorStoreObject,
  files: readonly VectorStoreFileObject[],
): VectorStoreObject {
  const counts: FileCounts = { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 };
  let bytes = 0;
  for (const file of files) {
    counts[file.status] += 1;
    counts.total += 1;
    bytes += file.usage_bytes;
  }
  const expired = store.expires_at !== null && store.expires_at * 1000 < Date.now();
  // What rides along in the record (its file batches) is not part of the answer.
  const { hearth_batches: _, ...answer } = store as VectorStoreObject & {
    hearth_batches?: unknown;
  };
  return {
    ...answer,
    file_counts: counts,
    usage_bytes: bytes,
    status: expired ? 'expired' : counts.in_progress > 0 ? 'in_progress' : 'completed',
  };
}

/** The store `id` as OpenAI answers it, or 404. */
export async function storeObject(
  documents: DocumentStore,
  id: string,
): Promise<VectorStoreObject> {
  const store = await documents.getStore(id);
  if (!store) {
    throw new OpenAIError('vector_store_not_found', `No vector store with id '${id}'.`, {
      param: null,
    });
  }
  return withCounts(store, await documents.listStoreFiles(id));
}
