/**
 * @module
 * The service worker: a thin adapter that answers requests under `{base}v1/` with the API and
 * lets everything else fall through to the precache or the network.
 */
/// <reference lib="webworker" />
import { addPlugins, cleanupOutdatedCaches, precacheAndRoute } from 'workbox-precaching';
import { registerRoute } from 'workbox-routing';
import { PortBackend } from '../src/bridge/client';
import type { PageToSw, SwToPage, SwToSw } from '../src/bridge/messages';
import {
  addedModelsChannelName,
  AddedModels,
  type AddedModelsMessage,
} from '../src/openai/added-models';
import { MODEL_CACHES, modelLibUrl, webllmCachesLib } from '../src/openai/on-device';
import { createApi } from '../src/openai/router';
import { Servers } from '../src/openai/servers';
import { Settings } from '../src/openai/settings';
import { UpstreamBackend } from '../src/openai/upstream';
import { setInstall } from '../src/openai/install';
import { hearthStatus } from '../src/openai/status';
import catalog from 'virtual:hearth-catalog';
import { idbAddedStore } from './added-store';
import { hostDevice, storageStatus } from './device';
import { HostLink } from './host-link';
import { isolatedFromNetwork, isolationPlugin, setsPolicies } from './isolation';
import { cacheCompatBuild, compatFromCache, compatUrls } from './llama-compat';
import { DeviceModels } from './models';
import { idbServerStore } from './server-store';
import { idbSettingsStore } from './settings-store';

declare const self: ServiceWorkerGlobalScope;

const scope = new URL(self.registration.scope);
// Before anything opens a database or a channel: their names are this install's.
setInstall(scope);
const link = new HostLink({
  build: import.meta.env.VITE_HEARTH_BUILD,
  clients: self.clients,
  locks: navigator.locks,
  appUrl: scope.href,
  onLost: (port) => backend.hostLost(port),
});
const backend = new PortBackend(() => link.port());
/** How long the catalogue waits for a host's status: a busy engine worker may answer late. */
const STATUS_WAIT_MS = 1000;
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
const upstream = new UpstreamBackend({
  resolve: (id) => servers.resolve(id),
  fetch: (url, init) => fetch(url, init),
  origin: self.location.origin,
});
const models: DeviceModels = new DeviceModels({
  catalog,
  appUrl: scope.href,
  caches,
  device: hostDevice({
    port: () => link.port(),
    hostId: () => link.hostId,
    status: () => backend.status(STATUS_WAIT_MS),
  }),
  host: hostStatus,
  price: (model) => settings.price(model),
  added,
  servers,
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
  servers: { registry: servers, backend: upstream },
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
 * downloads keep them in `hearth/files`, and the engine worker's fetches are answered from there,
 * so that such a model loads offline too.
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

// Registered before Workbox's own listener, so that the API is never looked up in the precache.
self.addEventListener('fetch', (event) => {
  const url = new URL(event.request.url);
  if (url.origin === self.location.origin && api.owns(url)) {
    // Chromium never tells a service worker that a page aborted a fetch whose response has not
    // started; whether the page is still there is the next best thing (DESIGN §3).
    const alive = async () => (await self.clients.get(event.clientId)) !== undefined;
    event.respondWith(api.fetch(event.request, { alive }));
  } else if (event.request.method === 'GET' && uncachedLibs.has(url.href)) {
    event.respondWith(libraryFromCache(event.request));
  }
});

/** The longest an accepted update waits for the requests in flight (an event lives 5 minutes). */
const UPDATE_WAIT_MS = 4 * 60 * 1000;
/** After the last request ends, a moment for its last bytes to reach the page that reads them. */
const DRAIN_MS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The user accepted the update: once no request of this worker is in flight, the waiting worker
 * takes over, so that no generation is cut by the switch. Requests that arrive meanwhile are
 * answered as ever; the pages reload when the new worker takes control.
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
  const source = event.source;
  link.onMessage(data, (message: SwToPage) => source?.postMessage(message));
});

// No skipWaiting(): a new version waits until the user accepts it (DESIGN §1). Claiming on
// activation is what makes the very first page controlled.
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
// llama.cpp's compatibility build, on the browsers that need it, so that GGUF models run offline.
self.addEventListener('install', (event) => event.waitUntil(cacheCompatBuild(scope.href)));
const llamaCompatUrls = compatUrls(scope.href);

cleanupOutdatedCaches();
// COOP and COEP on the documents and worker scripts served from the precache (isolation.ts)…
addPlugins([isolationPlugin]);
precacheAndRoute(self.__WB_MANIFEST);
registerRoute(
  ({ request, url }) => request.method === 'GET' && llamaCompatUrls.has(url.href),
  ({ request }) => compatFromCache(request),
);
// …and on those it does not hold, fetched from the network (routes are tried in this order; the
// API, answered above, is left alone).
registerRoute(
  ({ request, url }) =>
    setsPolicies(request) && !(url.origin === self.location.origin && api.owns(url)),
  ({ request }) => isolatedFromNetwork(request),
);
