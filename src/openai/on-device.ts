/**
 * @module
 * Whether a model's files are all on the device, under the exact cache keys WebLLM 0.2.86 looks
 * up: its chat config, weight manifest, every weight shard, its tokenizer and its model library.
 * (WebLLM's own `hasModelInCache` checks only the shards.) The caches are passed in, so that this
 * runs the same in the service worker, the engine worker and Node.
 */
import type { CatalogEntry } from './catalog';

/** The part of `CacheStorage` this reads. */
export interface CacheStorageLike {
  open(cacheName: string): Promise<{ match(request: string): Promise<Response | undefined> }>;
}

/** WebLLM's cache names (notes/webllm §5.1). */
export const WEBLLM_CACHES = {
  config: 'webllm/config',
  model: 'webllm/model',
  wasm: 'webllm/wasm',
} as const;

/** The weights' base URL as WebLLM cleans it: absolute, ending in `resolve/<branch>/`. */
export function modelBaseUrl(entry: CatalogEntry, appUrl: string): string {
  let url = new URL(entry.model_url, appUrl).href;
  if (!url.endsWith('/')) url += '/';
  if (!/.+\/resolve\/.+\//.test(url)) url += 'resolve/main/';
  return url;
}

/** The model library's absolute URL. */
export function modelLibUrl(entry: CatalogEntry, appUrl: string): string {
  return new URL(entry.model_lib, appUrl).href;
}

/**
 * Whether WebLLM keeps the model library in its cache: it fetches libraries on `localhost` and
 * relative ones without caching (notes/webllm §5.4).
 */
export function webllmCachesLib(libUrl: string): boolean {
  return libUrl.startsWith('http') && !libUrl.includes('localhost');
}

async function readJson(
  caches: CacheStorageLike,
  cacheName: string,
  url: string,
): Promise<unknown | undefined> {
  const response = await (await caches.open(cacheName)).match(url);
  if (!response) return undefined;
  try {
    return await response.json();
  } catch {
    return undefined;
  }
}

/**
 * The files of the model that are not on the device (absolute URLs); an empty list means it can
 * load with no network. A file that cannot be read is missing.
 */
export async function missingFiles(
  entry: CatalogEntry,
  appUrl: string,
  caches: CacheStorageLike,
): Promise<string[]> {
  const base = modelBaseUrl(entry, appUrl);
  const missing: string[] = [];
  let chatConfigUrl = new URL('mlc-chat-config.json', base).href;
  let weightsUrl = new URL('tensor-cache.json', base).href;
  if (entry.model_manifest) {
    const manifestUrl = new URL(entry.model_manifest, base).href;
    const manifest = (await readJson(caches, WEBLLM_CACHES.config, manifestUrl)) as
      { chat_config?: string; weights?: { manifest?: string } } | undefined;
    if (!manifest) return [manifestUrl];
    chatConfigUrl = new URL(manifest.chat_config ?? 'mlc-chat-config.json', base).href;
    weightsUrl = new URL(manifest.weights?.manifest ?? 'tensor-cache.json', base).href;
  }
  const config = (await readJson(caches, WEBLLM_CACHES.config, chatConfigUrl)) as
    { tokenizer_files?: string[] } | undefined;
  if (!config) missing.push(chatConfigUrl);

  const modelCache = await caches.open(WEBLLM_CACHES.model);
  // WebLLM reads tokenizer.json when the config lists it, else tokenizer.model.
  const files = config?.tokenizer_files ?? [];
  const tokenizer = files.includes('tokenizer.json')
    ? 'tokenizer.json'
    : files.includes('tokenizer.model')
      ? 'tokenizer.model'
      : undefined;
  if (config && tokenizer === undefined) missing.push(new URL('tokenizer.json', base).href);
  if (tokenizer) {
    const url = new URL(tokenizer, base).href;
    if (!(await modelCache.match(url))) missing.push(url);
  }

  const weights = (await readJson(caches, WEBLLM_CACHES.model, weightsUrl)) as
    { records?: { dataPath?: string }[] } | undefined;
  if (!weights) missing.push(weightsUrl);
  for (const record of weights?.records ?? []) {
    if (typeof record.dataPath !== 'string') continue;
    const url = new URL(record.dataPath, weightsUrl).href;
    if (!(await modelCache.match(url))) missing.push(url);
  }

  const lib = modelLibUrl(entry, appUrl);
  if (webllmCachesLib(lib) && !(await (await caches.open(WEBLLM_CACHES.wasm)).match(lib))) {
    missing.push(lib);
  }
  return missing;
}
