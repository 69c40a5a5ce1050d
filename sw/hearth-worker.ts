/**
 * @module
 * Hearth inside a service worker: the API under `{scope}v1/`, the link to the engine host, the
 * version handshake with loaders, and the update hand-over. Both service workers are built on
 * it — the one a site copies (`hearth-sw.js`, sw/hearth-sw.ts) and the chat app's own (sw/sw.ts,
 * which adds its precache) — and a site's own worker gets it by `importScripts('hearth-sw.js')`.
 *
 * It registers its listeners first and answers only what is Hearth's: every other request is
 * left to the listeners registered after it (the site's routes, the app's precache) or, with
 * none, to the network, untouched.
 */
/// <reference lib="webworker" />
import { PortBackend } from '../src/bridge/client';
import {
  PROTOCOL_VERSION,
  type PageToSw,
  type SwToPage,
  type SwToSw,
  type VersionReply,
} from '../src/bridge/messages';
import {
  addedModelsChannelName,
  AddedModels,
  type AddedModelsMessage,
} from '../src/models/added/added-models';
import { installName, setInstall } from '../src/protocol/install';
import { MODEL_CACHES, modelLibUrl, webllmCachesLib } from '../src/models/on-device';
import { createApi } from '../src/api/router';
import { Servers } from '../src/servers/servers';
import { Settings } from '../src/api/settings';
import { hearthStatus } from '../src/protocol/host/status';
import { UpstreamBackend } from '../src/servers/upstream';
import catalog from 'virtual:hearth-catalog';
import { idbAddedStore } from './stores/added-store';
import { idbDocumentStore } from './stores/documents-store';
import { hostCpu, hostDevice, storageStatus } from './device';
import { HearthFiles } from './hearth-files';
import { HostLink } from './host-link';
import { isolatedFromNetwork, setsPolicies, withIsolation } from './isolation';
import { DeviceModels } from './models';
import { idbResponseStore, idbServerStore, idbSettingsStore } from './stores/owner-stores';

declare const self: ServiceWorkerGlobalScope;

/** How Hearth serves in this worker. */
export interface HearthWorkerOptions {
  /**
   * Where Hearth's own files are served: the app's base, or a site's `{scope}hearth/`.
   * llama.cpp's compatibility build lies under it.
   */
  filesUrl: string;
  /**
   * Serve the files under `filesUrl` from a cache of this build's, filled as they are first
   * asked for (a site: its install fetches only the worker itself). The app precaches its own.
   */
  cacheFiles: boolean;
  /**
   * Files under `filesUrl` to cache when the worker installs (with `cacheFiles`): the loader and
   * the engine worker's core, which a page needs before `hearth/echo` can answer — the page's
   * very first import of the loader happens before the worker controls it. The engines' code and
   * WebAssembly are cached when a host first needs them.
   */
  precache?: readonly string[];
  /**
   * With `cacheFiles`: the build's files under `filesUrl`, the only ones served and cached, by
   * exact path (sw/hearth-files.ts); anything else there is left to the network.
   */
  files?: readonly string[];
  /**
   * Answer the documents and worker scripts of the scope from the network with COOP and COEP
   * (sw/isolation.ts), so that the pages are cross-origin isolated. A site opts in
   * (`startHearth({ isolate: true })`); the app does it through its precache's routes instead.
   */
  isolate: boolean;
}

/** What the composing worker may use. */
export interface HearthWorker {
  /** The requests to the engine in flight now. */
  readonly openRequests: number;
  /** Whether `url` is Hearth's to answer. */
  owns(url: URL): boolean;
}

/** The build every part of one Hearth is made of (page, engine worker, service worker). */
const BUILD = import.meta.env.VITE_HEARTH_BUILD;
/** How long the catalogue waits for a host's status: a busy engine worker may answer late. */
const STATUS_WAIT_MS = 1000;
/** The longest an accepted update waits for the requests in flight (an event lives 5 minutes). */
const UPDATE_WAIT_MS = 4 * 60 * 1000;
/** After the last request ends, a moment for its last bytes to reach the page that reads them. */
const DRAIN_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The cache of one build's files of one install; other builds' are dropped on activation. */
const filesCachePrefix = () => `${installName('hearth-files')}#`;

