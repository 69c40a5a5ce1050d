/**
 * @module
 * src/app/shared/ is what several areas of the app use: this API client, the shared styles and
 * theme, preferences, persistence, a conversation's parameters (chat-settings), saved prompts,
 * typed numbers and the private-network confirmation. It imports no area of the app.
 *
 * How the UI reaches the engine: over HTTP, through the service worker, exactly as third-party
 * code does. One client for every view: the key the app sends, JSON calls with the API's errors
 * as exceptions, and the two SSE streams (chat replies and download progress).
 */
import type { DownloadProgress } from '../../protocol/host/downloads';
import { decodeSse } from '../../protocol/sse';
import type { HearthStatus } from '../../protocol/host/status';
import type { ServerView } from '../../servers/servers';
import type { CatalogModel as WireCatalogModel } from '../../models/catalog';
import type { ChatCompletionChunk, ListBody, ModelObject, Usage } from '../../protocol/types';

/** The key the app sends while any non-empty key is accepted. */
export const DEFAULT_APP_KEY = 'hearth-app';
/** Where the app keeps the issued key it uses itself (when only issued keys may call). */
const APP_KEY_STORAGE = 'hearth:app-key';
const APP_KEY_ID_STORAGE = 'hearth:app-key-id';

/** The key this app sends now. */
export function appKey(): string {
  return localStorage.getItem(APP_KEY_STORAGE) ?? DEFAULT_APP_KEY;
}

/** The id of the issued key this app sends, if it sends one. */
export function appKeyId(): string | null {
  return localStorage.getItem(APP_KEY_ID_STORAGE);
}

/** Makes an issued key the one this app sends. */
export function setAppKey(key: string, id: string): void {
  localStorage.setItem(APP_KEY_STORAGE, key);
  localStorage.setItem(APP_KEY_ID_STORAGE, id);
}

/** The API base: `{origin}{base}v1/`. */
export function apiBaseUrl(): string {
  return new URL(`${import.meta.env.BASE_URL}v1/`, location.origin).href;
}

/** The API base for SDKs: `{origin}{base}v1/openai`, absolute as SDKs need it. */
export function sdkBaseUrl(): string {
  return `${apiBaseUrl()}openai`;
}

/** An error the API answered, with its fields. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The API's error in a response, or a plain one where the body is not the API's. */
async function errorOf(response: Response): Promise<ApiError> {
  try {
    const { error } = (await response.json()) as {
      error: { message: string; code: string | null; param: string | null };
    };
    return new ApiError(response.status, error.code, error.message, error.param);
  } catch {
    return new ApiError(response.status, null, `HTTP ${response.status} ${response.statusText}`);
  }
}

/** A call's method, JSON body (or a file as the raw body) and signal. */
interface CallInit {
  method?: string;
  body?: unknown;
  /** Sent as it is, as `application/octet-stream`, instead of a JSON body. */
  file?: Blob;
  /** Sent as `multipart/form-data` (the browser writes its boundary). */
  form?: FormData;
  signal?: AbortSignal;
}

/** `fetch` on the API with the app's key; throws `ApiError` on an error status. */
export async function call(path: string, init: CallInit = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${appKey()}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  if (init.file !== undefined) headers['content-type'] = 'application/octet-stream';
  const body =
    init.form ?? init.file ?? (init.body !== undefined ? JSON.stringify(init.body) : undefined);
  const response = await fetch(apiBaseUrl() + path, {
    method: init.method ?? 'GET',
    headers,
    ...(body !== undefined && { body }),
    ...(init.signal && { signal: init.signal }),
  });
  if (!response.ok) throw await errorOf(response);
  return response;
}

/** A JSON call. */
export async function callJson<T>(path: string, init: CallInit = {}): Promise<T> {
  return (await (await call(path, init)).json()) as T;
}

/** An issued key as `/v1/hearth/keys` lists it. */
export interface KeyInfo {
  id: string;
  name: string;
  created: number;
  hint: string;
}

/** `/v1/hearth/settings`. */
export interface SettingsBody {
  auth: 'any' | 'issued';
  prices: Record<string, { prompt: number; completion: number }>;
}

