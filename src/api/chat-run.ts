/**
 * @module
 * One chat request's life with the backend, with the limits of docs/api.md (Errors) and docs/architecture.md (Tabs, failover and restarts): the first token
 * within the deadline (else 503 `engine_busy` or `model_loading`); a request whose host tab is
 * lost runs again, once, on the next host; an engine silent for too long stops the request with
 * `engine_stalled`.
 */
import {
  HostLostError,
  type ChatEvent,
  type ChatOptions,
  type ChatState,
} from '../protocol/host/backend';
import { OpenAIError } from '../protocol/errors';

/** Starts the request on the backend (again, after its host was lost). */
export type StartRequest = (options: ChatOptions) => AsyncIterable<ChatEvent>;

/**
 * What the endpoint writes: a token batch or the end; or `started`, when a reply that goes out
 * whole (several choices) is being generated: the response may start, no first token will come
 * before the whole reply does.
 */
export type Output = Exclude<ChatEvent, { type: 'state' }> | { type: 'started' };

/** Limits and context of one run. */
export interface ChatRunOptions {
  requestId: string;
  /** Whether the page that sent the request is still there. */
  alive?: (() => Promise<boolean>) | undefined;
  /** Longest wait for the first token, across a second try. */
  firstTokenTimeoutMs: number;
  /** Longest silence of the engine once tokens flow. */
  stallTimeoutMs: number;
}

/** Seconds a client should wait before retrying a request that found the engine busy. */
const BUSY_RETRY_AFTER_S = 10;
/** Seconds a client should wait before retrying while a model loads. */
const LOADING_RETRY_AFTER_S = 30;

function endedEarly(): OpenAIError {
  return new OpenAIError('engine_error', 'The engine ended the request without a reply.');
}

/** The 503 for a request that got no first token in time, by where it stood. */
export function timedOut(state: ChatState, ms: number): OpenAIError {
  const seconds = Math.round(ms / 1000);
  return state === 'loading'
    ? new OpenAIError(
        'model_loading',
        `The model is still loading after ${seconds} s; it keeps loading, try again shortly.`,
        { retryAfter: LOADING_RETRY_AFTER_S },
      )
    : new OpenAIError(
        'engine_busy',
        `The engine could not start this request within ${seconds} s; try again later.`,
        { retryAfter: BUSY_RETRY_AFTER_S },
      );
}

function stalled(ms: number): OpenAIError {
  return new OpenAIError(
    'engine_stalled',
    `The engine produced nothing for ${Math.round(ms / 1000)} s; the request was stopped.`,
  );
}

/** Resolves like `promise`, or rejects with `error()` after `ms`. */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  error: () => OpenAIError,
): Promise<T> {
  // The losing promise settles once the request is cancelled; nobody waits for it then.
  promise.catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(error()), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** One request, run on the backend (and again on the next host if its host is lost). */
export class ChatRun {
  readonly #startRequest: StartRequest;
  readonly #options: ChatRunOptions;
  readonly #abort = new AbortController();
  readonly #deadline: number;
  #events: AsyncIterator<ChatEvent>;
  #state: ChatState = 'queued';
  #rerunsLeft = 1;
  #cancelledByClient = false;

  constructor(start: StartRequest, options: ChatRunOptions) {
    this.#startRequest = start;
    this.#options = options;
    this.#deadline = Date.now() + options.firstTokenTimeoutMs;
    this.#events = this.#start();
  }

  /** Whether the client cancelled the request (`cancel`): nobody reads its reply any more. */
  get cancelled(): boolean {
    return this.#cancelledByClient;
  }

  /** The client is gone: stops the request wherever it is, in the queue or in the engine. */
  cancel(): void {
    this.#cancelledByClient = true;
    this.#stop();
  }

  /** Stops the request (a limit was hit, or it failed) without it being the client's doing. */
  #stop(): void {
    this.#abort.abort();
  }

  #start(): AsyncIterator<ChatEvent> {
    const { requestId, alive } = this.#options;
    const options = { signal: this.#abort.signal, requestId, ...(alive && { alive }) };
    return this.#startRequest(options)[Symbol.asyncIterator]();
  }

  /** Whether `err` lets the request run again on the next host, and if so starts it. */
  async #rerun(err: unknown): Promise<boolean> {
    if (!(err instanceof HostLostError) || this.#rerunsLeft === 0) return false;
    if (this.#abort.signal.aborted) return false;
    if (this.#options.alive && !(await this.#options.alive())) return false;
    this.#rerunsLeft -= 1;
    this.#state = 'queued';
    this.#events = this.#start();
    return true;
  }

  /** The first token batch (or the end of an empty reply), before the deadline. */
  async first(): Promise<Output> {
    try {
      for (;;) {
        try {
          return await this.#firstOutput();
        } catch (err) {
          if (!(await this.#rerun(err))) throw err;
        }
      }
    } catch (err) {
      this.#stop();
      throw err;
    }
  }

  async #firstOutput(): Promise<Output> {
    const { firstTokenTimeoutMs } = this.#options;
    for (;;) {
      const remaining = this.#deadline - Date.now();
      const result = await within(this.#events.next(), remaining, () =>
        timedOut(this.#state, firstTokenTimeoutMs),
      );
      if (result.done) throw endedEarly();
      if (result.value.type !== 'state') return result.value;
      // A generation under way counts as started, however long its reply takes to complete.
      if (result.value.state === 'generating') return { type: 'started' };
      this.#state = result.value.state;
    }
  }

  /** The next token batch or the end; a silent engine is stopped with `engine_stalled`. */
  async next(): Promise<Output> {
    const { stallTimeoutMs } = this.#options;
    try {
      for (;;) {
        const result = await within(this.#events.next(), stallTimeoutMs, () =>
          stalled(stallTimeoutMs),
        );
        if (result.done) throw endedEarly();
        if (result.value.type !== 'state') return result.value;
      }
    } catch (err) {
      // A lost host has nothing left to cancel, and its request may still run again.
      if (!(err instanceof HostLostError)) this.#stop();
      throw err;
    }
  }

  /**
   * After the status line of a non-streamed reply: when `err` is its host's death, the request
   * runs again from the start on the next host, once, and this resolves to its first output;
   * otherwise it throws `err`. (A stream cannot take back what it sent, so it never reruns.)
   */
  async restart(err: unknown): Promise<Output> {
    if (!(await this.#rerun(err))) throw err;
    return this.first();
  }
}
