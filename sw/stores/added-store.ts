/**
 * @module
 * The GGUF models the user added, in IndexedDB: the service worker writes them, and the engine
 * worker reads them too (it serves and downloads them), so this one module opens the database
 * for both.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { AddedModelStore, AddedRecord } from '../../src/models/added/added-models';
import { installName } from '../../src/protocol/install';

interface Schema extends DBSchema {
  added: { key: string; value: AddedRecord };
}

let db: Promise<IDBPDatabase<Schema>> | undefined;

function database(): Promise<IDBPDatabase<Schema>> {
  db ??= openDB<Schema>(installName('hearth-models'), 1, {
    upgrade: (d) => void d.createObjectStore('added', { keyPath: 'id' }),
  });
  return db;
}

/** The added models, one record each, by id. */
export const idbAddedStore: AddedModelStore = {
  async list() {
    const records = await (await database()).getAll('added');
    return records.sort((a, b) => a.added_at - b.added_at);
  },
  put: async (record) => void (await (await database()).put('added', record)),
  delete: (id) => database().then((d) => d.delete('added', id)),
};
