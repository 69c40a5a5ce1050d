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
import {
  BENCH_OPTIONS,
  FIXTURE_VARIANTS,
  fixtureEmbeddingGguf,
  fixtureGguf,
} from '../../scripts/fixture-gguf.mjs';
import { fixtureVisionGguf } from '../../scripts/fixture-vision.mjs';
import { tinyModel, type TinyModel } from '../tiny-model';

/** The port fixtures/models.json names (E2E_MODEL_PORT moves it, for runs side by side). */
export const MODEL_PORT = Number(process.env.E2E_MODEL_PORT ?? 4188);
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
  // Its variants that call a tool and that think (FIXTURE_VARIANTS), for llama-tools.spec.ts.
  [
    '/gguf/llama-fixture-tools.gguf',
    once(() => fixtureGguf({ ...FIXTURE_VARIANTS.tools, spacePrefix: false })),
  ],
  [
    '/gguf/llama-fixture-thinking.gguf',
    once(() => fixtureGguf({ ...FIXTURE_VARIANTS.thinking, spacePrefix: false })),
  ],
  // The embedding fixture, whose vectors tests compute themselves (embeddings.spec.ts).
  ['/gguf/llama-fixture-embedding.gguf', once(() => fixtureEmbeddingGguf())],
  ['/gguf/not-a-model.gguf', once(() => new TextEncoder().encode('This is not a model.\n'))],
  // The vision fixture (scripts/fixture-vision.mjs): a language model and its projector, made
  // together, for llama-vision.spec.ts.
  ['/gguf/fixture-vision.gguf', once(() => visionFixture().model)],
  ['/gguf/mmproj-fixture-vision.gguf', once(() => visionFixture().mmproj)],
]);

function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

/** The vision fixture's two files, made once. */
const visionFixture = once(() => fixtureVisionGguf());

/** The vision fixture on the model server: its language model and its projector. */
export const VISION_GGUF_URL = `http://localhost:${MODEL_PORT}/gguf/fixture-vision.gguf`;
export const VISION_MMPROJ_URL = `http://localhost:${MODEL_PORT}/gguf/mmproj-fixture-vision.gguf`;

/**
 * The fixture GGUFs as the download tests fetch them, under `/ranged/`: by Range (206 with
 * Content-Range and an ETag, exposed to CORS), paced like the tiny model's files, each range
 * breakable or held. The bench variant (~50 MB) is `e2e/fixture-bench-GGUF:F32` in
 * fixtures/models.json; the e2e build stores GGUFs in parts of 256 KiB, so it has ~200.
 */
export const BENCH_GGUF_ID = 'e2e/fixture-bench-GGUF:F32';
export const BENCH_GGUF_PATH = '/ranged/fixture-bench.gguf';
export const BENCH_GGUF_URL = `http://localhost:${MODEL_PORT}${BENCH_GGUF_PATH}`;
/** The embedding fixture's bench variant (~50 MB), `e2e/fixture-embed-bench-GGUF:F32`. */
export const BENCH_EMBEDDING_ID = 'e2e/fixture-embed-bench-GGUF:F32';
export const BENCH_EMBEDDING_PATH = '/ranged/fixture-embed-bench.gguf';
const RANGED_MAKERS: Record<string, () => Uint8Array> = {
  [BENCH_GGUF_PATH]: () => fixtureGguf(BENCH_OPTIONS),
  [BENCH_EMBEDDING_PATH]: () => fixtureEmbeddingGguf(BENCH_OPTIONS),
  '/ranged/fixture.gguf': () => fixtureGguf(),
};
const rangedMade = new Map<string, Uint8Array>();
/** The bytes of a `/ranged/` file (made on first use), or undefined. */
export function rangedFile(path: string): Uint8Array | undefined {
  const make = RANGED_MAKERS[path];
  if (!make) return undefined;
  const made = rangedMade.get(path) ?? make();
  rangedMade.set(path, made);
  return made;
}
/** Bytes written per tick of a `/ranged/` answer, and the pause between ticks (~16 MB/s). */
const RANGED_CHUNK = 64 * 1024;
const RANGED_TICK_MS = 4;

