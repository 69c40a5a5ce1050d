/**
 * @module
 * GGUF files from the computer (gguf-upload.ts) that no model uses: an upload whose tab closed
 * mid-store, or whose model was never added. Nothing else removes them, so the host sweeps them
 * at its start. A file written to in the last `ORPHAN_GRACE_MS` is left alone: it may be being
 * uploaded right now (the upload touches its record at each part), or be about to be added.
 */
import { ggufSizeKey, readGgufRecord, removeGgufFile, type CacheRemover } from '../gguf-parts';
import { MODEL_CACHES } from '../on-device';

/** How long after its last write a file no model uses is kept. */
export const ORPHAN_GRACE_MS = 10 * 60_000;

/** The part of `CacheStorage` the sweep needs. */
export interface SweepCaches {
  open(
    cacheName: string,
  ): Promise<CacheRemover & { keys?(): Promise<readonly (Request | string)[]> }>;
}

/** Removes the uploaded files no model in `used` names; returns their URLs. */
export async function sweepOrphanFiles(
  caches: SweepCaches,
  appUrl: string,
  used: ReadonlySet<string>,
  now = Date.now(),
): Promise<string[]> {
  const cache = await caches.open(MODEL_CACHES.gguf);
  if (!cache.keys) return [];
  const under = new URL('v1/hearth/files/', appUrl).href;
  const suffix = ggufSizeKey('').replace(/^\?/, '');
  const removed: string[] = [];
  for (const request of await cache.keys()) {
    const key = typeof request === 'string' ? request : request.url;
    if (!key.startsWith(under) || !key.endsWith(suffix)) continue;
    const url = key.slice(0, -suffix.length - 1);
    if (used.has(url)) continue;
    const record = await readGgufRecord(cache, url);
    if (record?.written_at !== undefined && now - record.written_at < ORPHAN_GRACE_MS) continue;
    await removeGgufFile(cache, url);
    removed.push(url);
  }
  return removed;
}
