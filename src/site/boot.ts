/**
 * @module
 * What every page that uses Hearth does before it may call the API: wait until a service worker
 * controls it (only then do its `{base}v1/` requests reach the worker), and reload once where
 * that is the only way — after a hard reload, which leaves a page uncontrolled on purpose, and to
 * become cross-origin isolated when that was asked for. Each reload is marked in
 * `sessionStorage`, so that a page that a reload cannot help is never reloaded in a loop.
 */

/** Set while reloading to get control. */
const RELOAD_MARK = 'hearth:reloaded-for-control';
/** Set while reloading to become cross-origin isolated. */
const ISOLATION_MARK = 'hearth:reloaded-for-isolation';
/** Set while reloading to leave a stale copy of the loader that the HTTP cache gave. */
const STALE_MARK = 'hearth:reloaded-for-stale-loader';
/** How long after such a reload another is not tried: the reload did not help. */
const STALE_RELOAD_MS = 60_000;

/** A promise that never settles: the page is reloading. */
const reloading = () => new Promise<never>(() => {});

/**
 * Resolves with true once a service worker controls this page, false if it cannot be had.
 * `hadWorker`: a worker was already active for this scope when the page loaded, so a page still
 * uncontrolled was hard-reloaded (it reloads once, normally). Otherwise this is a first visit,
 * and the new worker claims the page when it activates.
 */
export async function controlled(hadWorker: boolean): Promise<boolean> {
  const container = navigator.serviceWorker;
  if (container.controller) {
    sessionStorage.removeItem(RELOAD_MARK);
    return true;
  }
  if (hadWorker) {
    // Reloaded once already and still not controlled: say so rather than reload in a loop.
    if (sessionStorage.getItem(RELOAD_MARK) !== null) return false;
    sessionStorage.setItem(RELOAD_MARK, '1');
    location.reload();
    return reloading();
  }
  return new Promise<boolean>((resolve) => {
    container.addEventListener('controllerchange', () => resolve(true), { once: true });
  });
}

/**
 * Reloads once when the page became controlled without being cross-origin isolated: the service
 * worker adds COOP and COEP to the documents it serves (sw/isolation.ts), but a first visit was
 * loaded before it existed. Isolation gives llama.cpp its threads, and the first tab usually
 * hosts the engine for the whole session, so one reload of a page that has done nothing yet is
 * worth it. A page the service worker served and that is still not isolated (framed by another
 * origin, a browser that ignores the headers) would be no better for a reload: it is accepted,
 * and the engine runs one thread. Returns true when the page is reloading.
 */
export function reloadForIsolation(servedByWorker: boolean): boolean {
  if (globalThis.crossOriginIsolated) {
    sessionStorage.removeItem(ISOLATION_MARK);
    return false;
  }
  if (servedByWorker || sessionStorage.getItem(ISOLATION_MARK) !== null) {
    console.info('Hearth: this page is not cross-origin isolated; llama.cpp runs one thread.');
    return false;
  }
  sessionStorage.setItem(ISOLATION_MARK, '1');
  location.reload();
  return true;
}

/**
 * Reloads once when this page's loader was a stale copy from the HTTP cache (the page was loaded
 * before a worker controlled it, and the host lets files be cached for minutes): the reload is
 * controlled, and gets the worker's build by its build's name. Returns true when the page is
 * reloading; false when it reloaded for that already (it then says what differs instead).
 */
export function reloadForStaleLoader(): boolean {
  // The mark holds when it was set: a tab that meets a stale copy again much later reloads again.
  const at = Number(sessionStorage.getItem(STALE_MARK));
  if (Date.now() - at < STALE_RELOAD_MS) return false;
  sessionStorage.setItem(STALE_MARK, String(Date.now()));
  location.reload();
  return true;
}