/** One request of `/ranged/`. */
export interface RangedRequest {
  path: string;
  method: string;
  /** Its Range header, or null. */
  range: string | null;
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
  /** Every request of `/ranged/`, in order. */
  readonly ranged: RangedRequest[] = [];
  /** Troubles of `/ranged/` requests, by `<path> <first byte asked>`. */
  readonly #rangeTroubles = new Map<string, Trouble[]>();
  #server: Server | undefined;

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      const ranged = new URL(request.url ?? '/', TINY_URL).pathname;
      if (ranged.startsWith('/ranged/')) {
        void this.#serveRanged(ranged, request, response);
        return;
      }
      const pathname = new URL(request.url ?? '/', TINY_URL).pathname;
      if (pathname.startsWith('/gguf/')) {
        this.ggufRequests.push(`${request.method} ${pathname} ${request.headers.range ?? ''}`);
        serveGguf(pathname, request, response);
        return;
      }
      if (pathname.startsWith('/hub/')) {
        this.ggufRequests.push(`${request.method} ${pathname} ${request.headers.range ?? ''}`);
        serveHub(pathname, request, response);
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
    this.ranged.length = 0;
    this.#rangeTroubles.clear();
    this.#refused.clear();
    this.release();
    this.#gate = gate();
    this.holding = 0;
  }

  /** The next requests of `path` meet these troubles, one per request. */
  trouble(path: string, ...troubles: Trouble[]): void {
    this.#troubles.set(path, troubles);
  }

  /** The next GET requests of `path` (under `/ranged/`) asking from byte `first` meet these. */
  troubleRange(path: string, first: number, ...troubles: Trouble[]): void {
    this.#rangeTroubles.set(`${path} ${first}`, troubles);
  }

  /** The Range headers of the GET requests of `path` (under `/ranged/`), in order. */
  rangesOf(path: string): (string | null)[] {
    return this.ranged.filter((r) => r.path === path && r.method === 'GET').map((r) => r.range);
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

  /** A `/ranged/` file: whole, or the range `bytes=first-last` (206), as a static host does. */
  async #serveRanged(
    path: string,
    request: IncomingMessage,
    response: ServerResponse,
  ): Promise<void> {
    const method = request.method ?? 'GET';
    const range = request.headers.range ?? null;
    this.ranged.push({ path, method, range });
    response.setHeader('access-control-allow-origin', '*');
    response.setHeader('access-control-expose-headers', 'content-range, etag');
    if (method === 'OPTIONS') {
      response.writeHead(204, {
        'access-control-allow-methods': 'GET, HEAD',
        'access-control-allow-headers': 'range',
      });
      response.end();
      return;
    }
    const bytes = rangedFile(path);
    if (!bytes) {
      response.writeHead(404).end('not found');
      return;
    }
    const size = bytes.byteLength;
    const asked = /^bytes=(\d+)-(\d+)$/.exec(range ?? '');
    const first = asked ? Number(asked[1]) : 0;
    if (first >= size) {
      response.writeHead(416, { 'content-range': `bytes */${size}` }).end();
      return;
    }
    const last = asked ? Math.min(Number(asked[2]), size - 1) : size - 1;
    const headers: Record<string, string> = {
      'content-type': 'application/octet-stream',
      'content-length': String(last - first + 1),
      'accept-ranges': 'bytes',
      etag: `"fixture-${size}"`,
    };
    if (asked) headers['content-range'] = `bytes ${first}-${last}/${size}`;
    response.writeHead(asked ? 206 : 200, headers);
    if (method === 'HEAD') {
      response.end();
      return;
    }
    let trouble = this.#rangeTroubles.get(`${path} ${first}`)?.shift();
    const body = bytes.subarray(first, last + 1);
    const half = body.byteLength >> 1;
    for (let offset = 0; offset < body.byteLength; offset += RANGED_CHUNK) {
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
      response.write(body.subarray(offset, offset + RANGED_CHUNK));
      await new Promise((resolve) => setTimeout(resolve, RANGED_TICK_MS));
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

/**
 * The one repository of the Hub under `/hub/`, where the e2e build looks up `hf:` ids
 * (playwright.config.ts sets VITE_HEARTH_HUB_URL): the fixture GGUF as `fixture-F32.gguf`.
 */
export const HUB_REPO = 'e2e/Fixture-GGUF';

/** A Hugging Face Hub of one repository: its listing, and its file by the Hub's download path. */
function serveHub(path: string, request: IncomingMessage, response: ServerResponse): void {
  if (path === `/hub/api/models/${HUB_REPO}`) {
    const siblings = ['README.md', 'fixture-F32.gguf'].map((rfilename) => ({ rfilename }));
    response.writeHead(200, {
      'content-type': 'application/json',
      'access-control-allow-origin': '*',
    });
    response.end(JSON.stringify({ id: HUB_REPO, siblings }));
    return;
  }
  if (path === `/hub/${HUB_REPO}/resolve/main/fixture-F32.gguf`) {
    serveGguf('/gguf/fixture.gguf', request, response);
    return;
  }
  response.writeHead(404, { 'access-control-allow-origin': '*' }).end('not found');
}
