/**
 * @module
 * The engine worker's side of the bridge: it serves every request port the service worker opens
 * on a host port, runs the request on a `ChatBackend` (the queue), and pushes the reply back as
 * it is produced. Tokens are batched per turn of the event loop: a fast engine costs a few
 * messages, not one per token, and the first token leaves at once.
 */
import type { ChatBackend } from '../openai/backend';
import { OpenAIError } from '../openai/errors';
import type { ChatRequest } from '../openai/types';
import {
  unreachable,
  type HostPortMessage,
  type HostStatus,
  type ReplyMessage,
  type RequestMessage,
} from './messages';

/** Most tokens in one message; bounds the size of a batch from a very fast engine. */
const MAX_BATCH = 256;

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
class TokenBatcher {
  readonly #post: (message: ReplyMessage) => void;
  #tokens: string[] = [];
  #sentAny = false;
  #scheduled = false;

  constructor(post: (message: ReplyMessage) => void) {
    this.#post = post;
  }

  add(tokens: readonly string[]): void {
    for (const token of tokens) this.#tokens.push(token);
    if (!this.#sentAny || this.#tokens.length >= MAX_BATCH) {
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

/** Serves host ports for one engine worker. */
export class HostServer {
  readonly #backend: ChatBackend;
  readonly #status: () => Omit<HostStatus, 'open_ports'>;
  #openPorts = 0;

  constructor(backend: ChatBackend, status: () => Omit<HostStatus, 'open_ports'>) {
    this.#backend = backend;
    this.#status = status;
  }

  /** Request ports with a request that has not ended. */
  get openPorts(): number {
    return this.#openPorts;
  }

  /** Serves the request ports the service worker opens on `hostPort`. */
  attach(hostPort: MessagePort): void {
    hostPort.onmessage = (event: MessageEvent<HostPortMessage>) => {
      if (event.data.type === 'request/open') this.#serve(event.data.port);
    };
  }

  #serve(port: MessagePort): void {
    const abort = new AbortController();
    const post = (message: ReplyMessage) => port.postMessage(message);
    port.onmessage = (event: MessageEvent<RequestMessage>) => {
      const message = event.data;
      switch (message.type) {
        case 'chat/start':
          void this.#run(message.request, message.requestId, abort.signal, post).finally(() =>
            port.close(),
          );
          return;
        case 'chat/cancel':
          abort.abort();
          return;
        case 'status/get':
          post({
            type: 'status/result',
            status: { ...this.#status(), open_ports: this.#openPorts },
          });
          return;
        default:
          unreachable(message);
      }
    };
  }

  async #run(
    request: ChatRequest,
    requestId: string,
    signal: AbortSignal,
    post: (message: ReplyMessage) => void,
  ): Promise<void> {
    this.#openPorts += 1;
    const batcher = new TokenBatcher(post);
    try {
      for await (const event of this.#backend.chat(request, { signal, requestId })) {
        switch (event.type) {
          case 'tokens':
            batcher.add(event.tokens);
            break;
          case 'state':
            batcher.flush();
            post({ type: 'chat/state', state: event.state });
            break;
          case 'end':
            batcher.flush();
            post({ type: 'chat/end', finish_reason: event.finish_reason, usage: event.usage });
            break;
          default:
            unreachable(event);
        }
      }
    } catch (err) {
      batcher.flush();
      if (!signal.aborted) post({ type: 'chat/error', error: OpenAIError.from(err).serialize() });
    } finally {
      this.#openPorts -= 1;
    }
  }
}
