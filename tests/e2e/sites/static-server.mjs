/**
 * A plain static server, as GitHub Pages is: files under path prefixes (`/repo/` → a folder), cached
 * for ten minutes (`max-age=600`) with ETags (304 when they match), no special headers (no COOP,
 * COEP or CORP), one byte range when asked (206), 404 for anything else. It records every request, so a
 * test can say that nothing was asked for outside the site's folder and nothing was missing, and
 * the bench can count the bytes a visit cost. Plain JavaScript with JSDoc types, so that the bench
 * (Node, no build) runs it as it is and TypeScript checks it.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

/** @type {Record<string, string>} */
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
};

/**
 * One request as the server saw it.
 * @typedef {object} SiteRequest
 * @property {string} path
 * @property {number} status
 * @property {number} bytes the body's length as sent (0 for a 404 and a HEAD request)
 */

export class StaticServer {
  /**
   * Every request, in order.
   * @type {SiteRequest[]}
   */
  requests = [];
  /** While false, every request fails as if the network were down (the socket is destroyed). */
  online = true;
  /** @type {import('node:http').Server | undefined} */
  #server;
  /** @type {Record<string, string>} */
  #mounts;

  /**
   * @param {number} port
   * @param {Record<string, string>} mounts folders by the path prefix they are served under
   */
  constructor(port, mounts) {
    /** @readonly */
    this.port = port;
    this.#mounts = mounts;
  }

  /** @returns {string} */
  get origin() {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * The file `path` names, or undefined.
   * @param {string} path
   * @returns {string | undefined}
   */
  #file(path) {
    for (const [prefix, dir] of Object.entries(this.#mounts)) {
      if (!path.startsWith(prefix)) continue;
      let file = normalize(join(dir, decodeURIComponent(path.slice(prefix.length))));
      if (!file.startsWith(dir)) return undefined;
      if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
      return existsSync(file) ? file : undefined;
    }
    return undefined;
  }

  /** @returns {Promise<void>} */
  start() {
    const server = createServer((req, res) => {
      if (!this.online) {
        req.socket.destroy();
        return;
      }
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const file = this.#file(path);
      if (!file) {
        this.requests.push({ path, status: 404, bytes: 0 });
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
        return;
      }
      const whole = readFileSync(file);
      // An ETag as GitHub Pages sends, and 304 to a request that has the same.
      const etag = `"${createHash('sha1').update(whole).digest('hex').slice(0, 16)}"`;
      if (req.headers['if-none-match'] === etag && !req.headers.range) {
        this.requests.push({ path, status: 304, bytes: 0 });
        res.writeHead(304, { etag, 'cache-control': 'max-age=600' }).end();
        return;
      }
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      const first = Number(range?.[1] ?? 0);
      const last = Math.min(Number(range?.[2] || Infinity), whole.byteLength - 1);
      if (first > last) {
        this.requests.push({ path, status: 416, bytes: 0 });
        res.writeHead(416, { 'content-range': `bytes */${whole.byteLength}` }).end();
        return;
      }
      const body = whole.subarray(first, last + 1);
      const status = range ? 206 : 200;
      const sent = req.method === 'HEAD' ? 0 : body.byteLength;
      this.requests.push({ path, status, bytes: sent });
      res.writeHead(status, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'max-age=600',
        etag,
        'accept-ranges': 'bytes',
        'content-length': String(body.byteLength),
        ...(range && { 'content-range': `bytes ${first}-${last}/${whole.byteLength}` }),
      });
      res.end(sent ? body : undefined);
    });
    this.#server = server;
    // `localhost` may resolve to ::1 or 127.0.0.1 (a test's other origin): listen on both.
    return new Promise((resolve) => server.listen(this.port, resolve));
  }

  /** @returns {Promise<void>} */
  stop() {
    return new Promise((resolve) => {
      this.#server?.closeAllConnections();
      if (this.#server) this.#server.close(() => resolve());
      else resolve();
    });
  }
}
