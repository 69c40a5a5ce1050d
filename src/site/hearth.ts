/**
 * @module
 * `hearth/hearth.js`, the loader a site's pages run: `startHearth()` registers the service
 * worker, waits until it controls the page, checks that it is of the loader's build, and makes
 * the page a candidate to host the engine — headless, with no UI of Hearth's. The bundled entry
 * (`import { startHearth } from 'hearth-llm'`, src/site/index.ts) imports this file from the
 * site, so that the loader, its engine worker and the service worker always come from the same
 * `npx hearth init`.
 */
import { PROTOCOL_VERSION, type PageToSw, type VersionReply } from '../bridge/messages';
import { joinElection, type HostRole } from '../engine-host/leader';
import { controlled, reloadForIsolation, reloadForStaleLoader } from './boot';
import { NETWORK, serverBuildOf } from '../bridge/build-banner';
import { HearthError } from './errors';
import { Models } from './models';
import { watchRelayPairing } from './relay-pairing';
import type { Hearth, HearthStatus, StartHearthOptions } from './types';

export type * from './types';
export { HearthError, type HearthErrorCode, type HearthErrorOptions } from './errors';

/** The build of this loader, its engine worker and the `hearth-sw.js` copied with them. */
export const VERSION: string = import.meta.env.VITE_HEARTH_BUILD;

/** The command that copies matching files again. */
const INIT_COMMAND = 'npx hearth init <your public folder>';
/** How long a service worker has to answer which build it runs. */
const VERSION_WAIT_MS = 3000;
/**
 * After this long without a worker in control, a first visit says what it waits for (it goes on
 * waiting: a worker that precaches much may take longer to install on a slow network).
 */
const CONTROL_HINT_MS = 15_000;
/** How long an updated worker has to install and take over (after the old one's requests). */
const UPDATE_WAIT_MS = 5 * 60 * 1000;

/** The key `hearth.models` sends when the page gives none (any key is accepted by default). */
const DEFAULT_KEY = 'hearth-site';

/**
 * Where this file is served from, as Hearth's service worker names it: `{base}hearth/hearth.js`
 * from the network (before a worker controls the page), `{base}hearth/@<build>/hearth.js` once one
 * does (sw/hearth-files.ts): every other file of the build lies beside it.
 */
const HERE = /\/hearth\/(?:@[^/]+\/)?hearth\.js$/;
/** This file by its build's name: given by a service worker, of the build the page asked for. */
const PINNED = /\/hearth\/@[^/]+\/hearth\.js$/;

/** The folder above `hearth/`, when this file is served from there; else the root. */
function defaultBase(): string {
  const here = new URL(import.meta.url);
  const at = HERE.exec(here.pathname);
  return at
    ? new URL(here.pathname.slice(0, at.index + 1), here).href
    : new URL('/', location.href).href;
}

/**
 * The folder of this build's files: this file's own, so that the engine's workers and
 * WebAssembly are of its build whichever service worker answers them.
 */
function filesUrlOf(base: string): string {
  // (Not `new URL('./', import.meta.url)`: Vite would take that for an asset of the build.)
  const here = new URL(import.meta.url);
  return HERE.test(here.pathname) ? new URL('./', here).href : new URL('hearth/', base).href;
}

/** `base` as an absolute URL of a folder (ending in `/`), against this page's address. */
export function resolveBase(base: string | undefined): string {
  const url = new URL(base ?? defaultBase(), location.href);
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}

/** The build `worker` runs, or null when it does not say within a few seconds (not Hearth's). */
function askVersion(worker: ServiceWorker): Promise<VersionReply | null> {
  const { port1, port2 } = new MessageChannel();
  return new Promise<VersionReply | null>((resolve) => {
    const timer = setTimeout(() => resolve(null), VERSION_WAIT_MS);
    port1.onmessage = (event: MessageEvent<VersionReply>) => {
      clearTimeout(timer);
      port1.close();
      resolve(event.data?.type === 'hearth/version' ? event.data : null);
    };
    worker.postMessage({ type: 'hearth/version', port: port2 } satisfies PageToSw, [port2]);
  });
}

const sameBuild = (reply: VersionReply | null) =>
  reply !== null && reply.build === VERSION && reply.protocol === PROTOCOL_VERSION;

/** Resolves when `worker` has installed (true) or failed to (false). */
function installed(worker: ServiceWorker): Promise<boolean> {
  return new Promise((resolve) => {
    const check = () => {
      if (worker.state === 'installed' || worker.state === 'activated') resolve(true);
      else if (worker.state === 'redundant') resolve(false);
    };
    worker.addEventListener('statechange', check);
    check();
  });
}

