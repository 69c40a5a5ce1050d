/**
 * @module
 * The relay's own answers: errors shaped as the API's (docs/api.md, Errors), the checks it makes of
 * a body's request before reading a byte of it, and the refusal of a WebSocket handshake.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { bearerKey } from './protocol.js';

/** @typedef {import('node:http').ServerResponse} ServerResponse */

/**
 * The largest body the API takes (docs/api.md, Order of checks): the relay answers 413 beyond it,
 * as the API would.
 */
export const BODY_LIMIT = 4 * 1024 * 1024;
/**
 * The largest body of a chat completion, which may carry images as data URLs (the API's
 * `IMAGE_BODY_LIMIT`): the API itself answers 413 to one without images over `BODY_LIMIT`.
 */
export const IMAGE_BODY_LIMIT = 64 * 1024 * 1024;
/**
 * The largest upload of a file (`POST /v1/openai/files`, a multipart form) the relay forwards: it
 * holds a body whole until the tab has it, so less than the API's own 512 MiB a file (docs/relay.md).
 */
export const FILE_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * An OpenAI-shaped error body, as the API's own (docs/api.md, Errors).
 * @param {string} code
 * @param {string} type
 * @param {string} message
 */
export function errorBody(code, type, message) {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** A `req_…` id, as the API's own. */
export function requestId() {
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
export function fail(res, status, code, type, message, headers = {}) {
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
 * API's order (docs/api.md, Order of checks) and with its answers: a key (401), the route's media
 * type (415: JSON, or a multipart form for a file's upload), the declared size (413).
 * Whether the tab accepts the key is the tab's to say; that there is one, the relay checks.
 * @param {import('node:http').IncomingHttpHeaders} headers
 * @param {number} declared The `Content-Length`, 0 when there is none.
 * @param {number} limit The largest body the API takes on this route (`bodyLimitOf`).
 * @param {string} [mediaType] The media type the route reads (`mediaTypeOf`).
 * @returns {[number, string, string, string] | null} The refusal (status, code, type, message).
 */
export function refusalUnread(headers, declared, limit, mediaType = 'application/json') {
  if (bearerKey(headers.authorization) === null) {
    return [
      401,
      'invalid_api_key',
      'authentication_error',
      'You did not provide an API key: send it as `Authorization: Bearer <key>`.',
    ];
  }
  const type = headers['content-type'] ?? '';
  if (type.split(';', 1)[0]?.trim().toLowerCase() !== mediaType) {
    const got = type === '' ? 'no content type' : `'${type.slice(0, 100)}'`;
    return [
      415,
      'unsupported_media_type',
      'invalid_request_error',
      `The request body must be sent as '${mediaType}' (got ${got}).`,
    ];
  }
  if (declared > limit) return tooLarge(limit);
  return null;
}

/**
 * 413, as the API answers a body over its `limit`.
 * @param {number} limit
 * @returns {[number, string, string, string]}
 */
export function tooLarge(limit) {
  return [
    413,
    'request_too_large',
    'invalid_request_error',
    `The request body is larger than the limit of ${limit} bytes.`,
  ];
}

/**
 * `text` cut to `limit` characters, with `…` where it was cut.
 * @param {string} text
 * @param {number} limit
 */
export function cut(text, limit) {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

/**
 * How long a connection answered before its caller stopped sending may stay open (what still
 * comes read and dropped) before it is closed: closing at once, on bytes not read yet, would reset
 * the connection, and the caller could lose the answer.
 */
export const LINGER_MS = 1000;

/**
 * Refuses a WebSocket handshake, and closes its socket for good: the refusal goes out, the socket
 * is half-closed, what the caller still sends is read and dropped, and the socket is destroyed
 * when the caller closes its end or after {@link LINGER_MS}, whichever is first. Half-closed
 * alone, it stays as long as its caller keeps its end open, and enough such callers would take
 * every descriptor the process has.
 * @param {import('node:stream').Duplex} socket
 * @param {number} status
 * @param {string} reason
 */
export function refuseUpgrade(socket, status, reason) {
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // Node's HTTP server leaves an upgraded socket without its error listener: a reset must not
  // throw.
  socket.on('error', () => socket.destroy());
  socket.resume();
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(reason)}\r\n\r\n${reason}`,
  );
}
