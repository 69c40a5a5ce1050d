/**
 * @module
 * The service worker: a thin adapter that answers requests under `{base}v1/` with the API and
 * lets everything else fall through to the precache or the network.
 */
/// <reference lib="webworker" />
import { cleanupOutdatedCaches, precacheAndRoute } from 'workbox-precaching';
import { PortBackend } from '../src/bridge/client';
import type { SwToPage } from '../src/bridge/messages';
import { MODEL_CACHES, modelLibUrl, webllmCachesLib } from '../src/openai/on-device';
import { createApi } from '../src/openai/router';
import { Settings } from '../src/openai/settings';
import catalog from 'virtual:hearth-catalog';
import { deviceStatus, gpuFacts } from './device';
import { HostLink } from './host-link';
import { DeviceModels } from './models';
import { idbSettingsStore } from './settings-store';

declare const self: ServiceWorkerGlobalScope;

const scope = new URL(self.registration.scope);
const link = new HostLink({
  build: import.meta.env.VITE_HEARTH_BUILD,
  clients: self.clients,
  locks: navigator.locks,
  appUrl: scope.href,
  onLost: (port) => backend.hostLost(port),
});
const backend = new PortBackend(() => link.port());
/** The host's status now, or null without waiting for a host to appear. */
const hostStatus = () =>
  link.hostId === undefined ? Promise.resolve(null) : backend.status(1000).catch(() => null);
const settings = new Settings(idbSettingsStore);
const models = new DeviceModels({
  catalog,
  appUrl: scope.href,
  caches,
  gpu: gpuFacts,
  host: hostStatus,
  price: (model) => settings.price(model),
});
const api = createApi({
  backend,
  models,
  base: scope.pathname,
  settings,
  status: async () => ({ ...(await backend.status()), ...(await deviceStatus()) }),
  catalog: () => models.catalog(),
});

/**
 * Model libraries WebLLM fetches without caching them (self-hosted on `localhost`): the
 * downloads keep them in `hearth/files`, and the engine worker's fetches are answered from there,
 * so that such a model loads offline too.
 */
const uncachedLibs = new Set(
  catalog.map((entry) => modelLibUrl(entry, scope.href)).filter((url) => !webllmCachesLib(url)),
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

self.addEventListener('message', (event) => {
  const source = event.source;
  link.onMessage(event.data, (message: SwToPage) => source?.postMessage(message));
});

// No skipWaiting(): a new version waits until the user accepts it (DESIGN §1). Claiming on
// activation is what makes the very first page controlled.
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

cleanupOutdatedCaches();
precacheAndRoute(self.__WB_MANIFEST);
