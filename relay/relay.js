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
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import { WebSocketServer } from 'ws';
import { listenScope, peerAllowed } from './address.js';
import {
  cut,
  errorBody,
  fail,
  LINGER_MS,
  refusalUnread,
  refuseUpgrade,
  TOO_LARGE,
} from './answers.js';
import { readBody, sendBody } from './body.js';
import { loadConfig } from './config.js';
import { BodyBudget, DEFAULT_LIMITS } from './limits.js';
import { printable, RateLimitedLog } from './log.js';
import {
  hostName,
  isApiPath,
  isLoopbackHost,
  PROTOCOL_VERSION,
  readFrame,
  RELAY_PATH,
  takesBody,
  WINDOW_BYTES,
} from './protocol.js';

export { DEFAULT_LIMITS, printable, RateLimitedLog };

/** @typedef {import('./protocol.js').RelayToTab} RelayToTab */
/** @typedef {import('./protocol.js').TabToRelay} TabToRelay */
/** @typedef {import('node:http').IncomingMessage} IncomingMessage */
/** @typedef {import('node:http').ServerResponse} ServerResponse */
/** @typedef {import('ws').WebSocket} WebSocket */

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
 * @property {(message: string) => void} [log] Where the relay says what happens: a message a call,
 *   its control characters escaped except the line breaks between its own lines.
 * @property {number} [heartbeatMs] How often to check that the tab is still there.
 * @property {number} [maxConnections] HTTP connections open at once (128): past it a new one
 *   closes the oldest idle connection (keep-alive, or headers still arriving), or is closed itself
 *   when every open one carries a request.
 * @property {number} [maxRequests] Requests in flight at once (64): more are 429 `queue_full`.
 * @property {number} [maxBodyBytes] Request bodies held at once, from their first byte read until
 *   the tab's socket has sent their last (32 MiB): a body that does not fit is 429 `queue_full`.
 * @property {number} [headersTimeoutMs] Time for a request's headers to arrive (10 s), then 408.
 * @property {number} [requestTimeoutMs] Time for a whole request to arrive (60 s), then 408;
 *   the response may take as long as it takes.
 * @property {number} [keepAliveTimeoutMs] How long an idle kept-alive connection stays open (5 s).
 * @property {number} [reconnectGraceMs] How long a tab that went away may come back with its
 *   session, as a reload does (10 s); after that the pairing has ended.
 */

/** @typedef {import('./limits.js').Limits} Limits */

