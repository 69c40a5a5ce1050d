/**
 * @module
 * Where the service worker keeps records by a key of theirs (the servers the user added, the
 * models they added): the interface the API's code asks for, and a store in memory that copies
 * each record in and out, as IndexedDB does (the tests' store, and a stand-in for none).
 */

/** Records by key: IndexedDB in the service worker, memory in tests. */
export interface RecordStore<T> {
  list(): Promise<T[]>;
  put(record: T): Promise<void>;
  delete(key: string): Promise<void>;
}

/** A store in memory, keyed by `keyOf`; what goes in or out is a copy, never a shared object. */
export function memoryStore<T>(keyOf: (record: T) => string, initial: readonly T[] = []) {
  const records = new Map(initial.map((r) => [keyOf(r), structuredClone(r)]));
  const store: RecordStore<T> = {
    list: async () => [...records.values()].map((r) => structuredClone(r)),
    put: async (record) => void records.set(keyOf(record), structuredClone(record)),
    delete: async (key) => void records.delete(key),
  };
  return store;
}
