/**
 * @module
 * src/servers/ is the OpenAI-compatible servers the user adds and the upstream client that
 * forwards requests for their models, reading what they send back under caps. It imports only
 * src/protocol and itself.
 *
 * OpenAI-compatible servers the user adds (vLLM, llama.cpp's `llama-server`, Ollama, LM Studio, a
 * hosted API): `POST /v1/hearth/servers` reads the server's `GET /models` and keeps the server,
 * its key (never returned: a hint only) and the models it offers; their ids are
 * `<server-name>/<upstream id>`. Nothing reaches a server the user did not add.
 *
 * A browser cannot tell a server that is down from one that refuses this origin (CORS): both are a
 * `TypeError`. A second, `no-cors` request tells them apart — it succeeds, opaque, when the server
 * answered — so the message can say which and what to do.
 */
import * as v from 'valibot';
import { assertJsonContentType, readJsonBody } from '../protocol/body';
import { OpenAIError } from '../protocol/errors';
import { assertNetworkAllowed } from '../protocol/private-network';
import { jsonResponse } from '../protocol/respond';
import { readCapped, UPSTREAM_MODELS_LIMIT } from './upstream-read';
import {
  addBody,
  bodyError,
  DEFAULT_TIMEOUT_MS,
  NAME,
  normalizeBaseUrl,
  notFound,
  patchBody,
  RESERVED,
} from './server-input';
import {
  serverView,
  type ServerModel,
  type ServerRecord,
  type ServersOptions,
  type ServerStore,
} from './server-record';
import { unreachable, upstreamMessage } from './upstream-errors';

export { normalizeBaseUrl } from './server-input';
export {
  memoryServerStore,
  serverView,
  type FetchLike,
  type ServerModel,
  type ServerRecord,
  type ServersOptions,
  type ServerStore,
  type ServerView,
} from './server-record';
export { CORS_HELP, unreachable, upstreamMessage } from './upstream-errors';

/** The servers the user added, and the models they offer. */
export class Servers {
  readonly #store: ServerStore;
  readonly #options: ServersOptions;
  #records: Promise<Map<string, ServerRecord>> | undefined;
  /** Names of the servers being added now (their `/models` is being read). */
  readonly #adding = new Set<string>();

  constructor(store: ServerStore, options: ServersOptions) {
    this.#store = store;
    this.#options = options;
  }

