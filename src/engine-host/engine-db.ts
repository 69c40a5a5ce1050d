/**
 * @module
 * The engine worker's own IndexedDB: what outlives a host tab. GPU device losses per model (two
 * mark it as failing), downloads under way (a new host resumes them), and the models that were
 * downloaded (so that one lost to eviction is noticed, not assumed). Beside it, a database of
 * what was measured of the device: the CPU probe (so that it runs once, not at every host start).
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import { installName } from '../protocol/install';
import type { ProbeStore, StoredProbe } from '../engines/llama/cpu-probe';

interface Schema extends DBSchema {
  'device-losses': {
    key: string;
    value: { model: string; losses: number; at: number; detail: string };
  };
  downloads: { key: string; value: { model: string; at: number } };
  downloaded: { key: string; value: { model: string; at: number } };
}

let db: Promise<IDBPDatabase<Schema>> | undefined;

/** The database, created on first use. */
export function engineDb(): Promise<IDBPDatabase<Schema>> {
  db ??= openDB<Schema>(installName('hearth-engine'), 2, {
    upgrade(database, oldVersion) {
      if (oldVersion < 1) database.createObjectStore('device-losses', { keyPath: 'model' });
      if (oldVersion < 2) {
        database.createObjectStore('downloads', { keyPath: 'model' });
        database.createObjectStore('downloaded', { keyPath: 'model' });
      }
    },
  });
  return db;
}

/** A set of model ids kept in one of the stores. */
export interface ModelSet {
  add(model: string): Promise<void>;
  delete(model: string): Promise<void>;
  list(): Promise<string[]>;
}

/** The models of the `downloads` or `downloaded` store. */
export function modelSet(store: 'downloads' | 'downloaded'): ModelSet {
  return {
    async add(model) {
      await (await engineDb()).put(store, { model, at: Date.now() });
    },
    async delete(model) {
      await (await engineDb()).delete(store, model);
    },
    async list() {
      return (await engineDb()).getAllKeys(store);
    },
  };
}

interface DeviceSchema extends DBSchema {
  /** The CPU probe of this device (src/engines/llama/cpu-probe.ts), under the key `cpu`. */
  probes: { key: string; value: StoredProbe };
}

let deviceDb: Promise<IDBPDatabase<DeviceSchema>> | undefined;

/**
 * The database of device measurements: its own, so that it never moves the engine database's
 * version — a new version waits for every connection of the old one to close, and the engine
 * worker of a page of the previous build, left open across a deploy, holds one.
 */
function openDeviceDb(): Promise<IDBPDatabase<DeviceSchema>> {
  deviceDb ??= openDB<DeviceSchema>(installName('hearth-device'), 1, {
    upgrade(database) {
      database.createObjectStore('probes');
    },
  });
  return deviceDb;
}

/** Where the CPU probe is kept: one record, `cpu`. */
export const probeStore: ProbeStore = {
  async get() {
    return (await openDeviceDb()).get('probes', 'cpu');
  },
  async put(probe) {
    await (await openDeviceDb()).put('probes', probe, 'cpu');
  },
};
