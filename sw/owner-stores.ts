/**
 * @module
 * What the owner set up, in the service worker's IndexedDB, which nothing else opens: the servers
 * they added (their keys stay here, never returned by the API — a hint only — and never seen by
 * the engine worker) and their settings (auth mode, issued keys, prices).
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { SettingsData, SettingsStore } from '../src/api/settings';
import { installName } from '../src/protocol/install';
import type { ServerRecord, ServerStore } from '../src/servers/servers';

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
