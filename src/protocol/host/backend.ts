/**
 * @module
 * src/protocol/host/ is the seam between the API and the engine host: the Backend interface, the
 * token stream and stop strings every engine honours, download records, the host's status and its
 * GPU facts. It imports only src/protocol (and itself); the bridge, the service worker, the API
 * and the engines import it.
 *
 * The seam between the HTTP API and whatever generates text. The service worker reaches the
 * engine worker through a `ChatBackend` made of message ports; the engine worker's queue is a
 * `ChatBackend` in front of its engines; tests plug either in directly.
 */
import type { Section } from './documents';
import type { DownloadProgress } from './downloads';
import { OpenAIError } from '../errors';
import type { ChatRequest, EmbeddingRequest, FinishReason, TokenLogprob, ToolCall } from '../types';

/**
 * Where a request stands before its first token; `generating` says a reply that goes out whole
 * (several choices) is being generated, again and again, so that it counts as started.
 */
export type ChatState = 'queued' | 'loading' | 'running' | 'generating';

/** An engine's own speed figures, for people (they are not part of the wire format). */
export interface SpeedFigures {
  prefill_tokens_per_s: number;
  decode_tokens_per_s: number;
  time_to_first_token_s: number;
}

/** Token counts an engine reports for one request. */
export interface EngineUsage {
  /** Every token of the input messages, a cached prefix included. */
  prompt_tokens: number;
  completion_tokens: number;
  speed?: SpeedFigures;
}

/** A token with more than its text. */
export interface RichToken {
  text: string;
  /** Thinking aloud (`reasoning_content`), not the answer. */
  reasoning?: boolean;
  /** When `logprobs` was asked for. */
  logprobs?: TokenLogprob[];
}

/** A token: plain text in the common case (kept cheap on the hot path), or text with more. */
export type Token = string | RichToken;

/** One whole choice, for replies of several choices (`n` > 1, never streamed). */
export interface ChoiceResult {
  content: string | null;
  reasoning?: string;
  tool_calls?: ToolCall[];
  logprobs?: TokenLogprob[];
  finish_reason: FinishReason;
}

/** What a backend yields for one request, in order: states, then the reply, then one end. */
export type ChatEvent =
  /** The request moved on (queued behind others, waiting for a model load, running). */
  | { type: 'state'; state: ChatState }
  /** One or more tokens, in order; each becomes one stream chunk. */
  | { type: 'tokens'; tokens: Token[] }
  /** The model called tools (after any tokens, before the end). */
  | { type: 'tool_calls'; calls: ToolCall[] }
  /** Several whole choices at once (`n` > 1), instead of tokens. */
  | { type: 'choices'; choices: ChoiceResult[] }
  /**
   * The generation is complete. `usage` is null where the backend could not count (a server the
   * user added that sends none): Hearth says so rather than invent numbers.
   */
  | { type: 'end'; finish_reason: FinishReason; usage: EngineUsage | null }
  /** An embeddings request's whole answer: one vector per input, in order. */
  | { type: 'embeddings'; vectors: Float32Array[]; prompt_tokens: number | null };

/** Per-request options. */
export interface ChatOptions {
  /** Aborting it cancels the request: it leaves the queue, or the engine stops. */
  signal: AbortSignal;
  /** The API request's `x-request-id`, for logs. */
  requestId?: string;
  /**
   * The body as the client sent it (validated), for a backend that forwards it to a server the
   * user added; engines read the normalised request instead.
   */
  body?: Record<string, unknown>;
  /**
   * Whether the page that sent the request is still there. Asked when the request reaches the
   * engine after waiting, and before it runs again on a new host; absent means it is.
   */
  alive?: () => Promise<boolean>;
}

/**
 * The tab hosting the engine went away while the request was in its hands. The request did not
 * fail on its own account: it may run again on the next host.
 */
export class HostLostError extends OpenAIError {
  constructor() {
    super('engine_unavailable', 'The tab that hosted the engine was closed during the request.', {
      retryAfter: 1,
    });
  }
}

/** The page that sent a request is gone; nobody will read the reply. */
export function clientGone(): OpenAIError {
  return new OpenAIError('engine_unavailable', 'The page that sent this request is gone.');
}

/**
 * Runs chat requests. The returned iterable yields the request's events; a failure is thrown
 * from it as an `OpenAIError`. Abandoning the iteration without aborting leaks nothing, but only
 * the signal stops the work.
 */
export interface ChatBackend {
  chat(request: ChatRequest, options: ChatOptions): AsyncIterable<ChatEvent>;
  /**
   * Runs an embeddings request: states, `generating` while a long one is under way, then one
   * `embeddings` event. Absent where nothing serves embeddings.
   */
  embed?(request: EmbeddingRequest, options: ChatOptions): AsyncIterable<ChatEvent>;
  /**
   * A PDF's text, a section a page with text (`page` from 1), read by pdf.js in the engine
   * worker. Throws a `DocumentError` (`invalid_file`, naming `filename`) for a PDF it cannot read
   * or that has no text, an `OpenAIError` where the engine worker cannot be reached. Outside the
   * queue: it waits for no generation. Absent where nothing reads PDFs.
   */
  extractPdf?(bytes: Uint8Array, options: ChatOptions, filename?: string): Promise<Section[]>;
}

/** What `GET /v1/hearth/models/{org}/{name}` tells of a model's files. */
export interface ModelInspection {
  /** The files Hearth expects and does not find (empty: the model is on the device). */
  missing_files: string[];
  /** WebLLM's own `hasModelInCache`, which looks at the weight shards only. */
  webllm_has_model_in_cache: boolean;
  /** It is on the GPU now. */
  loaded: boolean;
  /** Its download under way, if any. */
  download: DownloadProgress | null;
  /** Why it counts as lost, when it was downloaded and has lost files since. */
  evicted: string | null;
}

/** A backend that can also put a model on the GPU on its own (the engine worker's queue). */
export interface LoadingBackend extends ChatBackend {
  /** Yields the load's states; ends when the model is loaded, or throws why not. */
  load(model: string, options: ChatOptions): AsyncIterable<ChatEvent>;
}

/** What manages the models on the device, beside the queue. */
export interface ModelService {
  /**
   * Starts a download, or joins the one under way, and yields its progress until it ends.
   * Aborting stops the listening, not the download.
   */
  download(model: string, options: ChatOptions): AsyncIterable<DownloadProgress>;
  /** Stops a download under way; what it completed stays for a later resume. */
  cancelDownload(model: string): Promise<void>;
  /** Removes every file of a model (409 `model_in_use` while requests use it). */
  deleteModel(model: string): Promise<void>;
  /** Takes the model off the GPU (409 `model_in_use` while requests use it). */
  unload(): Promise<void>;
  inspect(model: string): Promise<ModelInspection>;
}

/** A backend that also manages the models on the device (`/v1/hearth/models/…`). */
export interface ModelBackend extends LoadingBackend, ModelService {}
