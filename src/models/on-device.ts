/**
 * @module
 * A model's files, under the exact cache keys WebLLM 0.2.86 looks up: its chat config (or package
 * manifest), weight manifest, every weight shard, its tokenizer and its model library. One plan
 * serves the download, the "is it all there" check (WebLLM's own `hasModelInCache` looks at the
 * shards only) and the deletion. Caches and fetching are passed in, so that this runs the same in
 * the service worker, the engine worker and Node.
 */
import { ggufModelFiles, type CatalogEntry, type GgufEntry, type WebLLMEntry } from './catalog';
import { ggufFileStored, ggufParts, readGgufRecord } from './gguf-parts';

/** The part of `CacheStorage` this reads. */
export interface CacheStorageLike {
  open(cacheName: string): Promise<CacheReaderLike>;
  /** The names of the caches there are (`CacheStorage.keys`), where the storage can list them. */
  keys?(): Promise<string[]>;
}

/** The part of a `Cache` this reads. */
interface CacheReaderLike {
  match(request: string): Promise<Response | undefined>;
}

/** A cache that holds nothing. */
const NO_CACHE: CacheReaderLike = { match: () => Promise.resolve(undefined) };

/**
 * `caches` for many lookups at once: the caches there are are listed once, each is opened once,
 * and a lookup in one that is not there answers "not stored" at once. Each open is a trip to the
 * browser's storage, and opening a missing cache makes it: a fresh install's catalogue of a hundred
 * models cost some five hundred of them, most of a second of every page's first visit.
 */
export async function presentCaches(caches: CacheStorageLike): Promise<CacheStorageLike> {
  // A storage that cannot list its caches now is asked cache by cache, as without this.
  const listed = await caches.keys?.().catch(() => undefined);
  if (!listed) return caches;
  const names = new Set(listed);
  const opened = new Map<string, Promise<CacheReaderLike>>();
  return {
    open(name) {
      if (!names.has(name)) return Promise.resolve(NO_CACHE);
      let cache = opened.get(name);
      if (!cache) opened.set(name, (cache = caches.open(name)));
      return cache;
    },
  };
}

/** WebLLM's cache names (notes/webllm §5.1), and Hearth's own for what WebLLM will not cache. */
export const MODEL_CACHES = {
  config: 'webllm/config',
  model: 'webllm/model',
  wasm: 'webllm/wasm',
  /** Model libraries WebLLM fetches without caching (on localhost): kept for offline use. */
  files: 'hearth/files',
  /** GGUF models, for llama.cpp: each file in parts (gguf-parts.ts). */
  gguf: 'hearth/gguf',
} as const;

/** The name of one of those caches. */
export type ModelCacheName = (typeof MODEL_CACHES)[keyof typeof MODEL_CACHES];

/** One file of a model: where it comes from and which cache keeps it. */
export interface ModelFile {
  url: string;
  cache: ModelCacheName;
  /** Its size when the weight manifest says (shards), else unknown until fetched. */
  bytes?: number;
  /** Its SRI hash, when the catalogue gives one. */
  integrity?: string;
  /** The catalogue's `integrity.onFailure: "warn"`: a mismatch is logged, not refused. */
  integrityWarnOnly?: boolean;
  /** What it is, for progress reports. */
  kind: 'manifest' | 'config' | 'weights-manifest' | 'shard' | 'tokenizer' | 'library' | 'gguf';
}

/** Reads a JSON file of the model (from the caches, or from the network when downloading). */
export type JsonSource = (file: ModelFile) => Promise<unknown | undefined>;

