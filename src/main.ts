/**
 * @module
 * The chat app's boot, as a site's with its own service worker: register the app's worker (which
 * composes Hearth's), start Hearth with `startHearth()` — wait until the worker controls the
 * page, cross-origin isolated (a first visit reloads once to get it), and join the engine-host
 * election — and show the status.
 */
import './install-here';
// Before the app's elements are defined: a page that may reload keeps the app out until it knows.
import { app as appElement, showApp } from './boot-gate';
import { Workbox } from 'workbox-window';
import type { PageToSw } from './bridge/messages';
import { controlled } from './site/boot';
import { startHearth } from './site/index';
import './app/hearth-app';
import { watchPreferences } from './app/shared/preferences';
import './app/shared/theme.css';

// The chosen theme before the first paint, and every tab follows a change made in another.
watchPreferences();

const BASE = import.meta.env.BASE_URL;
/** Set while reloading because the service worker runs another build (never in a loop). */
const BUILD_MARK = 'hearth:reloaded-for-build';

async function boot(): Promise<void> {
  const app = appElement;
  if (!app) return;
  const status = app;
  if (!('serviceWorker' in navigator) || !('locks' in navigator)) {
    status.role = 'unsupported';
    showApp();
    return;
  }
  // The app's own service worker, which composes Hearth's (sw/sw.ts) as a site's may: Hearth is
  // told not to register one. workbox-window gives the update prompt.
  const wb = import.meta.env.PROD
    ? new Workbox(`${BASE}sw.js`, { scope: BASE })
    : new Workbox(`${BASE}dev-sw.js?dev-sw`, { scope: BASE, type: 'module' });
  // A new version installed in the background waits (docs/architecture.md, Offline, installation
  // and updates) until the user accepts it: the
  // app offers "Reload to update", and the service worker in charge lets it take over once its
  // requests are done. (Every tab hears of the waiting worker, whichever found it.)
  wb.addEventListener('waiting', () => (app.updateReady = true));
  app.addEventListener('update-accepted', () => {
    navigator.serviceWorker.controller?.postMessage({ type: 'update/apply' } satisfies PageToSw);
  });
  void wb.register();
  // An installed app is what earns persistent storage in Chromium: ask again once installed.
  addEventListener('appinstalled', () => void app.askPersistence());
  const reloadForBuild = (why: string): boolean => {
    if (sessionStorage.getItem(BUILD_MARK) !== null) return false;
    // This page's code is of another build than the service worker's: the reload gets the
    // service worker's (the precache holds it), so that this tab can host again.
    console.info(`Hearth: ${why}; reloading.`);
    sessionStorage.setItem(BUILD_MARK, '1');
    location.reload();
    return true;
  };
  try {
    // As any site starts Hearth (src/site/index.ts): the loader comes from {base}hearth/.
    await startHearth({
      base: BASE,
      registerWorker: false,
      isolate: true,
      onStatus: ({ role, detail }) => {
        if (role === 'host') sessionStorage.removeItem(BUILD_MARK);
        if (
          role === 'refused' &&
          reloadForBuild(`the service worker refused this tab as host (${detail})`)
        ) {
          return;
        }
        if (role === 'stopped') return;
        // Past the boot's reloads: the app is safe to use.
        showApp();
        status.role = role;
        status.detail = detail ?? '';
      },
    });
  } catch (err) {
    const error = err as { code?: string; message?: string };
    if (error.code === 'version_mismatch' && sessionStorage.getItem(BUILD_MARK) === null) {
      // A loader of another build came from the network (a page loaded before the worker took
      // control, or an HTTP cache): once the worker controls the page, the reload gets the
      // worker's own files, which match.
      await controlled(false);
      if (reloadForBuild(error.message ?? 'another build')) return;
    }
    // No reload can help: the app shows, and says why the API cannot start.
    showApp();
    status.role = error.code === 'unsupported' ? 'unsupported' : 'uncontrolled';
    status.detail = error.message ?? String(err);
    return;
  }
  showApp();
  // From now on a change of controller is an update taking over: this tab's code is of the old
  // build, so it reloads into the new one (the new worker serves it from its precache).
  navigator.serviceWorker.addEventListener('controllerchange', () => location.reload());
}

void boot();
