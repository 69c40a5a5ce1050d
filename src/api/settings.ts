/**
 * @module
 * What the API's owner sets: the auth mode (any non-empty key, or issued keys only — docs/api.md,
 * Auth),
 * the issued keys, and per-model prices for `usage.estimated_cost`. Kept by a `SettingsStore`
 * (IndexedDB in the service worker, memory in tests), served by `/v1/hearth/settings` and
 * `/v1/hearth/keys`. A key is shown once, when it is issued; only its SHA-256 is kept.
 */
import * as v from 'valibot';
import { assertJsonContentType, readJsonBody, readOptionalJsonBody } from '../protocol/body';
import { installName } from '../protocol/install';
import { OpenAIError } from '../protocol/errors';
import type { ModelPrice } from '../models/models';
import { jsonResponse } from '../protocol/respond';
import { paramOf } from '../protocol/validate';

/** Who may call the API: any non-empty key, or only the keys issued here. */
export type AuthMode = 'any' | 'issued';

/** US dollars per million tokens, as prices are quoted. */
export interface PricePerMillion {
  prompt: number;
  completion: number;
}

/** An issued key as it is kept: never the key itself. */
export interface KeyRecord {
  id: string;
  name: string;
  /** Unix seconds. */
  created: number;
  /** The key's last characters, to tell keys apart. */
  hint: string;
  /** Hex SHA-256 of the key. */
  sha256: string;
}

/** Everything the settings hold. */
export interface SettingsData {
  auth: AuthMode;
  keys: KeyRecord[];
  prices: Record<string, PricePerMillion>;
  /** The embedding model that indexes new vector stores (docs/api.md, Vector stores); null: none. */
  embedding_model?: string | null;
}

/** Where the settings live. */
export interface SettingsStore {
  read(): Promise<SettingsData | undefined>;
  write(data: SettingsData): Promise<void>;
}

/** A store in memory (tests; a browser where IndexedDB fails). */
export function memorySettingsStore(initial?: SettingsData): SettingsStore {
  let data = initial && structuredClone(initial);
  return {
    read: async () => data && structuredClone(data),
    write: async (next) => void (data = structuredClone(next)),
  };
}