  #load(): Promise<Map<string, ServerRecord>> {
    this.#records ??= this.#store.list().then((list) => new Map(list.map((r) => [r.name, r])));
    return this.#records;
  }

  /** Stores `record`, without a key kept for the session only (this worker's memory has it). */
  #put(record: ServerRecord): Promise<void> {
    if (record.key_kept !== 'session') return this.#store.put(record);
    const { api_key: _inMemoryOnly, ...kept } = record;
    return this.#store.put(kept);
  }

  async list(): Promise<ServerRecord[]> {
    return [...(await this.#load()).values()].sort((a, b) => a.added_at - b.added_at);
  }

  /** The models the servers offer, as Hearth's ids. */
  async models(): Promise<ServerModel[]> {
    return (await this.list()).flatMap((server) =>
      server.models
        .filter((m) => !server.hidden.includes(m))
        .map((upstream) => ({ id: `${server.name}/${upstream}`, server, upstream })),
    );
  }

  /** `<server>/<upstream id>` (everything after the first `/`), when it is a server's model. */
  async resolve(id: string): Promise<ServerModel | undefined> {
    const slash = id.indexOf('/');
    if (slash <= 0) return undefined;
    const server = (await this.#load()).get(id.slice(0, slash));
    const upstream = id.slice(slash + 1);
    if (!server || !server.models.includes(upstream) || server.hidden.includes(upstream)) {
      return undefined;
    }
    return { id, server, upstream };
  }

  /** Reads the server's `/models` with its key: the upstream ids, or why not. */
  async #readModels(baseUrl: string, key: string | undefined): Promise<string[]> {
    const url = `${baseUrl}/models`;
    const timeoutMs = this.#options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const what = `The server at ${new URL(baseUrl).host}`;
    let response: Response;
    try {
      response = await this.#options.fetch(url, {
        headers: key ? { authorization: `Bearer ${key}` } : {},
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      if (err instanceof DOMException && err.name === 'TimeoutError') {
        throw new OpenAIError(
          'upstream_timeout',
          `${what} did not answer GET ${url} within ${Math.round(timeoutMs / 1000)} s.`,
        );
      }
      throw await unreachable(url, what, this.#options.fetch, this.#options.origin ?? 'this app');
    }
    let text: string;
    try {
      text = await readCapped(response, UPSTREAM_MODELS_LIMIT, new URL(baseUrl).host, {
        what: 'a list of models',
      });
    } catch (err) {
      if (err instanceof OpenAIError) throw err;
      throw new OpenAIError(
        'upstream_timeout',
        `${what} did not finish answering GET ${url} within ${Math.round(timeoutMs / 1000)} s.`,
      );
    }
    if (response.status === 401 || response.status === 403) {
      throw new OpenAIError(
        'invalid_value',
        `${what} refused ${key ? 'the key' : 'a request without a key'} (HTTP ${response.status}: ${upstreamMessage(text)}); give the key it expects in 'api_key'.`,
        { param: 'api_key' },
      );
    }
    if (!response.ok) {
      throw new OpenAIError(
        'upstream_error',
        `${what} answered GET ${url} with HTTP ${response.status}: ${upstreamMessage(text)}`,
      );
    }
    let ids: unknown;
    try {
      ids = (JSON.parse(text) as { data?: { id?: unknown }[] }).data?.map((m) => m.id);
    } catch {
      ids = undefined;
    }
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string' && id !== '')) {
      throw new OpenAIError(
        'upstream_error',
        `${what} did not answer GET ${url} as an OpenAI-compatible server does ({"data":[{"id":…}]}); is the address its /v1?`,
      );
    }
    return [...new Set(ids as string[])];
  }

  /** Adds a server after reading its models (409 `model_exists` for a name in use). */
  async add(body: unknown): Promise<ServerRecord> {
    const parsed = v.safeParse(addBody, body, { abortEarly: true });
    if (!parsed.success) throw bodyError(parsed.issues[0], 'name, base_url, api_key and keep_key');
    const { name } = parsed.output;
    if (!NAME.test(name)) {
      throw new OpenAIError(
        'invalid_value',
        `Invalid value for 'name': a server's name is a lower-case slug of letters, digits and '-' (at most 40), e.g. "gpu-box"; got ${JSON.stringify(name)}.`,
        { param: 'name' },
      );
    }
    const taken = RESERVED.has(name) || (await this.#options.organisations()).has(name);
    const records = await this.#load();
    // Checked and reserved with no await between: a second add of the name while the first reads
    // the server's models is a 409, not a silent replacement of the first (key included).
    if (taken || records.has(name) || this.#adding.has(name)) {
      throw new OpenAIError(
        'model_exists',
        `The name '${name}' is taken${taken ? ' by models of the catalogue' : ' by another server'}; pick another.`,
        { param: 'name' },
      );
    }
    this.#adding.add(name);
    try {
      return await this.#addNamed(name, parsed.output);
    } finally {
      this.#adding.delete(name);
    }
  }

  /** Adds the server under `name`, reserved for it. */
  async #addNamed(name: string, body: v.InferOutput<typeof addBody>): Promise<ServerRecord> {
    const baseUrl = normalizeBaseUrl(body.base_url);
    assertNetworkAllowed(baseUrl, body.allow_private_network, 'base_url');
    const key = body.api_key?.trim() || undefined;
    const models = await this.#readModels(baseUrl, key);
    const record: ServerRecord = {
      name,
      base_url: baseUrl,
      ...(key && { api_key: key }),
      ...(key && body.keep_key === 'session' && { key_kept: 'session' as const }),
      models,
      hidden: [],
      added_at: Date.now(),
    };
    await this.#put(record);
    (await this.#load()).set(name, record);
    this.#options.onChange?.();
    return record;
  }

  /**
   * Chooses which of a server's models are offered (`offered`), or takes its key again
   * (`api_key`, checked on its `/models`, kept as the first was: stored, or for the session only).
   */
  async offer(name: string, body: unknown): Promise<ServerRecord> {
    let record = (await this.#load()).get(name);
    if (!record) throw notFound(name);
    const parsed = v.safeParse(patchBody, body, { abortEarly: true });
    if (!parsed.success) throw bodyError(parsed.issues[0], 'offered and api_key');
    const { offered, api_key } = parsed.output;
    if (offered === undefined && api_key === undefined) {
      throw new OpenAIError('missing_field', "Missing required parameter: 'offered'.", {
        param: 'offered',
      });
    }
    if (api_key !== undefined) {
      const key = api_key.trim() || undefined;
      await this.#readModels(record.base_url, key);
      // As it is now (its models may have been chosen meanwhile), unless it was removed.
      const current = (await this.#load()).get(name);
      if (!current) throw notFound(name);
      const { api_key: _old, key_kept, ...rest } = current;
      record = { ...rest, ...(key && { api_key: key, ...(key_kept && { key_kept }) }) };
    }
    if (offered === undefined) return this.#save(record);
    const unknown = offered.find((m) => !record.models.includes(m));
    if (unknown !== undefined) {
      throw new OpenAIError(
        'invalid_value',
        `Invalid value for 'offered': ${name} has no model ${JSON.stringify(unknown)}.`,
        { param: 'offered' },
      );
    }
    return this.#save({ ...record, hidden: record.models.filter((m) => !offered.includes(m)) });
  }

  async #save(record: ServerRecord): Promise<ServerRecord> {
    await this.#put(record);
    (await this.#load()).set(record.name, record);
    this.#options.onChange?.();
    return record;
  }

  async remove(name: string): Promise<void> {
    if (!(await this.#load()).has(name)) throw notFound(name);
    await this.#store.delete(name);
    (await this.#load()).delete(name);
    this.#options.onChange?.();
  }
}

/** `POST /v1/hearth/servers` → 201 with the server. */
export async function addServer(
  request: Request,
  servers: Servers,
  requestId: string,
): Promise<Response> {
  assertJsonContentType(request);
  const record = await servers.add(await readJsonBody(request, 64 * 1024));
  return jsonResponse(serverView(record), requestId, 201);
}

/** `GET /v1/hearth/servers`. */
export async function listServers(servers: Servers, requestId: string): Promise<Response> {
  const data = (await servers.list()).map(serverView);
  return jsonResponse({ object: 'list', data }, requestId);
}

/** `PATCH /v1/hearth/servers/{name}` `{offered: [...]}`. */
export async function patchServer(
  request: Request,
  name: string,
  servers: Servers,
  requestId: string,
): Promise<Response> {
  assertJsonContentType(request);
  const record = await servers.offer(name, await readJsonBody(request, 1024 * 1024));
  return jsonResponse(serverView(record), requestId);
}

/** `DELETE /v1/hearth/servers/{name}`. */
export async function deleteServer(
  name: string,
  servers: Servers,
  requestId: string,
): Promise<Response> {
  await servers.remove(name);
  return jsonResponse({ object: 'hearth.server', name, deleted: true }, requestId);
}