/** `POST /v1/hearth/keys`: issues a key, or registers `key` (the relay's). */
export function issueKey(body: { name: string; key?: string }): Promise<KeyInfo & { key: string }> {
  return callJson<KeyInfo & { key: string }>('hearth/keys', { method: 'POST', body });
}

/**
 * Sets who may call the API. Before only issued keys may, this app gets an issued key of its own,
 * or it would lock itself out.
 */
export async function setAuthMode(mode: 'any' | 'issued'): Promise<SettingsBody> {
  if (mode === 'issued' && appKeyId() === null) {
    const key = await issueKey({ name: 'This app' });
    setAppKey(key.key, key.id);
  }
  return callJson<SettingsBody>('hearth/settings', { method: 'PATCH', body: { auth: mode } });
}

/** `GET /v1/openai/models`. */
export async function listModels(signal?: AbortSignal): Promise<ModelObject[]> {
  return (await callJson<ListBody<ModelObject>>('openai/models', signal && { signal })).data;
}

/** A model of `GET /v1/hearth/catalog`, as the service worker describes it. */
export type CatalogModel = WireCatalogModel & {
  /**
   * Not the API's: set by the app (device-fit.ts) on a model that runs here, but too slowly to
   * suggest (WebLLM on a software GPU adapter), with why. It is never recommended, and its card
   * says so; it can still be downloaded.
   */
  slow_here?: string;
};

/** The host a model's requests go to when they leave this device; null for models run here. */
export function leavesFor(m: CatalogModel | undefined): string | null {
  return m?.leaves_device ? (m.server?.host ?? m.owned_by) : null;
}

export async function catalog(): Promise<CatalogModel[]> {
  return (await callJson<ListBody<CatalogModel>>('hearth/catalog')).data;
}

/**
 * `POST /v1/hearth/models`: adds a GGUF model from `source` (a URL, a path of the app, or
 * `hf:<user>/<repo>:<quant>`), under `id` when given; its catalogue entry.
 */
export function addModel(body: {
  source: string;
  id?: string;
  /** Its vision projector: a URL or a path of the app. */
  mmproj?: string;
  allow_private_network?: boolean;
}): Promise<CatalogModel> {
  return callJson<CatalogModel>('hearth/models', { method: 'POST', body });
}

/** A server the user added, as `/v1/hearth/servers` shows it (never its key: a hint only). */
export type ServerInfo = ServerView;

/** `GET /v1/hearth/servers`. */
export async function listServers(): Promise<ServerInfo[]> {
  return (await callJson<{ data: ServerInfo[] }>('hearth/servers')).data;
}

/**
 * `POST /v1/hearth/servers`: reads the server's `GET /models` and keeps it. Fails with the API's
 * error: 400 (`param` names the field), 409 for a name in use, 503 when the server cannot be
 * reached or refuses this origin (CORS), 504 when it does not answer.
 */
export function addServer(body: {
  name: string;
  base_url: string;
  api_key?: string;
  /** `session`: the worker keeps the key in memory only, never stored. */
  keep_key?: 'session';
  /** The user confirmed an address more private than the app (see private-network-confirm). */
  allow_private_network?: boolean;
}): Promise<ServerInfo> {
  return callJson<ServerInfo>('hearth/servers', { method: 'POST', body });
}

/** `PATCH /v1/hearth/servers/{name}`: the upstream ids to offer (the others are not). */
export function offerServerModels(name: string, offered: string[]): Promise<ServerInfo> {
  return callJson<ServerInfo>(`hearth/servers/${encodeURIComponent(name)}`, {
    method: 'PATCH',
    body: { offered },
  });
}

/** `DELETE /v1/hearth/servers/{name}`: its models leave the catalogue. */
export async function removeServer(name: string): Promise<void> {
  await call(`hearth/servers/${encodeURIComponent(name)}`, { method: 'DELETE' });
}

/** A file stored on the device by `PUT /v1/hearth/files/{name}.gguf`. */
export interface StoredFile {
  /** Its path relative to the app (`v1/hearth/files/<uuid>/<name>`): the `source` to add. */
  path: string;
  bytes: number;
}

/** Copies a `.gguf` file from the user's computer into the app's storage. */
export function storeFile(file: File, signal?: AbortSignal): Promise<StoredFile> {
  return callJson<StoredFile>(`hearth/files/${encodeURIComponent(file.name)}`, {
    method: 'PUT',
    file,
    ...(signal && { signal }),
  });
}

