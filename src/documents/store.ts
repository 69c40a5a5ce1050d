/**
 * @module
 * Where documents are kept: files with their bytes, vector stores, their files and chunks. The
 * interface the API asks for, and a store in memory that copies what goes in and out, as
 * IndexedDB does (the tests' store). The service worker's is IndexedDB, per install
 * (sw/stores/documents-store.ts).
 */
import type { Chunk, FileRecord, VectorStoreFileObject, VectorStoreObject } from './types';

/** Documents by id: IndexedDB in the service worker, memory in tests. */
export interface DocumentStore {
  /** Keeps a file and its bytes; a full disk throws (the caller answers 507 `storage_full`). */
  putFile(record: FileRecord, bytes: Blob): Promise<void>;
  getFile(id: string): Promise<FileRecord | undefined>;
  fileBytes(id: string): Promise<Blob | undefined>;
  /** Every file, oldest first. */
  listFiles(): Promise<FileRecord[]>;
  /** Forgets the file and its bytes; false when there was none. */
  deleteFile(id: string): Promise<boolean>;

  putStore(record: VectorStoreObject): Promise<void>;
  getStore(id: string): Promise<VectorStoreObject | undefined>;
  /** Every vector store, oldest first. */
  listStores(): Promise<VectorStoreObject[]>;
  /** Forgets the store, its files' entries and its chunks (never the files themselves). */
  deleteStore(id: string): Promise<boolean>;

  putStoreFile(record: VectorStoreFileObject): Promise<void>;
  getStoreFile(storeId: string, fileId: string): Promise<VectorStoreFileObject | undefined>;
  /** The store's files, oldest first. */
  listStoreFiles(storeId: string): Promise<VectorStoreFileObject[]>;
  /** Forgets the file's entry in the store and its chunks. */
  deleteStoreFile(storeId: string, fileId: string): Promise<boolean>;

  /** Keeps chunks (a file's, all at once, replacing any it had in that store). */
  putChunks(storeId: string, fileId: string, chunks: Chunk[]): Promise<void>;
  /** Every chunk of a store. */
  chunksOf(storeId: string): Promise<Chunk[]>;
}

const storeFileKey = (storeId: string, fileId: string) => `${storeId}/${fileId}`;

/** A store in memory; what goes in or out is a copy. */
export function memoryDocumentStore(): DocumentStore {
  const files = new Map<string, { record: FileRecord; bytes: Blob }>();
  const stores = new Map<string, VectorStoreObject>();
  const storeFiles = new Map<string, VectorStoreFileObject>();
  const chunks = new Map<string, Chunk[]>();
  const copy = structuredClone;
  const dropChunks = (prefix: string) => {
    for (const key of [...chunks.keys()]) if (key.startsWith(prefix)) chunks.delete(key);
  };
  return {
    putFile: async (record, bytes) => void files.set(record.id, { record: copy(record), bytes }),
    getFile: async (id) => {
      const kept = files.get(id);
      return kept && copy(kept.record);
    },
    fileBytes: async (id) => files.get(id)?.bytes,
    listFiles: async () => [...files.values()].map((f) => copy(f.record)),
    deleteFile: async (id) => files.delete(id),

    putStore: async (record) => void stores.set(record.id, copy(record)),
    getStore: async (id) => {
      const record = stores.get(id);
      return record && copy(record);
    },
    listStores: async () => [...stores.values()].map((r) => copy(r)),
    deleteStore: async (id) => {
      for (const key of [...storeFiles.keys()]) {
        if (key.startsWith(`${id}/`)) storeFiles.delete(key);
      }
      dropChunks(`${id}/`);
      return stores.delete(id);
    },

    putStoreFile: async (record) =>
      void storeFiles.set(storeFileKey(record.vector_store_id, record.id), copy(record)),
    getStoreFile: async (storeId, fileId) => {
      const record = storeFiles.get(storeFileKey(storeId, fileId));
      return record && copy(record);
    },
    listStoreFiles: async (storeId) =>
      [...storeFiles.values()].filter((r) => r.vector_store_id === storeId).map((r) => copy(r)),
    deleteStoreFile: async (storeId, fileId) => {
      chunks.delete(storeFileKey(storeId, fileId));
      return storeFiles.delete(storeFileKey(storeId, fileId));
    },

    putChunks: async (storeId, fileId, list) =>
      void chunks.set(
        storeFileKey(storeId, fileId),
        list.map((c) => copy(c)),
      ),
    chunksOf: async (storeId) =>
      [...chunks.entries()]
        .filter(([key]) => key.startsWith(`${storeId}/`))
        .flatMap(([, list]) => list.map((c) => copy(c))),
  };
}
