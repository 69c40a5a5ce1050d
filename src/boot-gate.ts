/**
 * @module
 * The app stays out of the page until its boot is past the reloads it may need, so that nothing
 * typed or opened is lost to one. A page that no service worker controls yet — a first visit,
 * or a hard reload — reloads once the worker takes control: to become cross-origin isolated, or
 * to be controlled at all (src/site/boot.ts). Until the boot says it goes on without a reload
 * (`showApp`), such a page shows only "Starting Hearth…". A page the worker served, as every
 * later visit is, shows the app at once: nothing waits there.
 *
 * Imported by main.ts before the app's elements are defined: a `<hearth-app>` out of the
 * document is not upgraded, so the page that is about to reload does none of the app's work
 * either (reading the conversations, asking for the engine's status).
 */

/** The app's element, in the page or waiting to be put back. */
export const app = document.querySelector('hearth-app');

/**
 * How long a page waits for its reload before it shows the app anyway: a worker that never takes
 * control (its install failed) must not leave the page at "Starting" for good. A first visit
 * installs the worker, with its precache, in a second or two on a usual connection.
 */
const GIVE_UP_MS = 20_000;

let starting: HTMLElement | null = null;

if (app && 'serviceWorker' in navigator && navigator.serviceWorker.controller === null) {
  starting = document.createElement('main');
  starting.className = 'starting';
  const name = document.createElement('h1');
  name.textContent = 'Hearth';
  const line = document.createElement('p');
  line.setAttribute('role', 'status');
  line.textContent = 'Starting Hearth…';
  starting.append(name, line);
  app.replaceWith(starting);
  setTimeout(showApp, GIVE_UP_MS);
}

/** Puts the app in the page, where the boot had kept it out (once; later calls do nothing). */
export function showApp(): void {
  if (!starting || !app) return;
  starting.replaceWith(app);
  starting = null;
}
