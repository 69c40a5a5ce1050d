/**
 * @module
 * The first line of each of Hearth's scripts in the package names its build,
 * `/*! hearth-llm build <id> *\/` (vite.package.config.ts writes it): the service worker and the
 * loader read which build the server has from `hearth-sw.js`, past every cache.
 */

const BANNER = /^\/\*! hearth-llm build (\S+) \*\//;

/**
 * A query that sends a request for one of Hearth's files past the service worker, to the server:
 * how the loader reads which build the server's own loader is (sw/hearth-files.ts).
 */
export const NETWORK = 'hearth-network';

/** The build a script's text names in its first line, or null. */
export function buildOfScript(text: string): string | null {
  return BANNER.exec(text)?.[1] ?? null;
}

/**
 * The build of the script at `url` as the server has it now (`cache: 'reload'`: fetched past the
 * HTTP cache, whose entry the answer replaces); null when it cannot be had or names none.
 */
export async function serverBuildOf(url: string): Promise<string | null> {
  try {
    const response = await fetch(url, { cache: 'reload', credentials: 'same-origin' });
    return response.ok ? buildOfScript(await response.text()) : null;
  } catch {
    return null;
  }
}
