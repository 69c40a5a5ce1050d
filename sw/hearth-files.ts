/**
 * @module
 * Hearth's own files under `{scope}hearth/`, served so that a page never runs two builds at once.
 *
 * Every file of a build is addressed as `hearth/@<build>/<path>`: the loader a page imports as
 * `hearth/hearth.js` is answered with one line, `export * from './@<build>/hearth.js'`, naming the
 * build of the worker that answered, and every file the loader and its workers ask for after that
 * is relative to it. A page keeps its build for its whole life, whichever worker answers later
 * (an update may take over while it is open), and the bundled entry asks for its own build by
 * name. A build's files come from that build's cache, or from the network while the server still
 * serves that build (its `hearth-sw.js` says which: the first line of every file names its build),
 * never from the HTTP cache unrevalidated (GitHub Pages sends `max-age=600`), and never a file of
 * another build under its name.
 *
 * Only the build's own files are served and stored: a GET (not a navigation) whose path, the
 * query left aside, is exactly one of the build's list (`files`, which the package build writes
 * into `hearth-sw.js`), compared as the URL spells it, never decoded, so that `..%2f`, `%2e%2e`,
 * `//` or a letter's case name no file. Anything else under `hearth/` is left to the network,
 * untouched and never stored; a file is stored under its plain address, without the query.
 * Navigations are never answered: Hearth never opens its files as documents, and a navigation
 * (a link, a popup, a frame) is the one request another site can aim at this worker.
 *
 * The same check tells the worker that the site now serves a newer build: it then refreshes
 * `hearth-sw.js` in the HTTP cache (a site's worker imports it through that cache) and asks the
 * browser to update the registration, so that a returning visitor is on the new build by the
 * next visits, without a version error on the way.
 */
/// <reference lib="webworker" />
import { buildOfScript, NETWORK, serverBuildOf } from '../src/bridge/build-banner';

declare const self: ServiceWorkerGlobalScope;

/** A build's file: `@<build>/<path>` (the build's name encoded, the path as listed). */
const VERSIONED = /^@([^/]+)\/(.+)$/;
/** What a navigation's request may load into: a document, never one of Hearth's files. */
const DOCUMENTS = new Set(['document', 'iframe', 'frame', 'object', 'embed']);
/**
 * How long the server's build, once read, is taken as known: the requests of one page load share
 * one look (a conditional request, answered 304 while nothing changed).
 */
const SERVER_BUILD_TTL_MS = 1_000;

/** The cache of one build's files of one install. */
export const buildCacheName = (prefix: string, build: string) => `${prefix}${build}`;

/** What `HearthFiles` needs. */
export interface HearthFilesOptions {
  /** This worker's build. */
  build: string;
  /** `{scope}hearth/`. */
  filesUrl: string;
  /** `{scope}hearth-sw.js`, whose first line says which build the server has now. */
  workerScriptUrl: string;
  /** The prefix of the builds' cache names (one install's). */
  cachePrefix: string;
  /**
   * The build's files under `filesUrl` (`hearth.js`, `wllama-compat/3.13.0/wllama.wasm`…), the
   * only ones served and stored: each as a URL spells it, with no `%`, `.` or `..` segment.
   */
  files: readonly string[];
}

/** A request for a file of `build` at `path` (under `filesUrl`); `named`: by its build's name. */
interface FileAsked {
  build: string;
  path: string;
  named: boolean;
}

/** Where a build's cache notes a page that was given that build's loader. */
const PAGE_NOTE = '__hearth-page__/';

/** Serves Hearth's files by build, and notices a newer build on the server. */
export class HearthFiles {
  readonly #options: HearthFilesOptions;
  readonly #files: ReadonlySet<string>;
  #serverBuild: { at: number; build: Promise<string | null>; pending: boolean } | undefined;

  constructor(options: HearthFilesOptions) {
    this.#options = options;
    this.#files = new Set(options.files);
  }

  /**
   * Whether `request` is for one of the build's files, which `respond` answers; anything else
   * under `filesUrl` is the network's. Never a navigation (the module's comment says why).
   */
  serves(request: Request): boolean {
    if (request.method !== 'GET' || request.mode === 'navigate') return false;
    if (DOCUMENTS.has(request.destination)) return false;
    return this.#asked(request.url) !== null;
  }

