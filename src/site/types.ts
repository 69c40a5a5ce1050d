/**
 * @module
 * The public types of `hearth-llm`: what `startHearth` takes and gives, the same from the
 * bundled entry (`import { startHearth } from 'hearth-llm'`) and from `{base}hearth/hearth.js`.
 */

/** Options of `startHearth`. */
export interface StartHearthOptions {
  /**
   * The folder that holds `hearth-sw.js` and `hearth/` (what `npx hearth init` wrote), as a URL
   * or a path: `'/'`, `'/repo/'`, `import.meta.env.BASE_URL`. It is the service worker's scope,
   * and the API answers under it (`{base}v1/`). Default: the folder above `hearth/hearth.js`
   * when the loader is imported from there; `'/'` for the bundled entry.
   */
  base?: string;
  /**
   * Register `{base}hearth-sw.js` (default). `false` when the site's own service worker
   * composes Hearth with `importScripts('hearth-sw.js')` and registers itself.
   */
  registerWorker?: boolean;
  /**
   * Make the pages of the scope cross-origin isolated (COOP and COEP added by the worker), so
   * that llama.cpp runs on several threads. A first visit reloads once to gain it. Off by
   * default: isolation stops cross-origin resources without CORS or CORP from loading.
   */
  isolate?: boolean;
  /** Told of every change of `hearth.status`. */
  onStatus?: (status: HearthStatus) => void;
  /**
   * The key `hearth.models` and `hearth.device()` send as `Authorization: Bearer …`. Any key is
   * accepted unless the user lets only issued keys call (Settings → API access).
   */
  apiKey?: string;
}

/**
 * This page's part in the engine election. One page of the install hosts the engine (`host`),
 * the others wait to take over (`waiting`); `refused`: this page's engine speaks another protocol
 * than the service worker's (pages of an older release left open across an upgrade; another page
 * hosts); `stopped`: `hearth.stop()` was called.
 */
export interface HearthStatus {
  role: 'starting' | 'waiting' | 'host' | 'refused' | 'stopped';
  /** Why, for `refused`. */
  detail?: string;
}

/** Which engine serves a model: `server` for a model of a server the user added. */
export type HearthEngine = 'webllm' | 'llama.cpp' | 'echo' | 'server';

/**
 * How well a model runs on this device: `good` at a comfortable reading speed, `slow` when it runs
 * but slowly, `no` when it cannot (`fit_reason` says why, in words).
 */
export type HearthFit = 'good' | 'slow' | 'no';

/** A model as `hearth.models` gives it: the facts of `GET {base}v1/hearth/catalog`. */
export interface HearthModel {
  /** The id to pass as `model` in a request (`hearth/echo`, `mlc-ai/…`, `<user>/<repo>:<quant>`). */
  id: string;
  engine: HearthEngine;
  /** Where it would run here: WebGPU or the CPU; null for the echo engine and servers' models. */
  backend: 'webgpu' | 'cpu' | null;
  /** What its download weighs, in MB; null when not known (a server's model). */
  size_mb: number | null;
  /** Every file of it is on this device. */
  downloaded: boolean;
  fit: HearthFit;
  /** Why its fit is not `good`. */
  fit_reason?: string;
  /** Whether it takes images; null for a server's model (the server decides). */
  vision: boolean | null;
  /** Whether it calls tools (`tools` in a request). */
  tools: boolean;
  /** Whether it is an embedding model (`embeddings.create`), not a chat model. */
  embedding: boolean;
  /** Its context window, in tokens. */
  context_window: number;
}

/** Which models `hearth.models.list` gives. */
export interface HearthModelFilter {
  /** Chat models or embedding models only. */
  task?: 'chat' | 'embedding';
  /** `true`: only the models whose fit is not `no`; `false`: only those that cannot run here. */
  fits?: boolean;
  /** Only the models on this device (`true`) or only those not (`false`). */
  downloaded?: boolean;
}

/** What `hearth.models.recommend` looks for. */
export interface HearthRecommendOptions {
  /** `chat` (the default) or `embedding`. */
  task?: 'chat' | 'embedding';
  /** Only models that take images. */
  vision?: boolean;
  /** Only models whose download weighs at most this many MB. */
  maxDownloadMB?: number;
}

/** A model to add: a GGUF, as `POST {base}v1/hearth/models` takes it. */
export interface HearthAddModel {
  /** An http(s) URL or a path of the site to a `.gguf`, or `hf:<user>/<repo>:<quant>`. */
  source: string;
  /** Its vision projector (llama.cpp's `mmproj` GGUF), a URL or a path; `false` for none. */
  mmproj?: string | false;
  /** The id to give it (by default, one made from the source). */
  id?: string;
}

/** How far `hearth.models.prepare` has come. */
export interface HearthProgress {
  /** `download`: fetching the model's files; `load`: putting it into the engine. */
  phase: 'download' | 'load';
  /** Bytes (download) done so far; for a load, 0 until it is done, then 1. */
  loaded: number;
  /** The bytes to fetch, once known; null while not known (and for a load). */
  total: number | null;
  /** How far, from 0 to 1, when known; the last report of a `prepare` has 1. */
  fraction: number | null;
  /** The model was on the device already: nothing was downloaded. */
  fromCache: boolean;
  /** In words, for people. */
  text: string;
}

