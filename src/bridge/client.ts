/**
 * @module
 * The service worker's `ChatBackend`: each request gets a fresh `MessageChannel` whose far end
 * goes to the engine worker through the host port, so every request streams on its own port
 * and can be cancelled alone. When the host dies (`hostLost`), its requests fail at once with
 * `HostLostError`, which the endpoint may answer by running them on the next host.
 *
 * What a chat reply may hold here is bounded. The engine worker sends at most a window of it
 * ahead of the reader, which grants credit back as it reads; with none left, the engine waits.
 * So that one reader cannot hold the engine for ever, a request whose reader takes nothing for
 * `readerWaitMs` while the engine waits on it ends with `reader_too_slow`: what it held is
 * dropped, its generation is stopped, and the next request runs. Finished replies wait for their
 * readers, up to `totalBytes` across every request; beyond that, the one whose reader has gone
 * longest without reading ends the same way.
 */
import {
  HostLostError,
  type ChatEvent,
  type ChatOptions,
  type ModelBackend,
  type ModelInspection,
} from '../protocol/host/backend';
import { finished, type DownloadProgress } from '../protocol/host/downloads';
import { OpenAIError } from '../protocol/errors';
import type { HostStatus } from '../protocol/host/status';
import type { ChatRequest, EmbeddingRequest } from '../protocol/types';
import { Channel } from './channel';
import { extracted, extractStart, readExtract, type Section } from './extract';
import {
  eventBytes,
  REPLY_WINDOW_BYTES,
  replyToEvent,
  type HostPortMessage,
  type ReplyMessage,
  type RequestMessage,
} from './messages';

/** Resolves to the current host port, or throws 503 `engine_unavailable`. */
export type HostPortSource = () => Promise<MessagePort>;

/** Limits on what replies may hold in the service worker. */
export interface FlowOptions {
  /** Bytes of a reply the engine may send ahead of its reader (`eventBytes`). */
  windowBytes?: number;
  /** Longest a reader may take nothing while the engine waits on it. */
  readerWaitMs?: number;
  /** Most bytes of replies held for their readers, across every request. */
  totalBytes?: number;
}

/** How long the engine waits on a reader that takes nothing: half what it may itself be silent. */
export const READER_WAIT_MS = 30_000;
/** How much longer than a reader the engine worker waits for credit before it gives up. */
const CREDIT_WAIT_MARGIN_MS = 10_000;
/** What replies may hold across every request: 16 windows. */
export const TOTAL_REPLY_BYTES = 16 * REPLY_WINDOW_BYTES;

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

function tooSlow(seconds: number): OpenAIError {
  return new OpenAIError(
    'reader_too_slow',
    `The reader took nothing of this reply for ${seconds} s while the engine waited on it; the request was stopped.`,
  );
}

function crowdedOut(): OpenAIError {
  return new OpenAIError(
    'reader_too_slow',
    'The service worker holds as much unread reply as it may, and this reader had gone longest without reading; the request was stopped.',
  );
}

/** One chat reply's flow: what it holds unread, and the credit the engine worker has. */
interface Flow {
  /** Bytes held for the reader. */
  unread: number;
  /** When the reader last took something. */
  lastTake: number;
  /** Ends the request with `reader_too_slow`, dropping what it holds. */
  stop: (error: OpenAIError) => void;
}

/** A `ChatBackend` that runs requests in the engine worker behind the host port. */
export class PortBackend implements ModelBackend {
  readonly #hostPort: HostPortSource;
  /** For each host port, how to fail each request still running on it. */
  readonly #running = new Map<MessagePort, Set<(error: OpenAIError) => void>>();
  /** Ports of hosts known to be gone, in case one is handed out just as its host dies. */
  readonly #lost = new WeakSet<MessagePort>();
  readonly #window: number;
  readonly #readerWaitMs: number;
  readonly #totalBytes: number;
  /** Chat replies holding something for their readers. */
  readonly #flows = new Set<Flow>();
  #buffered = 0;

  constructor(hostPort: HostPortSource, flow: FlowOptions = {}) {
    this.#hostPort = hostPort;
    this.#window = flow.windowBytes ?? REPLY_WINDOW_BYTES;
    this.#readerWaitMs = flow.readerWaitMs ?? READER_WAIT_MS;
    this.#totalBytes = flow.totalBytes ?? TOTAL_REPLY_BYTES;
  }

