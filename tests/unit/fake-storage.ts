/**
 * CacheStorage and a network in memory, for the download tests: the caches read a response's
 * body as `Cache.put` does (a body that fails fails the put), key entries by URL without its
 * fragment as the Cache API does, and enforce a quota as Chromium does (a `QuotaExceededError`
 * DOMException); the network serves a `TinyModel` and can be told to fail; `RangeServer` serves
 * whole files and byte ranges of them, as a static host or Hugging Face does.
 */
import type { CacheLike, DownloadCaches } from '../../src/engine-host/downloads/downloads';
import type { ModelSet } from '../../src/engine-host/engine-db';
import type { TinyModel } from '../tiny-model';

/** Caches in memory, by cache name and URL. */
export class MemoryCaches implements DownloadCaches {
  readonly stores = new Map<
    string,
    Map<string, { bytes: Uint8Array<ArrayBuffer>; type: string }>
  >();
  /** Bytes the caches may hold together. */
  quotaBytes = Number.POSITIVE_INFINITY;
  /** Every URL stored, in order (a URL stored twice is here twice). */
  readonly puts: string[] = [];

  get usedBytes(): number {
    let used = 0;
    for (const store of this.stores.values()) {
      for (const { bytes } of store.values()) used += bytes.byteLength;
    }
    return used;
  }

  /** Every URL stored, in any cache. */
  get urls(): string[] {
    return [...this.stores.values()].flatMap((store) => [...store.keys()]);
  }

  has(cacheName: string, url: string): boolean {
    return this.stores.get(cacheName)?.has(url) ?? false;
  }

  async open(cacheName: string): Promise<CacheLike> {
    let store = this.stores.get(cacheName);
    if (!store) {
      store = new Map();
      this.stores.set(cacheName, store);
    }
    const cache = store;
    // The Cache API matches URLs without their fragment (measured in Chromium: `a#1` and `a#2`
    // are one entry), so keys told apart only by a fragment overwrite each other here too.
    const key = (url: string) => url.split('#', 1)[0]!;
    return {
      match: async (url) => {
        const hit = cache.get(key(url));
        return hit && new Response(hit.bytes, { headers: { 'content-type': hit.type } });
      },
      put: async (url, response) => {
        const bytes = new Uint8Array(await response.arrayBuffer());
        const replaced = cache.get(key(url))?.bytes.byteLength ?? 0;
        if (this.usedBytes - replaced + bytes.byteLength > this.quotaBytes) {
          throw new DOMException('Quota exceeded.', 'QuotaExceededError');
        }
        cache.set(key(url), { bytes, type: response.headers.get('content-type') ?? '' });
        this.puts.push(key(url));
      },
      delete: async (url) => cache.delete(key(url)),
    };
  }

  /** The bytes stored under `url` in `cacheName`. */
  bytesOf(cacheName: string, url: string): Uint8Array | undefined {
    return this.stores.get(cacheName)?.get(url)?.bytes;
  }
}

/** How a file fails, once per entry. */
export type Failure = 503 | 404 | 'reset' | 'midway';

/** A network that serves `model` under `baseUrl`. */
export class FakeNetwork {
  /** Every URL requested, in order. */
  readonly requests: string[] = [];
  readonly #failures = new Map<string, Failure[]>();
  readonly #gates = new Map<string, Promise<void>>();
  /** Other URLs that serve a file of the model: URL → path. */
  readonly aliases = new Map<string, string>();

  constructor(
    readonly model: TinyModel,
    readonly baseUrl: string,
  ) {}

  /** The next requests of `path` fail, one way per request. */
  fail(path: string, ...how: Failure[]): void {
    this.#failures.set(this.baseUrl + path, how);
  }

  /** Requests of `path` wait until the returned function is called. */
  hold(path: string): () => void {
    let release = () => {};
    this.#gates.set(this.baseUrl + path, new Promise<void>((resolve) => (release = resolve)));
    return release;
  }

  /** How many times `path` was requested. */
  count(path: string): number {
    return this.requests.filter((url) => url === this.baseUrl + path).length;
  }

  readonly fetch = async (url: string, init: { signal: AbortSignal }): Promise<Response> => {
    this.requests.push(url);
    init.signal.throwIfAborted();
    const gate = this.#gates.get(url);
    if (gate) {
      await new Promise<void>((resolve, reject) => {
        void gate.then(resolve);
        init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
      });
    }
    const failure = this.#failures.get(url)?.shift();
    if (failure === 'reset') throw new TypeError('Failed to fetch');
    if (failure === 503 || failure === 404) {
      return new Response('no', {
        status: failure,
        statusText: failure === 404 ? 'Not Found' : 'Service Unavailable',
      });
    }
    const path = this.aliases.get(url);
    const file = this.model.files.find((f) =>
      path ? f.path === path : this.baseUrl + f.path === url,
    );
    if (!file) return new Response('no', { status: 404, statusText: 'Not Found' });
    const headers = {
      'content-type': file.contentType,
      'content-length': String(file.bytes.byteLength),
    };
    if (failure === 'midway') {
      const half = file.bytes.slice(0, file.bytes.byteLength >> 1);
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(half);
          controller.error(new TypeError('network error: the connection was reset'));
        },
      });
      return new Response(body, { headers });
    }
    // Several chunks, so that progress moves within a file.
    const chunk = 64 * 1024;
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= file.bytes.byteLength) return controller.close();
        controller.enqueue(file.bytes.slice(offset, offset + chunk));
        offset += chunk;
      },
    });
    return new Response(body, { headers });
  };
}

