/**
 * @module
 * Documents on the device in IndexedDB (src/documents/store.ts `DocumentStore`), one database per
 * install: files' records and, apart, their bytes as Blobs (Chromium and Firefox both keep Blobs
 * in IndexedDB, on disk, so a listing never reads a file); vector stores; the files in each store;
 * and chunks, their vectors as `Float32Array`s (structured clone keeps them). Indexes answer a
 * store's files, a file's stores and a store's chunks without a scan. Each change is one
 * transaction: a write the quota refuses leaves nothing of it.
 */
import {
  openDB,
  type DBSchema,
  type IDBPDatabase,
  type IDBPObjectStore,
  type StoreNames,
} from 'idb';
import type { DocumentStore } from '../../src/documents/store';
import type {
  Chunk,
  FileRecord,
  VectorStoreFileObject,
  VectorStoreObject,
} from '../../src/documents/types';
import { installName } from '../../src/protocol/install';

/** A record as kept, with when it was added: listings go oldest first by it. */
interface Kept<T> {
  record: T;
  added: number;
}

interface Schema extends DBSchema {
  files: { key: string; value: Kept<FileRecord>; indexes: { added: number } };
  /** Each file's bytes by its id, apart from the records. */
  bytes: { key: string; value: Blob };
  stores: { key: string; value: Kept<VectorStoreObject>; indexes: { added: number } };
  /** By `[store id, file id]`. */
  storeFiles: {
    key: [string, string];
    value: Kept<VectorStoreFileObject>;
    indexes: { store: [string, number]; file: string };
  };
  chunks: {
    key: string;
    value: Chunk;
    indexes: { store: string; storeFile: [string, string] };
  };
}

type Db = IDBPDatabase<Schema>;

/** Every key of a store's entries in an index on `[store id, …]`. */
const within = (storeId: string) => IDBKeyRange.bound([storeId], [storeId, []]);

/**
 * The IndexedDB `DocumentStore` of this install (`hearth-documents`), opened at its first use (a
 * worker that never keeps a document opens none).
 */
export function idbDocumentStore(): DocumentStore {
  let db: Promise<Db> | undefined;
  const open = () => {
    db ??= openDB<Schema>(installName('hearth-documents'), 1, {
      upgrade(database) {
        database.createObjectStore('files', { keyPath: 'record.id' }).createIndex('added', 'added');
        database.createObjectStore('bytes');
        database
          .createObjectStore('stores', { keyPath: 'record.id' })
          .createIndex('added', 'added');
        const storeFiles = database.createObjectStore('storeFiles', {
          keyPath: ['record.vector_store_id', 'record.id'],
        });
        storeFiles.createIndex('store', ['record.vector_store_id', 'added']);
        storeFiles.createIndex('file', 'record.id');
        const chunks = database.createObjectStore('chunks', { keyPath: 'id' });
        chunks.createIndex('store', 'vector_store_id');
        chunks.createIndex('storeFile', ['vector_store_id', 'file_id']);
      },
    });
    // A failed open is tried again at the next use, not remembered.
    db.catch(() => (db = undefined));
    return db;
  };
  // Strictly rising within this worker, and past any earlier worker's (they used earlier times).
  let last = 0;
  const now = () => (last = Math.max(last + 1, Date.now() * 1000));

  /** Deletes every chunk `index` finds at `key`, within the transaction of `chunks`. */
  async function dropChunks<T extends ArrayLike<StoreNames<Schema>>>(
    chunks: IDBPObjectStore<Schema, T, 'chunks', 'readwrite'>,
    index: 'store' | 'storeFile',
    key: string | [string, string],
  ) {
    const keys = await chunks.index(index).getAllKeys(IDBKeyRange.only(key));
    await Promise.all(keys.map((k) => chunks.delete(k)));
  }

  return {
    async putFile(record, bytes) {
      const tx = (await open()).transaction(['files', 'bytes'], 'readwrite');
      const files = tx.objectStore('files');
      const added = (await files.get(record.id))?.added ?? now();
      await Promise.all([
        files.put({ record, added }),
        tx.objectStore('bytes').put(bytes, record.id),
        tx.done,
      ]);
    },
    getFile: async (id) => (await (await open()).get('files', id))?.record,
    fileBytes: async (id) => (await open()).get('bytes', id),
    listFiles: async () =>
      (await (await open()).getAllFromIndex('files', 'added')).map((k) => k.record),
    async deleteFile(id) {
      const tx = (await open()).transaction(['files', 'bytes'], 'readwrite');
      const found = (await tx.objectStore('files').getKey(id)) !== undefined;
      await Promise.all([
        tx.objectStore('files').delete(id),
        tx.objectStore('bytes').delete(id),
        tx.done,
      ]);
      return found;
    },

    async putStore(record) {
      const tx = (await open()).transaction('stores', 'readwrite');
      const added = (await tx.store.get(record.id))?.added ?? now();
      await Promise.all([tx.store.put({ record, added }), tx.done]);
    },
    getStore: async (id) => (await (await open()).get('stores', id))?.record,
    listStores: async () =>
      (await (await open()).getAllFromIndex('stores', 'added')).map((k) => k.record),
    async deleteStore(id) {
      const tx = (await open()).transaction(['stores', 'storeFiles', 'chunks'], 'readwrite');
      const found = (await tx.objectStore('stores').getKey(id)) !== undefined;
      const storeFiles = tx.objectStore('storeFiles');
      const keys = await storeFiles.index('store').getAllKeys(within(id));
      await Promise.all([
        tx.objectStore('stores').delete(id),
        ...keys.map((key) => storeFiles.delete(key)),
        dropChunks(tx.objectStore('chunks'), 'store', id),
        tx.done,
      ]);
      return found;
    },

    async putStoreFile(record) {
      const tx = (await open()).transaction('storeFiles', 'readwrite');
      const key: [string, string] = [record.vector_store_id, record.id];
      const added = (await tx.store.get(key))?.added ?? now();
      await Promise.all([tx.store.put({ record, added }), tx.done]);
    },
    getStoreFile: async (storeId, fileId) =>
      (await (await open()).get('storeFiles', [storeId, fileId]))?.record,
    listStoreFiles: async (storeId) =>
      (await (await open()).getAllFromIndex('storeFiles', 'store', within(storeId))).map(
        (k) => k.record,
      ),
    async deleteStoreFile(storeId, fileId) {
      const tx = (await open()).transaction(['storeFiles', 'chunks'], 'readwrite');
      const storeFiles = tx.objectStore('storeFiles');
      const found = (await storeFiles.getKey([storeId, fileId])) !== undefined;
      await Promise.all([
        storeFiles.delete([storeId, fileId]),
        dropChunks(tx.objectStore('chunks'), 'storeFile', [storeId, fileId]),
        tx.done,
      ]);
      return found;
    },

    async putChunks(storeId, fileId, list) {
      const tx = (await open()).transaction('chunks', 'readwrite');
      await dropChunks(tx.store, 'storeFile', [storeId, fileId]);
      await Promise.all([...list.map((chunk) => tx.store.put(chunk)), tx.done]);
    },
    async chunksOf(storeId) {
      const chunks = await (await open()).getAllFromIndex('chunks', 'store', storeId);
      // In the order of their files, and each file's in its order.
      return chunks.sort((a, b) =>
        a.file_id === b.file_id ? a.index - b.index : a.file_id < b.file_id ? -1 : 1,
      );
    },
  };
}
