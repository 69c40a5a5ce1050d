/**
 * Hearth's files on a site (sw/hearth-files.ts): only the build's own files, by exact path and
 * without the query, are served and stored; anything else under `hearth/` — a query spelled into
 * the path, an encoded traversal, a name off the list — goes to the network untouched and is
 * never stored, and a navigation is never answered. In Node, with CacheStorage, the network and
 * the worker's globals faked (the site suites test the same in Chromium and Firefox).
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HearthFiles } from '../../../sw/hearth-files';

const ORIGIN = 'http://site.test';
const FILES_URL = `${ORIGIN}/repo/hearth/`;
const BUILD = '1.0.0+b1';
/** The build's folder as the loader names it. */
const AT_BUILD = `${FILES_URL}@${encodeURIComponent(BUILD)}/`;
const PREFIX = 'hearth-files#';
const CACHE = `${PREFIX}${BUILD}`;
/** A packed build's `hearth/`, as scripts/package.mjs lists it. */
const LIST = [
  'esm.js',
  'hearth.js',
  'lib.js',
  'spawned-worker.js',
  'wllama-compat/3.13.0/wllama.js',
  'wllama-compat/3.13.0/wllama.wasm',
  'wllama.wasm',
  'worker.js',
];

/** CacheStorage in memory: caches by name, entries by URL (as the Cache API keys them). */
class FakeCaches {
  readonly stores = new Map<string, Map<string, Response>>();

  /** Every entry, as `<cache> <url>`. */
  get entries(): string[] {
    return [...this.stores].flatMap(([name, store]) =>
      [...store.keys()].map((u) => `${name} ${u}`),
    );
  }

  async open(name: string) {
    const store = this.stores.get(name) ?? new Map<string, Response>();
    this.stores.set(name, store);
    const key = (url: string | Request) => (typeof url === 'string' ? url : url.url).split('#')[0]!;
    return {
      match: async (url: string | Request) => store.get(key(url))?.clone(),
      put: async (url: string | Request, response: Response) => {
        await response.clone().arrayBuffer();
        store.set(key(url), response);
      },
      keys: async () => [...store.keys()].map((url) => new Request(url)),
    };
  }

  async match(url: string, options?: { cacheName?: string }) {
    const names = options?.cacheName ? [options.cacheName] : [...this.stores.keys()];
    for (const name of names) {
      const hit = this.stores.get(name)?.get(url);
      if (hit) return hit.clone();
    }
    return undefined;
  }

  async has(name: string) {
    return this.stores.has(name);
  }

  async keys() {
    return [...this.stores.keys()];
  }

  async delete(name: string) {
    return this.stores.delete(name);
  }
}

/**
 * The site's static host: `hearth-sw.js` and `hearth/` of `BUILD`, a page outside `hearth/`, and
 * `%2f` decoded as some hosts do (so `hearth/..%2fprivate.html` is the private page).
 */
function network(asked: string[]) {
  const files = new Map<string, string>([
    ['/repo/hearth-sw.js', `/*! hearth-llm build ${BUILD} */\n`],
    ['/repo/private.html', '<h1>private</h1>'],
    ...LIST.map((path) => [`/repo/hearth/${path}`, `/*! hearth-llm build ${BUILD} */\n${path}`]),
  ] as [string, string][]);
  return async (input: string | Request): Promise<Response> => {
    const url = typeof input === 'string' ? input : input.url;
    asked.push(url);
    const path = new URL(decodeURIComponent(new URL(url).pathname), ORIGIN).pathname;
    const body = files.get(path);
    const response =
      body === undefined ? new Response('Not found', { status: 404 }) : new Response(body);
    // A same-origin answer, as the worker's fetch gets it.
    Object.defineProperty(response, 'type', { value: 'basic' });
    return response;
  };
}

/** A request as a page (or a navigation) makes it: only what the worker reads of one. */
function request(
  url: string,
  init: Partial<Pick<Request, 'mode' | 'destination' | 'method'>> = {},
) {
  return { url, method: 'GET', mode: 'cors', destination: 'script', ...init } as Request;
}

/** A fetch event of a page (`clientId`), whose `waitUntil` promises the test awaits. */
function eventFor(req: Request, waits: Promise<unknown>[]) {
  return {
    request: req,
    clientId: 'page-1',
    waitUntil: (promise: Promise<unknown>) => waits.push(promise),
  } as unknown as FetchEvent;
}

