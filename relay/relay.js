/**
 * @module
 * The relay: an HTTP server on this machine that forwards the API's requests over a WebSocket to
 * one paired tab of the app, which replays them against its own service worker and streams the
 * responses back. The relay judges nothing of a request (keys, bodies, models): the service worker
 * does, so the API behaves the same whether it is called in the page or through here.
 *
 * What it does decide is who may talk to it: requests addressed to this machine by name only
 * (`Host` — DNS rebinding), the API's paths only, and one tab, of the app's origin, that proved it
 * holds the pairing code printed in this terminal.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';
import { loadConfig } from './config.js';
import {
  hostName,
  isApiPath,
  isLoopbackHost,
  isLoopbackPeer,
  PROTOCOL_VERSION,
  RELAY_PATH,
  WINDOW_BYTES,
} from './protocol.js';

/** @typedef {import('./protocol.js').RelayToTab} RelayToTab */
/** @typedef {import('./protocol.js').TabToRelay} TabToRelay */
/** @typedef {import('node:http').IncomingMessage} IncomingMessage */
/** @typedef {import('node:http').ServerResponse} ServerResponse */
/** @typedef {import('ws').WebSocket} WebSocket */

/** The largest body the API takes (DESIGN §3); the service worker answers 413 beyond it. */
const BODY_LIMIT = 4 * 1024 * 1024;
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
 * @property {string} [app] The app's address; only its origin may pair, and the link points there.
 * @property {string} configFile Where the relay's key is kept.
 * @property {(line: string) => void} [log] Where the relay says what happens.
 * @property {number} [heartbeatMs] How often to check that the tab is still there.
 */

