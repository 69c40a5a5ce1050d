/**
 * @module
 * The owner's settings (auth mode, issued keys, prices) in the service worker's IndexedDB.
 */
import { openDB } from 'idb';
import { installName } from '../src/protocol/install';
import type { SettingsData, SettingsStore } from '../src/api/settings';

const db = () =>
  openDB(installName('hearth-settings'), 1, {
    upgrade: (database) => void database.createObjectStore('settings'),
  });

/** The settings, as one record. */
export const idbSettingsStore: SettingsStore = {
  read: async () => (await (await db()).get('settings', 'current')) as SettingsData | undefined,
  write: async (data) => void (await (await db()).put('settings', data, 'current')),
};
