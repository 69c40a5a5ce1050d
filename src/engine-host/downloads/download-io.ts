/**
 * @module
 * The parts of `Cache`, `CacheStorage` and `fetch` the downloads use, apart so that the downloads
 * (downloads.ts, file-fetch.ts) and a GGUF's download in parts (gguf-download.ts) take them
 * without importing each other; tests pass fakes of them.
 */

/** The part of `Cache` the downloads use. */
export interface CacheLike {
  match(request: string): Promise<Response | undefined>;
  put(request: string, response: Response): Promise<void>;
  delete(request: string): Promise<boolean>;
}

/** The part of `CacheStorage` the downloads use. */
export interface DownloadCaches {
  open(cacheName: string): Promise<CacheLike>;
}

/** The part of `fetch` the downloads use: GETs (a GGUF's with a `range` header) and HEADs. */
export type DownloadFetch = (
  url: string,
  init: {
    signal: AbortSignal;
    headers?: Record<string, string>;
    method?: 'GET' | 'HEAD';
    cache?: RequestCache;
  },
) => Promise<Response>;