/** Starts Hearth in this service worker. Call it once, before any listener of the site's own. */
export function startHearthWorker(options: HearthWorkerOptions): HearthWorker {
  const scope = new URL(self.registration.scope);
  // Before anything opens a database or a channel: their names are this install's.
  setInstall(scope);
  const filesUrl = new URL(options.filesUrl).href;

  const link = new HostLink({
    build: BUILD,
    clients: self.clients,
    locks: navigator.locks,
    appUrl: scope.href,
    onLost: (port) => backend.hostLost(port),
  });
  const backend = new PortBackend(() => link.port());
  /**
   * The host's status, or null. After a restart the service worker has no port yet, and only a
   * host knows the device's GPU: ask for one and wait, as a request does.
   */
  const hostStatus = () => backend.status(STATUS_WAIT_MS).catch(() => null);
  const settings = new Settings(idbSettingsStore);
  /** The GGUF models the user added: the engine worker and the pages hear of every change. */
  const addedChannel = new BroadcastChannel(addedModelsChannelName());
  const added = new AddedModels(idbAddedStore, {
    onChange: () =>
      addedChannel.postMessage({ type: 'added-models/changed' } satisfies AddedModelsMessage),
  });
  /** Servers the user added: their models' requests leave the device, for them alone. */
  const servers: Servers = new Servers(idbServerStore, {
    fetch: (url, init) => fetch(url, init),
    organisations: (): Promise<Set<string>> => models.organisations(),
    origin: self.location.origin,
    // Every tab reads the catalogue again, whichever tab changed the servers.
    onChange: () =>
      addedChannel.postMessage({ type: 'servers/changed' } satisfies AddedModelsMessage),
  });
  // The model directory resolves a server model once and binds it here (`to`): no second lookup.
  const upstream = new UpstreamBackend({
    fetch: (url, init) => fetch(url, init),
    origin: self.location.origin,
  });
  /** Where the host's measured facts come from: its status, asked once per host. */
  const hostFacts = {
    port: () => link.port(),
    hostId: () => link.hostId,
    status: () => backend.status(STATUS_WAIT_MS),
  };
  const models: DeviceModels = new DeviceModels({
    catalog,
    appUrl: scope.href,
    caches,
    device: hostDevice(hostFacts),
    cpu: hostCpu(hostFacts),
    storage: storageStatus,
    host: hostStatus,
    price: (model) => settings.price(model),
    added,
    servers,
    forward: (target) => upstream.to(target),
    online: () => navigator.onLine,
  });
  const api = createApi({
    backend,
    models,
    // How long a stream may go without a token (60 s; the e2e build waits less, to test it fast).
    stallTimeoutMs: Number(import.meta.env.VITE_HEARTH_STALL_MS) || undefined,
    base: scope.pathname,
    settings,
    status: async () => hearthStatus(await backend.status(), await storageStatus()),
    catalog: () => models.catalog(),
    servers: { registry: servers },
    // The Responses API's conversations, kept per install (docs/api.md, Responses: kept on the device).
    responses: idbResponseStore(),
    // Files and vector stores, kept per install (docs/api.md, Files).
    documents: idbDocumentStore(),
    images: {
      // With images.ts's init: no redirect followed, no cookies sent (docs/api.md, Images).
      fetch: (url, init) => fetch(url, init),
      // Decoded whole (a GIF's first frame) and let go, after images.ts has measured its frames
      // against the limits: an image that does not decode, or decodes larger than it measured, is
      // refused before any engine is asked.
      decode: async (image) => {
        const bitmap = await createImageBitmap(new Blob([image.bytes], { type: image.type }));
        const size = { width: bitmap.width, height: bitmap.height };
        bitmap.close();
        return size;
      },
    },
    adding: {
      catalog: models,
      appUrl: scope.href,
      caches,
      fetch: (url, init) => fetch(url, init),
      // Where `hf:` ids are looked up (the e2e build points it at its own model server).
      hubUrl: import.meta.env.VITE_HEARTH_HUB_URL || undefined,
      // Files from the computer are kept in parts as downloads are (a test build's are smaller).
      partBytes: Number(import.meta.env.VITE_HEARTH_GGUF_PART_BYTES) || undefined,
    },
  });

  /**
   * Model libraries WebLLM fetches without caching them (self-hosted on `localhost`): the
   * downloads keep them in `hearth/files`, and the engine worker's fetches are answered from
   * there, so that such a model loads offline too.
   */
  const uncachedLibs = new Set(
    catalog
      .flatMap((entry) => (entry.engine === 'webllm' ? [modelLibUrl(entry, scope.href)] : []))
      .filter((url) => !webllmCachesLib(url)),
  );

  async function libraryFromCache(request: Request): Promise<Response> {
    const cached = await (await caches.open(MODEL_CACHES.files)).match(request.url);
    return cached ?? fetch(request);
  }

  /** Hearth's files, by build (sw/hearth-files.ts). */
  const files = new HearthFiles({
    build: BUILD,
    filesUrl,
    workerScriptUrl: new URL('hearth-sw.js', scope).href,
    cachePrefix: filesCachePrefix(),
    files: options.files ?? [],
  });

  async function hearthFile(event: FetchEvent): Promise<Response> {
    const response = await files.respond(event);
    return options.isolate && setsPolicies(event.request) ? withIsolation(response) : response;
  }

  const owns = (url: URL) => url.origin === self.location.origin && api.owns(url);

  self.addEventListener('fetch', (event) => {
    const { request } = event;
    const url = new URL(request.url);
    if (owns(url)) {
      // Chromium never tells a service worker that a page aborted a fetch whose response has not
      // started; whether the page is still there is the next best thing (docs/api.md, Chat completion replies: cancellation).
      const alive = async () => (await self.clients.get(event.clientId)) !== undefined;
      // `waitUntil`: a vector store's indexing goes on past the response that started it.
      const waitUntil = (work: Promise<unknown>) => event.waitUntil(work);
      event.respondWith(api.fetch(request, { alive, waitUntil }));
    } else if (request.method === 'GET' && uncachedLibs.has(url.href)) {
      event.respondWith(libraryFromCache(request));
    } else if (options.cacheFiles && files.serves(request)) {
      event.respondWith(hearthFile(event));
    } else if (
      options.isolate &&
      setsPolicies(request) &&
      url.origin === self.location.origin &&
      url.href.startsWith(scope.href)
    ) {
      event.respondWith(isolatedFromNetwork(request));
    }
    // Anything else is not Hearth's: no answer, so the site's own listeners or the network have it.
  });

  /**
   * The user (or a loader of a newer build) accepted the update: once no request of this worker
   * is in flight, the waiting worker takes over, so that no generation is cut by the switch.
   * Requests that arrive meanwhile are answered as ever.
   */
  async function applyUpdate(): Promise<void> {
    const deadline = Date.now() + UPDATE_WAIT_MS;
    while (backend.openRequests > 0 && Date.now() < deadline) await sleep(100);
    await sleep(DRAIN_MS);
    self.registration.waiting?.postMessage({ type: 'update/skip-waiting' } satisfies SwToSw);
  }

  self.addEventListener('message', (event) => {
    const data = event.data as PageToSw | SwToSw | null;
    if (data?.type === 'update/apply') {
      event.waitUntil(applyUpdate());
      return;
    }
    if (data?.type === 'update/skip-waiting') {
      // Sent to the waiting worker (for the active one, skipWaiting() changes nothing).
      event.waitUntil(self.skipWaiting());
      return;
    }
    if (data?.type === 'hearth/version' && data.port instanceof MessagePort) {
      data.port.postMessage({
        type: 'hearth/version',
        build: BUILD,
        protocol: PROTOCOL_VERSION,
      } satisfies VersionReply);
      data.port.close();
      return;
    }
    const source = event.source;
    link.onMessage(data, (message: SwToPage) => source?.postMessage(message));
  });

  if (options.cacheFiles && options.precache?.length) {
    const core = options.precache;
    self.addEventListener('install', (event) => event.waitUntil(files.precache(core)));
  }

  // No skipWaiting(): a new version waits until it is accepted (docs/architecture.md, Offline, installation and updates). Claiming on
  // activation is what makes the very first page controlled.
  // Other builds' caches are not dropped here but as pages start (HearthFiles.checkForUpdate): a
  // worker that skips waiting activates while a page of the build before may be loading, not yet
  // noted as running it, and would take that page's files from under it.
  self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

  return {
    get openRequests() {
      return backend.openRequests;
    },
    owns,
  };
}
