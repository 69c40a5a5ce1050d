/**
 * @module
 * The tab's end of the relay (relay/relay.js): a WebSocket that brings callers' requests from the
 * relay, replays each against this page's own API (the very fetch, through the service worker,
 * that any code of the page would make) and streams the response back as it comes. Only the API's
 * paths are replayed, whatever the relay asks. A response's bytes go out only as the relay gives
 * credit back, so a caller that reads slowly slows the reading of its response here, and the
 * service worker's stream behind it. Bodies travel as binary messages, the request's id first
 * (relay/protocol.js), never as base64 in JSON.
 */
import {
  frameHeader,
  FRAME_HEADER_BYTES,
  isApiPath,
  PROTOCOL_VERSION,
  readFrame,
  WINDOW_BYTES,
  type RelayHello,
  type RelayToTab,
  type TabToRelay,
} from '../../relay/protocol.js';

/** How the link replays a request: `fetch` on the page's own API by default. */
export type Replay = (url: string, init: RequestInit) => Promise<Response>;

export interface RelayLinkOptions {
  /** The relay's WebSocket address (loopback, checked by the caller). */
  url: string;
  /** The one-time pairing code, or the session of an earlier pairing of this tab. */
  credential: { code: string } | { session: string };
  /** The API's base, `{origin}{base}v1/`: replayed paths resolve under it. */
  apiBase: string;
  /** Runs once the relay let the tab in, before the tab says it is ready (registers the key). */
  onHello: (hello: RelayHello) => Promise<void>;
  /** The WebSocket class (tests pass Node's). */
  WebSocket?: typeof WebSocket;
  replay?: Replay;
}

export type LinkState = 'connecting' | 'paired' | 'closed';

/** A request being replayed: how to stop it and how much it may still send. */
interface Replaying {
  controller: AbortController;
  credit: number;
  /** Wakes the sender when credit arrives. */
  wake: (() => void) | null;
}

type RelayRequest = Extract<RelayToTab, { type: 'request' }>;

/** Bytes of request `id`'s body as one binary message: the id, then the bytes. */
function bodyMessage(id: number, bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const message = new Uint8Array(FRAME_HEADER_BYTES + bytes.byteLength);
  message.set(frameHeader(id));
  message.set(bytes, FRAME_HEADER_BYTES);
  return message;
}

/**
 * One connection to the relay. Fires `state` whenever `state` changes; `closeReason` says why it
 * closed.
 */
export class RelayLink extends EventTarget {
  state: LinkState = 'connecting';
  /** Why the link closed, for people. */
  closeReason = '';
  /** The WebSocket's close code, once it closed (1001: this page is going away). */
  closeCode: number | null = null;
  /** The relay's hello, once it came. */
  hello: RelayHello | null = null;
  readonly #options: RelayLinkOptions;
  readonly #socket: WebSocket;
  readonly #replaying = new Map<number, Replaying>();
  /** Requests whose body, the binary message after them, has not come yet. */
  readonly #awaitingBody = new Map<number, RelayRequest>();
  #ended = false;

  constructor(options: RelayLinkOptions) {
    super();
    this.#options = options;
    const Socket = options.WebSocket ?? WebSocket;
    const url = new URL(options.url);
    const [name, value] =
      'code' in options.credential
        ? ['code', options.credential.code]
        : ['session', options.credential.session];
    url.searchParams.set(name, value);
    this.#socket = new Socket(url.href);
    // Bodies come as binary messages: as bytes at once, not as a Blob to read.
    this.#socket.binaryType = 'arraybuffer';
    this.#socket.addEventListener('message', (event) => this.#onMessage(event.data));
    this.#socket.addEventListener('close', (event) => this.#onClose(event.code, event.reason));
    // A refused or failed connection closes it too, and that says what there is to say.
    this.#socket.addEventListener('error', () => undefined);
  }

  /** Whether this end closed the link (`end()`). */
  get ended(): boolean {
    return this.#ended;
  }

  /** Ends the pairing: the relay forgets this tab's session. */
  end(): void {
    this.#ended = true;
    this.#send({ type: 'bye' });
    this.#socket.close(1000, 'pairing ended');
  }

