/**
 * @module
 * What the service worker keeps in IndexedDB, which nothing else opens: what the owner set up —
 * the servers they added (their keys stay here, never returned by the API — a hint only — and
 * never seen by the engine worker) and their settings (auth mode, issued keys, prices) — and the
 * Responses API's kept responses (docs/api.md, Responses: kept on the device).
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { SettingsData, SettingsStore } from '../../src/api/settings';
import { installName } from '../../src/protocol/install';
import type { ServerRecord, ServerStore } from '../../src/servers/servers';
import { itemsOf, type ResponseStore, type StoredSummary } from '../../src/api/responses/store';
import type { StoredResponse } from '../../src/api/responses/types';

interface ServersSchema extends DBSchema {
  servers: { key: string; value: ServerRecord };
}

let servers: Promise<IDBPDatabase<ServersSchema>> | undefined;

function serversDb(): Promise<IDBPDatabase<ServersSchema>> {
  servers ??= openDB<ServersSchema>(installName('hearth-servers'), 1, {
    upgrade: (d) => void d.createObjectStore('servers', { keyPath: 'name' }),
  });
  return servers;
}

/** One record a server, by name. */
export const idbServerStore: ServerStore = {
  list: async () => (await serversDb()).getAll('servers'),
  put: async (record) => void (await (await serversDb()).put('servers', record)),
  delete: (name) => serversDb().then((d) => d.delete('servers', name)),
};

const settingsDb = () =>
  openDB(installName('hearth-settings'), 1, {
    upgrade: (database) => void database.createObjectStore('settings'),
  });

/** The settings, as one record. */
export const idbSettingsStore: SettingsStore = {
  read: async () =>
    (await (await settingsDb()).get('settings', 'current')) as SettingsData | undefined,
  write: async (data) => void (await (await settingsDb()).put('settings', data, 'current')),
};

/** A record as kept: the response, and its items' ids for the index. */
type Kept = StoredResponse & { item_ids: string[] };

interface ResponsesSchema extends DBSchema {
  responses: { key: string; value: Kept; indexes: { item_ids: string } };
  /** Each record's summary, apart: the bounds read them all without the conversations. */
  summaries: { key: string; value: StoredSummary; indexes: { created_at: number } };
}

/**
 * The Responses API's kept responses: the records by id, with an index of their items' ids for
 * `item_reference`, and their summaries apart, by age, for the bounds. The database opens at the first use (a worker that never keeps one opens none). */
export function idbResponseStore(): ResponseStore {
  let db: Promise<IDBPDatabase<ResponsesSchema>> | undefined;
  const open = () => {
    db ??= openDB<ResponsesSchema>(installName('hearth-responses'), 1, {
      upgrade(database) {
        const records = database.createObjectStore('responses', { keyPath: 'id' });
        records.createIndex('item_ids', 'item_ids', { multiEntry: true });
        const summaries = database.createObjectStore('summaries', { keyPath: 'id' });
        summaries.createIndex('created_at', 'created_at');
      },
    });
    // A failed open is tried again at the next use, not remembered.
    db.catch(() => (db = undefined));
    return db;
  };
  return {
    async get(id) {
      const kept = await (await open()).get('responses', id);
      if (!kept) return undefined;
      const { item_ids: _, ...record } = kept;
      return record;
    },
    async put(record) {
      const item_ids = itemsOf(record).map((item) => item.id);
      const tx = (await open()).transaction(['responses', 'summaries'], 'readwrite');
      const { id, created_at, bytes } = record;
      await Promise.all([
        tx.objectStore('responses').put({ ...record, item_ids }),
        tx.objectStore('summaries').put({ id, created_at, bytes }),
        tx.done,
      ]);
    },
    async delete(id) {
      const tx = (await open()).transaction(['responses', 'summaries'], 'readwrite');
      const found = (await tx.objectStore('summaries').getKey(id)) !== undefined;
      await Promise.all([
        tx.objectStore('responses').delete(id),
        tx.objectStore('summaries').delete(id),
        tx.done,
      ]);
      return found;
    },
    async list() {
      // Oldest first.
      return (await open()).getAllFromIndex('summaries', 'created_at');
    },
    async findItem(id) {
      const kept = await (await open()).getFromIndex('responses', 'item_ids', id);
      return kept && itemsOf(kept).find((item) => item.id === id);
    },
    async clear() {
      const tx = (await open()).transaction(['responses', 'summaries'], 'readwrite');
      const count = await tx.objectStore('summaries').count();
      await Promise.all([
        tx.objectStore('responses').clear(),
        tx.objectStore('summaries').clear(),
        tx.done,
      ]);
      return count;
    },
  };
}
