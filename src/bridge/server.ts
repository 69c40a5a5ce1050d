/**
 * @module
 * The engine worker's side of the bridge: it serves every request port the service worker opens
 * on a host port, runs the request on a `ChatBackend` (the queue), and pushes the reply back as
 * it is produced. Tokens are batched per turn of the event loop: a fast engine costs a few
 * messages, not one per token, and the first token leaves at once. A reply goes no further than
 * its window ahead of the service worker's reader: with no credit left, the server stops reading
 * the queue's channel (and so the engine pauses) until the service worker grants more.
 * The batching and the credit are in reply-pacing.ts.
 */
import type {
  ChatBackend,
  ChatOptions,
  ChatState,
  LoadingBackend,
  ModelService,
} from '../protocol/host/backend';
import { OpenAIError } from '../protocol/errors';
import type { HostStatus } from '../protocol/host/status';
import type { ChatRequest, EmbeddingRequest } from '../protocol/types';
import {
  eventBytes,
  replyToEvent,
  unreachable,
  type HostPortMessage,
  type ReplyMessage,
  type RequestMessage,
} from './messages';
import { serveExtract, type PdfReader } from './extract';
import { Credit, readerGone, TokenBatcher } from './reply-pacing';
/**
 * How long to wait for the service worker to say whether a request's page is still there. No
 * answer means the service worker is gone, and with it the fetch: the request is dropped.
 */
const ALIVE_TIMEOUT_MS = 2000;

/** What the server needs besides the backend. */
export interface HostServerOptions {
  /** The host's status but for `open_ports`, which the server counts. */
  status: () => Omit<HostStatus, 'open_ports'>;
  /** Told whenever `openPorts` changes. */
  onChange?: () => void;
  /** Downloads, deletions, unloads; without it those requests fail. */
  models?: ModelService;
  /** Reads a PDF's text (pdf.js); without it `extract/start` fails. */
  readPdf?: PdfReader;
}

/** Serves host ports for one engine worker. */
export class HostServer {
  readonly #backend: ChatBackend | LoadingBackend;
  readonly #options: HostServerOptions;
  #openPorts = 0;

  constructor(backend: ChatBackend | LoadingBackend, options: HostServerOptions) {
    this.#backend = backend;
    this.#options = options;
  }

