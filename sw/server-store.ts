/**
 * @module
 * The servers the user added, in the service worker's IndexedDB: their keys stay here, never
 * returned by the API (a hint only) and never seen by the engine worker.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { installName } from '../src/protocol/install';
import type { ServerRecord, ServerStore } from '../src/servers/servers';

interface Schema extends DBSchema {
  servers: { key: string; value: ServerRecord };
}

let db: Promise<IDBPDatabase<Schema>> | undefined;

function database(): Promise<IDBPDatabase<Schema>> {
  db ??= openDB<Schema>(installName('hearth-servers'), 1, {
    upgrade: (d) => void d.createObjectStore('servers', { keyPath: 'name' }),
  });
  return db;
}

/** One record a server, by name. */
export const idbServerStore: ServerStore = {
  list: async () => (await database()).getAll('servers'),
  put: async (record) => void (await (await database()).put('servers', record)),
  delete: (name) => database().then((d) => d.delete('servers', name)),
};