describe('HearthFiles serves and stores only the build’s own files', () => {
  let caches: FakeCaches;
  let asked: string[];
  let files: HearthFiles;
  let waits: Promise<unknown>[];

  beforeEach(() => {
    caches = new FakeCaches();
    asked = [];
    waits = [];
    vi.stubGlobal('caches', caches);
    vi.stubGlobal('fetch', network(asked));
    vi.stubGlobal('self', {
      registration: { update: async () => undefined },
      clients: { matchAll: async () => [{ id: 'page-1' }] },
    });
    files = new HearthFiles({
      build: BUILD,
      filesUrl: FILES_URL,
      workerScriptUrl: `${ORIGIN}/repo/hearth-sw.js`,
      cachePrefix: PREFIX,
      files: LIST,
    });
  });
  afterEach(() => vi.unstubAllGlobals());

  /** Whether the worker takes `req`, and if so its answer's status and text. */
  async function answer(req: Request) {
    if (!files.serves(req)) return null;
    const response = await files.respond(eventFor(req, waits));
    await Promise.all(waits);
    return { status: response.status, text: await response.text() };
  }

  it('takes the listed files, plainly or by build, with or without a query', () => {
    for (const url of [
      `${FILES_URL}hearth.js`,
      `${FILES_URL}hearth.js?n=1`,
      `${FILES_URL}lib.js?n=0`,
      `${AT_BUILD}worker.js`,
      `${AT_BUILD}wllama-compat/3.13.0/wllama.wasm?x=i`,
      `${FILES_URL}wllama.wasm`,
    ]) {
      expect(files.serves(request(url)), url).toBe(true);
    }
  });

  it('leaves to the network every other path under hearth/: traversals, doubled slashes, encodings, case, other names', () => {
    for (const url of [
      `${FILES_URL}`,
      `${FILES_URL}..%2fprivate.html`,
      `${FILES_URL}..%2Fprivate.html`,
      `${FILES_URL}%2e%2e/private.html`,
      `${FILES_URL}%2E%2E%2Fprivate.html`,
      `${FILES_URL}..%5cprivate.html`,
      `${FILES_URL}wllama-compat%2f3.13.0%2fwllama.wasm`,
      `${FILES_URL}wllama-compat/3.13.0//wllama.wasm`,
      `${FILES_URL}/hearth.js`,
      `${FILES_URL}lib.js%3Fn=1`,
      `${FILES_URL}%6Cib.js`,
      `${FILES_URL}LIB.JS`,
      `${FILES_URL}private.html`,
      `${FILES_URL}.hearth-llm`,
      `${FILES_URL}__hearth-page__/page-1`,
      `${AT_BUILD}..%2f..%2fprivate.html`,
      `${AT_BUILD}private.html`,
      `${FILES_URL}@/hearth.js`,
      `${ORIGIN}/repo/private.html`,
      `${ORIGIN}/other/hearth/lib.js`,
      `http://elsewhere.test/repo/hearth/lib.js`,
    ]) {
      expect(files.serves(request(url)), url).toBe(false);
    }
  });

  it('never answers a navigation, nor a document, frame or object, even to a listed file', () => {
    const url = `${FILES_URL}lib.js`;
    expect(files.serves(request(url, { mode: 'navigate', destination: 'document' }))).toBe(false);
    expect(files.serves(request(url, { mode: 'navigate', destination: 'iframe' }))).toBe(false);
    for (const destination of ['document', 'iframe', 'frame', 'object', 'embed'] as const) {
      expect(files.serves(request(url, { destination })), destination).toBe(false);
    }
    expect(files.serves(request(url, { method: 'POST' }))).toBe(false);
  });

  it('stores a listed file asked with a query under its plain address, once', async () => {
    for (const n of [0, 1, 2]) {
      const reply = await answer(request(`${FILES_URL}lib.js?n=${n}`));
      expect(reply).toEqual({ status: 200, text: `/*! hearth-llm build ${BUILD} */\nlib.js` });
    }
    expect(await answer(request(`${AT_BUILD}wllama-compat/3.13.0/wllama.wasm?x=i`))).toMatchObject({
      status: 200,
    });
    expect(caches.entries).toEqual([
      `${CACHE} ${FILES_URL}lib.js`,
      `${CACHE} ${FILES_URL}wllama-compat/3.13.0/wllama.wasm`,
    ]);
    // Fetched by their plain addresses; the first from the network, the next two from the cache.
    expect(asked.filter((url) => url.includes('/hearth/'))).toEqual([
      `${FILES_URL}lib.js`,
      `${FILES_URL}wllama-compat/3.13.0/wllama.wasm`,
    ]);
  });

  it('stores nothing that respond is handed off the list, and fetches it as it was asked', async () => {
    // What a worker of before answered for any GET under hearth/: respond alone, past `serves`.
    for (const url of [
      `${FILES_URL}..%2fprivate.html`,
      `${FILES_URL}lib.js%3Fn=1`,
      `${FILES_URL}__hearth-page__/x`,
    ]) {
      await files.respond(eventFor(request(url), waits));
    }
    expect(caches.entries).toEqual([]);
    expect(asked.filter((url) => !url.endsWith('hearth-sw.js'))).toEqual([
      `${FILES_URL}..%2fprivate.html`,
      `${FILES_URL}lib.js%3Fn=1`,
      `${FILES_URL}__hearth-page__/x`,
    ]);
  });

  it('answers the loader by its plain name with the build’s line, and makes no cache for a build the server does not have', async () => {
    expect(await answer(request(`${FILES_URL}hearth.js?n=1`))).toEqual({
      status: 200,
      text: `export * from "./@${encodeURIComponent(BUILD)}/hearth.js";\n`,
    });
    const other = `${FILES_URL}@${encodeURIComponent('0.0.1+old')}/lib.js`;
    expect((await answer(request(other)))?.status).toBe(503);
    expect(await caches.keys()).toEqual([CACHE]);
    // Only the page's note: the loader's line is made, not stored.
    expect(caches.entries).toEqual([`${CACHE} ${FILES_URL}__hearth-page__/page-1`]);
  });

  it('precaches only listed files', async () => {
    await files.precache(['hearth.js', 'worker.js', '../private.html', 'hearth.js?n=1']);
    expect(caches.entries.sort()).toEqual([
      `${CACHE} ${FILES_URL}hearth.js`,
      `${CACHE} ${FILES_URL}worker.js`,
    ]);
  });
});
