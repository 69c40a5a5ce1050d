/**
 * A plain static server, as GitHub Pages is: files under path prefixes (`/repo/` → a folder), no
 * special headers (no COOP, COEP or CORP), 404 for anything else. It records every request, so a
 * test can say that nothing was asked for outside the site's folder and nothing was missing.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.webmanifest': 'application/manifest+json',
};

/** One request as the server saw it. */
export interface SiteRequest {
  path: string;
  status: number;
}

export class StaticServer {
  readonly requests: SiteRequest[] = [];
  /** While false, every request fails as if the network were down (the socket is destroyed). */
  online = true;
  #server: Server | undefined;

  constructor(
    readonly port: number,
    private readonly mounts: Record<string, string>,
  ) {}

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  #file(path: string): string | undefined {
    for (const [prefix, dir] of Object.entries(this.mounts)) {
      if (!path.startsWith(prefix)) continue;
      let file = normalize(join(dir, decodeURIComponent(path.slice(prefix.length))));
      if (!file.startsWith(dir)) return undefined;
      if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
      return existsSync(file) ? file : undefined;
    }
    return undefined;
  }

  start(): Promise<void> {
    this.#server = createServer((req, res) => {
      if (!this.online) {
        req.socket.destroy();
        return;
      }
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const file = this.#file(path);
      const status = file ? 200 : 404;
      this.requests.push({ path, status });
      if (!file) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
        return;
      }
      res.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'cache-control': 'max-age=600',
      });
      res.end(readFileSync(file));
    });
    // `localhost` may resolve to ::1 or 127.0.0.1 (a test's other origin): listen on both.
    return new Promise((resolve) => this.#server!.listen(this.port, resolve));
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.#server?.closeAllConnections();
      this.#server?.close(() => resolve());
    });
  }
}
