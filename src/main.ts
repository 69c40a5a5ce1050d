/**
 * @module
 * The chat app's boot: register the service worker, wait until it controls the page (only then
 * do this page's `/v1/*` requests reach it) with its cross-origin isolation (a first visit
 * reloads once to get it; src/site/boot.ts), join the engine-host election, show the status.
 */
import './install-here';
import { Workbox } from 'workbox-window';
import type { PageToSw } from './bridge/messages';
import { joinElection } from './engine-host/leader';
import { controlled, reloadForIsolation } from './site/boot';
import './ui/hearth-app';
import { watchPreferences } from './ui/preferences';
import './ui/theme.css';

// The chosen theme before the first paint, and every tab follows a change made in another.
watchPreferences();

const BASE = import.meta.env.BASE_URL;
/** Set while reloading because the service worker runs another build (never in a loop). */
const BUILD_MARK = 'hearth:reloaded-for-build';

async function boot(): Promise<void> {
  const app = document.querySelector('hearth-app');
  if (!app) return;
  const status = app;
  if (!('serviceWorker' in navigator) || !('locks' in navigator)) {
    status.role = 'unsupported';
    return;
  }
  // Whether the service worker served this page (and added its isolation headers to it).
  const servedByWorker = navigator.serviceWorker.controller !== null;
  const hadWorker = (await navigator.serviceWorker.getRegistration(BASE))?.active != null;
  const wb = import.meta.env.PROD
    ? new Workbox(`${BASE}sw.js`, { scope: BASE })
    : new Workbox(`${BASE}dev-sw.js?dev-sw`, { scope: BASE, type: 'module' });
  // A new version installed in the background waits (DESIGN §1) until the user accepts it: the
  // app offers "Reload to update", and the service worker in charge lets it take over once its
  // requests are done. (Every tab hears of the waiting worker, whichever found it.)
  wb.addEventListener('waiting', () => (app.updateReady = true));
  app.addEventListener('update-accepted', () => {
    navigator.serviceWorker.controller?.postMessage({ type: 'update/apply' } satisfies PageToSw);
  });
  void wb.register();
  // An installed app is what earns persistent storage in Chromium: ask again once installed.
  addEventListener('appinstalled', () => void app.askPersistence());
  if (!(await controlled(hadWorker))) {
    status.role = 'uncontrolled';
    return;
  }
  if (reloadForIsolation(servedByWorker)) return;
  // From now on a change of controller is an update taking over: this tab's code is of the old
  // build, so it reloads into the new one (the new worker serves it from its precache).
  navigator.serviceWorker.addEventListener('controllerchange', () => location.reload());
  void joinElection({
    build: import.meta.env.VITE_HEARTH_BUILD,
    appUrl: new URL(BASE, location.href).href,
    filesUrl: new URL(BASE, location.href).href,
    onRole: (role, detail) => {
      if (role === 'host') sessionStorage.removeItem(BUILD_MARK);
      if (role === 'refused' && sessionStorage.getItem(BUILD_MARK) === null) {
        // This page's code is of another build than the service worker's: the reload gets the
        // service worker's (the precache holds it), so that this tab can host again.
        console.info(`Hearth: the service worker refused this tab as host (${detail}); reloading.`);
        sessionStorage.setItem(BUILD_MARK, '1');
        location.reload();
        return;
      }
      status.role = role;
      status.detail = detail ?? '';
    },
  });
}

void boot();
