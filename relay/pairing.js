/**
 * @module
 * The pairing: which tab the relay serves. The one-time code a tab shows to pair, the session that
 * lets it back in after a reload, the grace window in which it may come back, the sockets let in
 * (ready, or not yet), and the heartbeat that drops a tab that stopped answering. What a ready tab
 * sends about requests is handed to forwarding.js.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { WebSocketServer } from 'ws';
import { send } from './forwarding.js';
import { PROTOCOL_VERSION } from './protocol.js';

/** @typedef {import('./protocol.js').TabToRelay} TabToRelay */
/** @typedef {import('node:http').IncomingMessage} IncomingMessage */
/** @typedef {import('ws').WebSocket} WebSocket */

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
 * @typedef {object} PairingContext What the pairing is told by the relay it belongs to.
 * @property {string} key The relay's API key, handed to each tab let in.
 * @property {string} appOrigin The origin whose tabs may pair.
 * @property {(...lines: string[]) => void} log One message, given line by line.
 * @property {number} heartbeatMs How often to check that the tab is still there.
 * @property {number} reconnectGraceMs How long a tab that went away may come back.
 * @property {() => string} baseUrl Where callers reach the relay: `{origin}/v1`.
 * @property {() => string} pairingLink The link that pairs a tab, with the current code.
 * @property {import('./forwarding.js').Forwarding} forwarding Where a ready tab's traffic goes.
 */

/** One relay's pairing with (at most) one tab. */
export class Pairing {
  #wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  /** @type {PairingContext} */
  #context;
  /** The code the next pairing must show; a new one once it is used. */
  #code = token();
  /** The paired tab's session, to let it back in after a reload; null when nobody is paired. */
  /** @type {string | null} */
  #session = null;
  /** The tab's socket, once it said it is ready. @type {WebSocket | null} */
  #tab = null;
  /** A socket that was let in and has not said it is ready yet. @type {WebSocket | null} */
  #joining = null;
  /** Sockets that answered the last ping. @type {WeakSet<WebSocket>} */
  #alive = new WeakSet();
  /** @type {NodeJS.Timeout | undefined} */
  #heartbeat;
  /**
   * Ends the session when no tab is ready with it: a tab that went away and did not come back, or
   * sockets let in that never said they were ready. Runs whenever there is a session and no ready
   * tab, across reconnects that come and go, and stops only when a tab says it is ready.
   * @type {NodeJS.Timeout | undefined}
   */
  #graceTimer;