/** Removes a stored file that no model uses (one whose adding failed). */
export async function deleteStoredFile(path: string): Promise<void> {
  await call(path.replace(/^v1\//, ''), { method: 'DELETE' });
}

/** `GET /v1/hearth/status`: the host's status with the device's. */
export type FullStatus = HearthStatus;

export function status(): Promise<FullStatus> {
  return callJson<FullStatus>('hearth/status');
}

/** A model path: `hearth/models/{org}/{name}`, the slash kept as the API allows. */
export const modelPath = (id: string) => `hearth/models/${id}`;

/** Reads an SSE response's `data:` events as JSON. */
async function* sseJson<T>(response: Response): AsyncGenerator<T> {
  if (!response.body) return;
  for await (const event of decodeSse(response.body)) {
    if (event.data === '[DONE]') return;
    yield JSON.parse(event.data) as T;
  }
}

/** Starts or joins a download; yields its progress until it ends. */
export async function* download(
  id: string,
  signal?: AbortSignal,
): AsyncGenerator<DownloadProgress> {
  const response = await call(`${modelPath(id)}/download`, {
    method: 'POST',
    ...(signal && { signal }),
  });
  type Event = DownloadProgress | { error: { message: string; code: string | null } };
  for await (const event of sseJson<Event>(response)) {
    // A failure of the stream itself (not of the download, which is a progress report).
    if (!('object' in event)) throw new ApiError(500, event.error.code, event.error.message);
    yield event;
  }
}

/** A part of a user message with images, as the API takes it. */
export type OutgoingPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A message as the UI sends it. */
export interface OutgoingMessage {
  role: 'system' | 'user' | 'assistant';
  /** Text, or a user message's text and images as parts. */
  content: string | OutgoingPart[];
}

/** A passage a reply's `file_search` found (Hearth's extension of chat completions). */
export interface FileSearchResult {
  file_id: string;
  filename: string;
  score: number;
  text: string;
  chunk_id?: string;
  page?: number;
  heading?: string;
}

/** What the device searched for a reply, and found: an answer's `[n]` is `results[n-1]`. */
export interface FileSearch {
  queries: string[];
  results: FileSearchResult[];
}

/** What a streamed reply reports as it goes. */
export type ReplyEvent =
  | { type: 'file_search'; search: FileSearch }
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'finish'; reason: string }
  | { type: 'usage'; usage: Usage };

/** The fields of a chat request the UI sets. */
export interface ChatSettings {
  model: string;
  messages: OutgoingMessage[];
  temperature?: number;
  top_p?: number;
  seed?: number;
  stop?: string[];
  max_completion_tokens?: number;
  /** The echo engine's pause per token (it is a test engine; others ignore it). */
  echo_delay_ms?: number;
  /** Hearth's: search these vector stores with the last user message, for the model to cite. */
  file_search?: { vector_store_ids: string[] };
}

/**
 * Streams a chat reply. Errors before the stream starts throw `ApiError` with the API's status; an
 * error event inside the stream throws one too, after the events before it.
 */
export async function* streamChat(
  settings: ChatSettings,
  signal: AbortSignal,
): AsyncGenerator<ReplyEvent> {
  const response = await call('openai/chat/completions', {
    method: 'POST',
    body: { ...settings, stream: true, stream_options: { include_usage: true } },
    signal,
  });
  type Event = ChatCompletionChunk & {
    error?: { message: string; code: string | null; param: string | null };
    file_search?: FileSearch;
  };
  for await (const chunk of sseJson<Event>(response)) {
    if (chunk.error) {
      throw new ApiError(500, chunk.error.code, chunk.error.message, chunk.error.param);
    }
    if (chunk.file_search) yield { type: 'file_search', search: chunk.file_search };
    const choice = chunk.choices[0];
    const delta = choice?.delta;
    if (delta?.reasoning_content) yield { type: 'reasoning', text: delta.reasoning_content };
    if (delta?.content) yield { type: 'content', text: delta.content };
    if (choice?.finish_reason) yield { type: 'finish', reason: choice.finish_reason };
    if (chunk.usage) yield { type: 'usage', usage: chunk.usage };
  }
}
