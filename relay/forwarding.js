/**
 * @module
 * The requests handed to the paired tab, from the moment they go until their response is whole:
 * each request sent with its body, the tab's head, bytes and end written to its caller, credit
 * given back to the tab as the caller's connection takes the bytes, and a request the tab cannot
 * finish failed as the API would fail it.
 */
import { STATUS_CODES, validateHeaderName, validateHeaderValue } from 'node:http';
import { cut, errorBody, fail } from './answers.js';
import { sendBody } from './body.js';
import { readFrame, WINDOW_BYTES } from './protocol.js';

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
export const TAB_GONE =
  'The paired tab went away (closed, reloaded or unpaired) before the response was complete.';

/**
 * @typedef {object} Pending A forwarded request waiting for, or streaming, its response.
 * @property {ServerResponse} res
 * @property {boolean} sse The response is an event stream (a failure ends it with an event).
 * @property {number} owed Bytes handed to the caller's connection, not yet credited to the tab.
 */

/**
 * Sends `message` to a tab's socket, if it is still open.
 * @param {WebSocket} ws
 * @param {RelayToTab} message
 */
export function send(ws, message) {
  if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message));
}

/** The requests in flight to the paired tab, by the id the protocol gives each. */
export class Forwarding {
  /** @type {Map<number, Pending>} */
  #pending = new Map();
  #nextId = 1;
  /** @type {(message: string) => void} */
  #log;
  /** @type {import('./log.js').RateLimitedLog} */
  #refusals;
  /** The tab that serves requests now, if any: credit goes to it. @type {() => WebSocket | null} */
  #tab;

  /**
   * @param {object} context
   * @param {(message: string) => void} context.log
   * @param {import('./log.js').RateLimitedLog} context.refusals Where a tab's faults are noted.
   * @param {() => WebSocket | null} context.tab The tab that serves requests now, if any.
   */
  constructor({ log, refusals, tab }) {
    this.#log = log;
    this.#refusals = refusals;
    this.#tab = tab;
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
  forward(tab, req, res, url, body, sent = () => undefined) {
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
      if (this.#pending.delete(id)) send(tab, { type: 'cancel', id });
    });
    send(tab, {
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
   * A message of the paired tab's about a request: its response's head, its end, or its failure.
   * @param {TabToRelay} message
   */
  receive(message) {
    if (message.type === 'ready' || message.type === 'bye') return;
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
   * A message of the tab's the relay could not act on (a status or header Node refuses): that
   * request fails, the relay and the other requests go on.
   * @param {TabToRelay} message
   * @param {unknown} error
   */
  unusable(message, error) {
    this.#log(`A message from the tab could not be used: ${/** @type {Error} */ (error).message}`);
    const pending = 'id' in message ? this.#pending.get(message.id) : undefined;
    if (pending) {
      this.#pending.delete(/** @type {{ id: number }} */ (message).id);
      this.#failPending(pending, 'The paired tab sent a response the relay cannot forward.', 502);
    }
  }

  /**
   * Bytes of a response's body (a binary message: the request's id, then the bytes), written to
   * its caller as they came. Credit goes back for bytes once they have left for the caller's
   * connection, not while they wait in the relay: the tab is never more than its window ahead of
   * what the caller's connection took. In batches, not per chunk (a chunk is often one token): the
   * tab blocks only with a whole window unanswered, and a batch is a quarter of one.
   * @param {WebSocket} ws The paired tab's socket.
   * @param {Buffer} data
   */
  bytes(ws, data) {
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

  /** The tab went away: every request in flight fails. */
  tabGone() {
    for (const pending of this.#pending.values()) this.#failPending(pending, TAB_GONE);
    this.#pending.clear();
  }

  /**
   * @param {number} id
   * @param {Pending} pending
   */
  #credit(id, pending) {
    const tab = this.#tab();
    if (pending.owed === 0 || tab === null) return;
    send(tab, { type: 'credit', id, bytes: pending.owed });
    pending.owed = 0;
  }

  /**
   * Ends a response the tab cannot finish: an error status when none went out yet, an error
   * event in a stream (docs/api.md, Responses: when the status line is sent), and a cut
   * connection for a JSON body begun. 503 `engine_unavailable` when the tab failed or went; 502
   * `upstream_error` when what it sent cannot be forwarded.
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
}