  /** Bytes of chat replies (`eventBytes`) held for their readers, across every request. */
  get bufferedBytes(): number {
    return this.#buffered;
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
      window: this.#window,
      // The service worker ends a stopped reader's request itself; this is for when it is gone.
      creditWaitMs: this.#readerWaitMs + CREDIT_WAIT_MARGIN_MS,
    };
    return this.#request(start, options, chatReply, true);
  }

  /** Runs an embeddings request; the channel ends with its vectors. */
  embed(request: EmbeddingRequest, options: ChatOptions): Channel<ChatEvent> {
    const start: RequestMessage = {
      type: 'embed/start',
      requestId: options.requestId ?? '',
      request,
    };
    return this.#request(start, options, (message) => {
      const event = replyToEvent(message);
      return event ? { item: event, end: event.type === 'embeddings' } : {};
    });
  }

  /** A PDF's text, read by pdf.js in the engine worker (extract.ts). */
  extractPdf(bytes: Uint8Array, options: ChatOptions, filename?: string): Promise<Section[]> {
    return extracted(this.#request(extractStart(bytes, options, filename), options, readExtract));
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
    flowControlled = false,
  ): Channel<T> {
    const { signal } = options;
    let port: MessagePort | undefined;
    let ended = false;
    // Flow control (chat replies): what the reader took since the last grant, and whether the
    // engine worker has spent its credit and waits.
    const flow: Flow = { unread: 0, lastTake: Date.now(), stop: (error) => stop(error) };
    let received = 0;
    let granted = this.#window;
    let owed = 0;
    let readerTimer: ReturnType<typeof setTimeout> | undefined;
    const held = (bytes: number) => {
      flow.unread += bytes;
      this.#buffered += bytes;
      if (flow.unread > 0) this.#flows.add(flow);
      else this.#flows.delete(flow);
    };
    /** While the engine waits on this reader, it has `readerWaitMs` to take something. */
    const watchReader = () => {
      clearTimeout(readerTimer);
      readerTimer = undefined;
      if (ended || received < granted) return;
      const ms = this.#readerWaitMs;
      readerTimer = setTimeout(() => stop(tooSlow(Math.round(ms / 1000))), ms);
    };
    const watch = flowControlled
      ? {
          onTake: (item: T) => {
            const bytes = eventBytes(item as ChatEvent);
            held(-bytes);
            flow.lastTake = Date.now();
            owed += bytes;
            // Credit goes back a quarter window at a time, and at every read while the engine
            // waits: each is a sign of life to the engine worker, which gives up on silence.
            if (port && !ended && (owed >= this.#window / 4 || received >= granted)) {
              send(port, { type: 'chat/credit', bytes: owed });
              granted += owed;
              owed = 0;
            }
            watchReader();
          },
          onDrop: (dropped: readonly T[]) => {
            for (const item of dropped) held(-eventBytes(item as ChatEvent));
          },
        }
      : {};
    const items = new Channel<T>(undefined, watch);
    if (signal.aborted) {
      items.fail(cancelled());
      return items;
    }
    let untrack = () => {};
    const finish = () => {
      ended = true;
      clearTimeout(readerTimer);
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
      finish();
      // Nobody reads a cancelled reply: what it held goes now.
      items.discard(cancelled());
    };
    /** Ends the request for its reader's sake: the engine stops, what it held is dropped. */
    const stop = (error: OpenAIError) => {
      if (port && !ended) send(port, { type: 'chat/cancel' });
      finish();
      items.discard(error);
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
          if (end) finish();
          if (item !== undefined) {
            if (flowControlled) {
              const bytes = eventBytes(item as ChatEvent);
              received += bytes;
              held(bytes);
            }
            items.push(item);
            if (flowControlled) {
              watchReader();
              if (this.#buffered > this.#totalBytes) this.#crowdOut();
            }
          }
          if (end) items.close();
        };
      },
      (err: unknown) => fail(OpenAIError.from(err)),
    );
    return items;
  }

  /** Too much is held for readers: ends the request whose reader has gone longest without reading. */
  #crowdOut(): void {
    let stalest: Flow | undefined;
    for (const flow of this.#flows) {
      if (!stalest || flow.lastTake < stalest.lastTake) stalest = flow;
    }
    stalest?.stop(crowdedOut());
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
