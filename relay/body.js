/**
 * @module
 * A request's body, read as it arrives and counted against the relay's cap of bodies held, then
 * handed to the tab's socket as one binary message without a copy of it.
 */
import { frameHeader } from './protocol.js';

/**
 * @typedef {object} Body A body read whole: its parts as they came, and their size.
 * @property {Buffer[]} parts
 * @property {number} size
 */

/**
 * Reads `req`'s body as it arrives, each part taken from `claim` before it is kept. Resolves with
 * the body (null when the request has none), `'too_large'` past the API's limit or `'busy'` past
 * what the relay may hold, reading nothing further either way; rejects when the caller goes
 * before its body is whole. What `claim` took stays taken: the caller of this releases it.
 * @param {import('node:http').IncomingMessage} req
 * @param {ReturnType<import('./limits.js').BodyBudget['claim']>} claim
 * @param {number} taken Bytes `claim` took already (the declared `Content-Length`): parts are
 *   taken only past them.
 * @param {number} limit The largest body the API takes on this route.
 * @returns {Promise<Body | null | 'too_large' | 'busy'>}
 */
export function readBody(req, claim, taken, limit) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const parts = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (/** @type {Buffer} */ chunk) => {
      size += chunk.length;
      const beyond = Math.max(0, size - taken);
      const refusal =
        size > limit ? 'too_large' : beyond === 0 || claim.take(beyond) ? null : 'busy';
      taken += beyond;
      if (refusal !== null) {
        stop();
        resolve(refusal);
        return;
      }
      parts.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(size === 0 && !req.headers['content-length'] ? null : { parts, size });
    };
    const onError = (/** @type {Error} */ error) => {
      stop();
      reject(error);
    };
    // The caller went before its body was whole.
    const onClose = () => onError(new Error('the caller went away'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * Sends request `id`'s body to the tab as one binary message, its id first: in fragments, one per
 * part as it was read, so that no copy of the body is made. `sent` runs once the socket has handed
 * the last byte to the operating system, or failed to (the tab went).
 * @param {import('ws').WebSocket} ws
 * @param {number} id
 * @param {Body} body
 * @param {() => void} sent
 */
export function sendBody(ws, id, { parts }, sent) {
  const fragments = [Buffer.from(frameHeader(id)), ...parts];
  fragments.forEach((fragment, i) => {
    const fin = i === fragments.length - 1;
    ws.send(fragment, { binary: true, fin }, fin ? () => sent() : undefined);
  });
}
