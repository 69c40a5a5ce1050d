/**
 * @module
 * `hearth-sw.js`, the service worker a site copies into its public folder (`npx hearth init`):
 * Hearth alone, built as a classic script so that a site's own worker can compose it with
 * `importScripts('hearth-sw.js')`. It answers `{scope}v1/…` and Hearth's files under
 * `{scope}hearth/`, and leaves every other request to the site's listeners or the network.
 *
 * Cross-origin isolation is opt-in: registered as `hearth-sw.js?isolate` (what
 * `startHearth({ isolate: true })` does), or with `self.hearthOptions = { isolate: true }` set
 * before `importScripts` in a site's own worker (whose URL is not this file's).
 */
/// <reference lib="webworker" />
import { startHearthWorker } from './hearth-worker';

declare const self: ServiceWorkerGlobalScope & { hearthOptions?: { isolate?: boolean } };

const scope = self.registration.scope;
startHearthWorker({
  filesUrl: new URL('hearth/', scope).href,
  cacheFiles: true,
  // The loader and the engine worker's core (scripts/package.mjs lists them).
  precache: JSON.parse(import.meta.env.VITE_HEARTH_CORE_FILES ?? '[]') as string[],
  // Every file of the build's `hearth/`: the only ones served from and kept in its cache.
  files: JSON.parse(import.meta.env.VITE_HEARTH_FILES ?? '[]') as string[],
  isolate:
    new URL(self.location.href).searchParams.has('isolate') || self.hearthOptions?.isolate === true,
});
