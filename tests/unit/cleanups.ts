/**
 * @module
 * What a test made (servers, processes, sockets, folders), undone after it: `setup.ts` runs the
 * cleanups after every test of every file.
 */

/** Pushed by a test or a helper; run last first after the test, then emptied. */
export const cleanups: (() => unknown)[] = [];

export async function runCleanups(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}
