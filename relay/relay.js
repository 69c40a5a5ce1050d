/**
 * @module
 * The relay: an HTTP server on this machine that forwards the API's requests over a WebSocket to
 * one paired tab of the app, which replays them against its own service worker and streams the
 * responses back. The relay judges nothing of a request (keys, bodies, models): the service worker
 * does, so the API behaves the same whether it is called in the page or through here.
 *
 * What it does decide is who may talk to it: requests addressed to this machine by name only
 * (`Host` — DNS rebinding), the API's paths only, and one tab, of the app's origin, that proved it
 * holds the pairing code printed in this terminal. And what it takes on: it refuses a body before
 * reading it where the API's first checks would (no key, not JSON, declared over the limit), and
 * bounds connections, requests in flight, bodies held and the time a request may take to arrive.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import { WebSocketServer } from 'ws';
import { loadConfig } from './config.js';
import {
  bearerKey,
  hostName,
  isApiPath,
  isLoopbackHost,
  isLoopbackPeer,
  PROTOCOL_VERSION,
  RELAY_PATH,
  takesBody,
  WINDOW_BYTES,
} from './protocol.js';

/** @typedef {import('./protocol.js').RelayToTab} RelayToTab */
/** @typedef {import('./protocol.js').TabToRelay} TabToRelay */
/** @typedef {import('node:http').IncomingMessage} IncomingMessage */
/** @typedef {import('node:http').ServerResponse} ServerResponse */
/** @typedef {import('ws').WebSocket} WebSocket */

/** The largest body the API takes (DESIGN §3): the relay answers 413 beyond it, as the API would. */
const BODY_LIMIT = 4 * 1024 * 1024;
/**
 * How long a connection whose request was answered before its body arrived may go on sending it
 * (read and dropped) before it is closed: closing at once, on bytes not read yet, would reset the
 * connection, and the caller could lose the answer.
 */
const LINGER_MS = 1000;
/** The longest failure message of the tab's passed on to a caller. */
const MESSAGE_LIMIT = 1000;
/** What a caller is told when the tab failed a request without a message that is text. */
const NO_REASON = 'The tab could not answer the request, and did not say why.';
/** The request headers a tab replays; the browser sets the rest itself. */
const FORWARDED_REQUEST_HEADERS = ['authorization', 'content-type', 'accept'];
/** Response headers that describe the tab's connection, not the response: Node sets its own. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
]);

/** Bytes written to a caller that make the relay give the tab credit back. */
const CREDIT_BATCH = WINDOW_BYTES / 4;

/** Why a request got no (complete) response when its tab went away. */
const TAB_GONE =
  'The paired tab went away (closed, reloaded or unpaired) before the response was complete.';

/**
 * @typedef {object} RelayOptions
 * @property {number} [port] 8788 by default; 0 picks a free one.
 * @property {string} [host] The address to listen on, `127.0.0.1` by default.
 * @property {string} [app] The page to pair: the app's address, or any page that calls
 *   `startHearth()` (a path, a query and all); only its origin may pair, and the link opens it.
 * @property {string} configFile Where the relay's key is kept.
 * @property {(line: string) => void} [log] Where the relay says what happens.
 * @property {number} [heartbeatMs] How often to check that the tab is still there.
 * @property {number} [maxConnections] HTTP connections open at once (128): past it a new one
 *   closes the oldest idle connection (keep-alive, or headers still arriving), or is closed itself
 *   when every open one carries a request.
 * @property {number} [maxRequests] Requests in flight at once (64): more are 429 `queue_full`.
 * @property {number} [maxBodyBytes] Request bodies held at once, being read or waiting to reach
 *   the tab (32 MiB): a body that does not fit is 429 `queue_full`.
 * @property {number} [headersTimeoutMs] Time for a request's headers to arrive (10 s), then 408.
 * @property {number} [requestTimeoutMs] Time for a whole request to arrive (60 s), then 408;
 *   the response may take as long as it takes.
 * @property {number} [keepAliveTimeoutMs] How long an idle kept-alive connection stays open (5 s).
 * @property {number} [reconnectGraceMs] How long a tab that went away may come back with its
 *   session, as a reload does (10 s); after that the pairing has ended.
 */

/**
 * The limits, with their defaults.
 * @typedef {Required<Pick<RelayOptions, 'maxConnections' | 'maxRequests' | 'maxBodyBytes' | 'headersTimeoutMs' | 'requestTimeoutMs' | 'keepAliveTimeoutMs' | 'reconnectGraceMs'>>} Limits
 */
