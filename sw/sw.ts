/**
 * @module
 * The chat app's service worker: Hearth (sw/hearth-worker.ts), as any site's worker composes
 * it, and the app's own offline precache behind it, whose documents and worker scripts get COOP
 * and COEP so that the app is cross-origin isolated (llama.cpp's threads).
 */
/// <reference lib="webworker" />
import { addPlugins, cleanupOutdatedCaches, precacheAndRoute } from 'workbox-precaching';
import { registerRoute } from 'workbox-routing';
import { startHearthWorker } from './hearth-worker';
import { isolatedFromNetwork, isolationPlugin, setsPolicies } from './isolation';
import { cacheCompatBuild, compatFromCache, compatUrls } from './llama-compat';

declare const self: ServiceWorkerGlobalScope;

/** Hearth's files, as in any site: the package's `hearth/` folder (scripts/hearth-files-plugin.ts). */
const filesUrl = new URL('hearth/', self.registration.scope).href;
// Registered before Workbox's own listener, so that the API is never looked up in the precache.
// The precache holds Hearth's files, with the app's: no cache of their own.
const hearth = startHearthWorker({ filesUrl, cacheFiles: false, isolate: false });

// llama.cpp's compatibility build, on the browsers that need it, so that GGUF models run offline.
self.addEventListener('install', (event) => event.waitUntil(cacheCompatBuild(filesUrl)));
const llamaCompatUrls = compatUrls(filesUrl);

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
  ({ request, url }) => setsPolicies(request) && !hearth.owns(url),
  ({ request }) => isolatedFromNetwork(request),
);
