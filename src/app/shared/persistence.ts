/**
 * @module
 * Persistent storage for the downloaded models and the conversations. Only a page can ask for
 * it; Chromium answers from its heuristics (an installed app, a bookmark, use), Firefox asks the
 * user. Asked when a model is on the device, and again after installation.
 */

/** Whether the origin's storage is persistent: `unknown` until asked. */
export type Persistence = 'unknown' | 'persisted' | 'best-effort' | 'unsupported';

/** Asks the browser not to evict the origin's storage, and says what it answered. */
export async function requestPersistence(): Promise<Persistence> {
  const storage = navigator.storage as StorageManager | undefined;
  if (!storage?.persist) return 'unsupported';
  const persisted = (await storage.persisted()) || (await storage.persist());
  return persisted ? 'persisted' : 'best-effort';
}

/** Whether the origin's storage is persistent now, without asking. */
export async function currentPersistence(): Promise<Persistence> {
  const storage = navigator.storage as StorageManager | undefined;
  if (!storage?.persisted) return 'unsupported';
  return (await storage.persisted()) ? 'persisted' : 'best-effort';
}
