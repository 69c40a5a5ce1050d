/**
 * @module
 * Indexing, one file at a time in the background: its text by its structure (a PDF's pages read
 * by pdf.js in the engine worker; Markdown, HTML and text here), its chunks, their embeddings by
 * the store's model, kept with the chunks. A file that is no document fails alone, with
 * `last_error`; the others go on. Files left `in_progress` by a worker that stopped are taken
 * up again when the indexer first runs (`resume`).
 */
import { OpenAIError } from '../../protocol/errors';
import { chunkSections } from '../../documents/chunk';
import { DocumentError } from '../../documents/errors';
import { isPdf, textSections } from '../../documents/sections';
import type {
  Chunk,
  ChunkingStrategy,
  FileError,
  Section,
  VectorStoreFileObject,
} from '../../documents/types';
import { resolveModel } from '../../models/models';
import { embedTexts } from '../embeddings';
import type { ChatDeps } from '../chat-deps';
import type { DocumentStore } from '../../documents/store';

/** What the vector stores need beyond chat's. */
export interface DocumentDeps extends ChatDeps {
  documents: DocumentStore;
  /** The embedding model the owner chose in Settings, if any. */
  embeddingModel?: (() => Promise<string | undefined>) | undefined;
}

/** Chunks embedded at once: small enough that a file's progress moves, large enough to batch. */
const EMBED_BATCH = 16;

interface Job {
  storeId: string;
  fileId: string;
  abort: AbortController;
}

const key = (storeId: string, fileId: string) => `${storeId}/${fileId}`;

/** The share of an embedding model's context a chunk may fill: tokens are estimated, not counted. */
const CONTEXT_SHARE = 0.7;

/**
 * The strategy cut to what the embedding model can embed at once: a chunk of the strategy's size
 * would fail a whole file with a model of a short context (bge-small's 512 tokens is below
 * OpenAI's 800 of `auto`). The file still reports the strategy it was given.
 */
export function fitted(strategy: ChunkingStrategy, contextWindow: number): ChunkingStrategy {
  const room = Math.floor(contextWindow * CONTEXT_SHARE);
  const { max_chunk_size_tokens: max, chunk_overlap_tokens: overlap } = strategy.static;
  if (contextWindow <= 0 || max <= room) return strategy;
  return {
    type: 'static',
    static: {
      max_chunk_size_tokens: room,
      chunk_overlap_tokens: Math.min(overlap, Math.floor(room / 2)),
    },
  };
}

/** Why a file failed, as OpenAI's `last_error`. */
function lastError(err: unknown): FileError {
  if (err instanceof DocumentError) return { code: err.code, message: err.message };
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'server_error', message };
}

/** The indexer of one API: a queue of files, and what changed for the search's caches. */
export class Indexer {
  readonly #deps: DocumentDeps;
  readonly #queue: Job[] = [];
  /** Resolves when the queue is empty: what keeps the service worker alive meanwhile. */
  #drained: { promise: Promise<void>; resolve: () => void } | undefined;
  #running: Job | undefined;
  #resumed = false;
  /** Each store's generation: it grows whenever its chunks or files' attributes change. */
  readonly #generations = new Map<string, number>();

  constructor(deps: DocumentDeps) {
    this.#deps = deps;
  }

  /** The store's generation, for a cache of its index to know it is stale. */
  generation(storeId: string): number {
    return this.#generations.get(storeId) ?? 0;
  }

  /** Marks the store changed (its search index must be built again). */
  changed(storeId: string): void {
    this.#generations.set(storeId, this.generation(storeId) + 1);
  }

