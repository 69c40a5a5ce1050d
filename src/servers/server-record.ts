/**
 * @module
 * A server as Hearth keeps it and shows it: the stored record, where records are kept, and the
 * view the API returns (never the key). Shared by the registry and the upstream client.
 */
import { memoryStore, type RecordStore } from '../protocol/record-store';

/** A server as it is kept (in the service worker's IndexedDB). */
export interface ServerRecord {
  /** A lower-case slug: the organisation part of its models' ids. */
  name: string;
  /** Where its OpenAI API lives, e.g. `http://gpu-box:8000/v1` (no trailing slash). */
  base_url: string;
  api_key?: string;
  /**
   * `session`: the key was given to be kept in the service worker's memory only, never in the
   * store (IndexedDB, which every script of the origin can read); it is gone when the worker stops.
   */
  key_kept?: 'session';
  /** The upstream ids its `/models` listed, in its order. */
  models: string[];
  /** The upstream ids the user unticked: not offered. */
  hidden: string[];
  /** Unix milliseconds. */
  added_at: number;
}

/** Where servers are kept (IndexedDB in the service worker, memory in tests), by name. */
export type ServerStore = RecordStore<ServerRecord>;

/** A store of servers in memory. */
export const memoryServerStore = (initial: readonly ServerRecord[] = []): ServerStore =>
  memoryStore((record) => record.name, initial);

/** `fetch` as the service worker has it. */
export type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

/** What the registry needs. */
export interface ServersOptions {
  fetch: FetchLike;
  /** Organisations the catalogue already has (a server may not shadow them). */
  organisations: () => Promise<ReadonlySet<string>>;
  /** How long a server's `/models` may take (default 10 s). */
  timeoutMs?: number;
  /** Told after every change. */
  onChange?: () => void;
  /** This app's origin, named in messages about CORS. */
  origin?: string;
}

/** A server model: the server and the id it knows the model by. */
export interface ServerModel {
  id: string;
  server: ServerRecord;
  upstream: string;
}

/** What the API shows of a server: never its key. */
export interface ServerView {
  object: 'hearth.server';
  name: string;
  base_url: string;
  /** The key's last four characters (`…` alone for a key under 12), or null when it has none. */
  key_hint: string | null;
  /** Where its key is kept: in the store, in the service worker's memory only, or none given. */
  key_kept: 'stored' | 'session' | null;
  /**
   * Its key was kept for the session only and is gone (the worker stopped): give it again with
   * `PATCH {api_key}`.
   */
  key_needed: boolean;
  /** Every model its `/models` listed. */
  models: string[];
  /** Those offered (all but the ones the user unticked). */
  offered: string[];
  host: string;
}

export function serverView(record: ServerRecord): ServerView {
  return {
    object: 'hearth.server',
    name: record.name,
    base_url: record.base_url,
    // The last four characters, only of a key long enough that they do not give it away.
    key_hint: record.api_key
      ? record.api_key.length >= 12
        ? `…${record.api_key.slice(-4)}`
        : '…'
      : null,
    key_kept: record.key_kept ?? (record.api_key ? 'stored' : null),
    key_needed: record.key_kept === 'session' && !record.api_key,
    models: [...record.models],
    offered: record.models.filter((m) => !record.hidden.includes(m)),
    host: new URL(record.base_url).host,
  };
}