/** @type {Limits} */
export const DEFAULT_LIMITS = {
  maxConnections: 128,
  maxRequests: 64,
  maxBodyBytes: 32 * 1024 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  reconnectGraceMs: 10_000,
};

/**
 * @typedef {object} Pending A forwarded request waiting for, or streaming, its response.
 * @property {ServerResponse} res
 * @property {boolean} sse The response is an event stream (a failure ends it with an event).
 * @property {number} owed Bytes handed to the caller's connection, not yet credited to the tab.
 */

/**
 * An OpenAI-shaped error body, as the API's own (DESIGN §3).
 * @param {string} code
 * @param {string} type
 * @param {string} message
 */
function errorBody(code, type, message) {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** A `req_…` id, as the API's own. */
function requestId() {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/**
 * Answers with an error of the relay's own.
 * @param {ServerResponse} res
 * @param {number} status
 * @param {string} code
 * @param {string} type
 * @param {string} message
 * @param {Record<string, string>} [headers]
 */
function fail(res, status, code, type, message, headers = {}) {
  const body = errorBody(code, type, message);
  // The reason phrase named: one set by a `writeHead` that then threw must not stay ("503 OK").
  res.writeHead(status, STATUS_CODES[status], {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId(),
    ...headers,
  });
  res.end(body);
}

/**
 * The API's first checks of a body's request, made before a byte of the body is read, in the
 * API's order (DESIGN §3) and with its answers: a key (401), JSON (415), the declared size (413).
 * Whether the tab accepts the key is the tab's to say; that there is one, the relay checks.
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @param {number} declared The `Content-Length`, 0 when there is none.
 * @returns {[number, string, string, string] | null} The refusal (status, code, type, message).
 */
function refusalUnread(headers, declared) {
  if (bearerKey(headers.authorization) === null) {
    return [
      401,
      'invalid_api_key',
      'authentication_error',
      'You did not provide an API key: send it as `Authorization: Bearer <key>`.',
    ];
  }
  const type = headers['content-type'] ?? '';
  if (type.split(';', 1)[0]?.trim().toLowerCase() !== 'application/json') {
    const got = type === '' ? 'no content type' : `'${type.slice(0, 100)}'`;
    return [
      415,
      'unsupported_media_type',
      'invalid_request_error',
      `The request body must be sent as 'application/json' (got ${got}).`,
    ];
  }
  if (declared > BODY_LIMIT) return TOO_LARGE;
  return null;
}

/** 413, as the API answers a body over its limit. @type {[number, string, string, string]} */
const TOO_LARGE = [
  413,
  'request_too_large',
  'invalid_request_error',
  `The request body is larger than the limit of ${BODY_LIMIT} bytes.`,
];

/**
 * `text` cut to `limit` characters, with `…` where it was cut.
 * @param {string} text
 * @param {number} limit
 */
function cut(text, limit) {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/**
 * `text` with its control characters (C0, DEL, C1; not the line's own spaces) written as `\xNN`,
 * so that nothing a caller sends can act on the terminal that shows the log.
 * @param {string} text
 */
export function printable(text) {
  return text.replace(
    // eslint-disable-next-line no-control-regex -- control characters are what it finds
    /[\u0000-\u001f\u007f-\u009f]/g,
    (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** Lines logged at most `limit` a window; the rest counted, and said in one line after it. */
export class RateLimitedLog {
  #log;
  #limit;
  #windowMs;
  #count = 0;
  #dropped = 0;
  /** @type {ReturnType<typeof setTimeout> | null} */
  #timer = null;

  /**
   * @param {(line: string) => void} log
   * @param {number} [limit]
   * @param {number} [windowMs]
   */
  constructor(log, limit = 10, windowMs = 10_000) {
    this.#log = log;
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** @param {string} line */
  note(line) {
    if (this.#timer === null) {
      this.#timer = setTimeout(() => this.#flush(), this.#windowMs);
      this.#timer.unref();
    }
    if (this.#count < this.#limit) {
      this.#count += 1;
      this.#log(line);
    } else {
      this.#dropped += 1;
    }
  }

  #flush() {
    if (this.#dropped > 0) {
      this.#log(`… and ${this.#dropped} more like it in ${this.#windowMs / 1000} s, not shown.`);
    }
    this.#count = 0;
    this.#dropped = 0;
    this.#timer = null;
  }

  /** Says what was held back, and stops. */
  close() {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#flush();
  }
}

/**
 * Whether `address` means every interface (`0.0.0.0`, `::`).
 * @param {string} address
 */
function isAnyAddress(address) {
  return address === '0.0.0.0' || address === '::';
}

/**
 * Whether a token a client showed is the one expected, compared in constant time.
 * @param {string | null} shown
 * @param {string | null} expected
 */
function sameToken(shown, expected) {
  if (shown === null || expected === null) return false;
  const a = Buffer.from(shown);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** One-time codes and session tokens: 128 random bits. */
function token() {
  return randomBytes(16).toString('base64url');
}

/**
 * The relay, started: listening, with its key loaded.
 */
export class Relay {
  /** @type {import('node:http').Server} */
  #server;
  #wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  /** @type {string} */
  #key;
  #appUrl;
  #appOrigin;
  /** @type {(line: string) => void} */
  #log;
  /** A name callers may address besides this machine's: the non-loopback address listened on. */
  /** @type {string | null} */
  #extraHost;
  /** Whether it listens on every interface (0.0.0.0, ::): then only this machine may call. */
  #anyAddress = false;
  /** Refusals and a tab's faults, logged at a bounded rate: anyone on the machine can cause thousands. */
  #refusals = new RateLimitedLog((line) => this.#log(line));
  /** The code the next pairing must show; a new one once it is used. */
  #code = token();
  /** The paired tab's session, to let it back in after a reload; null when nobody is paired. */
  /** @type {string | null} */
  #session = null;
  /** The tab's socket, once it said it is ready. @type {WebSocket | null} */
  #tab = null;
  /** A socket that was let in and has not said it is ready yet. @type {WebSocket | null} */
  #joining = null;
  /** @type {Map<number, Pending>} */
  #pending = new Map();
  #nextId = 1;
  /** @type {NodeJS.Timeout | undefined} */
  #heartbeat;
  /** `http://host:port`, once listening. */
  #origin = '';
  /** Sockets that answered the last ping. @type {WeakSet<WebSocket>} */
  #alive = new WeakSet();
  /** @type {Limits} */
  #limits;
  /**
   * Every HTTP connection, least recently busy first, and whether a request is under way on it.
   * @type {Map<import('node:net').Socket, { busy: boolean }>}
   */
  #connections = new Map();
  /** Requests accepted and not answered in full yet. */
  #inFlight = 0;
  /** Bytes of request bodies read and not handed to the tab's socket yet. */
  #bodyBytes = 0;
  /** Ends the session of a tab that went away and did not come back. @type {NodeJS.Timeout | undefined} */
  #graceTimer;

  /**
   * @param {import('node:http').Server} server
   * @param {string} key
   * @param {Required<Omit<RelayOptions, 'configFile' | keyof Limits>> & { limits: Limits }} options
   */
  constructor(server, key, options) {
    this.#server = server;
    this.#limits = options.limits;
    this.#key = key;
    this.#appUrl = new URL(options.app);
    this.#appOrigin = this.#appUrl.origin;
    // Every line is made printable: a caller's Origin may carry control bytes (C1's 0x9B is a
    // terminal's escape sequence introducer).
    this.#log = (line) => options.log(printable(line));
    this.#anyAddress = isAnyAddress(options.host);
    const listening = hostName(options.host.includes(':') ? `[${options.host}]` : options.host);
    this.#extraHost =
      listening === null || isLoopbackHost(listening) || isAnyAddress(options.host)
        ? null
        : listening;
    server.on('connection', (socket) => this.#onConnection(socket));
    server.on('request', (req, res) => this.#onRequest(req, res));
    // `Expect: 100-continue` (curl's, for bodies over 1 MiB): a refusal goes out before the body.
    server.on('checkContinue', (req, res) => this.#onRequest(req, res, true));
    server.on('upgrade', (req, socket, head) => {
      // The tab's socket, or a refused attempt: never one of the connections shed for others.
      this.#connections.delete(/** @type {import('node:net').Socket} */ (socket));
      this.#onUpgrade(req, socket, head);
    });
    this.#heartbeat = setInterval(() => this.#checkTab(), options.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** `http://host:port`, where the relay listens. */
  get origin() {
    if (this.#origin) return this.#origin;
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    // Listening on every address, this machine's own is the one to print.
    const shown = isAnyAddress(address.address) ? '127.0.0.1' : address.address;
    const host = shown.includes(':') ? `[${shown}]` : shown;
    // Kept: the address is gone once the server closes, and messages still name it.
    this.#origin = `http://${host}:${address.port}`;
    return this.#origin;
  }

  /** Who may call, in a line for the terminal: what the address listened on exposes. */
  get exposure() {
    if (this.#extraHost !== null) {
      return `Callers: this machine and the network, at ${this.origin} (with a key the tab accepts).`;
    }
    if (this.#anyAddress) {
      return 'Callers: this machine only. The relay listens on every interface but refuses callers from the network; to serve the network, start it with --host set to this machine’s network address.';
    }
    return 'Callers: this machine only.';
  }

  /** The base address for gateways and `curl`: `{origin}/v1`. */
  get baseUrl() {
    return `${this.origin}/v1`;
  }

  /** The base address for OpenAI SDKs: `{origin}/v1/openai` (the `/v1` one works too). */
  get sdkBaseUrl() {
    return `${this.origin}/v1/openai`;
  }

  /** The relay's API key. */
  get key() {
    return this.#key;
  }

  /** The WebSocket address a tab connects to. */
  get wsUrl() {
    // The app can connect to no IPv6 literal (its Content Security Policy cannot name one).
    return `${this.origin.replace(/^http/, 'ws').replace('[::1]', 'localhost')}${RELAY_PATH}`;
  }

  /**
   * The link that pairs a tab: the page given as `app` (the app, or any page that calls
   * `startHearth()`), told where the relay is and the current one-time code. The page's own query
   * stays; a pairing query it had is replaced.
   */
  get pairingLink() {
    const link = new URL(this.#appUrl);
    const kept = link.search
      .slice(1)
      .split('&')
      .filter((part) => part !== '' && !/^(?:relay|pair)(?:=|$)/.test(part));
    // Not `searchParams`, which would encode the address: people read this link before opening it.
    link.search = [...kept, `relay=${this.wsUrl}`, `pair=${this.#code}`].join('&');
    return link.href;
  }

  /** Whether a tab serves requests now. */
  get paired() {
    return this.#tab !== null;
  }

  /** Stops listening; requests in flight end, the tab is told by its socket closing. */
  async close() {
    clearInterval(this.#heartbeat);
    clearTimeout(this.#graceTimer);
    this.#refusals.close();
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
    await new Promise((resolve) => {
      this.#server.close(resolve);
      this.#server.closeAllConnections();
    });
  }

  /**
   * Whether a connection's peer may call: any where the user named a network address to listen
   * on; otherwise only this machine (on 127.0.0.1 no other can reach it, and on every interface,
   * 0.0.0.0 or ::, a `Host` header saying localhost proves nothing).
   * @param {string | undefined} address
   */
  #peerAllowed(address) {
    return this.#extraHost !== null || isLoopbackPeer(address);
  }

  /**
   * Whether a request's `Host` names this machine, or the address the relay was told to listen on.
   * @param {string | undefined} host
   */
  #hostAllowed(host) {
    return isLoopbackHost(host) || (this.#extraHost !== null && hostName(host) === this.#extraHost);
  }

  /**
   * Keeps the connections within the limit: a new one past it closes the least recently busy
   * connection that carries no request (idle between requests, or its headers still arriving: a
   * slow or stalled caller), so that a caller that sends its request is answered. When every open
   * connection carries a request, the new one is closed.
   * @param {import('node:net').Socket} socket
   */
  #onConnection(socket) {
    if (this.#connections.size >= this.#limits.maxConnections) {
      const idle = [...this.#connections].find(([, state]) => !state.busy)?.[0];
      if (idle === undefined) {
        this.#refusals.note(
          `Refused a connection: ${this.#limits.maxConnections} are open, each with a request under way.`,
        );
        socket.destroy();
        return;
      }
      this.#refusals.note(
        `Closed an idle connection: ${this.#limits.maxConnections} were open, and another caller came.`,
      );
      this.#connections.delete(idle);
      idle.destroy();
    }
    this.#connections.set(socket, { busy: false });
    socket.once('close', () => this.#connections.delete(socket));
  }

  /**
   * Marks the connection busy while `res` is under way, and least recently busy after.
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   */
  #track(req, res) {
    const socket = req.socket;
    if (!this.#connections.has(socket)) return;
    this.#connections.delete(socket);
    this.#connections.set(socket, { busy: true });
    res.once('close', () => {
      if (!this.#connections.has(socket)) return;
      this.#connections.delete(socket);
      this.#connections.set(socket, { busy: false });
    });
  }

  /**
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   * @param {boolean} [expectsContinue] The caller waits for `100 Continue` before its body.
   */
  #onRequest(req, res, expectsContinue = false) {
    this.#track(req, res);
    /** Answers with an error before the body (if any) is read, and closes the connection. */
    const refuse = (/** @type {Parameters<typeof fail>} */ ...args) => {
      this.#closeUnread(req, res);
      fail(...args);
    };
    if (!this.#peerAllowed(req.socket.remoteAddress)) {
      refuse(
        res,
        403,
        'forbidden_peer',
        'permission_error',
        'This relay answers only callers on this machine. To serve the network, start it with --host set to this machine’s network address.',
      );
      return;
    }
    if (!this.#hostAllowed(req.headers.host)) {
      refuse(
        res,
        403,
        'forbidden_host',
        'permission_error',
        `This relay answers only requests addressed to this machine (localhost, 127.0.0.1 or [::1]); this one was addressed to '${String(req.headers.host ?? '').slice(0, 100)}'.`,
      );
      return;
    }
    const url = new URL(req.url ?? '/', 'http://relay');
    if (!isApiPath(url.pathname)) {
      refuse(
        res,
        404,
        'unknown_url',
        'not_found_error',
        `The relay forwards only the API's paths (/v1/openai/*, /v1/chat/completions, /v1/models); '${url.pathname.slice(0, 200)}' is not one of them.`,
      );
      return;
    }
    const withBody = takesBody(req.method ?? 'GET', url.pathname);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (withBody) {
      const refusal = refusalUnread(req.headers, declared);
      if (refusal) return refuse(res, ...refusal);
    }
    const tab = this.#tab;
    if (tab === null) {
      refuse(
        res,
        503,
        'engine_unavailable',
        'unavailable_error',
        'No tab is paired with this relay. Open the pairing link the relay printed in the browser where Hearth runs, and confirm.',
        { 'x-should-retry': 'false' },
      );
      return;
    }
    if (this.#inFlight >= this.#limits.maxRequests) {
      this.#closeUnread(req, res);
      this.#busy(res, `The relay has ${this.#limits.maxRequests} requests in flight, its limit.`);
      return;
    }
    if (withBody && declared > this.#bodyRoom(tab)) {
      this.#closeUnread(req, res);
      this.#busy(res, 'The relay holds as many request bodies as it may at once.');
      return;
    }
    this.#inFlight += 1;
    res.once('close', () => (this.#inFlight -= 1));
    if (!withBody) {
      // The API answers this request without reading a body: none is read, none forwarded.
      this.#closeUnread(req, res);
      this.#forward(tab, req, res, url, null);
      return;
    }
    if (expectsContinue) res.writeContinue();
    this.#readBody(req, res, tab).then(
      (body) => {
        if (body === undefined || res.destroyed || res.headersSent) return;
        // The tab may have gone while the body arrived.
        if (this.#tab !== tab) {
          fail(res, 503, 'engine_unavailable', 'unavailable_error', TAB_GONE);
          return;
        }
        this.#forward(tab, req, res, url, body);
      },
      () => res.destroy(),
    );
  }

  /**
   * Where a request has a body that will not be read (answered without it), its connection
   * closes after the answer (`connection: close`: the caller must not send another request on
   * it), and gently: Node would close it at once, and a socket closed on bytes the caller still
   * sends is reset, which can lose the answer. It is half-closed instead, what still comes is
   * dropped, and it closes when the caller closes its end, or after {@link LINGER_MS}.
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   */
  #closeUnread(req, res) {
    const hasBody =
      req.headers['transfer-encoding'] !== undefined ||
      Number(req.headers['content-length'] ?? 0) > 0;
    if (!hasBody || req.complete) return;
    res.setHeader('connection', 'close');
    const socket = req.socket;
    // What Node calls on a `connection: close` response's socket once the response is sent.
    socket.destroySoon = () => {
      socket.end();
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      socket.once('close', () => clearTimeout(timer));
    };
  }

  /**
   * 429 `queue_full`, as the API's own queue answers (SDKs and gateways retry it after
   * `retry-after`).
   * @param {ServerResponse} res
   * @param {string} why
   */
  #busy(res, why) {
    this.#refusals.note(`Refused a request: ${why}`);
    fail(res, 429, 'queue_full', 'rate_limit_error', `${why} Retry in a moment.`, {
      'retry-after': '1',
    });
  }

  /**
   * Bytes of body the relay may still take: its limit, less the bodies it reads and those waiting
   * on the tab's socket.
   * @param {WebSocket} tab
   */
  #bodyRoom(tab) {
    return this.#limits.maxBodyBytes - this.#bodyBytes - tab.bufferedAmount;
  }

  /**
   * Hands a request to the tab.
   * @param {WebSocket} tab
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   * @param {URL} url
   * @param {Buffer | null} body
   */
  #forward(tab, req, res, url, body) {
    const id = this.#nextId++;
    /** @type {Record<string, string>} */
    const headers = {};
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    this.#pending.set(id, { res, sse: false, owed: 0 });
    res.on('close', () => {
      // Gone before its response was complete: the tab stops the request, and the engine.
      if (this.#pending.delete(id)) this.#send(tab, { type: 'cancel', id });
    });
    this.#send(tab, {
      type: 'request',
      id,
      method: req.method ?? 'GET',
      path: url.pathname + url.search,
      headers,
      body: body === null ? null : body.toString('base64'),
    });
  }

  /**
   * Reads the body as it arrives, counted against the relay's bodies at once: past the API's
   * limit it is 413, past what the relay may hold 429, either without reading further. Resolves
   * with the body (null when the request has none), or undefined when it answered itself.
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   * @param {WebSocket} tab
   * @returns {Promise<Buffer | null | undefined>}
   */
  #readBody(req, res, tab) {
    return new Promise((resolve, reject) => {
      /** @type {Buffer[]} */
      const parts = [];
      let size = 0;
      let counted = true;
      const done = () => {
        req.off('data', onData);
        req.off('end', onEnd);
        req.off('error', onError);
        req.off('close', onClose);
        if (counted) this.#bodyBytes -= size;
        counted = false;
      };
      const onData = (/** @type {Buffer} */ chunk) => {
        size += chunk.length;
        this.#bodyBytes += chunk.length;
        if (size > BODY_LIMIT || this.#bodyRoom(tab) < 0) {
          done();
          this.#closeUnread(req, res);
          if (size > BODY_LIMIT) fail(res, ...TOO_LARGE);
          else this.#busy(res, 'The relay holds as many request bodies as it may at once.');
          resolve(undefined);
          return;
        }
        parts.push(chunk);
      };
      const onEnd = () => {
        done();
        resolve(size === 0 && !req.headers['content-length'] ? null : Buffer.concat(parts));
      };
      const onError = (/** @type {Error} */ error) => {
        done();
        reject(error);
      };
      // The caller went before its body was whole: what it sent is let go.
      const onClose = () => onError(new Error('the caller went away'));
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', onError);
      req.on('close', onClose);
    });
  }

  /**
   * Lets a tab in: the app's origin, on this machine, with this relay's code or its session.
   * @param {IncomingMessage} req
   * @param {import('node:stream').Duplex} socket
   * @param {Buffer} head
   */
  #onUpgrade(req, socket, head) {
    const refuse = (/** @type {number} */ status, /** @type {string} */ reason) => {
      this.#refusals.note(`Refused a connection: ${reason}`);
      socket.end(
        `HTTP/1.1 ${status} ${status === 409 ? 'Conflict' : 'Forbidden'}\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
      );
    };
    const url = new URL(req.url ?? '/', 'http://relay');
    if (url.pathname !== RELAY_PATH) return refuse(403, 'not the relay path');
    if (!this.#peerAllowed(req.socket.remoteAddress)) return refuse(403, 'not on this machine');
    if (!this.#hostAllowed(req.headers.host)) return refuse(403, 'addressed to another host');
    if (req.headers.origin !== this.#appOrigin) {
      return refuse(
        403,
        `origin '${String(req.headers.origin ?? 'none').slice(0, 100)}' is not the app's (${this.#appOrigin})`,
      );
    }
    const code = url.searchParams.get('code');
    const session = url.searchParams.get('session');
    const byCode = sameToken(code, this.#code);
    const bySession = sameToken(session, this.#session);
    if (!byCode && !bySession) return refuse(403, 'no valid pairing code (wrong, or used already)');
    if (this.#tab !== null || this.#joining !== null) {
      return refuse(409, 'a tab is paired already; end that pairing in the app first');
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      clearTimeout(this.#graceTimer);
      if (byCode) {
        // One-time: the link that was printed no longer pairs anything.
        this.#code = token();
        this.#session = token();
      }
      this.#join(ws, /** @type {string} */ (this.#session));
    });
  }

  /**
   * @param {WebSocket} ws
   * @param {string} session
   */
  #join(ws, session) {
    this.#joining = ws;
    this.#alive.add(ws);
    ws.on('pong', () => this.#alive.add(ws));
    ws.on('message', (data, isBinary) => {
      if (isBinary) return ws.close(1003, 'text frames only');
      /** @type {TabToRelay} */
      let message;
      try {
        message = JSON.parse(data.toString('utf8'));
      } catch {
        return ws.close(1007, 'not JSON');
      }
      if (typeof message !== 'object' || message === null) return ws.close(1007, 'not a message');
      try {
        this.#onTabMessage(ws, message);
      } catch (error) {
        // A message the relay cannot act on (a status or header Node refuses): that request
        // fails, the relay and the other requests go on.
        this.#log(
          `A message from the tab could not be used: ${/** @type {Error} */ (error).message}`,
        );
        const pending = 'id' in message ? this.#pending.get(message.id) : undefined;
        if (pending) {
          this.#pending.delete(/** @type {{ id: number }} */ (message).id);
          this.#failPending(
            pending,
            'The paired tab sent a response the relay cannot forward.',
            502,
          );
        }
      }
    });
    ws.on('close', () => this.#onTabGone(ws));
    ws.on('error', () => ws.terminate());
    this.#send(ws, {
      type: 'hello',
      version: PROTOCOL_VERSION,
      key: this.#key,
      base_url: this.baseUrl,
      session,
    });
  }

  /**
   * @param {WebSocket} ws
   * @param {TabToRelay} message
   */
  #onTabMessage(ws, message) {
    if (message.type === 'ready') {
      if (ws !== this.#joining) return;
      if (message.version !== PROTOCOL_VERSION) {
        return ws.close(4000, `the relay speaks protocol ${PROTOCOL_VERSION}`);
      }
      this.#joining = null;
      this.#tab = ws;
      this.#log(`Paired with a tab of ${this.#appOrigin}. Forwarding ${this.baseUrl} to it.`);
      return;
    }
    if (message.type === 'bye') {
      this.#session = null;
      ws.close(1000, 'pairing ended');
      return;
    }
    if (ws !== this.#tab) return;
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    const { res } = pending;
    const { id } = message;
    switch (message.type) {
      case 'head': {
        const { status } = message;
        if (!Number.isInteger(status) || status < 200 || status > 599) {
          this.#pending.delete(id);
          this.#failPending(
            pending,
            `The paired tab answered with status ${cut(String(JSON.stringify(status)), 20)}, which is no final HTTP status (200–599); the relay cannot forward it.`,
            502,
          );
          return;
        }
        /** @type {Record<string, string>} */
        const headers = {};
        const given =
          typeof message.headers === 'object' && message.headers !== null ? message.headers : {};
        for (const [name, value] of Object.entries(given)) {
          if (HOP_BY_HOP.has(name.toLowerCase())) continue;
          try {
            if (typeof value !== 'string') throw new TypeError('not text');
            validateHeaderName(name);
            validateHeaderValue(name, value);
          } catch {
            this.#pending.delete(id);
            this.#failPending(
              pending,
              `The paired tab sent a header the relay cannot forward ('${cut(name, 40)}').`,
              502,
            );
            return;
          }
          headers[name] = value;
        }
        res.writeHead(status, STATUS_CODES[status] ?? '', headers);
        pending.sse = (headers['content-type'] ?? '').startsWith('text/event-stream');
        res.flushHeaders();
        return;
      }
      case 'chunk': {
        if (typeof message.data !== 'string') throw new TypeError('a chunk without data');
        const bytes = Buffer.from(message.data, 'base64');
        // Credit for bytes once they have left for the caller's connection, not while they wait
        // in the relay: the tab is never more than its window ahead of what the caller's
        // connection took. In batches, not per chunk (a chunk is often one token): the tab
        // blocks only with a whole window unanswered, and a batch is a quarter of one.
        res.write(bytes, () => {
          if (this.#pending.get(id) !== pending) return;
          pending.owed += bytes.length;
          if (pending.owed >= CREDIT_BATCH) this.#credit(id, pending);
        });
        return;
      }
      case 'end':
        this.#pending.delete(id);
        res.end();
        return;
      case 'failed':
        this.#pending.delete(id);
        this.#failPending(
          pending,
          typeof message.message === 'string' && message.message !== ''
            ? cut(message.message, MESSAGE_LIMIT)
            : NO_REASON,
        );
        return;
    }
  }

  /**
   * @param {number} id
   * @param {Pending} pending
   */
  #credit(id, pending) {
    if (pending.owed === 0 || this.#tab === null) return;
    this.#send(this.#tab, { type: 'credit', id, bytes: pending.owed });
    pending.owed = 0;
  }

  /**
   * Ends a response the tab cannot finish: an error status when none went out yet, an error
   * event in a stream (DESIGN §3), and a cut connection for a JSON body begun. 503
   * `engine_unavailable` when the tab failed or went; 502 `upstream_error` when what it sent
   * cannot be forwarded.
   * @param {Pending} pending
   * @param {string} message
   * @param {503 | 502} [status]
   */
  #failPending({ res, sse }, message, status = 503) {
    if (status === 502) this.#refusals.note(message);
    if (res.destroyed) return;
    const [code, type] =
      status === 502
        ? ['upstream_error', 'server_error']
        : ['engine_unavailable', 'unavailable_error'];
    if (!res.headersSent) {
      fail(res, status, code, type, message);
    } else if (sse) {
      res.end(`data: ${errorBody(code, type, message)}\n\n`);
    } else {
      res.destroy();
    }
  }

  /** @param {WebSocket} ws */
  #onTabGone(ws) {
    if (ws === this.#joining) this.#joining = null;
    if (ws !== this.#tab) return;
    this.#tab = null;
    for (const pending of this.#pending.values()) this.#failPending(pending, TAB_GONE);
    this.#pending.clear();
    if (this.#session === null) {
      this.#log(`The tab ended the pairing. To pair a tab again, open:\n  ${this.pairingLink}`);
      return;
    }
    // A reload comes back within moments, with its session; a closed tab never does, and its
    // pairing ends with the grace window (a tab restored later asks again).
    const grace = this.#limits.reconnectGraceMs;
    this.#log(
      `The paired tab went away. If it was reloaded it reconnects within ${grace / 1000} s; to pair another tab, open:\n  ${this.pairingLink}`,
    );
    clearTimeout(this.#graceTimer);
    this.#graceTimer = setTimeout(() => {
      if (this.#tab !== null || this.#joining !== null) return;
      this.#session = null;
      this.#log(
        `The paired tab did not come back within ${grace / 1000} s: the pairing ended. To pair a tab again, open:\n  ${this.pairingLink}`,
      );
    }, grace);
    this.#graceTimer.unref();
  }

  /** Drops a tab that stopped answering pings (a machine asleep, a crashed renderer). */
  #checkTab() {
    for (const ws of [this.#tab, this.#joining]) {
      if (ws === null) continue;
      if (!this.#alive.delete(ws)) {
        ws.terminate();
        continue;
      }
      ws.ping();
    }
  }

  /**
   * @param {WebSocket} ws
   * @param {RelayToTab} message
   */
  #send(ws, message) {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
  }
}

/**
 * Starts the relay: loads (or makes) its key, listens, and resolves once it does.
 * @param {RelayOptions} options
 */
export async function startRelay(options) {
  const { key } = await loadConfig(options.configFile);
  /** @type {Limits} */
  const limits = { ...DEFAULT_LIMITS };
  for (const name of /** @type {(keyof Limits)[]} */ (Object.keys(limits))) {
    const value = options[name];
    if (value !== undefined) limits[name] = value;
  }
  // Time limits on what a caller sends (a slow or stalled one is 408 and closed), none on a
  // response, which may take minutes to its first token (DESIGN §3). Node checks the first two
  // every `connectionsCheckingInterval`, 30 s by default: far too coarse for a 10 s limit.
  const requestTimeout = limits.requestTimeoutMs;
  const headersTimeout = Math.min(limits.headersTimeoutMs, requestTimeout);
  const server = createServer({
    headersTimeout,
    requestTimeout,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, headersTimeout / 4)),
  });
  const relay = new Relay(server, key, {
    port: options.port ?? 8788,
    host: options.host ?? '127.0.0.1',
    app: options.app ?? 'http://127.0.0.1:4173/',
    log: options.log ?? ((line) => console.log(line)),
    heartbeatMs: options.heartbeatMs ?? 15_000,
    limits,
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8788, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      void relay.origin;
      resolve(undefined);
    });
  });
  return relay;
}