  /**
   * Queues the file for indexing. `keepAlive` (the service worker's `FetchEvent.waitUntil` of
   * the request that queued it) is handed the promise of the queue running dry, so that the
   * worker is not stopped mid-file; a worker stopped anyway leaves the file `in_progress`, and
   * `resume` takes it up again.
   */
  enqueue(storeId: string, fileId: string, keepAlive?: (work: Promise<unknown>) => void): void {
    this.cancel(storeId, fileId);
    this.#queue.push({ storeId, fileId, abort: new AbortController() });
    if (!this.#drained) {
      let resolve = () => {};
      const promise = new Promise<void>((r) => (resolve = r));
      this.#drained = { promise, resolve };
    }
    keepAlive?.(this.#drained.promise);
    this.#pump();
  }

  /** Stops indexing the file (or every file of the store), queued or running. */
  cancel(storeId: string, fileId?: string): void {
    const matches = (job: Job) =>
      job.storeId === storeId && (fileId === undefined || job.fileId === fileId);
    for (let i = this.#queue.length - 1; i >= 0; i -= 1) {
      const job = this.#queue[i] as Job;
      if (matches(job)) this.#queue.splice(i, 1);
    }
    if (this.#running && matches(this.#running)) this.#running.abort.abort();
  }

  /** Takes up the files a stopped worker left `in_progress`, once. */
  async resume(keepAlive?: (work: Promise<unknown>) => void): Promise<void> {
    if (this.#resumed) return;
    this.#resumed = true;
    const { documents } = this.#deps;
    for (const store of await documents.listStores()) {
      for (const file of await documents.listStoreFiles(store.id)) {
        const queued = this.#queue.some((j) => key(j.storeId, j.fileId) === key(store.id, file.id));
        if (file.status === 'in_progress' && !queued && this.#running?.fileId !== file.id) {
          this.enqueue(store.id, file.id, keepAlive);
        }
      }
    }
  }

  /** Resolves when every queued file is indexed (tests; a worker waiting before it stops). */
  async idle(): Promise<void> {
    await this.#drained?.promise;
  }

  #pump(): void {
    if (this.#running) return;
    const job = this.#queue.shift();
    if (!job) {
      this.#drained?.resolve();
      this.#drained = undefined;
      return;
    }
    this.#running = job;
    void this.#index(job)
      .catch((err: unknown) => console.warn(`Hearth could not index ${job.fileId}:`, err))
      .finally(() => {
        this.#running = undefined;
        this.#pump();
      });
  }

  async #index(job: Job): Promise<void> {
    const { documents } = this.#deps;
    const { storeId, fileId, abort } = job;
    let result: Partial<VectorStoreFileObject>;
    try {
      const [store, file, record, bytes] = await Promise.all([
        documents.getStore(storeId),
        documents.getFile(fileId),
        documents.getStoreFile(storeId, fileId),
        documents.fileBytes(fileId),
      ]);
      if (!store || !record) return; // removed meanwhile
      if (!file || !bytes) throw new DocumentError('invalid_file', `The file ${fileId} is gone.`);
      const data = new Uint8Array(await bytes.arrayBuffer());
      const sections = await this.#sections(data, file.content_type, file.filename, abort.signal);
      const context = (await resolveModel(this.#deps.models, store.embedding_model)).model
        .context_window;
      const pieces = chunkSections(sections, fitted(record.chunking_strategy, context));
      if (pieces.length === 0) {
        throw new DocumentError('invalid_file', `${file.filename} has no text to index.`);
      }
      const vectors = await this.#embed(store.embedding_model, pieces, job);
      const chunks: Chunk[] = pieces.map((piece, index) => ({
        ...piece,
        id: `${storeId}/${fileId}/${index}`,
        vector_store_id: storeId,
        file_id: fileId,
        index,
        vector: vectors[index] as Float32Array,
      }));
      // A file taken out of the store (or deleted) meanwhile keeps no chunks.
      const still = await documents.getStoreFile(storeId, fileId);
      if (abort.signal.aborted || still?.status !== 'in_progress') return;
      if (!(await documents.getFile(fileId))) return;
      await documents.putChunks(storeId, fileId, chunks);
      const usage = chunks.reduce((n, c) => n + c.text.length * 2 + c.vector.byteLength, 0);
      result = { status: 'completed', last_error: null, usage_bytes: usage, progress: null };
    } catch (err) {
      if (abort.signal.aborted) return;
      result = { status: 'failed', last_error: lastError(err), usage_bytes: 0, progress: null };
    }
    // The record as it is now (its attributes may have changed meanwhile), with the outcome.
    const now = await documents.getStoreFile(storeId, fileId);
    if (!now || now.status !== 'in_progress') return;
    await documents.putStoreFile({ ...now, ...result });
    this.changed(storeId);
  }

  /**
   * The chunks' embeddings, `EMBED_BATCH` at a time, the file's `progress` written after each
   * (as a download's is), so that a client can show how far it is.
   */
  async #embed(model: string, pieces: readonly Section[], job: Job): Promise<Float32Array[]> {
    const { documents } = this.#deps;
    const vectors: Float32Array[] = [];
    const total = pieces.length;
    for (let at = 0; at < total; at += EMBED_BATCH) {
      const texts = pieces.slice(at, at + EMBED_BATCH).map((p) => p.text);
      const context = { requestId: `index_${job.fileId}`, signal: job.abort.signal };
      vectors.push(...(await embedTexts(this.#deps, model, texts, context)));
      const now = await documents.getStoreFile(job.storeId, job.fileId);
      if (!now || now.status !== 'in_progress' || job.abort.signal.aborted) break;
      await documents.putStoreFile({
        ...now,
        progress: { chunks_done: vectors.length, chunks_total: total },
      });
    }
    return vectors;
  }

  /** The file's sections: a PDF's pages from the engine worker, any other from its text here. */
  async #sections(
    bytes: Uint8Array,
    contentType: string,
    filename: string,
    signal: AbortSignal,
  ): Promise<Section[]> {
    if (!isPdf(bytes, contentType, filename)) return textSections(bytes, contentType, filename);
    const extract = this.#deps.backend.extractPdf?.bind(this.#deps.backend);
    if (!extract) throw new OpenAIError('engine_error', 'Nothing here reads PDFs.');
    return extract(bytes, { signal, requestId: `pdf_${filename}` }, filename);
  }
}