/** Options of `hearth.models.prepare`. */
export interface HearthPrepareOptions {
  /** Told of every step of the download, then of the load. */
  onProgress?: (progress: HearthProgress) => void;
  /**
   * Aborting it rejects the call with an `AbortError` and stops the download; what was stored
   * stays, and the next `prepare` resumes from there.
   */
  signal?: AbortSignal;
}

/** The models of this install: what the site's own model picker needs. */
export interface HearthModels {
  /** The catalogue, filtered; it waits until this device's fit has been measured. */
  list(filter?: HearthModelFilter): Promise<HearthModel[]>;
  /**
   * The model to offer someone who has none: a small one that runs well here (the chat app's own
   * choice). Never the echo engine; null when nothing fits.
   */
  recommend(options?: HearthRecommendOptions): Promise<HearthModel | null>;
  /** Adds a GGUF model; the same source again gives the same model, not an error. */
  add(model: HearthAddModel): Promise<HearthModel>;
  /**
   * Downloads whatever of the model is missing (resuming), then loads it into the engine, so that
   * the first request answers at once.
   */
  prepare(id: string, options?: HearthPrepareOptions): Promise<HearthModel>;
  /** Removes every file of the model (a model that was added leaves the catalogue too). */
  delete(id: string): Promise<void>;
}

/** What this device offers, as `GET {base}v1/hearth/status` tells it. */
export interface HearthDevice {
  /** The page that hosts the engine now, and its build; null while none does. */
  host: { id: string; build: string } | null;
  /** WebGPU as the engine worker found it. */
  webgpu: {
    /** Whether an adapter was granted; null while not known. */
    available: boolean | null;
    /** `fallback`: a software adapter (it runs on the processor, slowly). */
    adapter: { vendor: string; architecture: string; fallback: boolean } | null;
    features: string[];
    /** Why it is not available, or why that is not known. */
    reason?: string;
  };
  /**
   * The processor as the engine worker measured it (what the fit of llama.cpp's models on the CPU
   * is judged from): cores, the threads llama.cpp gets, whether the engine is cross-origin
   * isolated, the bytes of weights one thread multiplies per second, `navigator.deviceMemory`
   * (GB; null where the browser has none); null while not measured.
   */
  cpu: {
    cores: number;
    threads: number;
    isolated: boolean;
    bytes_per_second: number;
    memory_gb: number | null;
  } | null;
  /** Where llama.cpp runs GGUF models, and on how many threads; null while not known. */
  llama: {
    backend: 'webgpu' | 'cpu';
    threads: number;
    isolated: boolean;
    build: 'default' | 'compat';
  } | null;
  /** The origin's storage: used and allowed, in bytes (null where the browser does not say). */
  storage: { usage_bytes: number | null; quota_bytes: number | null; persisted: boolean };
  /** The chat model in the engine now, and the embedding model beside it. */
  loaded_model: string | null;
  loaded_embedding_model: string | null;
}

/** What `startHearth` resolves with. */
export interface Hearth {
  /** The absolute `{base}v1/openai`: the `openai` SDK's `baseURL`. */
  readonly baseURL: string;
  /** The absolute `{base}v1/`: Hearth's own routes (`{base}v1/hearth/status`, …) lie under it. */
  readonly apiURL: string;
  /** The build of the loader and its worker (they are checked against each other). */
  readonly version: string;
  /** Whether this page is cross-origin isolated (llama.cpp then runs several threads). */
  readonly crossOriginIsolated: boolean;
  /** This page's part in the engine election now. */
  readonly status: HearthStatus;
  /** The models: list, recommend, add, download and load, delete. */
  readonly models: HearthModels;
  /** What this device offers (WebGPU, llama.cpp's threads, storage, what is loaded). */
  device(): Promise<HearthDevice>;
  /**
   * Withdraws this page from the election, ending its engine if it hosts one (another page of
   * the install, if any, takes over). The API keeps answering other pages.
   */
  stop(): Promise<void>;
}

/**
 * Hearth's extensions of a chat request (`chat.completions.create`), beside OpenAI's fields:
 * `{ ...params, ...extensions } satisfies HearthChatParams` in TypeScript, since the openai SDK's
 * own types do not know them.
 */
export interface HearthChatParams {
  /** Keep generating past the end-of-sequence token, to `max_tokens` (benchmarks). */
  ignore_eos?: boolean;
  /** Whether a reasoning model thinks before it answers (Qwen3's switch); default: it does. */
  enable_thinking?: boolean;
  /** llama.cpp's and WebLLM's repetition penalty, above 0 and at most 10 (1 is none). */
  repetition_penalty?: number;
}

/** Hearth's extensions of a reply's message and of a stream's delta. */
export interface HearthMessageExtensions {
  /** A reasoning model's thinking, apart from its answer (`content`). */
  reasoning_content?: string | null;
}
