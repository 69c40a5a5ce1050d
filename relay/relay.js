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
 *
 * This module holds the server's life (start, addresses, close) and lets a tab's handshake through
 * to the pairing; the work is in its collaborators: requests.js (connections and requests within
 * the limits), pairing.js (codes, sessions, the grace window), forwarding.js (requests in flight
 * to the tab, their responses and credit), address.js (who may call).
 */
import { createServer } from 'node:http';
import { Callers, listenScope } from './address.js';
import { refuseUpgrade } from './answers.js';
import { keyFingerprint, loadConfig } from './config.js';
import { Forwarding } from './forwarding.js';
import { DEFAULT_LIMITS } from './limits.js';
import { printable, RateLimitedLog } from './log.js';
import { Pairing } from './pairing.js';
import { RELAY_PATH } from './protocol.js';
import { Requests } from './requests.js';

export { DEFAULT_LIMITS, printable, RateLimitedLog };

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
 *   the tab’s socket has sent their last (128 MiB: two chat requests at the image limit): a body
 *   that does not fit is 429 `queue_full`.
 * @property {number} [headersTimeoutMs] Time for a request's headers to arrive (10 s), then 408.
 * @property {number} [requestTimeoutMs] Time for a whole request to arrive (60 s), then 408;
 *   the response may take as long as it takes.
 * @property {number} [keepAliveTimeoutMs] How long an idle kept-alive connection stays open (5 s).
 * @property {number} [reconnectGraceMs] How long a tab that went away may come back with its
 *   session, as a reload does (10 s); after that the pairing has ended.
 */

/** @typedef {import('./limits.js').Limits} Limits */

/**
 * The relay, started: listening, with its key loaded.
 */
export class Relay {
  /** @type {import('node:http').Server} */
  #server;
  /** @type {string} */
  #key;
  #appUrl;
  #appOrigin;
  /** One message, given line by line. @type {(...lines: string[]) => void} */
  #log;
  /** `--host` as given: a name callers may address when it is one on the network. */
  #host;
  /** Who may call: this machine only until the relay listens (see address.js). */
  #callers = new Callers();
  /** Refusals and a tab's faults, logged at a bounded rate: anyone on the machine can cause thousands. */
  #refusals = new RateLimitedLog((line) => this.#log(line));
  /** `http://host:port`, once listening. */
  #origin = '';
  /** @type {Pairing} */
  #pairing;
  /** @type {Requests} */
  #requests;