  /** @param {PairingContext} context */
  constructor(context) {
    this.#context = context;
    this.#heartbeat = setInterval(() => this.#checkTab(), context.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** The code the next pairing must show. */
  get code() {
    return this.#code;
  }

  /** The socket of the tab that serves requests now, once it said it is ready. */
  get tab() {
    return this.#tab;
  }

  /**
   * Whether a handshake to the relay's path, from the app's origin and this machine, may join: it
   * shows the current code, and no tab is paired or joining; or it shows the session, which only
   * the paired tab was given. `refused` says why not.
   * @param {URL} url The handshake's address, with its `code` or `session`.
   * @returns {{ refused: [number, string] } | { byCode: boolean }}
   */
  admit(url) {
    const byCode = sameToken(url.searchParams.get('code'), this.#code);
    const bySession = sameToken(url.searchParams.get('session'), this.#session);
    if (!byCode && !bySession) {
      return { refused: [403, 'no valid pairing code (wrong, or used already)'] };
    }
    if (!bySession && (this.#tab !== null || this.#joining !== null)) {
      return { refused: [409, 'a tab is paired already; end that pairing in the app first'] };
    }
    return { byCode: !bySession };
  }

  /**
   * Lets in a handshake that {@link Pairing#admit} admitted.
   * @param {IncomingMessage} req
   * @param {import('node:stream').Duplex} socket
   * @param {Buffer} head
   * @param {boolean} byCode It showed the code, not the session.
   */
  accept(req, socket, head, byCode) {
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      if (byCode) {
        // One-time: the link that was printed no longer pairs anything. A new session, and a
        // new grace window for it should this socket go before it says it is ready.
        this.#code = token();
        this.#session = token();
        this.#stopGrace();
      } else {
        // By its session: the tab came back. The grace window runs on: only a tab that says it is
        // ready stops it.
        this.#replaceSocket();
      }
      this.#join(ws, /** @type {string} */ (this.#session));
    });
  }

  /**
   * Lets go of the tab's socket, or the one joining, when the tab comes back with its session: a
   * reloaded page can connect before its old socket's close reaches the relay (on a busy
   * machine it does), and that socket's page is gone. What the old socket had in flight fails.
   */
  #replaceSocket() {
    const old = this.#tab ?? this.#joining;
    if (old === null) return;
    if (old === this.#tab) this.#context.forwarding.tabGone();
    this.#tab = null;
    this.#joining = null;
    // Its close, when it comes, finds it neither the tab nor joining (#onTabGone).
    old.close(4002, 'the tab reconnected with its session');
    this.#startGrace();
  }

  /** Stops the heartbeat and the grace window, and closes every socket let in. */
  close() {
    clearInterval(this.#heartbeat);
    clearTimeout(this.#graceTimer);
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
  }

  /**
   * @param {WebSocket} ws
   * @param {string} session
   */
  #join(ws, session) {
    const { forwarding } = this.#context;
    this.#joining = ws;
    this.#alive.add(ws);
    ws.on('pong', () => this.#alive.add(ws));
    ws.on('message', (data, isBinary) => {
      if (isBinary) {
        if (ws === this.#tab) forwarding.bytes(ws, /** @type {Buffer} */ (data));
        return;
      }
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
        forwarding.unusable(message, error);
      }
    });
    ws.on('close', () => this.#onTabGone(ws));
    ws.on('error', () => ws.terminate());
    send(ws, {
      type: 'hello',
      version: PROTOCOL_VERSION,
      key: this.#context.key,
      base_url: this.#context.baseUrl(),
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
      this.#context.log(
        `Paired with a tab of ${this.#context.appOrigin}. Forwarding ${this.#context.baseUrl()} to it.`,
      );
      return;
    }
    if (message.type === 'bye') {
      this.#session = null;
      ws.close(1000, 'pairing ended');
      return;
    }
    if (ws !== this.#tab) return;
    this.#context.forwarding.receive(message);
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
    this.#context.forwarding.tabGone();
    if (this.#session === null) {
      this.#context.log(
        'The tab ended the pairing. To pair a tab again, open:',
        `  ${this.#context.pairingLink()}`,
      );
      return;
    }
    // A reload comes back within moments, with its session; a closed tab never does, and its
    // pairing ends with the grace window (a tab restored later asks again).
    this.#context.log(
      `The paired tab went away. If it was reloaded it reconnects within ${this.#context.reconnectGraceMs / 1000} s; to pair another tab, open:`,
      `  ${this.#context.pairingLink()}`,
    );
    this.#startGrace();
  }

  /**
   * Starts the grace window, unless it runs already: when it ends with no tab ready, the session
   * lets nobody in any more, and a socket let in with it that has not said it is ready is closed.
   */
  #startGrace() {
    if (this.#graceTimer !== undefined || this.#session === null || this.#tab !== null) return;
    const grace = this.#context.reconnectGraceMs;
    this.#graceTimer = setTimeout(() => {
      this.#graceTimer = undefined;
      if (this.#tab !== null) return;
      this.#session = null;
      this.#joining?.close(4001, 'the pairing ended');
      this.#context.log(
        `The paired tab did not come back within ${grace / 1000} s: the pairing ended. To pair a tab again, open:`,
        `  ${this.#context.pairingLink()}`,
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
}
