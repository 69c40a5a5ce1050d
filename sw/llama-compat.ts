/**
 * @module
 * llama.cpp's compatibility build, offline: the service worker caches it when it installs on a
 * browser that needs it (no JSPI or no 64-bit WebAssembly memory: the same test the engine worker
 * makes), and answers its URLs from that cache first. Kept out of the precache, since most
 * browsers never need its 18.7 MB (src/models/llama-compat.ts).
 */
/// <reference lib="webworker" />
import { LLAMA_COMPAT_DIR, LLAMA_COMPAT_FILES, llamaNeedsCompat } from '../src/models/llama-compat';
import { installName } from '../src/protocol/install';

/** The cache the build is kept in (the version is in its URLs; one per install). */
export const llamaCompatCache = (): string => installName('hearth-llama-compat');

/** The build's URLs under `filesUrl`, where Hearth's files are served (`{scope}hearth/`). */
export function compatUrls(filesUrl: string): Set<string> {
  return new Set(LLAMA_COMPAT_FILES.map((name) => new URL(LLAMA_COMPAT_DIR + name, filesUrl).href));
}

/**
 * At install: caches the build where this browser needs it, and drops other versions' files. A
 * failure (offline, a full disk) does not stop the install: the build is fetched when first used.
 */
export async function cacheCompatBuild(
  filesUrl: string,
  needs = llamaNeedsCompat(),
): Promise<void> {
  try {
    const cache = await caches.open(llamaCompatCache());
    const wanted = compatUrls(filesUrl);
    for (const request of await cache.keys()) {
      if (!wanted.has(request.url)) await cache.delete(request);
    }
    if (needs) await cache.addAll([...wanted]);
  } catch (err) {
    console.warn('llama.cpp’s compatibility build could not be cached now:', err);
  }
}

/** Answers a URL of the build from the cache, else from the network (and keeps it). */
export async function compatFromCache(request: Request): Promise<Response> {
  const cache = await caches.open(llamaCompatCache());
  const cached = await cache.match(request.url);
  if (cached) return cached;
  const response = await fetch(request);
  if (response.ok) await cache.put(request.url, response.clone()).catch(() => undefined);
  return response;
}
