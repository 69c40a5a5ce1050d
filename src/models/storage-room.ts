/**
 * @module
 * Whether the device has room for a download, asked before its first byte is stored: the size
 * comes from the server, and a file claiming more than the storage can hold fails at once with
 * words the user can act on, instead of filling the disk (or, before parts were made lazily,
 * the engine worker's memory) first.
 */
import { OpenAIError } from '../protocol/errors';
import { readableAmount } from './readable-amount';

/** `navigator.storage.estimate`, or what a test gives instead. */
export type StorageEstimator = () => Promise<{ quota?: number; usage?: number }>;

/** The browser's estimate where there is one (not in Node, where nothing is checked). */
export function defaultEstimator(): StorageEstimator | undefined {
  const storage = (globalThis as { navigator?: { storage?: StorageManager } }).navigator?.storage;
  return storage?.estimate ? () => storage.estimate() : undefined;
}

/** Bytes as people read them (`1.2 GB`, `338 MB`, `4 KB`). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1e9) return `${readableAmount(bytes / 1e9)} GB`;
  if (bytes >= 1e6) return `${readableAmount(bytes / 1e6)} MB`;
  return `${Math.ceil(bytes / 1e3)} KB`;
}

/**
 * Throws 507 `storage_full` when `needed` bytes exceed what the origin may still store (`quota`
 * less `usage`), or with `total` set the whole quota (a download resumed: its stored bytes are
 * part of the usage already). Passes when the browser does not say.
 */
export async function assertRoom(
  needed: number,
  what: string,
  estimate: StorageEstimator | undefined,
  resumed = false,
): Promise<void> {
  if (!estimate) return;
  let found: { quota?: number; usage?: number };
  try {
    found = await estimate();
  } catch {
    return; // No estimate: the browser's quota error still stops a download that cannot fit.
  }
  const { quota, usage = 0 } = found;
  if (quota === undefined) return;
  const free = Math.max(0, resumed ? quota : quota - usage);
  if (needed <= free) return;
  throw new OpenAIError(
    'storage_full',
    `Not enough space for ${what}: it needs ${formatBytes(needed)}, and ${formatBytes(free)} ${resumed ? 'is the most this app may store' : 'is free'}. Free some space (remove models you do not use) and try again.`,
  );
}