/**
 * @typedef {object} Pending A forwarded request waiting for, or streaming, its response.
 * @property {ServerResponse} res
 * @property {boolean} sse The response is an event stream (a failure ends it with an event).
 * @property {number} owed Bytes handed to the caller's connection, not yet credited to the tab.
 */

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
  /** One message, given line by line. @type {(...lines: string[]) => void} */
  #log;
  /** `--host` as given: a name callers may address when it is one on the network. */
  #host;
  /**
   * What the address bound to exposes, from `server.address()` once listening (see address.js);
   * this machine only until then.
   * @type {import('./address.js').ListenScope}
   */
  #scope = 'loopback';
  /** The names callers may address besides this machine's: the network address served. */
  /** @type {Set<string>} */
  #networkHosts = new Set();
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
  /** Bytes of request bodies held, from their first byte read until the tab's socket sent them. */
  #bodies;
  /**
   * Ends the session when no tab is ready with it: a tab that went away and did not come back, or
   * sockets let in that never said they were ready. Runs whenever there is a session and no ready
   * tab, across reconnects that come and go, and stops only when a tab says it is ready.
   * @type {NodeJS.Timeout | undefined}
   */
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
    // terminal's escape sequence introducer). A message's own line breaks are the lines it is
    // given, joined after escaping: a break inside a line (a caller's) stays escaped.
    this.#log = (...lines) => options.log(lines.map(printable).join('\n'));
    this.#host = options.host;
    this.#bodies = new BodyBudget(this.#limits.maxBodyBytes);
    server.once('listening', () => this.#bound());
    server.on('connection', (socket) => this.#onConnection(socket));
    server.on('request', (req, res) => this.#onRequest(req, res));
    // `Expect: 100-continue` (curl's, for bodies over 1 MiB): a refusal goes out before the body.
    server.on('checkContinue', (req, res) => this.#onRequest(req, res, true));
    // A refused handshake stays among the connections, counted and shed as an idle one, until
    // it closes; only the tab's accepted socket leaves them.
    server.on('upgrade', (req, socket, head) => this.#onUpgrade(req, socket, head));
    this.#heartbeat = setInterval(() => this.#checkTab(), options.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** `http://host:port`, where the relay listens. */
  get origin() {
    if (this.#origin) return this.#origin;
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('not listening');
    // Listening on every address, this machine's own is the one to print.
    const shown = listenScope(address.address) === 'everywhere' ? '127.0.0.1' : address.address;
    const host = shown.includes(':') ? `[${shown}]` : shown;
    // Kept: the address is gone once the server closes, and messages still name it.
    this.#origin = `http://${host}:${address.port}`;
    return this.#origin;
  }

  /** Who may call, in a line for the terminal: what the address listened on exposes. */
  get exposure() {
    if (this.#scope === 'network') {
      return `Callers: this machine and the network, at ${this.origin} (with a key the tab accepts).`;
    }
    if (this.#scope === 'everywhere') {
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
    // Refused handshakes too, which `closeAllConnections` no longer knows once upgraded.
    for (const socket of this.#connections.keys()) socket.destroy();
    await new Promise((resolve) => {
      this.#server.close(resolve);
      this.#server.closeAllConnections();
    });
  }

  /**
   * Decides who may call from the address bound to, however `--host` spelled it: `0`, `::0` and
   * `0000:0000::` are every interface as `0.0.0.0` and `::` are. Serving a network address, callers
   * may name it by that address or by the name given as `--host`.
   */
  #bound() {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') return;
    this.#scope = listenScope(address.address);
    if (this.#scope !== 'network') return;
    for (const name of [address.address, this.#host]) {
      const host = hostName(name.includes(':') ? `[${name}]` : name);
      if (host !== null) this.#networkHosts.add(host);
    }
  }

  /**
   * Whether a connection's peer may call (see address.js).
   * @param {string | undefined} address
   */
  #peerAllowed(address) {
    return peerAllowed(this.#scope, address);
  }

  /**
   * Whether a request's `Host` names this machine, or the network address the relay serves.
   * @param {string | undefined} host
   */
  #hostAllowed(host) {
    return isLoopbackHost(host) || this.#networkHosts.has(hostName(host) ?? '');
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
    // A declared body is counted whole before a byte of it is read: one that does not fit is
    // refused unread, rather than read in part and dropped, which costs memory all the same.
    const claim = this.#bodies.claim();
    if (withBody && !claim.take(declared)) {
      this.#closeUnread(req, res);
      this.#busy(res, 'The relay holds as many request bodies as it may at once.');
      return;
    }
    this.#inFlight += 1;
    res.once('close', () => (this.#inFlight -= 1));
    if (!withBody) {
      // The API answers this request without reading a body: none is read, none forwarded.
      claim.release();
      this.#closeUnread(req, res);
      this.#forward(tab, req, res, url, null);
      return;
    }
    if (expectsContinue) res.writeContinue();
    readBody(req, claim, declared).then(
      (body) => {
        if (body === 'too_large' || body === 'busy') {
          claim.release();
          this.#closeUnread(req, res);
          if (body === 'too_large') fail(res, ...TOO_LARGE);
          else this.#busy(res, 'The relay holds as many request bodies as it may at once.');
          return;
        }
        // Held until the tab's socket has sent it, not only until it is read.
        if (body !== null && !res.destroyed && !res.headersSent && this.#tab === tab) {
          this.#forward(tab, req, res, url, body, claim.release);
          return;
        }
        claim.release();
        if (res.destroyed || res.headersSent) return;
        // The tab may have gone while the body arrived.
        if (this.#tab !== tab) fail(res, 503, 'engine_unavailable', 'unavailable_error', TAB_GONE);
        else this.#forward(tab, req, res, url, null);
      },
      () => {
        claim.release();
        res.destroy();
      },
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
   * Hands a request to the tab.
   * @param {WebSocket} tab
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   * @param {URL} url
   * @param {import('./body.js').Body | null} body
   * @param {() => void} [sent] Runs once the tab's socket has sent the body.
   */
  #forward(tab, req, res, url, body, sent = () => undefined) {
    const id = this.#nextId;
    // Ids are 32 bits in a body's binary message.
    this.#nextId = (this.#nextId % 0xffff_ffff) + 1;
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
      body: body === null ? null : body.size,
    });
    if (body !== null && body.size > 0) sendBody(tab, id, body, sent);
    else sent();
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
      refuseUpgrade(socket, status, reason);
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
    // The tab's socket: never one of the connections shed for others.
    this.#connections.delete(/** @type {import('node:net').Socket} */ (socket));
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      if (byCode) {
        // One-time: the link that was printed no longer pairs anything. A new session, and a
        // new grace window for it should this socket go before it says it is ready.
        this.#code = token();
        this.#session = token();
        this.#stopGrace();
      }
      // By its session, the grace window runs on: only a tab that says it is ready stops it.
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
      if (isBinary) return this.#onTabBytes(ws, /** @type {Buffer} */ (data));
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
      this.#stopGrace();
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
   * Bytes of a response's body (a binary message: the request's id, then the bytes), written to
   * its caller as they came. Credit goes back for bytes once they have left for the caller's
   * connection, not while they wait in the relay: the tab is never more than its window ahead of
   * what the caller's connection took. In batches, not per chunk (a chunk is often one token): the
   * tab blocks only with a whole window unanswered, and a batch is a quarter of one.
   * @param {WebSocket} ws
   * @param {Buffer} data
   */
  #onTabBytes(ws, data) {
    if (ws !== this.#tab) return;
    const frame = readFrame(data);
    if (frame === null) return ws.close(1007, 'a binary message without a request id');
    const { id, bytes } = frame;
    const pending = this.#pending.get(id);
    if (!pending) return;
    pending.res.write(bytes, () => {
      if (this.#pending.get(id) !== pending) return;
      pending.owed += bytes.length;
      if (pending.owed >= CREDIT_BATCH) this.#credit(id, pending);
    });
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
    if (ws === this.#joining) {
      // Gone before it said it was ready: its session lasts the grace window, no longer.
      this.#joining = null;
      this.#startGrace();
      return;
    }
    if (ws !== this.#tab) return;
    this.#tab = null;
    for (const pending of this.#pending.values()) this.#failPending(pending, TAB_GONE);
    this.#pending.clear();
    if (this.#session === null) {
      this.#log('The tab ended the pairing. To pair a tab again, open:', `  ${this.pairingLink}`);
      return;
    }
    // A reload comes back within moments, with its session; a closed tab never does, and its
    // pairing ends with the grace window (a tab restored later asks again).
    this.#log(
      `The paired tab went away. If it was reloaded it reconnects within ${this.#limits.reconnectGraceMs / 1000} s; to pair another tab, open:`,
      `  ${this.pairingLink}`,
    );
    this.#startGrace();
  }

  /**
   * Starts the grace window, unless it runs already: when it ends with no tab ready, the session
   * lets nobody in any more, and a socket let in with it that has not said it is ready is closed.
   */
  #startGrace() {
    if (this.#graceTimer !== undefined || this.#session === null || this.#tab !== null) return;
    const grace = this.#limits.reconnectGraceMs;
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = undefined;
      if (this.#tab !== null) return;
      this.#session = null;
      this.#joining?.close(4001, 'the pairing ended');
      this.#log(
        `The paired tab did not come back within ${grace / 1000} s: the pairing ended. To pair a tab again, open:`,
        `  ${this.pairingLink}`,
      );
    }, grace);
    this.#graceTimer.unref();
  }

  /** Stops the grace window: a tab is ready, or a new pairing began. */
  #stopGrace() {
    clearTimeout(this.#graceTimer);
    this.#graceTimer = undefined;
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