  #send(message: TabToRelay | Uint8Array<ArrayBuffer>): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return;
    this.#socket.send(message instanceof Uint8Array ? message : JSON.stringify(message));
  }

  #setState(state: LinkState, reason = ''): void {
    this.state = state;
    this.closeReason = reason;
    this.dispatchEvent(new Event('state'));
  }

  #onMessage(data: unknown): void {
    if (data instanceof ArrayBuffer) {
      this.#onBody(new Uint8Array(data));
      return;
    }
    let message: RelayToTab;
    try {
      message = JSON.parse(String(data)) as RelayToTab;
    } catch {
      return;
    }
    switch (message.type) {
      case 'hello':
        void this.#onHello(message);
        return;
      case 'request':
        if (this.state !== 'paired') return;
        // A body of a byte or more follows as a binary message; the request waits for it.
        if (typeof message.body === 'number' && message.body > 0) {
          this.#awaitingBody.set(message.id, message);
        } else {
          void this.#replay(message, message.body === null ? null : new Uint8Array(0));
        }
        return;
      case 'credit': {
        const replaying = this.#replaying.get(message.id);
        if (!replaying) return;
        replaying.credit += message.bytes;
        replaying.wake?.();
        return;
      }
      case 'cancel':
        this.#awaitingBody.delete(message.id);
        this.#replaying.get(message.id)?.controller.abort();
        return;
    }
  }

  async #onHello(hello: RelayHello): Promise<void> {
    if (hello.version !== PROTOCOL_VERSION) {
      this.#socket.close(4000, 'protocol version');
      this.#setState(
        'closed',
        `The relay speaks protocol ${hello.version}; this app speaks ${PROTOCOL_VERSION}. Update one of them.`,
      );
      return;
    }
    this.hello = hello;
    try {
      await this.#options.onHello(hello);
    } catch (error) {
      this.#socket.close(1000, 'not ready');
      this.#setState('closed', error instanceof Error ? error.message : String(error));
      return;
    }
    this.#send({ type: 'ready', version: PROTOCOL_VERSION });
    this.#setState('paired');
  }

  /** A request's body: the request that announced it is replayed with it. */
  #onBody(message: Uint8Array): void {
    const frame = readFrame(message);
    const request = frame === null ? undefined : this.#awaitingBody.get(frame.id);
    if (frame === null || request === undefined) return;
    this.#awaitingBody.delete(frame.id);
    void this.#replay(request, frame.bytes);
  }

  #onClose(code: number, reason: string): void {
    this.closeCode = code;
    this.#awaitingBody.clear();
    for (const { controller } of this.#replaying.values()) controller.abort();
    this.#replaying.clear();
    if (this.state === 'closed') return;
    // The browser does not say why a WebSocket was refused: the likely reasons, then.
    const why = this.#ended
      ? 'The pairing was ended.'
      : this.hello === null
        ? 'The relay refused the pairing: its code is wrong or was used already, another tab is paired, or the relay is not running. Open the link the relay prints now.'
        : `The relay closed the connection${reason ? ` (${reason})` : code === 1006 ? ' (it stopped?)' : ''}.`;
    this.#setState('closed', why);
  }

  async #replay({ id, method, path, headers }: RelayRequest, body: Uint8Array | null) {
    // Only the API's paths, whatever the relay sends: dot segments resolved first.
    const target = new URL(path, 'http://relay');
    const replaying: Replaying = {
      controller: new AbortController(),
      credit: WINDOW_BYTES,
      wake: null,
    };
    this.#replaying.set(id, replaying);
    try {
      if (!isApiPath(target.pathname)) throw new Error(`'${target.pathname}' is not an API path.`);
      const url = this.#options.apiBase + target.pathname.slice('/v1/'.length) + target.search;
      const replay = this.#options.replay ?? ((u, init) => fetch(u, init));
      const response = await replay(url, {
        method,
        headers,
        ...(body !== null && { body: body as Uint8Array<ArrayBuffer> }),
        signal: replaying.controller.signal,
        // A caller's request: never this page's cookies.
        credentials: 'omit',
        cache: 'no-store',
      });
      this.#send({
        type: 'head',
        id,
        status: response.status,
        headers: Object.fromEntries(response.headers),
      });
      if (response.body) await this.#pump(id, response.body, replaying);
      this.#send({ type: 'end', id });
    } catch (error) {
      if (!replaying.controller.signal.aborted) {
        const message = error instanceof Error ? error.message : String(error);
        this.#send({
          type: 'failed',
          id,
          message: `The tab could not replay the request: ${message}`,
        });
      }
    } finally {
      this.#replaying.delete(id);
    }
  }

  /**
   * Sends the body as it comes, never more than the relay's credit allows: a read larger than the
   * credit left goes out in part, and the rest waits for credit.
   */
  async #pump(id: number, body: ReadableStream<Uint8Array>, replaying: Replaying): Promise<void> {
    const reader = body.getReader();
    const { signal } = replaying.controller;
    const stop = () => {
      void reader.cancel().catch(() => undefined);
      replaying.wake?.();
    };
    signal.addEventListener('abort', stop, { once: true });
    /** Bytes read and not sent yet. */
    let unsent: Uint8Array | null = null;
    try {
      for (;;) {
        while (replaying.credit <= 0 && !signal.aborted) {
          await new Promise<void>((resolve) => (replaying.wake = resolve));
          replaying.wake = null;
        }
        if (signal.aborted) throw signal.reason;
        if (unsent === null) {
          const { done, value } = await reader.read();
          if (done) return;
          if (value.byteLength === 0) continue;
          unsent = value;
        }
        const part: Uint8Array = unsent.subarray(0, replaying.credit);
        unsent = part.byteLength < unsent.byteLength ? unsent.subarray(part.byteLength) : null;
        replaying.credit -= part.byteLength;
        this.#send(bodyMessage(id, part));
      }
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }
}
