/**
 * @module
 * The service worker's `ChatBackend`: each request gets a fresh `MessageChannel` whose far end
 * goes to the engine worker through the host port, so every request streams on its own port
 * and can be cancelled alone. When the host dies (`hostLost`), its requests fail at once with
 * `HostLostError`, which the endpoint may answer by running them on the next host.
 */
import {
  HostLostError,
  type ChatEvent,
  type ChatOptions,
  type ModelBackend,
  type ModelInspection,
} from '../openai/backend';
import { finished, type DownloadProgress } from '../openai/downloads';
import { OpenAIError } from '../openai/errors';
import type { HostStatus } from '../openai/status';
import type { ChatRequest } from '../openai/types';
import { Channel } from './channel';
import {
  replyToEvent,
  type HostPortMessage,
  type ReplyMessage,
  type RequestMessage,
} from './messages';

/** Resolves to the current host port, or throws 503 `engine_unavailable`. */
export type HostPortSource = () => Promise<MessagePort>;

const STATUS_TIMEOUT_MS = 3000;
/** How long a management request (cancel, delete, unload, inspect) may take. */
const MANAGE_TIMEOUT_MS = 30_000;

/** The chat events of a reply; `model/loaded` ends a load. */
function chatReply(message: ReplyMessage): { item?: ChatEvent; end?: boolean } {
  if (message.type === 'model/loaded') return { end: true };
  const event = replyToEvent(message);
  return event ? { item: event, end: event.type === 'end' } : {};
}

function cancelled(): OpenAIError {
  return new OpenAIError('engine_error', 'The request was cancelled.');
}

/** Opens a request port on the host, with its first message, and returns our end. */
function openRequestPort(host: MessagePort, first: RequestMessage): MessagePort {
  const { port1, port2 } = new MessageChannel();
  const open: HostPortMessage = { type: 'request/open', port: port2, first };
  host.postMessage(open, [port2]);
  return port1;
}

function send(port: MessagePort, message: RequestMessage): void {
  port.postMessage(message);
}

/** A `ChatBackend` that runs requests in the engine worker behind the host port. */
export class PortBackend implements ModelBackend {
  readonly #hostPort: HostPortSource;
  /** For each host port, how to fail each request still running on it. */
  readonly #running = new Map<MessagePort, Set<(error: OpenAIError) => void>>();
  /** Ports of hosts known to be gone, in case one is handed out just as its host dies. */
  readonly #lost = new WeakSet<MessagePort>();

  constructor(hostPort: HostPortSource) {
    this.#hostPort = hostPort;
  }

  /** Requests that have not ended, on every host. */
  get openRequests(): number {
    let n = 0;
    for (const requests of this.#running.values()) n += requests.size;
    return n;
  }

  /** The host behind `hostPort` is gone: every request on it fails now with `HostLostError`. */
  hostLost(hostPort: MessagePort): void {
    this.#lost.add(hostPort);
    const requests = this.#running.get(hostPort);
    this.#running.delete(hostPort);
    for (const fail of requests ?? []) fail(new HostLostError());
  }

  chat(request: ChatRequest, options: ChatOptions): Channel<ChatEvent> {
    const start: RequestMessage = {
      type: 'chat/start',
      requestId: options.requestId ?? '',
      request,
    };
    return this.#request(start, options, chatReply);
  }

  /** Puts `model` on the host's GPU; the channel ends when it is loaded. */
  load(model: string, options: ChatOptions): Channel<ChatEvent> {
    const first: RequestMessage = { type: 'model/load', requestId: options.requestId ?? '', model };
    return this.#request(first, options, chatReply);
  }

  download(model: string, options: ChatOptions): Channel<DownloadProgress> {
    return this.#request({ type: 'model/download', model }, options, (message) =>
      message.type === 'model/progress'
        ? { item: message.progress, end: finished(message.progress.phase) }
        : {},
    );
  }

