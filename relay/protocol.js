/**
 * @module
 * What the relay and the paired tab say to each other over the WebSocket, and the rules both ends
 * apply (which paths are the API's, which hosts are loopback). Plain JavaScript with JSDoc types,
 * so that Node runs the relay as it is and the app's TypeScript imports the same definitions.
 *
 * Messages are JSON objects in text frames, and bodies binary messages: the request's id as 4
 * bytes (big-endian), then the bytes, as they are. A request announces its body's length (`body`),
 * and the body follows as one binary message; a response's body comes as binary messages in
 * order, between its `head` and its `end`. Base64 in JSON, as protocol 1 had it, made each body
 * held three times over (its bytes, its text and the frame) beside what the relay counted.
 * Flow control: the tab may have at most `WINDOW_BYTES` of a response's body sent and not yet
 * written by the relay to its client; the relay returns `credit` as its client takes the bytes,
 * so a client that does not read holds the tab's reading of the response, and through it the
 * service worker's stream.
 */

/** The protocol's version: the relay refuses a tab that speaks another one. */
export const PROTOCOL_VERSION = 2;

/** The WebSocket's path on the relay. */
export const RELAY_PATH = '/relay';

/** Bytes of one response the tab may send before the relay gives credit back. */
export const WINDOW_BYTES = 256 * 1024;

/** The API's paths (DESIGN §3): `/v1/openai/*` and the `/v1` aliases, nothing else. */
const API_PATH = /^\/v1\/(?:openai\/.+|chat\/completions|embeddings|models(?:\/.+)?)$/;

/**
 * Whether `pathname` (no query) is one of the API's paths, the only ones the relay forwards.
 * @param {string} pathname
 */
export function isApiPath(pathname) {
  return API_PATH.test(pathname);
}

/** The API's routes whose answer depends on a body: chat completions and embeddings (DESIGN §3). */
const BODY_ROUTE = /^\/v1\/(?:openai\/)?(?:chat\/completions|embeddings)$/;

/**
 * Whether the API reads the body of a request with `method` to `pathname`: only a POST to chat
 * completions or embeddings. The relay reads and forwards no other body; the API answers any other request
 * (its GETs, and the 404 or 405 of a path or method it does not have) without reading one.
 * @param {string} method
 * @param {string} pathname
 */
export function takesBody(method, pathname) {
  return method === 'POST' && BODY_ROUTE.test(pathname);
}

/** The chat route, whose bodies may carry images. */
const CHAT_ROUTE = /^\/v1\/(?:openai\/)?chat\/completions$/;

/**
 * The largest body the API takes at `pathname`: a chat completion's may carry images.
 * @param {string} pathname
 * @param {{ plain: number, images: number }} limits
 */
export function bodyLimitOf(pathname, { plain, images }) {
  return CHAT_ROUTE.test(pathname) ? images : plain;
}

/**
 * The bearer key in an `Authorization` header, as the API reads it (src/api/router.ts), or
 * null when there is none (missing, not `Bearer`, or empty).
 * @param {string | undefined} header
 */
export function bearerKey(header) {
  const key = /^Bearer[ \t]+(.*)$/i.exec(header ?? '')?.[1]?.trim();
  return key ? key : null;
}

/** The host names that mean this machine. */
const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The name in a `Host` header (`name[:port]`), lower case, or null when it is not one.
 * @param {string | undefined} host
 */
export function hostName(host) {
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::\d{1,5})?$/.exec((host ?? '').trim().toLowerCase());
  return match?.[1] ?? null;
}

/**
 * Whether a connection's peer address is this machine: 127.0.0.0/8 or ::1, also as IPv4-mapped
 * IPv6 (`::ffff:127.0.0.1`, what a socket on `::` reports for an IPv4 caller). Unlike a `Host`
 * header, which any caller writes as it likes, the peer address is the network's word.
 * @param {string | undefined} address
 */