  /**
   * @param {import('node:http').Server} server
   * @param {string} key
   * @param {Required<Omit<RelayOptions, 'configFile' | keyof Limits>> & { limits: Limits }} options
   */
  constructor(server, key, options) {
    this.#server = server;
    const { limits } = options;
    this.#key = key;
    this.#appUrl = new URL(options.app);
    this.#appOrigin = this.#appUrl.origin;
    // Every line is made printable: a caller's Origin may carry control bytes (C1's 0x9B is a
    // terminal's escape sequence introducer). A message's own line breaks are the lines it is
    // given, joined after escaping: a break inside a line (a caller's) stays escaped.
    this.#log = (...lines) => options.log(lines.map(printable).join('\n'));
    this.#host = options.host;
    const tab = () => this.#pairing.tab;
    const forwarding = new Forwarding({ log: this.#log, refusals: this.#refusals, tab });
    this.#requests = new Requests({
      limits,
      refusals: this.#refusals,
      callers: this.#callers,
      tab,
      forwarding,
    });
    server.once('listening', () => this.#bound());
    server.on('connection', (socket) => this.#requests.onConnection(socket));
    server.on('request', (req, res) => this.#requests.onRequest(req, res));
    // `Expect: 100-continue` (curl's, for bodies over 1 MiB): a refusal goes out before the body.
    server.on('checkContinue', (req, res) => this.#requests.onRequest(req, res, true));
    // A refused handshake stays among the connections, counted and shed as an idle one, until
    // it closes; only the tab's accepted socket leaves them.
    server.on('upgrade', (req, socket, head) => this.#onUpgrade(req, socket, head));
    this.#pairing = new Pairing({
      key,
      appOrigin: this.#appOrigin,
      log: this.#log,
      heartbeatMs: options.heartbeatMs,
      reconnectGraceMs: limits.reconnectGraceMs,
      baseUrl: () => this.baseUrl,
      pairingLink: () => this.pairingLink,
      forwarding,
    });
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
    if (this.#callers.scope === 'network') {
      return `Callers: this machine and the network, at ${this.origin} (with a key the tab accepts).`;
    }
    if (this.#callers.scope === 'everywhere') {
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

  /** The key's fingerprint (config.js), which the tab's confirmation shows to compare. */
  get fingerprint() {
    return keyFingerprint(this.#key);
  }

  /** The WebSocket address a tab connects to. */
  get wsUrl() {
    // The app can connect to no IPv6 literal (its Content Security Policy cannot name one).
    return `${this.origin.replace(/^http/, 'ws').replace('[::1]', 'localhost')}${RELAY_PATH}`;
  }

  /**
   * The link that pairs a tab: the page given as `app` (the app, or any page that calls
   * `startHearth()`), told where the relay is, the current one-time code and the fingerprint of
   * the relay's key (which the tab shows, and checks against the key the relay then sends). The
   * page's own query stays; a pairing query it had is replaced.
   */
  get pairingLink() {
    const link = new URL(this.#appUrl);
    const kept = link.search
      .slice(1)
      .split('&')
      .filter((part) => part !== '' && !/^(?:relay|pair|fingerprint)(?:=|$)/.test(part));
    // Not `searchParams`, which would encode the address: people read this link before opening it.
    link.search = [
      ...kept,
      `relay=${this.wsUrl}`,
      `pair=${this.#pairing.code}`,
      `fingerprint=${this.fingerprint}`,
    ].join('&');
    return link.href;
  }

  /** Whether a tab serves requests now. */
  get paired() {
    return this.#pairing.tab !== null;
  }

  /** Stops listening; requests in flight end, the tab is told by its socket closing. */
  async close() {
    this.#pairing.close();
    this.#refusals.close();
    // Refused handshakes too, which `closeAllConnections` no longer knows once upgraded.
    this.#requests.destroyAll();
    await new Promise((resolve) => {
      this.#server.close(resolve);
      this.#server.closeAllConnections();
    });
  }

  /** Decides who may call from the address bound to (see `Callers` in address.js). */
  #bound() {
    const address = this.#server.address();
    if (address === null || typeof address === 'string') return;
    this.#callers.bound(address.address, this.#host);
  }

  /**
   * Lets a tab in: the app's origin, on this machine, with this relay's code or its session.
   * @param {import('node:http').IncomingMessage} req
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
    if (!this.#callers.peerAllowed(req.socket.remoteAddress)) {
      return refuse(403, 'not on this machine');
    }
    if (!this.#callers.hostAllowed(req.headers.host)) {
      return refuse(403, 'addressed to another host');
    }
    if (req.headers.origin !== this.#appOrigin) {
      return refuse(
        403,
        `origin '${String(req.headers.origin ?? 'none').slice(0, 100)}' is not the app's (${this.#appOrigin})`,
      );
    }
    const admitted = this.#pairing.admit(url);
    if ('refused' in admitted) return refuse(...admitted.refused);
    // The tab's socket: never one of the connections shed for others.
    this.#requests.release(/** @type {import('node:net').Socket} */ (socket));
    this.#pairing.accept(req, socket, head, admitted.byCode);
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
  // response, which may take minutes to its first token (docs/api.md, Responses: up to 4 minutes).
  // Node checks the first two every `connectionsCheckingInterval`, 30 s by default: far too coarse
  // for a 10 s limit.
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