/** The weights' base URL as WebLLM cleans it: absolute, ending in `resolve/<branch>/`. */
export function modelBaseUrl(entry: WebLLMEntry, appUrl: string): string {
  let url = new URL(entry.model_url, appUrl).href;
  if (!url.endsWith('/')) url += '/';
  if (!/.+\/resolve\/.+\//.test(url)) url += 'resolve/main/';
  return url;
}

/** The model library's absolute URL. */
export function modelLibUrl(entry: WebLLMEntry, appUrl: string): string {
  return new URL(entry.model_lib, appUrl).href;
}

/**
 * Whether WebLLM keeps the model library in its cache: it fetches libraries on `localhost` and
 * relative ones without caching (notes/webllm §5.4). Hearth keeps those in `hearth/files`.
 */
export function webllmCachesLib(libUrl: string): boolean {
  return libUrl.startsWith('http') && !libUrl.includes('localhost');
}

/** WebLLM's `ModelIntegrity` (notes/webllm §6.1). */
interface Integrity {
  config?: string;
  model_lib?: string;
  tokenizer?: Record<string, string>;
  onFailure?: 'error' | 'warn';
}

/** Sets the file's SRI from the catalogue's `integrity` for a key, when there is one. */
function pin(file: ModelFile, entry: WebLLMEntry, key: string, name?: string): void {
  const integrity = entry.integrity as Integrity | undefined;
  const hash =
    key === 'tokenizer'
      ? name && integrity?.tokenizer?.[name]
      : key === 'config'
        ? integrity?.config
        : integrity?.model_lib;
  if (!hash) return;
  file.integrity = hash;
  if (integrity?.onFailure === 'warn') file.integrityWarnOnly = true;
}

/**
 * Every file of the model, in download order. The JSON manifests it reads through `json` say
 * which shards and tokenizer there are; when one cannot be read, the plan stops at it (it is
 * returned, and what it would have listed is not).
 */
export async function planFiles(
  entry: CatalogEntry,
  appUrl: string,
  json: JsonSource,
): Promise<{ files: ModelFile[]; complete: boolean }> {
  if (entry.engine === 'llama.cpp') return { files: ggufFiles(entry, appUrl), complete: true };
  return planWebLLMFiles(entry, appUrl, json);
}

/**
 * A GGUF's files: the model, or the files of a split one, in order, then its vision projector
 * where it has one. Each is stored in parts
 * beside a size record (gguf-parts.ts); `url` names the file, not a cache entry.
 */
export function ggufFiles(entry: GgufEntry, appUrl: string): ModelFile[] {
  return ggufModelFiles(entry).map((file) => ({
    url: new URL(file, appUrl).href,
    cache: MODEL_CACHES.gguf,
    kind: 'gguf',
  }));
}

async function planWebLLMFiles(
  entry: WebLLMEntry,
  appUrl: string,
  json: JsonSource,
): Promise<{ files: ModelFile[]; complete: boolean }> {
  const base = modelBaseUrl(entry, appUrl);
  const files: ModelFile[] = [];
  let chatConfigUrl = new URL('mlc-chat-config.json', base).href;
  let weightsUrl = new URL('tensor-cache.json', base).href;
  if (entry.model_manifest) {
    const manifestFile: ModelFile = {
      url: new URL(entry.model_manifest, base).href,
      cache: MODEL_CACHES.config,
      kind: 'manifest',
    };
    files.push(manifestFile);
    const manifest = (await json(manifestFile)) as
      { chat_config?: string; weights?: { manifest?: string } } | undefined;
    if (!manifest) return { files, complete: false };
    chatConfigUrl = new URL(manifest.chat_config ?? 'mlc-chat-config.json', base).href;
    weightsUrl = new URL(manifest.weights?.manifest ?? 'tensor-cache.json', base).href;
  }
  const configFile: ModelFile = { url: chatConfigUrl, cache: MODEL_CACHES.config, kind: 'config' };
  pin(configFile, entry, 'config');
  files.push(configFile);
  const weightsFile: ModelFile = {
    url: weightsUrl,
    cache: MODEL_CACHES.model,
    kind: 'weights-manifest',
  };
  files.push(weightsFile);
  const lib = modelLibUrl(entry, appUrl);
  const libFile: ModelFile = {
    url: lib,
    cache: webllmCachesLib(lib) ? MODEL_CACHES.wasm : MODEL_CACHES.files,
    kind: 'library',
  };
  pin(libFile, entry, 'model_lib');

  const config = (await json(configFile)) as { tokenizer_files?: string[] } | undefined;
  const weights = (await json(weightsFile)) as
    { records?: { dataPath?: string; nbytes?: number }[] } | undefined;
  if (!config || !weights) return { files: [...files, libFile], complete: false };
  // WebLLM reads tokenizer.json when the config lists it, else tokenizer.model.
  const listed = config.tokenizer_files ?? [];
  const tokenizer = listed.includes('tokenizer.json')
    ? 'tokenizer.json'
    : listed.includes('tokenizer.model')
      ? 'tokenizer.model'
      : 'tokenizer.json';
  const tokenizerFile: ModelFile = {
    url: new URL(tokenizer, base).href,
    cache: MODEL_CACHES.model,
    kind: 'tokenizer',
  };
  pin(tokenizerFile, entry, 'tokenizer', tokenizer);
  files.push(tokenizerFile);
  for (const record of weights.records ?? []) {
    if (typeof record.dataPath !== 'string') continue;
    const shard: ModelFile = {
      url: new URL(record.dataPath, weightsUrl).href,
      cache: MODEL_CACHES.model,
      kind: 'shard',
    };
    if (typeof record.nbytes === 'number') shard.bytes = record.nbytes;
    files.push(shard);
  }
  files.push(libFile);
  return { files, complete: true };
}

/** Reads the model's JSON manifests from the caches. */
export function cachedJson(caches: CacheStorageLike): JsonSource {
  return async (file) => {
    const response = await (await caches.open(file.cache)).match(file.url);
    if (!response) return undefined;
    try {
      return await response.json();
    } catch {
      return undefined;
    }
  };
}

/**
 * The files of the model that are not on the device (absolute URLs); an empty list means it can
 * load with no network. A file that cannot be read is missing. A GGUF file counts as there when
 * its size record says it is complete; `thorough` also looks for every part (one `match` each:
 * for the checks at a host's start, not for every request).
 */
export async function missingFiles(
  entry: CatalogEntry,
  appUrl: string,
  caches: CacheStorageLike,
  options: { thorough?: boolean } = {},
): Promise<string[]> {
  const { files } = await planFiles(entry, appUrl, cachedJson(caches));
  const missing: string[] = [];
  for (const file of files) {
    if (!(await fileStored(file, caches, options.thorough))) missing.push(file.url);
  }
  return missing;
}

/**
 * Whether nothing of the model is missing: `missingFiles(...)` is empty, with fewer lookups, as
 * it stops at the first file that is not there. For the service worker's model lists, which ask
 * of every catalogue model, most of them never downloaded.
 */
export async function allFilesStored(
  entry: CatalogEntry,
  appUrl: string,
  caches: CacheStorageLike,
): Promise<boolean> {
  const { files } = await planFiles(entry, appUrl, cachedJson(caches));
  for (const file of files) {
    if (!(await fileStored(file, caches))) return false;
  }
  return true;
}

/** Whether one of a model's files is there (see `missingFiles`). */
async function fileStored(
  file: ModelFile,
  caches: CacheStorageLike,
  thorough?: boolean,
): Promise<boolean> {
  const cache = await caches.open(file.cache);
  return file.kind === 'gguf'
    ? ggufFileStored(cache, file.url, thorough)
    : Boolean(await cache.match(file.url));
}

/**
 * A GGUF's files from the cache as Blobs, in order, for llama.cpp to load; null when one is
 * missing, incomplete or a part has the wrong size. Each file's Blob is made of its parts' Blobs
 * (`new Blob(parts)` refers to them, copying nothing; Blobs from the Cache API stay on disk until
 * read).
 */
export async function ggufBlobs(
  entry: GgufEntry,
  appUrl: string,
  caches: CacheStorageLike,
): Promise<Blob[] | null> {
  const blobs: Blob[] = [];
  for (const file of ggufFiles(entry, appUrl)) {
    const cache = await caches.open(file.cache);
    const record = await readGgufRecord(cache, file.url);
    if (!record?.complete) return null;
    const parts: Blob[] = [];
    for (const part of ggufParts(file.url, record)) {
      const blob = await (await cache.match(part.key))?.blob();
      if (blob?.size !== part.last - part.first + 1) return null;
      parts.push(blob);
    }
    blobs.push(new Blob(parts));
  }
  return blobs;
}