  /** The whole status, as `/v1/hearth/status` shows it. */
  status(): HostStatus {
    return { ...this.#options.status(), open_ports: this.#openPorts };
  }

  /** Request ports with a request that has not ended. */
  get openPorts(): number {
    return this.#openPorts;
  }

  /** Serves the request ports the service worker opens on `hostPort`. */
  attach(hostPort: MessagePort): void {
    hostPort.onmessage = (event: MessageEvent<HostPortMessage>) => {
      if (event.data.type === 'request/open') this.#serve(event.data.port, event.data.first);
    };
  }

  #serve(port: MessagePort, first: RequestMessage): void {
    const abort = new AbortController();
    const post = (message: ReplyMessage) => port.postMessage(message);
    let answerAlive: ((alive: boolean) => void) | undefined;
    const alive = () =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => answerAlive?.(false), ALIVE_TIMEOUT_MS);
        answerAlive = (value) => {
          clearTimeout(timer);
          answerAlive = undefined;
          resolve(value);
        };
        post({ type: 'chat/ask-alive' });
      });
    let credit: Credit | undefined;
    const handle = (message: RequestMessage) => {
      switch (message.type) {
        case 'chat/start': {
          const options = { signal: abort.signal, requestId: message.requestId, alive };
          const window = (credit = new Credit(message.window));
          const send = (reply: ReplyMessage) => {
            const event = replyToEvent(reply);
            if (event) window.spend(eventBytes(event));
            post(reply);
          };
          const flow = { credit: window, waitMs: message.creditWaitMs, stop: () => abort.abort() };
          void this.#run(message.request, options, send, flow).finally(() => port.close());
          return;
        }
        case 'embed/start': {
          const options = { signal: abort.signal, requestId: message.requestId, alive };
          void this.#embed(message.request, options, post).finally(() => port.close());
          return;
        }
        case 'extract/start': {
          this.#count(1);
          void serveExtract(this.#options.readPdf, message, abort.signal, post).finally(() => {
            this.#count(-1);
            port.close();
          });
          return;
        }
        case 'chat/credit':
          credit?.grant(message.bytes);
          return;
        case 'model/load': {
          const options = { signal: abort.signal, requestId: message.requestId };
          void this.#load(message.model, options, post).finally(() => port.close());
          return;
        }
        case 'model/download':
          void this.#download(message.model, abort.signal, post).finally(() => port.close());
          return;
        case 'model/cancel-download':
          void this.#answer(post, port, (models) => models.cancelDownload(message.model));
          return;
        case 'model/delete':
          void this.#answer(post, port, (models) => models.deleteModel(message.model));
          return;
        case 'model/unload':
          void this.#answer(post, port, (models) => models.unload());
          return;
        case 'model/inspect':
          void this.#answer(post, port, async (models) => ({
            type: 'model/inspection',
            inspection: await models.inspect(message.model),
          }));
          return;
        case 'chat/cancel':
          abort.abort();
          answerAlive?.(false);
          return;
        case 'chat/alive':
          answerAlive?.(message.alive);
          return;
        case 'status/get':
          post({ type: 'status/result', status: this.status() });
          return;
        default:
          unreachable(message);
      }
    };
    handle(first);
    port.onmessage = (event: MessageEvent<RequestMessage>) => handle(event.data);
  }

  #count(delta: number): void {
    this.#openPorts += delta;
    this.#options.onChange?.();
  }

  #models(): ModelService {
    const models = this.#options.models;
    if (!models) throw new OpenAIError('engine_error', 'This engine manages no models.');
    return models;
  }

  /** Runs a management request with one answer (`model/done` unless it says otherwise). */
  async #answer(
    post: (message: ReplyMessage) => void,
    port: MessagePort,
    task: (models: ModelService) => Promise<ReplyMessage | void>,
  ): Promise<void> {
    try {
      post((await task(this.#models())) ?? { type: 'model/done' });
    } catch (err) {
      post({ type: 'chat/error', error: OpenAIError.fromEngine(err).serialize() });
    } finally {
      port.close();
    }
  }

  /** Streams a download's progress until it ends (or the requester stops listening). */
  async #download(
    model: string,
    signal: AbortSignal,
    post: (message: ReplyMessage) => void,
  ): Promise<void> {
    try {
      for await (const progress of this.#models().download(model, { signal })) {
        post({ type: 'model/progress', progress });
      }
    } catch (err) {
      if (!signal.aborted)
        post({ type: 'chat/error', error: OpenAIError.fromEngine(err).serialize() });
    }
  }

  async #load(
    model: string,
    options: ChatOptions,
    post: (message: ReplyMessage) => void,
  ): Promise<void> {
    this.#count(1);
    try {
      if (!('load' in this.#backend)) {
        throw new OpenAIError('model_not_found', `Nothing here loads '${model}'.`);
      }
      for await (const event of this.#backend.load(model, options)) {
        if (event.type === 'state' && event.state === 'loading')
          post({ type: 'chat/state', state: 'loading' });
      }
      if (!options.signal.aborted) post({ type: 'model/loaded', model });
    } catch (err) {
      if (!options.signal.aborted)
        post({ type: 'chat/error', error: OpenAIError.fromEngine(err).serialize() });
    } finally {
      this.#count(-1);
    }
  }

  /**
   * Runs an embeddings request: a load and a long computation are told (`chat/state`), then the
   * vectors go in one message. Its size is bounded by the request's, so it needs no window.
   */
  async #embed(
    request: EmbeddingRequest,
    options: ChatOptions,
    post: (message: ReplyMessage) => void,
  ): Promise<void> {
    this.#count(1);
    try {
      const embed = this.#backend.embed?.bind(this.#backend);
      if (!embed) throw new OpenAIError('engine_error', 'This engine serves no embeddings.');
      for await (const event of embed(request, options)) {
        if (event.type === 'state' && (event.state === 'loading' || event.state === 'generating'))
          post({ type: 'chat/state', state: event.state });
        else if (event.type === 'embeddings')
          post({
            type: 'embed/vectors',
            vectors: event.vectors,
            prompt_tokens: event.prompt_tokens,
          });
      }
    } catch (err) {
      if (!options.signal.aborted) {
        post({ type: 'chat/error', error: OpenAIError.fromEngine(err).serialize() });
      }
    } finally {
      this.#count(-1);
    }
  }

  async #run(
    request: ChatRequest,
    options: ChatOptions,
    post: (message: ReplyMessage) => void,
    flow: { credit: Credit; waitMs: number; stop: () => void },
  ): Promise<void> {
    this.#count(1);
    const batcher = new TokenBatcher(post);
    let lastState: ChatState = 'queued';
    try {
      for await (const event of this.#backend.chat(request, options)) {
        switch (event.type) {
          case 'tokens':
            batcher.add(event.tokens);
            break;
          case 'state':
            // The service worker assumes `queued` and treats `running` alike (both are
            // `engine_busy` at the deadline): only a load, and what follows it, is worth a
            // message, and `generating`, which starts a reply sent whole and keeps it alive.
            if (
              event.state !== 'loading' &&
              event.state !== 'generating' &&
              lastState !== 'loading'
            )
              break;
            lastState = event.state;
            batcher.flush();
            post({ type: 'chat/state', state: event.state });
            break;
          case 'tool_calls':
            batcher.flush();
            post({ type: 'chat/tool_calls', calls: event.calls });
            break;
          case 'choices':
            batcher.flush();
            post({ type: 'chat/choices', choices: event.choices });
            break;
          case 'end':
            batcher.flush();
            post({ type: 'chat/end', finish_reason: event.finish_reason, usage: event.usage });
            break;
          case 'embeddings':
            throw new OpenAIError('engine_error', 'The engine answered a chat with embeddings.');
          default:
            unreachable(event);
        }
        // Its reader is a whole window behind: read no further (the engine pauses behind this).
        // A service worker that grants nothing for too long is gone (a port tells no one): the
        // request stops, or it would hold the engine for ever.
        if (flow.credit.exhausted && !(await flow.credit.wait(options.signal, flow.waitMs))) {
          batcher.flush();
          post({ type: 'chat/error', error: readerGone(flow.waitMs).serialize() });
          flow.stop();
          break;
        }
      }
    } catch (err) {
      batcher.flush();
      if (!options.signal.aborted) {
        post({ type: 'chat/error', error: OpenAIError.fromEngine(err).serialize() });
      }
    } finally {
      this.#count(-1);
    }
  }
}
