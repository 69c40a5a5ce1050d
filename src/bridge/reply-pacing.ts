/**
 * @module
 * How a reply is paced on its request port: tokens batched per turn of the event loop (the first
 * leaves at once), and the credit that keeps a reply no further than its window ahead of the
 * service worker's reader. The server (server.ts) runs requests; this holds what it sends them by.
 */
import type { Token } from '../protocol/host/backend';
import { OpenAIError } from '../protocol/errors';
import { MAX_TOKEN_BATCH, type ReplyMessage } from './messages';

/** Runs `callback` in the next macrotask without timer clamping (nested `setTimeout` waits ≥4 ms). */
function nextTask(callback: () => void): void {
  const { port1, port2 } = new MessageChannel();
  port1.onmessage = () => {
    port1.close();
    callback();
  };
  port2.postMessage(null);
}

/** Collects tokens and posts them in batches on one request port. */
export class TokenBatcher {
  readonly #post: (message: ReplyMessage) => void;
  #tokens: Token[] = [];
  #sentAny = false;
  #scheduled = false;

  constructor(post: (message: ReplyMessage) => void) {
    this.#post = post;
  }

  add(tokens: readonly Token[]): void {
    for (const token of tokens) this.#tokens.push(token);
    if (!this.#sentAny || this.#tokens.length >= MAX_TOKEN_BATCH) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      nextTask(() => {
        this.#scheduled = false;
        this.flush();
      });
    }
  }

  flush(): void {
    if (this.#tokens.length === 0) return;
    this.#sentAny = true;
    const tokens = this.#tokens;
    this.#tokens = [];
    this.#post({ type: 'chat/tokens', tokens });
  }
}

/**
 * What a reply may still send before its reader catches up (`chat/start`'s window, topped up by
 * `chat/credit`).
 */
export class Credit {
  #bytes: number;
  #waiter: { wake: () => void; heard: () => void } | undefined;

  constructor(bytes: number) {
    this.#bytes = bytes;
  }

  get exhausted(): boolean {
    return this.#bytes <= 0;
  }

  spend(bytes: number): void {
    this.#bytes -= bytes;
  }

  grant(bytes: number): void {
    this.#bytes += bytes;
    if (!this.exhausted) this.#waiter?.wake();
    else this.#waiter?.heard();
  }

  /**
   * Resolves to true when there is credit again (at once when `signal` aborts), or to false when
   * the service worker has granted nothing for `ms`: it is gone, and with it the reader.
   */
  wait(signal: AbortSignal, ms: number): Promise<boolean> {
    if (!this.exhausted || signal.aborted) return Promise.resolve(true);
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (value: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', wake);
        this.#waiter = undefined;
        resolve(value);
      };
      const wake = () => settle(true);
      const heard = () => {
        clearTimeout(timer);
        timer = setTimeout(() => settle(false), ms);
      };
      this.#waiter = { wake, heard };
      signal.addEventListener('abort', wake);
      heard();
    });
  }
}

/** The error a reply ends with when its reader took nothing for `ms`. */
export function readerGone(ms: number): OpenAIError {
  return new OpenAIError(
    'reader_too_slow',
    `Nothing of this reply was taken for ${Math.round(ms / 1000)} s while the engine waited; the request was stopped.`,
  );
}