/** A `ModelSet` in memory. */
export function memorySet(...models: string[]): ModelSet & { models: Set<string> } {
  const set = new Set(models);
  return {
    models: set,
    add: async (model) => void set.add(model),
    delete: async (model) => void set.delete(model),
    list: async () => [...set],
  };
}

/** How one request of a byte range goes wrong. */
export type RangeTrouble = 503 | 404 | 'reset' | 'midway';

/** One request a `RangeServer` received. */
export interface RangeRequest {
  url: string;
  method: string;
  /** Its `Range` header, or null. */
  range: string | null;
  /** Its cache mode (`no-store`: the browser's HTTP cache neither answers nor keeps it). */
  cache?: string;
}

/**
 * Files served as a static host serves them: `Range: bytes=a-b` gets 206 with `Content-Range`
 * (416 past the end), HEAD gets the size, every file has an ETag. It can ignore ranges (200 and
 * the whole file, as some servers do), hide `Content-Range` and `ETag` (as CORS does when the
 * server does not expose them), and fail, break midway or hold a request of a given range.
 */
export class RangeServer {
  readonly requests: RangeRequest[] = [];
  /** Answer Range requests with 200 and the whole file. */
  ignoreRanges = false;
  /** Leave out `Content-Range` and `ETag`, as a cross-origin response that does not expose them. */
  hideHeaders = false;
  readonly #files = new Map<string, { bytes: Uint8Array; etag: string }>();
  readonly #troubles = new Map<string, RangeTrouble[]>();
  readonly #gates = new Map<string, Promise<void>>();
  #versions = 0;

  /** Serves `bytes` at `url` (a new version, with a new ETag, when it was served already). */
  serve(url: string, bytes: Uint8Array): void {
    this.#versions += 1;
    this.#files.set(url, { bytes, etag: `"v${this.#versions}"` });
  }

  /** The next GET requests of `url` whose range starts at `first` (any: 'any') go wrong. */
  fail(url: string, first: number | 'any', ...how: RangeTrouble[]): void {
    this.#troubles.set(`${url} ${first}`, how);
  }

  /** GET requests of `url` whose range starts at `first` wait until the returned function is called. */
  hold(url: string, first: number): () => void {
    let release = () => {};
    this.#gates.set(`${url} ${first}`, new Promise<void>((resolve) => (release = resolve)));
    return release;
  }

  /** The `Range` headers of the GET requests of `url`, in order (null: the whole file). */
  ranges(url: string): (string | null)[] {
    return this.requests.filter((r) => r.url === url && r.method === 'GET').map((r) => r.range);
  }

  readonly fetch = async (
    url: string,
    init: {
      signal: AbortSignal;
      headers?: Record<string, string>;
      method?: string;
      cache?: RequestCache;
    },
  ): Promise<Response> => {
    const method = init.method ?? 'GET';
    const header = Object.entries(init.headers ?? {}).find(([k]) => k.toLowerCase() === 'range');
    const range = header?.[1] ?? null;
    this.requests.push({ url, method, range, ...(init.cache && { cache: init.cache }) });
    init.signal.throwIfAborted();
    const file = this.#files.get(url);
    if (!file) return new Response('no', { status: 404, statusText: 'Not Found' });
    const size = file.bytes.byteLength;
    const base: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (!this.hideHeaders) base.etag = file.etag;
    if (method === 'HEAD') {
      return new Response(null, { headers: { ...base, 'content-length': String(size) } });
    }
    const asked = range && !this.ignoreRanges ? /^bytes=(\d+)-(\d+)$/.exec(range) : null;
    const first = asked ? Number(asked[1]) : 0;
    const key = `${url} ${asked ? first : 0}`;
    const gate = this.#gates.get(key);
    if (gate) {
      await new Promise<void>((resolve, reject) => {
        void gate.then(resolve);
        init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
      });
    }
    const trouble = (this.#troubles.get(key) ?? this.#troubles.get(`${url} any`))?.shift();
    if (trouble === 'reset') throw new TypeError('Failed to fetch');
    if (trouble === 503 || trouble === 404) {
      return new Response('no', {
        status: trouble,
        statusText: trouble === 404 ? 'Not Found' : 'Service Unavailable',
      });
    }
    if (asked && first >= size) {
      return new Response('', { status: 416, headers: { 'content-range': `bytes */${size}` } });
    }
    const last = asked ? Math.min(Number(asked[2]), size - 1) : size - 1;
    const bytes = file.bytes.slice(first, last + 1);
    const headers: Record<string, string> = { ...base, 'content-length': String(bytes.byteLength) };
    if (asked && !this.hideHeaders) headers['content-range'] = `bytes ${first}-${last}/${size}`;
    const status = asked ? 206 : 200;
    return new Response(chunked(bytes, trouble === 'midway', init.signal), { status, headers });
  };
}

/**
 * A body in chunks of an odd size, so that parts are cut inside chunks; `midway` breaks the
 * connection after half of it. An aborted request's body errors, as fetch's does.
 */
function chunked(
  bytes: Uint8Array,
  midway: boolean,
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const CHUNK = 24_000;
  const stop = midway ? bytes.byteLength >> 1 : bytes.byteLength;
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (signal.aborted) return controller.error(signal.reason);
      if (offset >= stop && midway) {
        return controller.error(new TypeError('network error: the connection was reset'));
      }
      if (offset >= bytes.byteLength) return controller.close();
      const end = Math.min(offset + CHUNK, stop < bytes.byteLength ? stop : bytes.byteLength);
      controller.enqueue(bytes.slice(offset, end));
      offset = end;
    },
  });
}
