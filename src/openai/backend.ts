/**
 * @module
 * The seam between the HTTP API and whatever generates text. The service worker reaches the
 * engine worker through a `ChatBackend` made of message ports; the engine worker's queue is a
 * `ChatBackend` in front of its engines; tests plug either in directly.
 */
import { OpenAIError } from './errors';
import type { ChatRequest, FinishReason, TokenLogprob, ToolCall } from './types';

/** Where a request stands before its first token. */
export type ChatState = 'queued' | 'loading' | 'running';

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
  /** The generation is complete. */
  | { type: 'end'; finish_reason: FinishReason; usage: EngineUsage };

/** Per-request options. */
export interface ChatOptions {
  /** Aborting it cancels the request: it leaves the queue, or the engine stops. */
  signal: AbortSignal;
  /** The API request's `x-request-id`, for logs. */
  requestId?: string;
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
}

/** A backend that can also put a model on the GPU on its own (`/v1/hearth/models/{id}/load`). */
export interface ModelBackend extends ChatBackend {
  /** Yields the load's states; ends when the model is loaded, or throws why not. */
  load(model: string, options: ChatOptions): AsyncIterable<ChatEvent>;
}