  /**
   * What `url` asks for, when it is under `filesUrl` at a listed path (the query aside): its
   * path is compared as it is spelled, and only the build's name in `@<build>/` is decoded.
   */
  #asked(href: string): FileAsked | null {
    const { filesUrl, build } = this.#options;
    if (!href.startsWith(filesUrl)) return null;
    const path = href.slice(filesUrl.length).split(/[?#]/)[0]!;
    const versioned = VERSIONED.exec(path);
    if (!versioned) return this.#files.has(path) ? { build, path, named: false } : null;
    if (!this.#files.has(versioned[2]!)) return null;
    try {
      return { build: decodeURIComponent(versioned[1]!), path: versioned[2]!, named: true };
    } catch {
      return null;
    }
  }

  /**
   * The build the server's files are of now (read from `hearth-sw.js` past the HTTP cache, whose
   * entry the answer refreshes); null when the server cannot be reached or says nothing. A look
   * serves the requests of the next second (`fresh`: only those while it is under way).
   */
  serverBuild({ fresh = false } = {}): Promise<string | null> {
    const known = this.#serverBuild;
    if (known && (fresh ? known.pending : Date.now() - known.at < SERVER_BUILD_TTL_MS)) {
      return known.build;
    }
    const look = {
      at: Date.now(),
      build: serverBuildOf(this.#options.workerScriptUrl),
      pending: true,
    };
    void look.build.then(() => (look.pending = false));
    this.#serverBuild = look;
    return look.build;
  }

  /**
   * Run as a page starts: when the server has another build than this worker, the registration
   * is updated. `serverBuild` has just refreshed `hearth-sw.js` in the HTTP cache, where a site's
   * worker's `importScripts` finds it during the update (for up to ten minutes the browser would
   * otherwise give it the old one, and the site's new worker would run an old Hearth).
   */
  async checkForUpdate(): Promise<void> {
    await this.dropUnused().catch(() => undefined);
    // Looked at afresh (a look under way is shared): the site may have been deployed a moment ago.
    const server = await this.serverBuild({ fresh: true });
    if (server === null || server === this.#options.build) return;
    await self.registration.update().catch(() => undefined);
  }

  /** Answers a request `serves` took. */
  async respond(event: FetchEvent): Promise<Response> {
    const url = new URL(event.request.url);
    if (url.searchParams.has(NETWORK)) return fetch(event.request);
    const asked = this.#asked(url.href);
    if (!asked) return fetch(event.request);
    if (asked.path === 'hearth.js') {
      // A page starts: note which build it runs, and see whether the site has a newer one.
      // (Noted first: the check drops the caches of builds no open page was noted to run.)
      event.waitUntil(
        this.#notePage(event.clientId, asked.build).then(() => this.checkForUpdate()),
      );
      if (!asked.named) {
        // The loader by its plain name: this worker's build, by a name that pins the page to it.
        const target = `./@${encodeURIComponent(asked.build)}/hearth.js`;
        return new Response(`export * from ${JSON.stringify(target)};\n`, {
          headers: {
            'content-type': 'text/javascript; charset=utf-8',
            'cache-control': 'no-cache',
          },
        });
      }
    }
    return this.#file(asked);
  }

  /** Notes, in the build's cache, that the page `clientId` runs that build. */
  async #notePage(clientId: string, build: string): Promise<void> {
    if (!clientId) return;
    const cache = await caches.open(buildCacheName(this.#options.cachePrefix, build));
    const note = new URL(`${PAGE_NOTE}${encodeURIComponent(clientId)}`, this.#options.filesUrl);
    await cache.put(note.href, new Response('')).catch(() => undefined);
  }

  /**
   * A build's file: from its cache, else from the server while it serves that build, stored
   * under its plain address (`filesUrl` and the listed path: no query).
   */
  async #file({ build, path }: FileAsked): Promise<Response> {
    const url = `${this.#options.filesUrl}${path}`;
    const cacheName = buildCacheName(this.#options.cachePrefix, build);
    // Looked up without opening: a build's cache is made only for a build the server has.
    const cached = await caches.match(url, { cacheName });
    if (cached) return cached;
    const server = await this.serverBuild();
    if (server !== build) return this.#gone(build, path, server);
    const cache = await caches.open(cacheName);
    const response = await fetch(url, { cache: 'no-cache', credentials: 'same-origin' });
    if (response.ok && response.type === 'basic') {
      // A script that names another build was deployed meanwhile: it is not this build's.
      if (path.endsWith('.js')) {
        const named = buildOfScript(await response.clone().text());
        if (named !== null && named !== build) return this.#gone(build, path, named);
      }
      // A full disk must not fail the file: it is answered, and fetched again next time.
      await cache.put(url, response.clone()).catch(() => undefined);
    }
    return response;
  }

  /** 503 for a file of `build` the server no longer has (it serves `server`, or cannot be had). */
  #gone(build: string, path: string, server: string | null): Response {
    const now = server === null ? 'cannot be reached' : `now serves build ${server}`;
    return new Response(
      `Hearth's file ${path} of build ${build} is not on this device, and the site ${now}: ` +
        'reload the page to run the build the site serves.',
      { status: 503, headers: { 'content-type': 'text/plain; charset=utf-8' } },
    );
  }

  /**
   * Caches `paths` of this worker's build when it installs, if the server serves this build (a
   * site's worker may have imported an older `hearth-sw.js` from the HTTP cache: then nothing is
   * cached under this build's name, and the update check brings the current one).
   */
  async precache(paths: readonly string[]): Promise<void> {
    const { build, filesUrl, cachePrefix } = this.#options;
    if ((await this.serverBuild()) !== build) return;
    const cache = await caches.open(buildCacheName(cachePrefix, build));
    // A file that cannot be had, or is of another build, is left out, not a failed install: the
    // site's own worker may be installing, and it is asked for (and checked) again when used.
    await Promise.all(
      paths.map(async (path) => {
        if (!this.#files.has(path)) return;
        const url = `${filesUrl}${path}`;
        const response = await fetch(url, { cache: 'no-cache', credentials: 'same-origin' });
        if (!response.ok) return;
        if (path.endsWith('.js') && buildOfScript(await response.clone().text()) !== build) return;
        await cache.put(url, response);
      }),
    ).catch(() => undefined);
  }

  /**
   * Drops the caches of the other builds that no open page runs (a page pinned to an older build
   * keeps its files until it closes: it may yet need one it has not used).
   */
  async dropUnused(): Promise<void> {
    const { cachePrefix, build } = this.#options;
    const open = new Set(
      (await self.clients.matchAll({ includeUncontrolled: true })).map((c) => c.id),
    );
    for (const name of await caches.keys()) {
      if (!name.startsWith(cachePrefix) || name === buildCacheName(cachePrefix, build)) continue;
      const cache = await caches.open(name);
      const pages = (await cache.keys())
        .map((request) => new URL(request.url).pathname)
        .filter((path) => path.includes(`/${PAGE_NOTE}`))
        .map((path) => decodeURIComponent(path.slice(path.lastIndexOf('/') + 1)));
      if (!pages.some((id) => open.has(id))) await caches.delete(name);
    }
  }
}