const DEFAULTS: SettingsData = { auth: 'any', keys: [], prices: {} };
/** The Web Lock every change to the settings holds, across workers of the origin. */
const settingsLock = (): string => installName('hearth-settings');
/** Issued keys start with this, as OpenAI's start with `sk-`. */
const KEY_PREFIX = 'hk-';
/** An issued key: the prefix and 24 random bytes in base64url (as `randomKey` makes them). */
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9_-]{32}$`);

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)),
  );
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** 24 random bytes, base64url: a key nobody guesses. */
function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return KEY_PREFIX + btoa(binary).replace(/\+/g, '-').replace(/\//g, '_');
}

/** A key as `GET /v1/hearth/keys` shows it. */
function keyObject({ id, name, created, hint }: KeyRecord) {
  return { id, object: 'hearth.key' as const, name, created, hint };
}

const price = v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(1_000_000));
const patchSchema = v.strictObject({
  auth: v.optional(v.picklist(['any', 'issued'])),
  /** A model's prices, or null to remove them. */
  prices: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(/^[^/]+\/[^/]+$/)),
      v.nullable(v.strictObject({ prompt: price, completion: price })),
    ),
  ),
  /** The embedding model for new vector stores, or null to choose none. */
  embedding_model: v.optional(v.nullable(v.pipe(v.string(), v.regex(/^[^/]+\/.+$/)))),
});
const newKeySchema = v.strictObject({
  name: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(100))),
  /** A key made elsewhere (the relay's), to register rather than make one. */
  key: v.optional(
    v.pipe(v.string(), v.regex(KEY_PATTERN, 'Expected a key of the form hk- and 32 characters')),
  ),
});

/** Largest body of a settings or keys request, in bytes. */
const SETTINGS_BODY_LIMIT = 64 * 1024;

/** Parses a JSON body against `schema`, with the API's 415, 413 and 400 answers. */
async function readBody<T extends v.GenericSchema>(
  request: Request,
  schema: T,
): Promise<v.InferOutput<T>> {
  assertJsonContentType(request);
  return validBody(schema, await readJsonBody(request, SETTINGS_BODY_LIMIT));
}

/** `json` checked against `schema`; the first issue is a 400 `invalid_value` naming its field. */
function validBody<T extends v.GenericSchema>(schema: T, json: unknown): v.InferOutput<T> {
  const parsed = v.safeParse(schema, json);
  if (parsed.success) return parsed.output;
  const issue = parsed.issues[0];
  const param = paramOf(issue);
  throw new OpenAIError(
    'invalid_value',
    `Invalid value${param ? ` for '${param}'` : ''}: ${issue.message}`,
    {
      param,
    },
  );
}

/** The settings, read once and kept in memory; every change is written through. */
export class Settings {
  readonly #store: SettingsStore;
  readonly #locks: Pick<LockManager, 'request'> | undefined;
  #data: Promise<SettingsData> | undefined;
  /** The last change queued in this worker (see #change). */
  #tail: Promise<unknown> = Promise.resolve();

  /** `locks`: the origin's Web Locks, shared by its workers (by default `navigator.locks`). */
  constructor(store: SettingsStore, { locks }: { locks?: Pick<LockManager, 'request'> } = {}) {
    this.#store = store;
    this.#locks = locks ?? (globalThis.navigator as { locks?: LockManager } | undefined)?.locks;
  }

  /**
   * The settings, read once and kept; a read that fails is not kept (the next call reads again)
   * and is a 503: a worker that guessed the defaults would let any key in.
   */
  #read(): Promise<SettingsData> {
    const data = (this.#data ??= this.#load());
    data.catch(() => {
      if (this.#data === data) this.#data = undefined;
    });
    return data;
  }

  /** The settings as stored now, the defaults for a store never written; or a 503. */
  async #load(): Promise<SettingsData> {
    let stored: SettingsData | undefined;
    try {
      stored = await this.#store.read();
    } catch (err) {
      throw new OpenAIError(
        'settings_unavailable',
        `Hearth's settings could not be read (${err instanceof Error ? err.message : String(err)}), so it cannot tell which keys may call; try again shortly, or reload the app.`,
        { retryAfter: 1 },
      );
    }
    return { ...structuredClone(DEFAULTS), ...stored };
  }

  /**
   * Applies `change` to the settings as they are now and writes them, one change at a time: in
   * this worker through a queue, and across workers (an update waiting beside the active one)
   * through a Web Lock where there is one. `change` sees what the changes before it wrote, so it
   * checks the invariants there (it may throw to refuse): two concurrent calls can no longer both
   * start from the same copy and lose one's write.
   */
  #change<T>(change: (next: SettingsData) => T): Promise<T> {
    const task = async (): Promise<T> => {
      // Read again: another worker may have changed them since this one read them; a store that
      // cannot be read refuses the change (503) rather than write over what it holds.
      const next = await this.#load();
      const result = change(next);
      await this.#store.write(next);
      this.#data = Promise.resolve(next);
      return result;
    };
    const locks = this.#locks;
    const run = async (): Promise<T> =>
      locks ? await locks.request(settingsLock(), task) : await task();
    const done = this.#tail.then(run, run);
    this.#tail = done.catch(() => undefined);
    return done;
  }

  /** Whether `key` may use the API now. */
  async authorize(key: string): Promise<boolean> {
    const { auth, keys } = await this.#read();
    if (auth === 'any') return true;
    const hash = await sha256(key);
    return keys.some((k) => k.sha256 === hash);
  }

  /**
   * The price per token the owner set for `model`, if any; none while the settings cannot be
   * read (the cost is an estimate: a reply without it is better than no reply).
   */
  async price(model: string): Promise<ModelPrice | undefined> {
    const set = (await this.#read().catch(() => undefined))?.prices[model];
    return set && { prompt: set.prompt / 1e6, completion: set.completion / 1e6 };
  }

  /** The embedding model the owner chose for new vector stores, if any (none while unreadable). */
  async embeddingModel(): Promise<string | undefined> {
    return (await this.#read().catch(() => undefined))?.embedding_model ?? undefined;
  }

  /** `GET /v1/hearth/settings`. */
  async get(requestId: string): Promise<Response> {
    const { auth, prices, embedding_model = null } = await this.#read();
    return jsonResponse({ object: 'hearth.settings', auth, prices, embedding_model }, requestId);
  }

  /**
   * `PATCH /v1/hearth/settings`: `{auth?, prices?: {model: {prompt, completion} | null},
   * embedding_model?}`.
   */
  async patch(request: Request, requestId: string): Promise<Response> {
    const body = await readBody(request, patchSchema);
    await this.#change((next) => {
      if (body.auth === 'issued' && next.keys.length === 0) {
        throw new OpenAIError(
          'invalid_value',
          'Issue a key before switching to issued keys: with none, nothing could call the API.',
          { param: 'auth' },
        );
      }
      if (body.auth) next.auth = body.auth;
      for (const [model, set] of Object.entries(body.prices ?? {})) {
        if (set) next.prices[model] = set;
        else delete next.prices[model];
      }
      if (body.embedding_model !== undefined) next.embedding_model = body.embedding_model;
    });
    return this.get(requestId);
  }

  /** `GET /v1/hearth/keys`. */
  async listKeys(requestId: string): Promise<Response> {
    const { keys } = await this.#read();
    return jsonResponse({ object: 'list', data: keys.map(keyObject) }, requestId);
  }

  /**
   * `POST /v1/hearth/keys` `{name?, key?}`: issues a new key, shown in this answer only (201); or
   * registers a key made elsewhere, such as the relay's, where the same key registered again
   * answers the record it already has (200).
   */
  async issueKey(request: Request, requestId: string): Promise<Response> {
    const json = await readOptionalJsonBody(request, SETTINGS_BODY_LIMIT);
    const body = json === undefined ? {} : validBody(newKeySchema, json);
    const key = body.key ?? randomKey();
    const hash = await sha256(key);
    const record: KeyRecord = {
      id: `key_${crypto.randomUUID().replace(/-/g, '').slice(0, 16)}`,
      name: body.name ?? 'Key',
      created: Math.floor(Date.now() / 1000),
      hint: key.slice(-4),
      sha256: hash,
    };
    const known = await this.#change((next) => {
      const found = next.keys.find((k) => k.sha256 === hash);
      if (!found) next.keys.push(record);
      return found;
    });
    if (known) return jsonResponse({ ...keyObject(known), key }, requestId);
    return jsonResponse({ ...keyObject(record), key }, requestId, 201);
  }

  /** `DELETE /v1/hearth/keys/{id}`: the last key cannot go while only issued keys may call. */
  async revokeKey(id: string, requestId: string): Promise<Response> {
    await this.#change((next) => {
      if (!next.keys.some((k) => k.id === id)) {
        throw new OpenAIError('unknown_url', `There is no key '${id}'.`);
      }
      if (next.auth === 'issued' && next.keys.length === 1) {
        throw new OpenAIError(
          'invalid_value',
          'This is the last issued key: switch back to any key first, or nothing could call the API.',
          { param: 'id' },
        );
      }
      next.keys = next.keys.filter((k) => k.id !== id);
    });
    return jsonResponse({ id, object: 'hearth.key', deleted: true }, requestId);
  }
}