/** Resolves with true at the next change of controller, false after `ms`. */
function controllerChange(ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    navigator.serviceWorker.addEventListener(
      'controllerchange',
      () => {
        clearTimeout(timer);
        resolve(true);
      },
      { once: true },
    );
  });
}

/**
 * Makes sure a worker this page can work with is in control, from `scriptUrl` when Hearth
 * registers it. A page runs its own build's files whatever worker answers them (they are addressed
 * by build: sw/hearth-files.ts), so a worker of another build that speaks this loader's protocol
 * serves it — a tab left open across an update keeps working. When this page is of the build the
 * site now serves and the worker is not, `hearth-sw.js` is fetched past the HTTP cache (a site's
 * worker imports it through that cache, which a host such as GitHub Pages fills for ten minutes),
 * the registration is updated, and the new worker takes over once the old one's requests are
 * done. Only files that truly differ give `version_mismatch`, naming which and where — never a
 * reload loop.
 */
async function ensureCurrentWorker(
  registration: ServiceWorkerRegistration | undefined,
  scriptUrl: string | null,
  base: string,
): Promise<void> {
  const container = navigator.serviceWorker;
  const current = (worker: ServiceWorker | null) =>
    worker !== null && (scriptUrl === null || worker.scriptURL === scriptUrl);
  let reply = current(container.controller) ? await askVersion(container.controller!) : null;
  if (sameBuild(reply)) return;
  const workerFile = new URL('hearth-sw.js', base).href;
  const onServer = await serverBuildOf(workerFile);
  const loader = new URL(import.meta.url).pathname;
  // Loaded by its plain name before a worker controlled the page: from the server, whose loader
  // must be of its hearth-sw.js's build — or from the HTTP cache, a copy of a build before, which
  // a reload (controlled now) leaves behind.
  if (!PINNED.test(loader) && onServer !== VERSION) {
    const serverLoader = await serverBuildOf(`${new URL(import.meta.url).href}?${NETWORK}`);
    if (serverLoader === onServer && reloadForStaleLoader()) return new Promise(() => {});
    const found = onServer ? `build ${onServer}` : 'not a hearth-sw.js of any build';
    throw new HearthError(
      'version_mismatch',
      `The site's files are of two builds: ${new URL(workerFile).pathname} on the server is ${found}, ` +
        `but ${loader} is build ${VERSION}. Deploy the files of one build together ` +
        `(\`${INIT_COMMAND}\`, or the Vite plugin \`hearth-llm/vite\`, then build again).`,
    );
  }
  if (registration && onServer === VERSION) {
    await registration.update().catch(() => undefined);
    const next = registration.installing ?? registration.waiting;
    if (next && (await installed(next)) && current(next) && sameBuild(await askVersion(next))) {
      // The worker in control hands over once its requests are done (sw/hearth-worker.ts).
      const changed = controllerChange(UPDATE_WAIT_MS);
      container.controller?.postMessage({ type: 'update/apply' } satisfies PageToSw);
      if (await changed) reply = await askVersion(container.controller!);
    }
  }
  if (reply?.protocol === PROTOCOL_VERSION) return;
  const worker = scriptUrl
    ? new URL(scriptUrl).pathname
    : `your service worker (${container.controller ? new URL(container.controller.scriptURL).pathname : 'none'})`;
  const found = reply
    ? `build ${reply.build}, whose protocol (${reply.protocol}) is not this page's (${PROTOCOL_VERSION})`
    : 'no build of Hearth that answers';
  throw new HearthError(
    'version_mismatch',
    `${worker} runs ${found}; ${new URL(workerFile).pathname} on the server is ` +
      `${onServer ? `build ${onServer}` : 'not to be had'}, and this page's ${loader} build ${VERSION}: ` +
      (scriptUrl
        ? 'reload the page once the site serves one build.'
        : `your worker must importScripts('hearth-sw.js') from ${new URL(base).pathname}, the file beside hearth/, at its top.`),
  );
}

/**
 * Refuses to register Hearth's worker over another one that holds the scope: one scope has one
 * worker, and registering `hearth-sw.js` would replace the site's own (its precache and routes),
 * which the site would then register again — each page load undoing the last.
 */