/**
 * @typedef {object} Pending A forwarded request waiting for, or streaming, its response.
 * @property {ServerResponse} res
 * @property {boolean} sse The response is an event stream (a failure ends it with an event).
 * @property {number} owed Bytes written to the client but not yet credited to the tab.
 * @property {boolean} draining Credit waits for the client to take what is buffered.
 * @property {boolean} closeAfter The client's body was cut at the limit: close the connection.
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
  res.writeHead(status, {
    'content-type': 'application/json',
    'x-request-id': requestId(),
    ...headers,
  });
  res.end(errorBody(code, type, message));
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
  /** Refused connections, logged at a bounded rate: anyone on the machine can try thousands. */
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

  /**
   * @param {import('node:http').Server} server
   * @param {string} key
   * @param {Required<Omit<RelayOptions, 'configFile'>>} options
   */
  constructor(server, key, options) {
    this.#server = server;
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
    server.on('request', (req, res) => this.#onRequest(req, res));
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

  /** The link that pairs a tab: the app, told where the relay is and the current one-time code. */
  get pairingLink() {
    const link = new URL(this.#appUrl);
    // Not `searchParams`, which would encode the address: people read this link before opening it.
    link.search = `relay=${this.wsUrl}&pair=${this.#code}`;
    return link.href;
  }

  /** Whether a tab serves requests now. */
  get paired() {
    return this.#tab !== null;
  }

  /** Stops listening; requests in flight end, the tab is told by its socket closing. */
  async close() {
    clearInterval(this.#heartbeat);
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
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   */
  #onRequest(req, res) {
    if (!this.#peerAllowed(req.socket.remoteAddress)) {
      fail(
        res,
        403,
        'forbidden_peer',
        'permission_error',
        'This relay answers only callers on this machine. To serve the network, start it with --host set to this machine’s network address.',
      );
      return;
    }
    if (!this.#hostAllowed(req.headers.host)) {
      fail(
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
      fail(
        res,
        404,
        'unknown_url',
        'not_found_error',
        `The relay forwards only the API's paths (/v1/openai/*, /v1/chat/completions, /v1/models); '${url.pathname.slice(0, 200)}' is not one of them.`,
      );
      return;
    }
    const tab = this.#tab;
    if (tab === null) {
      fail(
        res,
        503,
        'engine_unavailable',
        'unavailable_error',
        'No tab is paired with this relay. Open the pairing link the relay printed in the browser where Hearth runs, and confirm.',
        { 'x-should-retry': 'false' },
      );
      return;
    }
    this.#readBody(req).then(
      ({ body, cut }) => {
        if (res.destroyed) return;
        // The tab may have gone while the body arrived.
        if (this.#tab !== tab) {
          fail(res, 503, 'engine_unavailable', 'unavailable_error', TAB_GONE);
          return;
        }
        const id = this.#nextId++;
        /** @type {Record<string, string>} */
        const headers = {};
        for (const name of FORWARDED_REQUEST_HEADERS) {
          const value = req.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        this.#pending.set(id, {
          res,
          sse: false,
          owed: 0,
          draining: false,
          closeAfter: cut,
        });
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
      },
      () => res.destroy(),
    );
  }

  /**
   * Reads the body, but never more than one byte over the API's limit: a body cut there still
   * gets the service worker's own 413.
   * @param {IncomingMessage} req
   * @returns {Promise<{ body: Buffer | null, cut: boolean }>}
   */
  #readBody(req) {
    return new Promise((resolve, reject) => {
      /** @type {Buffer[]} */
      const parts = [];
      let size = 0;
      const done = (/** @type {boolean} */ cut) => {
        req.off('data', onData);
        req.off('end', onEnd);
        const body = Buffer.concat(parts);
        resolve({ body: size === 0 && !req.headers['content-length'] ? null : body, cut });
      };
      const onData = (/** @type {Buffer} */ chunk) => {
        const room = BODY_LIMIT + 1 - size;
        parts.push(chunk.subarray(0, room));
        size += Math.min(chunk.length, room);
        if (size > BODY_LIMIT) {
          req.pause();
          done(true);
        }
      };
      const onEnd = () => done(false);
      req.on('data', onData);
      req.on('end', onEnd);
      req.on('error', reject);
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
          this.#failPending(pending, 'The tab sent a response the relay could not forward.');
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
    switch (message.type) {
      case 'head': {
        /** @type {Record<string, string>} */
        const headers = {};
        for (const [name, value] of Object.entries(message.headers)) {
          if (!HOP_BY_HOP.has(name.toLowerCase())) headers[name] = value;
        }
        if (pending.closeAfter) headers.connection = 'close';
        res.writeHead(message.status, headers);
        pending.sse = (headers['content-type'] ?? '').startsWith('text/event-stream');
        res.flushHeaders();
        return;
      }
      case 'chunk': {
        const bytes = Buffer.from(message.data, 'base64');
        pending.owed += bytes.length;
        // Credit goes back in batches, not per chunk (a chunk is often one token): the tab
        // blocks only with a whole window unanswered, and this returns it before then.
        if (res.write(bytes)) {
          if (pending.owed >= CREDIT_BATCH) this.#credit(message.id, pending);
        } else if (!pending.draining) {
          pending.draining = true;
          res.once('drain', () => {
            pending.draining = false;
            this.#credit(message.id, pending);
          });
        }
        return;
      }
      case 'end':
        this.#pending.delete(message.id);
        res.end();
        if (pending.closeAfter) res.once('finish', () => res.socket?.destroy());
        return;
      case 'failed':
        this.#pending.delete(message.id);
        this.#failPending(pending, message.message);
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
   * event in a stream (DESIGN §3), and a cut connection for a JSON body begun.
   * @param {Pending} pending
   * @param {string} message
   */
  #failPending({ res, sse }, message) {
    if (res.destroyed) return;
    if (!res.headersSent) {
      fail(res, 503, 'engine_unavailable', 'unavailable_error', message);
    } else if (sse) {
      res.end(`data: ${errorBody('engine_unavailable', 'unavailable_error', message)}\n\n`);
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
    this.#log(
      this.#session === null
        ? `The tab ended the pairing. To pair a tab again, open:\n  ${this.pairingLink}`
        : `The paired tab went away. It reconnects by itself when it is reloaded; to pair another tab, open:\n  ${this.pairingLink}`,
    );
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
  // Node's defaults suit: 5 minutes to receive a request (a caller that uploads for ever is cut),
  // and no limit on a response, which may take minutes to its first token (DESIGN §3).
  const server = createServer();
  const relay = new Relay(server, key, {
    port: options.port ?? 8788,
    host: options.host ?? '127.0.0.1',
    app: options.app ?? 'http://127.0.0.1:4173/',
    log: options.log ?? ((line) => console.log(line)),
    heartbeatMs: options.heartbeatMs ?? 15_000,
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
