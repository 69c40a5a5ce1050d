/**
 * CacheStorage and a network in memory, for the download tests: the caches read a response's
 * body as `Cache.put` does (a body that fails fails the put) and enforce a quota as Chromium does
 * (a `QuotaExceededError` DOMException); the network serves a `TinyModel` and can be told to
 * fail.
 */
import type { CacheLike, DownloadCaches } from '../../src/engine-host/downloads';
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
    return {
      match: async (url) => {
        const hit = cache.get(url);
        return hit && new Response(hit.bytes, { headers: { 'content-type': hit.type } });
      },
      put: async (url, response) => {
        const bytes = new Uint8Array(await response.arrayBuffer());
        if (this.usedBytes + bytes.byteLength > this.quotaBytes) {
          throw new DOMException('Quota exceeded.', 'QuotaExceededError');
        }
        cache.set(url, { bytes, type: response.headers.get('content-type') ?? '' });
      },
      delete: async (url) => cache.delete(url),
    };
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
