/**
 * @module
 * src/documents/ is documents on the device: OpenAI's Files and Vector Stores as records, a
 * document's text by its structure (pages of a PDF, heading sections of Markdown and HTML), its
 * chunks, and hybrid search over them. Pure like src/models: it imports only itself,
 * src/protocol and the libraries made for the job (minisearch for the word index, htmlparser2
 * for HTML); what it needs of the browser (storage, the embedding model, PDF text) is passed in.
 * The API's endpoints (src/api/files.ts, src/api/vector-stores/) and the Responses API's
 * `file_search` use it. Types only.
 */

/** A file as `GET /v1/openai/files/{id}` answers it (OpenAI's `FileObject`). */
export interface FileObject {
  id: string;
  object: 'file';
  bytes: number;
  /** Unix seconds. */
  created_at: number;
  filename: string;
  purpose: string;
  /** OpenAI's deprecated status: always `processed` once stored. */
  status: 'processed';
  expires_at: number | null;
}

/** A file's record as kept: the object, and the type its upload said. */
export interface FileRecord extends FileObject {
  /** The `Content-Type` of the upload's part (`application/pdf`, `text/markdown`, …). */
  content_type: string;
}

/** `file_counts` of a vector store. */
export interface FileCounts {
  in_progress: number;
  completed: number;
  failed: number;
  cancelled: number;
  total: number;
}

/** How a store's files are cut into chunks (OpenAI's `auto` is 800 tokens, 400 overlap). */
export interface ChunkingStrategy {
  type: 'static';
  static: { max_chunk_size_tokens: number; chunk_overlap_tokens: number };
}

/** A vector store (OpenAI's `VectorStore`), with Hearth's `embedding_model`. */
export interface VectorStoreObject {
  id: string;
  object: 'vector_store';
  created_at: number;
  name: string;
  status: 'expired' | 'in_progress' | 'completed';
  file_counts: FileCounts;
  usage_bytes: number;
  last_active_at: number | null;
  metadata: Record<string, string>;
  expires_after: { anchor: 'last_active_at'; days: number } | null;
  expires_at: number | null;
  /** Hearth's: the embedding model on the device whose vectors the store holds. */
  embedding_model: string;
}

/** Why a file of a store failed (OpenAI's `last_error`). */
export interface FileError {
  code: 'server_error' | 'unsupported_file' | 'invalid_file';
  message: string;
}

/** A file in a vector store (OpenAI's `VectorStoreFile`). */
export interface VectorStoreFileObject {
  id: string;
  object: 'vector_store.file';
  created_at: number;
  vector_store_id: string;
  status: 'in_progress' | 'completed' | 'failed' | 'cancelled';
  last_error: FileError | null;
  usage_bytes: number;
  attributes: Record<string, string | number | boolean>;
  chunking_strategy: ChunkingStrategy;
  /**
   * Hearth's, as a download's: while the file is indexed, its chunks embedded so far and in all
   * (`chunks_total` null until the file is read and cut); null once it is done or failed.
   */
  progress?: { chunks_done: number; chunks_total: number | null } | null;
}

/**
 * A stretch of a document's text that belongs together (a PDF's page, a heading section): defined
 * in src/protocol/host, where the bridge that brings a PDF's pages from the engine worker sees it.
 */
export type { Section } from '../protocol/host/documents';

/** One chunk of a file in a store, as indexed and searched. */
export interface Chunk {
  /** `<vector store id>/<file id>/<index>`. */
  id: string;
  vector_store_id: string;
  file_id: string;
  /** Its place in the file, from 0. */
  index: number;
  text: string;
  page?: number;
  heading?: string;
  /** Its embedding, L2-normalised, as the store's embedding model gave it. */
  vector: Float32Array;
}

/** One search result (OpenAI's `VectorStoreSearchResponse`, with where it came from). */
export interface SearchResult {
  file_id: string;
  filename: string;
  score: number;
  attributes: Record<string, string | number | boolean>;
  content: { type: 'text'; text: string }[];
  /** Hearth's: the chunk, and the page or heading it came from. */
  chunk_id: string;
  page?: number;
  heading?: string;
}
