/**
 * @module
 * The responses kept on the device (`store: true`): the interface the API asks for, a store in
 * memory (the tests', and a stand-in where IndexedDB cannot open), and the bounds every store
 * keeps (docs/api.md, Responses: state). They are conversations: kept per install, bounded in
 * number, age and size, listed and cleared with Hearth's other data.
 */
import type { InputItem, StoredResponse } from './types';

/** What a listing tells of one kept response, without its conversation. */
export interface StoredSummary {
  id: string;
  created_at: number;
  bytes: number;
}

/** Responses by id: IndexedDB in the service worker, memory in tests. */
export interface ResponseStore {
  get(id: string): Promise<StoredResponse | undefined>;
  put(record: StoredResponse): Promise<void>;
  delete(id: string): Promise<boolean>;
  /** Every kept response, oldest first. */
  list(): Promise<StoredSummary[]>;
  /** The item `id` of any kept response's input or output (`item_reference`). */
  findItem(id: string): Promise<InputItem | undefined>;
  clear(): Promise<number>;
}

/** How many responses are kept, for how long, in how many bytes (docs/api.md). */
export const RESPONSE_LIMITS = {
  count: 1000,
  ageSeconds: 30 * 24 * 60 * 60,
  bytes: 256 * 1024 * 1024,
};

/** The ids to drop so that `list` (oldest first) keeps within `limits` at `now` (seconds). */
export function overLimits(
  list: readonly StoredSummary[],
  now: number,
  limits = RESPONSE_LIMITS,
): string[] {
  const drop: string[] = [];
  let count = list.length;
  let bytes = list.reduce((sum, r) => sum + r.bytes, 0);
  for (const record of list) {
    const old = now - record.created_at > limits.ageSeconds;
    if (!old && count <= limits.count && bytes <= limits.bytes) break;
    drop.push(record.id);
    count -= 1;
    bytes -= record.bytes;
  }
  return drop;
}

/** Every item of a record, its input and its output, for `item_reference`. */
export function itemsOf(record: StoredResponse): InputItem[] {
  return [...record.input, ...(record.response.output as unknown as InputItem[])];
}

/** A store in memory; what goes in or out is a copy. */
export function memoryResponseStore(): ResponseStore {
  const records = new Map<string, StoredResponse>();
  return {
    get: async (id) => {
      const record = records.get(id);
      return record && structuredClone(record);
    },
    put: async (record) => void records.set(record.id, structuredClone(record)),
    delete: async (id) => records.delete(id),
    list: async () =>
      [...records.values()]
        .map(({ id, created_at, bytes }) => ({ id, created_at, bytes }))
        .sort((a, b) => a.created_at - b.created_at),
    findItem: async (id) => {
      for (const record of records.values()) {
        const item = itemsOf(record).find((i) => i.id === id);
        if (item) return structuredClone(item);
      }
      return undefined;
    },
    clear: async () => {
      const n = records.size;
      records.clear();
      return n;
    },
  };
}
