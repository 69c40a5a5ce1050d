/**
 * The e2e tests' own model host: a static server, on `localhost` and another origin than the
 * app (so CORS applies, and WebLLM fetches its library without caching it), serving the tiny
 * model of tests/tiny-model.ts slowly enough to watch. The app's e2e build lists it through
 * tests/e2e/fixtures/models.json. A test can hold a file midway, break its connection, refuse
 * it, and read which files were requested. It also serves the fixture GGUF, and a file named
 * `.gguf` that is not one, under `/gguf/`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fixtureGguf } from '../../scripts/fixture-gguf.mjs';
import { tinyModel, type TinyModel } from '../tiny-model';

/** The port fixtures/models.json names (E2E_MODEL_PORT moves it, for runs side by side). */
export const MODEL_PORT = Number(process.env.E2E_MODEL_PORT ?? 4190);
/** The model's id and folder, as fixtures/models.json names them. */
export const TINY_ID = 'e2e/tiny';
export const TINY_URL = `http://localhost:${MODEL_PORT}/tiny/`;
/** The fixture GGUF (scripts/fixture-gguf.mjs), served whole and by range, with CORS. */
export const FIXTURE_GGUF_URL = `http://localhost:${MODEL_PORT}/gguf/fixture.gguf`;
/** A file named `.gguf` that is not one (it is text). */
export const NOT_GGUF_URL = `http://localhost:${MODEL_PORT}/gguf/not-a-model.gguf`;

/** The files under `/gguf/`, made once. */
const GGUF_FILES = new Map<string, () => Uint8Array>([
  ['/gguf/fixture.gguf', once(() => fixtureGguf())],
  // The catalogue's own GGUF (fixtures/models.json), apart from the one tests add by URL; with no
  // space after special tokens, so that llama.cpp's JSON grammars work on it (llama.spec.ts).
  ['/gguf/llama-fixture.gguf', once(() => fixtureGguf({ spacePrefix: false }))],
  ['/gguf/not-a-model.gguf', once(() => new TextEncoder().encode('This is not a model.\n'))],
]);

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** What a request of a file meets, once per entry. */
type Trouble = 'hold' | 'break';

/** Bytes written per tick, and the pause between ticks (about 1.3 MB/s per file). */
const CHUNK = 32 * 1024;
const TICK_MS = 25;

/** A promise and what opens it (Node 20 has no `Promise.withResolvers`). */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export class ModelServer {
  readonly model: TinyModel = tinyModel({ shards: 4, shardBytes: 1024 * 1024 });
  /** Every path requested, in order (relative to the model's folder). */
  readonly requests: string[] = [];
  /** Every request under `/gguf/`: method, path and range. */
  readonly ggufRequests: string[] = [];
  readonly #troubles = new Map<string, Trouble[]>();
  /** Held responses wait for this; `release` opens it until the next `reset`. */
  #gate = gate();
  /** Responses waiting at the gate now. */
  holding = 0;
  readonly #refused = new Set<string>();
  #server: Server | undefined;

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      const pathname = new URL(request.url ?? '/', TINY_URL).pathname;
      if (pathname.startsWith('/gguf/')) {
        this.ggufRequests.push(`${request.method} ${pathname} ${request.headers.range ?? ''}`);
        serveGguf(pathname, request, response);
        return;
      }
      const path = pathname.replace(/^\/tiny\//, '');
      this.requests.push(path);
      void this.#serve(path, response);
    });
    // `localhost` may resolve to ::1 or 127.0.0.1: listen on both.
    await new Promise<void>((resolve) => this.#server!.listen(MODEL_PORT, resolve));
    const port = (this.#server.address() as AddressInfo).port;
    if (port !== MODEL_PORT) throw new Error(`model server on ${port}`);
  }

  async stop(): Promise<void> {
    this.release();
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }

  /** Forgets the requests and troubles of earlier tests. */
  reset(): void {
    this.requests.length = 0;
    this.ggufRequests.length = 0;
    this.#troubles.clear();
    this.#refused.clear();
    this.release();
    this.#gate = gate();
    this.holding = 0;
  }

  /** The next requests of `path` meet these troubles, one per request. */
  trouble(path: string, ...troubles: Trouble[]): void {
    this.#troubles.set(path, troubles);
  }

  /** `path` answers 404 from now on. */
  refuse(path: string): void {
    this.#refused.add(path);
  }

  /** Lets every held response go on, and those held later too (until `reset`). */
  release(): void {
    this.#gate.resolve();
  }

  /** How many times `path` was requested. */
  count(path: string): number {
    return this.requests.filter((p) => p === path).length;
  }

  async #serve(path: string, response: ServerResponse): Promise<void> {
    response.setHeader('access-control-allow-origin', '*');
    const file = this.model.files.find((f) => f.path === path);
    if (!file || this.#refused.has(path)) {
      response.writeHead(404).end('not found');
      return;
    }
    let trouble = this.#troubles.get(path)?.shift();
    response.writeHead(200, {
      'content-type': file.contentType,
      'content-length': String(file.bytes.byteLength),
    });
    const half = file.bytes.byteLength >> 1;
    for (let offset = 0; offset < file.bytes.byteLength; offset += CHUNK) {
      if (response.destroyed) return;
      if (offset >= half && trouble === 'break') {
        response.destroy();
        return;
      }
      if (offset >= half && trouble === 'hold') {
        trouble = undefined;
        this.holding += 1;
        await this.#gate.promise;
        this.holding -= 1;
        if (response.destroyed) return;
      }
      response.write(file.bytes.subarray(offset, offset + CHUNK));
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    response.end();
  }
}

/** Serves a file of `/gguf/` at once, whole or one byte range (as a download resumes). */
function serveGguf(path: string, request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('access-control-allow-origin', '*');
  response.setHeader(
    'access-control-expose-headers',
    'content-length, content-range, accept-ranges',
  );
  if (request.method === 'OPTIONS') {
    response.writeHead(204, {
      'access-control-allow-methods': 'GET, HEAD',
      'access-control-allow-headers': '*',
    });
    response.end();
    return;
  }
  const bytes = GGUF_FILES.get(path)?.();
  if (!bytes) {
    response.writeHead(404).end('not found');
    return;
  }
  const headers = { 'content-type': 'application/octet-stream', 'accept-ranges': 'bytes' };
  const range = /^bytes=(\d+)-(\d*)$/.exec(request.headers.range ?? '');
  if (!range) {
    response.writeHead(200, { ...headers, 'content-length': String(bytes.byteLength) });
    response.end(request.method === 'HEAD' ? undefined : bytes);
    return;
  }
  const first = Number(range[1]);
  const last = Math.min(range[2] ? Number(range[2]) : bytes.byteLength - 1, bytes.byteLength - 1);
  if (first > last) {
    response.writeHead(416, { 'content-range': `bytes */${bytes.byteLength}` }).end();
    return;
  }
  response.writeHead(206, {
    ...headers,
    'content-length': String(last - first + 1),
    'content-range': `bytes ${first}-${last}/${bytes.byteLength}`,
  });
  response.end(request.method === 'HEAD' ? undefined : bytes.subarray(first, last + 1));
}