function assertNoOtherWorker(registration: ServiceWorkerRegistration | undefined, base: string) {
  if (!registration || registration.scope !== base) return;
  const hearthSw = new URL('hearth-sw.js', base).pathname;
  const worker = registration.active ?? registration.waiting ?? registration.installing;
  if (!worker || new URL(worker.scriptURL).pathname === hearthSw) return;
  throw new HearthError(
    'worker_conflict',
    `This site's own service worker (${new URL(worker.scriptURL).pathname}) holds ${new URL(base).pathname}, ` +
      "and registering Hearth's there would replace it. Make your worker import Hearth's " +
      "(importScripts('hearth-sw.js') at its top) and call startHearth({ registerWorker: false }).",
  );
}

/**
 * Starts Hearth on this page: the API answers under `{base}v1/` as soon as this resolves, and
 * this page may host the engine. Call it on every page of the site that uses the API.
 */
export async function startHearth(options: StartHearthOptions = {}): Promise<Hearth> {
  if (!('serviceWorker' in navigator) || !('locks' in navigator) || !isSecureContext) {
    throw new HearthError(
      'unsupported',
      'Hearth needs service workers and Web Locks: a current browser, on https or localhost.',
    );
  }
  const container = navigator.serviceWorker;
  const base = resolveBase(options.base);
  const registerWorker = options.registerWorker ?? true;
  if (!location.href.startsWith(base)) {
    throw new HearthError(
      'uncontrolled',
      `This page (${location.pathname}) is outside Hearth's folder ${new URL(base).pathname}: ` +
        'a service worker controls only the pages under its folder. Pass the right `base`, or ' +
        'put hearth-sw.js and hearth/ in a folder above this page.',
    );
  }
  const scriptUrl = registerWorker
    ? new URL(`hearth-sw.js${options.isolate ? '?isolate' : ''}`, base).href
    : null;
  // Whether the service worker served this page (with its isolation headers, if any).
  const servedByWorker = container.controller !== null;
  let registration = await container.getRegistration(base);
  const hadWorker = registration?.active != null;
  if (scriptUrl) {
    assertNoOtherWorker(registration, base);
    try {
      registration = await container.register(scriptUrl, { scope: base, updateViaCache: 'none' });
    } catch (err) {
      throw new HearthError(
        'uncontrolled',
        `Hearth's service worker ${scriptUrl} could not be registered (${String(err)}). ` +
          `Is it there? \`${INIT_COMMAND}\` copies it.`,
      );
    }
  }
  const hint = setTimeout(() => {
    console.warn(
      registerWorker
        ? `Hearth: still waiting for ${scriptUrl} to install and take control of this page.`
        : "Hearth: still waiting for a service worker to take control of this page: your worker must import Hearth's (importScripts('hearth-sw.js')) and call clients.claim() when it activates.",
    );
  }, CONTROL_HINT_MS);
  const isControlled = await controlled(hadWorker);
  clearTimeout(hint);
  if (!isControlled) {
    throw new HearthError(
      'uncontrolled',
      'No service worker took control of this page, even after a reload (a hard reload leaves ' +
        'a page uncontrolled; so does a browser set to bypass service workers).',
    );
  }
  await ensureCurrentWorker(registration, scriptUrl, base);
  if (options.isolate && reloadForIsolation(servedByWorker)) return new Promise(() => {});

  let status: HearthStatus = { role: 'starting' };
  const setStatus = (next: HearthStatus) => {
    status = next;
    options.onStatus?.(next);
  };
  const stopping = new AbortController();
  const election = joinElection({
    build: VERSION,
    appUrl: base,
    filesUrl: filesUrlOf(base),
    signal: stopping.signal,
    onRole: (role: HostRole, detail?: string) =>
      setStatus(detail === undefined ? { role } : { role, detail }),
  });
  // A pairing link in the address (`npx hearth relay --app <this page>`), or this tab's pairing
  // before a reload: read now that the reloads of the boot are done.
  watchRelayPairing(new URL('v1/', base).href);
  const models = new Models({
    apiURL: new URL('v1/', base).href,
    apiKey: options.apiKey ?? DEFAULT_KEY,
  });
  return {
    baseURL: new URL('v1/openai', base).href,
    apiURL: new URL('v1/', base).href,
    version: VERSION,
    models,
    device: () => models.device(),
    crossOriginIsolated: globalThis.crossOriginIsolated === true,
    get status() {
      return status;
    },
    async stop() {
      stopping.abort();
      await election.catch(() => undefined);
      setStatus({ role: 'stopped' });
    },
  };
}
