/**
 * @module
 * What a reply's links and images may reach. Nothing a model writes may send anything off the
 * device, or to the app's own host, by itself: an address can carry a conversation in its query,
 * its path or its host name, so
 * - a link goes only where the user agrees to go, after a confirmation that shows the exact
 *   address (and only to http(s): every other scheme is text);
 * - an image loads only when it is one of the app's own files, named exactly (no query, no
 *   fragment, no other path: a path of the app's host is as good a carrier as a query, since the
 *   host logs it). Everything else shows as text, `data:` images included: they send nothing,
 *   but a few hundred bytes can declare a picture of gigapixels that freezes the tab on every
 *   reload, and a model has no use for them.
 * Pure functions of strings, so that the rules are tested without a browser.
 */

/** Where a link would go, in full: an http(s) URL, or null when it must stay inert text. */
export function linkDestination(href: string | null, page: string): URL | null {
  if (href === null) return null;
  let url: URL;
  try {
    url = new URL(href, page);
  } catch {
    return null;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
}

/**
 * Whether a link's text is already its exact destination, so that showing the destination again
 * adds nothing. Compared as written, not as parsed: `https://аpple.example` (Cyrillic а) is not
 * `https://xn--pple-43d.example/`, and text that only looks like an address is not one.
 */
export function textIsDestination(text: string, url: URL): boolean {
  const shown = text.trim();
  if (shown === url.href) return true;
  // `https://example.com` for `https://example.com/`.
  return url.pathname === '/' && url.search === '' && url.hash === '' && `${shown}/` === url.href;
}

/**
 * The app's own image file that `src` names exactly, as the URL to load; null for anything else.
 * `files` are the app's image files as paths under its base (`icons/icon-192.png`), `base` the
 * app's base URL (`https://host/sub/`), `page` the address `src` is relative to.
 */
export function ownImage(
  src: string | null,
  page: string,
  base: string,
  files: readonly string[],
): URL | null {
  if (src === null) return null;
  let url: URL;
  let root: URL;
  try {
    url = new URL(src, page);
    root = new URL(base);
  } catch {
    return null;
  }
  // No query and no fragment, not even empty ones, and no user name or password.
  if (url.href !== `${url.origin}${url.pathname}`) return null;
  if (url.origin !== root.origin || !url.pathname.startsWith(root.pathname)) return null;
  return files.includes(url.pathname.slice(root.pathname.length)) ? url : null;
}

/** The longest start of a `data:` address shown before its data (its media type). */
const DATA_HEAD = 64;

/**
 * An image address as the text that stands for it: the address as written, but for a `data:`
 * address its media type and its length (its data may be megabytes).
 */
export function describeSource(src: string): string {
  if (!/^\s*data:/i.test(src)) return src;
  const comma = src.indexOf(',');
  const head =
    comma === -1 || comma >= DATA_HEAD
      ? `${src.slice(0, DATA_HEAD)}…`
      : src.slice(0, comma + 1) + '…';
  const length = comma === -1 ? src.length : src.length - comma - 1;
  return `${head} ${length} characters`;
}
