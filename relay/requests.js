/**
 * @module
 * The relay's HTTP side, within its limits: the connections it keeps open (the least recently busy
 * idle one shed for a newcomer), and each request, checked (peer, `Host`, path, what the API's
 * first checks would refuse unread), counted against the requests in flight and the bodies held,
 * its body read, and handed to forwarding.js for the paired tab.
 */
import {
  BODY_LIMIT,
  fail,
  FILE_BODY_LIMIT,
  IMAGE_BODY_LIMIT,
  LINGER_MS,
  refusalUnread,
  tooLarge,
} from './answers.js';
import { readBody } from './body.js';
import { TAB_GONE } from './forwarding.js';
import { BodyBudget } from './limits.js';
import { bodyLimitOf, isApiPath, mediaTypeOf, RELAYED_PATHS, takesBody } from './protocol.js';

/** @typedef {import('node:http').IncomingMessage} IncomingMessage */
/** @typedef {import('node:http').ServerResponse} ServerResponse */
/** @typedef {import('node:net').Socket} Socket */
/** @typedef {import('ws').WebSocket} WebSocket */

/**
 * @typedef {object} RequestsContext What the requests are told by the relay they belong to.
 * @property {import('./limits.js').Limits} limits
 * @property {import('./log.js').RateLimitedLog} refusals Where refusals are noted.
 * @property {import('./address.js').Callers} callers Who may call.
 * @property {() => WebSocket | null} tab The tab that serves requests now, if any.
 * @property {import('./forwarding.js').Forwarding} forwarding Where a request accepted goes.
 */

/** One relay's connections and the requests that come on them. */
export class Requests {
  /** @type {RequestsContext} */
  #context;
  /**
   * Every HTTP connection, least recently busy first, and whether a request is under way on it.
   * @type {Map<Socket, { busy: boolean }>}
   */
  #connections = new Map();
  /** Requests accepted and not answered in full yet. */
  #inFlight = 0;
  /** Bytes of request bodies held, from their first byte read until the tab's socket sent them. */
  #bodies;

  /** @param {RequestsContext} context */
  constructor(context) {
    this.#context = context;
    this.#bodies = new BodyBudget(context.limits.maxBodyBytes);
  }

  /**
   * Keeps the connections within the limit: a new one past it closes the least recently busy
   * connection that carries no request (idle between requests, or its headers still arriving: a
   * slow or stalled caller), so that a caller that sends its request is answered. When every open
   * connection carries a request, the new one is closed.
   * @param {Socket} socket
   */
  onConnection(socket) {
    const { maxConnections } = this.#context.limits;
    if (this.#connections.size >= maxConnections) {
      const idle = [...this.#connections].find(([, state]) => !state.busy)?.[0];
      if (idle === undefined) {
        this.#context.refusals.note(
          `Refused a connection: ${maxConnections} are open, each with a request under way.`,
        );
        socket.destroy();
        return;
      }
      this.#context.refusals.note(
        `Closed an idle connection: ${maxConnections} were open, and another caller came.`,
      );
      this.#connections.delete(idle);
      idle.destroy();
    }
    this.#connections.set(socket, { busy: false });
    socket.once('close', () => this.#connections.delete(socket));
  }

  /**
   * Takes a connection out of those counted and shed: the tab's accepted socket.
   * @param {Socket} socket
   */
  release(socket) {
    this.#connections.delete(socket);
  }

  /** Destroys every connection counted, refused handshakes among them. */
  destroyAll() {
    for (const socket of this.#connections.keys()) socket.destroy();
  }

  /**
   * @param {IncomingMessage} req
   * @param {ServerResponse} res
   * @param {boolean} [expectsContinue] The caller waits for `100 Continue` before its body.
   */
  onRequest(req, res, expectsContinue = false) {
    const { callers, limits, forwarding } = this.#context;
    this.#track(req, res);
    /** Answers with an error before the body (if any) is read, and closes the connection. */
    const refuse = (/** @type {Parameters<typeof fail>} */ ...args) => {
      this.#closeUnread(req, res);
      fail(...args);
    };
    if (!callers.peerAllowed(req.socket.remoteAddress)) {
      refuse(
        res,
        403,
        'forbidden_peer',
        'permission_error',
        'This relay answers only callers on this machine. To serve the network, start it with --host set to this machine’s network address.',
      );
      return;
    }
    if (!callers.hostAllowed(req.headers.host)) {
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
        `The relay forwards only the API's paths (${RELAYED_PATHS.join(', ')}); '${url.pathname.slice(0, 200)}' is not one of them.`,
      );
      return;
    }
    const withBody = takesBody(req.method ?? 'GET', url.pathname);
    const declared = Number(req.headers['content-length'] ?? 0);
    const bodyLimits = { plain: BODY_LIMIT, images: IMAGE_BODY_LIMIT, files: FILE_BODY_LIMIT };
    const limit = bodyLimitOf(url.pathname, bodyLimits);
    if (withBody) {
      const refusal = refusalUnread(req.headers, declared, limit, mediaTypeOf(url.pathname));
      if (refusal) return refuse(res, ...refusal);
    }
    const tab = this.#context.tab();
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
    if (this.#inFlight >= limits.maxRequests) {
      this.#closeUnread(req, res);
      this.#busy(res, `The relay has ${limits.maxRequests} requests in flight, its limit.`);
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
      forwarding.forward(tab, req, res, url, null);
      return;
    }
    if (expectsContinue) res.writeContinue();
    readBody(req, claim, declared, limit).then(
      (body) => {
        if (body === 'too_large' || body === 'busy') {
          claim.release();
          this.#closeUnread(req, res);
          if (body === 'too_large') fail(res, ...tooLarge(limit));
          else this.#busy(res, 'The relay holds as many request bodies as it may at once.');
          return;
        }
        const tabNow = this.#context.tab();
        // Held until the tab's socket has sent it, not only until it is read.
        if (body !== null && !res.destroyed && !res.headersSent && tabNow === tab) {
          forwarding.forward(tab, req, res, url, body, claim.release);
          return;
        }
        claim.release();
        if (res.destroyed || res.headersSent) return;
        // The tab may have gone while the body arrived.
        if (tabNow !== tab) fail(res, 503, 'engine_unavailable', 'unavailable_error', TAB_GONE);
        else forwarding.forward(tab, req, res, url, null);
      },
      () => {
        claim.release();
        res.destroy();
      },
    );
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
    this.#context.refusals.note(`Refused a request: ${why}`);
    fail(res, 429, 'queue_full', 'rate_limit_error', `${why} Retry in a moment.`, {
      'retry-after': '1',
    });
  }
}
