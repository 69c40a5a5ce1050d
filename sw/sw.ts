/**
 * @module
 * The chat app's service worker: Hearth (sw/hearth-worker.ts), as any site's worker composes
 * it, and the app's own offline precache behind it, whose documents and worker scripts get COOP
 * and COEP so that the app is cross-origin isolated (llama.cpp's threads).
 */
/// <reference lib="webworker" />
import {
  addPlugins,
  cleanupOutdatedCaches,
  matchPrecache,
  precacheAndRoute,
} from 'workbox-precaching';
import { registerRoute } from 'workbox-routing';
import { startHearthWorker } from './hearth-worker';
import { isolatedFromNetwork, isolationPlugin, setsPolicies, withIsolation } from './isolation';
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

/** This build's files by their build's name (`hearth/@<build>/…`), as the bundled entry asks. */
const ownBuild = `${filesUrl}@${encodeURIComponent(import.meta.env.VITE_HEARTH_BUILD)}/`;

cleanupOutdatedCaches();
// The entry asks for its own build's loader by that name (sw/hearth-files.ts serves sites so):
// the precache holds the files by their plain names. The app keeps one build, and a tab of
// another reloads into it (src/main.ts), so another build's name is not found here.
registerRoute(
  ({ request, url }) => request.method === 'GET' && url.href.startsWith(`${filesUrl}@`),
  async ({ request, url }) => {
    if (!url.href.startsWith(ownBuild)) return new Response('Not found', { status: 404 });
    const plain = `${filesUrl}${url.href.slice(ownBuild.length)}`;
    const response = llamaCompatUrls.has(plain)
      ? await compatFromCache(new Request(plain))
      : ((await matchPrecache(plain)) ?? (await fetch(plain)));
    return setsPolicies(request) ? withIsolation(response) : response;
  },
);
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
