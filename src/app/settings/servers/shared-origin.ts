/**
 * @module
 * Whether this app's origin is shared with pages it does not control. What a server's key is kept
 * in (the service worker's IndexedDB) is the origin's: every script of the origin can read it, not
 * only Hearth's. On a shared origin that is other people's or other projects' pages.
 */

/**
 * Hosts where one origin serves many projects by path: `user.github.io/repo-a/` and
 * `user.github.io/repo-b/` are one origin. Hosts that give every site its own subdomain (Netlify's
 * `site.netlify.app`, Vercel's, Cloudflare Pages', surge.sh) are not listed: each site is its own
 * origin there.
 */
export const SHARED_HOSTS: readonly string[] = ['github.io', 'gitlab.io', 'codeberg.page'];

/** Why the origin is shared: its host is one of `SHARED_HOSTS`, or the app lives under a path. */
export type SharedOrigin =
  { kind: 'host'; host: string; suffix: string } | { kind: 'path'; host: string; base: string };

/**
 * Whether the app at `hostname`, installed at `base` (its base path, `/` at the root), shares its
 * origin: a host under one of `SHARED_HOSTS`, or any install below the root (the rest of the
 * origin's paths hold other pages).
 */
export function sharedOrigin(hostname: string, base: string): SharedOrigin | null {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  const suffix = SHARED_HOSTS.find((s) => host === s || host.endsWith(`.${s}`));
  if (suffix) return { kind: 'host', host, suffix };
  const path = base.startsWith('/') ? base : new URL(base, `https://${host}/`).pathname;
  if (path.replace(/\/+$/, '') !== '') return { kind: 'path', host, base: path };
  return null;
}