export function isLoopbackPeer(address) {
  const ip = (address ?? '').toLowerCase().replace(/^::ffff:(?=\d+\.)/, '');
  return ip === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/**
 * Whether a `Host` header names this machine, as a DNS-rebinding defence: a page of another site
 * that makes its own name resolve to 127.0.0.1 still sends its own name here.
 * @param {string | undefined} host
 */
export function isLoopbackHost(host) {
  return LOOPBACK_NAMES.has(hostName(host) ?? '');
}

/**
 * Whether `url` is a relay address a pairing link may name: `ws:` or `wss:` on this machine, by
 * the names the app's Content Security Policy can allow (Chromium accepts no IPv6 literal there).
 * @param {string} url
 */
export function isLoopbackRelayUrl(url) {
  try {
    const parsed = new URL(url);
    return (
      (parsed.protocol === 'ws:' || parsed.protocol === 'wss:') &&
      (parsed.hostname === '127.0.0.1' || parsed.hostname === 'localhost')
    );
  } catch {
    return false;
  }
}

/**
 * @typedef {object} RelayHello The relay's first message once a tab is let in.
 * @property {'hello'} type
 * @property {number} version {@link PROTOCOL_VERSION}
 * @property {string} key The relay's API key: the tab registers it as an issued key.
 * @property {string} base_url Where callers reach the relay, e.g. `http://127.0.0.1:8788/v1`.
 * @property {string} session Lets this tab (and only it) connect again after a reload.
 */

/**
 * @typedef {object} RelayRequest A caller's request, for the tab to replay against its own API.
 * @property {'request'} type
 * @property {number} id
 * @property {string} method
 * @property {string} path The path and query, e.g. `/v1/openai/chat/completions`.
 * @property {Record<string, string>} headers
 * @property {number | null} body The body's length in bytes, or null when there is none; a body
 *   of a byte or more follows as one binary message (see {@link frameHeader}).
 */

/**
 * @typedef {object} RelayCredit The relay wrote `bytes` of request `id` to its client.
 * @property {'credit'} type
 * @property {number} id
 * @property {number} bytes
 */

/**
 * @typedef {object} RelayCancel The caller went away: stop request `id`.
 * @property {'cancel'} type
 * @property {number} id
 */

/** @typedef {RelayHello | RelayRequest | RelayCredit | RelayCancel} RelayToTab */

/**
 * @typedef {object} TabReady The tab registered the key and serves requests from now on.
 * @property {'ready'} type
 * @property {number} version
 */

/**
 * @typedef {object} TabBye The user ended the pairing in the app.
 * @property {'bye'} type
 */

/**
 * @typedef {object} TabHead The response's status line and headers.
 * @property {'head'} type
 * @property {number} id
 * @property {number} status
 * @property {Record<string, string>} headers
 */

/**
 * @typedef {object} TabEnd The response's body is complete.
 * @property {'end'} type
 * @property {number} id
 */

/**
 * @typedef {object} TabFailed The tab could not get (the rest of) the response.
 * @property {'failed'} type
 * @property {number} id
 * @property {string} message
 */

/**
 * The text messages of the tab; the bytes of a response's body come as binary messages (see
 * {@link frameHeader}), between its `head` and its `end`.
 * @typedef {TabReady | TabBye | TabHead | TabEnd | TabFailed} TabToRelay
 */

/** The bytes before a body's own in its binary message: the request's id. */
export const FRAME_HEADER_BYTES = 4;

/**
 * The start of a binary message that carries bytes of request `id`'s body: the id, big-endian.
 * @param {number} id
 */
export function frameHeader(id) {
  const header = new Uint8Array(FRAME_HEADER_BYTES);
  new DataView(header.buffer).setUint32(0, id);
  return header;
}

/**
 * The request id and the body bytes of a binary message, or null when it is too short to be one.
 * The bytes are a view of the message, not a copy.
 * @param {Uint8Array} message
 * @returns {{ id: number, bytes: Uint8Array } | null}
 */
export function readFrame(message) {
  if (message.byteLength < FRAME_HEADER_BYTES) return null;
  const id = new DataView(message.buffer, message.byteOffset, FRAME_HEADER_BYTES).getUint32(0);
  return { id, bytes: message.subarray(FRAME_HEADER_BYTES) };
}