  async cancelDownload(model: string): Promise<void> {
    await this.#once(
      { type: 'model/cancel-download', model },
      (m) => m.type === 'model/done' || undefined,
    );
  }

  async deleteModel(model: string): Promise<void> {
    await this.#once({ type: 'model/delete', model }, (m) => m.type === 'model/done' || undefined);
  }

  async unload(): Promise<void> {
    await this.#once({ type: 'model/unload' }, (m) => m.type === 'model/done' || undefined);
  }

  inspect(model: string): Promise<ModelInspection> {
    return this.#once({ type: 'model/inspect', model }, (m) =>
      m.type === 'model/inspection' ? m.inspection : undefined,
    );
  }

  /** A request with one answer, which `pick` finds among the replies. */
  async #once<R>(
    first: RequestMessage,
    pick: (message: ReplyMessage) => R | undefined,
  ): Promise<R> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), MANAGE_TIMEOUT_MS);
    const replies = this.#request(first, { signal: abort.signal }, (message) => {
      const answer = pick(message);
      return answer === undefined ? {} : { item: answer, end: true };
    });
    try {
      for await (const answer of replies) return answer;
      throw new OpenAIError('engine_error', 'The engine worker did not answer.');
    } catch (err) {
      if (abort.signal.aborted)
        throw new OpenAIError('engine_unavailable', 'The engine worker did not answer in time.');
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs one request on a port of its own: `read` turns each reply into an item of the channel
   * and says when the request is over. Errors, `chat/ask-alive`, cancellation and the host's
   * death are handled here, for every kind of request.
   */
  #request<T>(
    first: RequestMessage,
    options: ChatOptions,
    read: (message: ReplyMessage) => { item?: T; end?: boolean },
  ): Channel<T> {
    const { signal } = options;
    const items = new Channel<T>();
    if (signal.aborted) {
      items.fail(cancelled());
      return items;
    }
    let port: MessagePort | undefined;
    let untrack = () => {};
    const finish = () => {
      signal.removeEventListener('abort', onAbort);
      untrack();
      port?.close();
    };
    const fail = (error: OpenAIError) => {
      finish();
      items.fail(error);
    };
    const onAbort = () => {
      if (port) send(port, { type: 'chat/cancel' });
      fail(cancelled());
    };
    signal.addEventListener('abort', onAbort);
    this.#hostPort().then(
      (host) => {
        if (signal.aborted) return;
        if (this.#lost.has(host)) return fail(new HostLostError());
        untrack = this.#track(host, fail);
        const requestPort = openRequestPort(host, first);
        port = requestPort;
        requestPort.onmessage = (event: MessageEvent<ReplyMessage>) => {
          const message = event.data;
          if (message.type === 'chat/error') return fail(OpenAIError.deserialize(message.error));
          if (message.type === 'chat/ask-alive') {
            void (options.alive?.() ?? Promise.resolve(true)).then((alive) =>
              send(requestPort, { type: 'chat/alive', alive }),
            );
            return;
          }
          const { item, end } = read(message);
          if (item !== undefined) items.push(item);
          if (end) {
            finish();
            items.close();
          }
        };
      },
      (err: unknown) => fail(OpenAIError.from(err)),
    );
    return items;
  }

  #track(host: MessagePort, fail: (error: OpenAIError) => void): () => void {
    let requests = this.#running.get(host);
    if (!requests) this.#running.set(host, (requests = new Set()));
    requests.add(fail);
    return () => {
      requests.delete(fail);
      if (requests.size === 0 && this.#running.get(host) === requests) this.#running.delete(host);
    };
  }

  /** The host's status; 503 when the host does not answer in time. */
  async status(timeoutMs = STATUS_TIMEOUT_MS): Promise<HostStatus> {
    const port = openRequestPort(await this.#hostPort(), { type: 'status/get' });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      return await new Promise<HostStatus>((resolve, reject) => {
        timer = setTimeout(
          () => reject(new OpenAIError('engine_unavailable', 'The host tab did not answer.')),
          timeoutMs,
        );
        port.onmessage = (event: MessageEvent<ReplyMessage>) => {
          if (event.data.type === 'status/result') resolve(event.data.status);
        };
      });
    } finally {
      clearTimeout(timer);
      port.close();
    }
  }
}
