/**
 * @module
 * Which install of Hearth this realm belongs to. One install is one service-worker scope (the
 * folder that holds `hearth-sw.js`, or the app's base path), and an origin may hold several —
 * `user.github.io/a/` and `user.github.io/b/` are two sites. Web Locks, BroadcastChannels,
 * IndexedDB and Cache Storage are shared by the whole origin, so the names of Hearth's own carry
 * the install's path: two installs elect two hosts, publish two statuses and keep two sets of
 * settings, keys, servers and added models.
 *
 * The root install keeps the bare names, so an install at `/` finds what it stored before names
 * carried a path.
 *
 * Model weights are the exception, and deliberately so: they are kept by URL in caches that
 * every install of the origin shares (WebLLM names its own caches, per origin, whatever Hearth
 * does), so one download serves every site of the origin. What each install downloaded is its
 * own record; a model deleted in one is found missing by the others when they next look.
 *
 * The path is set once per realm, before any name is used — by the service worker from its
 * scope, by the engine worker from the host's `worker/init`, by a page from its base — because
 * it is known only at run time (one build serves any base path) and the databases are opened
 * lazily by modules that every realm shares.
 */

let installPath = '/';

/** Makes this realm part of the install whose base URL (or scope) is `baseUrl`. */
export function setInstall(baseUrl: string | URL): void {
  installPath = new URL(baseUrl).pathname;
}

/** The path of this realm's install, e.g. `/` or `/repo/`. */
export function installScope(): string {
  return installPath;
}

/**
 * `name` for this install: itself at the root, `name@/path/` elsewhere (a lock, channel,
 * database or cache name may hold any characters).
 */
export function installName(name: string): string {
  return installPath === '/' ? name : `${name}@${installPath}`;
}
