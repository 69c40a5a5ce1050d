/**
 * @module
 * src/engines/llama/ is the llama.cpp engine (wllama) and its request and chunk mapping. It
 * imports src/engines, the API's folders and wllama.
 *
 * The llama.cpp engine: `@wllama/wllama` 3.13 (llama.cpp and llama-server compiled to
 * WebAssembly) behind the `Engine` interface, in the engine worker, for GGUF models. The only
 * file that imports the library, and lazily, so that a host that never runs a GGUF never loads
 * it. Its traps (notes/wllama-3.13.md) are handled here: `loadModel` never settles when the CSP
 * blocks its wasm or worker, so every load has a deadline; it resolves even when llama.cpp failed
 * to load, so the vocabulary is checked after; only the `abortSignal` stops a generation (leaving
 * the `for await` loop lets it run on); threads need cross-origin isolation; a model switch is
 * `exit()` and a new instance.
 */
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type { SpeedFigures } from '../../protocol/host/backend';
import { llamaContextSize, llamaOnGpu, type GgufEntry, type GpuFacts } from '../../models/catalog';
import { OpenAIError } from '../../protocol/errors';
import { ggufBlobs, ggufFiles, missingFiles, type CacheStorageLike } from '../../models/on-device';
import type { LlamaRuntime } from '../../protocol/host/status';
import { llamaCompatUrls, llamaNeedsCompat } from '../../models/llama-compat';
import { StopFilter } from '../../protocol/host/stop';
import { MAX_EMBEDDING_TOKENS } from '../../protocol/vectors';
import type { ChatRequest, EmbeddingRequest } from '../../protocol/types';
import { findTooLong, inputParam, inputTooLong } from '../embed-inputs';
import type { EmbedOutput, Engine, EngineOutput, LoadProgress } from '../engine';
import { choicesOneByOne, filtered, outputOf } from '../engine-outputs';
import {
  fromLlamaError,
  isFatal,
  LlamaChunkReader,
  toLlamaRequest,
  unknownBiasTokens,
  type LlamaChunk,
} from './llama-mapping';

/** What `loadModel` is given (the fields Hearth sets of wllama's `LoadModelParams`). */
export interface LlamaLoadParams {
  n_ctx: number;
  n_threads: number;
  n_gpu_layers: number;
  n_parallel: number;
  /** An embedding model: llama.cpp pools its states into vectors instead of sampling. */
  embeddings?: boolean;
  n_batch?: number;
  n_ubatch?: number;
}

/** What llama-server answers an embeddings request with (the fields Hearth reads). */
export interface LlamaEmbeddingResponse {
  data: { index: number; embedding: number[] | string }[];
  usage: { prompt_tokens: number };
}

/** The part of wllama's `Wllama` this engine drives (tests give a fake one). */
export interface WllamaLike {
  loadModel(blobs: Blob[], params: LlamaLoadParams): Promise<void>;
  getLoadedContextInfo(): { n_vocab: number; n_ctx: number };
  isMultithread(): boolean;
  getNumThreads(): number;
  createChatCompletion(
    options: Record<string, unknown> & { stream: true; abortSignal: AbortSignal },
  ): Promise<AsyncIterable<LlamaChunk>>;
  createEmbedding(options: {
    input: string[] | number[][];
    /** 2: L2 (Euclidean), llama-server's default, said aloud. */
    embd_normalize: number;
    abortSignal: AbortSignal;
  }): Promise<LlamaEmbeddingResponse>;
  exit(): Promise<void>;
}

/** What the engine needs from the worker. */
export interface LlamaEngineOptions {
  /** The GGUF models of the catalogue now (users add models while the host runs). */
  catalog: () => readonly GgufEntry[];
  /** The app's address, against which relative file URLs resolve. */
  appUrl: string;
  /** Where Hearth's own files are served (the compatibility build); `appUrl` if not given. */
  filesUrl?: string;
  /** Where downloads keep GGUF files (unless `files` says otherwise). */
  caches: CacheStorageLike;
  /** Told whenever what `status` shows changes. */
  onChange: () => void;
  /** What the engine worker measured of WebGPU (null until it has). */
  gpu: () => GpuFacts | null;
  /** Cross-origin isolation and CPU cores; by default, this worker's. */
  platform?: () => LlamaPlatform;
  /** A GGUF's files on the device; by default, the caches' (on-device.ts). */
  files?: GgufFiles;
  /** Fetches what is not on the device; by default, `fetch`. */
  fetch?: (url: string) => Promise<Response>;
  /** Makes a wllama instance; by default, the library's, imported on first use. */
  createWllama?: (build: LlamaRuntime['build']) => Promise<WllamaLike>;
  /** How long a load of `bytes` may take before it counts as hung. */
  loadDeadlineMs?: (bytes: number) => number;
}

/** Where a GGUF's files are read from. */
export interface GgufFiles {
  /** Its files as Blobs in order, or null when one is missing. */
  blobs(entry: GgufEntry): Promise<Blob[] | null>;
  /** Whether every file is on the device. */
  present(entry: GgufEntry): Promise<boolean>;
}

/** A model load in progress, for the host's status. */
export interface LlamaLoadState extends LoadProgress {
  model: string;
}

/** An embedding model in memory. */
interface Embedder {
  model: string;
  wllama: WllamaLike;
  /** Tokens one input may have: llama.cpp embeds each input in one batch of the context. */
  context: number;
  vocab: number;
}

/**
 * Inputs given to llama.cpp at a time: between them the engine can be cancelled and say it is
 * still working, and a batch of the API's largest (2,048) does not sit in one task.
 */
const EMBED_CHUNK = 32;

/** Layers to offload when llama.cpp runs on WebGPU: all of them. */
const ALL_LAYERS = 999;
/** Threads llama.cpp gets at most: a phone's other cores keep the page responsive. */
const MAX_THREADS = 4;
/**
 * A load's deadline: a minute, plus the time to read the file at 10 MB/s. When the page's CSP
 * blocks WebAssembly or `blob:` workers, wllama's `loadModel` never settles (notes/wllama-3.13.md).
 */
export function defaultLoadDeadlineMs(bytes: number): number {
  return 60_000 + Math.ceil(bytes / 10_000);
}

/**
 * Threads llama.cpp gets: several only where the page is cross-origin isolated, and then half the
 * cores (at most four), as wllama itself chooses: `hardwareConcurrency` counts logical processors,
 * and llama.cpp's threads wait on each other at every step, so one whose core is taken (by the
 * browser, a sibling hyperthread) stalls them all. On a 2-core machine two threads decoded 1.29×
 * faster than one while it was quiet, and 7–20× slower while other work ran (bench:
 * real_mt_speedup).
 */
export function llamaThreads(isolated: boolean, cores: number): number {
  return isolated ? Math.max(1, Math.min(Math.floor(cores / 2), MAX_THREADS)) : 1;
}

/** What decides llama.cpp's threads and build. */
export interface LlamaPlatform {
  isolated: boolean;
  cores: number;
  /** Whether the browser lacks what wllama's default build needs (llama-compat.ts). */
  compat: boolean;
  /** Threads to use where isolation allows several, in place of the rule (the bench sets it). */
  threads?: number;
}

/** This worker's isolation and cores. */
function thisPlatform(): LlamaPlatform {
  return {
    isolated: globalThis.crossOriginIsolated === true,
    cores: globalThis.navigator?.hardwareConcurrency ?? 1,
    compat: llamaNeedsCompat(),
  };
}

/**
 * wllama's own, with its logs kept quiet (a failure is thrown, and the API reports it), running
 * the build chosen here: wllama's own choice would fetch the compatibility build from a CDN, and
 * never use it in Firefox.
 */
async function createWllama(build: LlamaRuntime['build'], filesUrl: string): Promise<WllamaLike> {
  const { Wllama } = await import('@wllama/wllama');
  const quiet = () => undefined;
  const wllama = new Wllama(
    { default: wasmUrl },
    {
      suppressNativeLog: true,
      logger: { debug: quiet, log: quiet, warn: quiet, error: console.error },
    },
  );
  // wllama runs the compatibility build exactly where it finds no JSPI or no 64-bit memory, as
  // llamaNeedsCompat decides; 'firefox_safari' lets it do so in Firefox too.
  wllama.setCompat(build === 'compat' ? llamaCompatUrls(filesUrl) : null, 'firefox_safari');
  return wllama as unknown as WllamaLike;
}

/** Rejects after `ms` with `error`; the timer is cleared when `settled` settles. */
function deadline(ms: number, settled: Promise<unknown>, error: () => Error): Promise<never> {
  return new Promise<never>((_, reject) => {
    const timer = setTimeout(() => reject(error()), ms);
    void settled.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
  });
}

/** llama.cpp (wllama) behind the `Engine` interface. */
export class LlamaEngine implements Engine {
  readonly #options: LlamaEngineOptions;
  readonly #files: GgufFiles;
  #wllama: WllamaLike | null = null;
  #loaded: string | null = null;
  #loading: Promise<void> | undefined;
  #progress: LlamaLoadState | null = null;
  #models: string[] = [];
  #refreshed: Promise<void> = Promise.resolve();
  #lastSpeed: SpeedFigures | null = null;
  /** How the loaded model runs; null when none is loaded. */
  #runtime: LlamaRuntime | null = null;
  #vocabSize = 0;
  /** The embedding model kept loaded beside the chat model, in an instance of its own. */
  #embedder: Embedder | null = null;

  constructor(options: LlamaEngineOptions) {
    this.#options = options;
    const { appUrl, caches } = options;
    this.#files = options.files ?? {
      blobs: (entry) => ggufBlobs(entry, appUrl, caches),
      // Every part, not the size record only: a part the browser evicted shows at host start.
      present: async (entry) =>
        (await missingFiles(entry, appUrl, caches, { thorough: true })).length === 0,
    };
    void this.refresh();
  }

  get loadedModel(): string | null {
    return this.#loaded;
  }

  /** The downloaded GGUF models this engine can answer with now. */
  get models(): readonly string[] {
    return this.#models;
  }

  /** The load in progress, if any. */
  get loading(): LlamaLoadState | null {
    return this.#progress;
  }

  /** llama.cpp's speed figures of the last reply, for the UI. */
  get lastSpeed(): SpeedFigures | null {
    return this.#lastSpeed;
  }

  /** How the loaded model runs, or how the next one would. */
  get runtime(): LlamaRuntime {
    return this.#runtime ?? this.#plan().runtime;
  }

  serves(model: string): boolean {
    return this.#options.catalog().some((e) => e.id === model);
  }

  isLoaded(model: string): boolean {
    return this.#loaded === model || this.#embedder?.model === model;
  }

  /** The embedding model loaded beside the chat model, if any. */
  get besideModel(): string | null {
    return this.#embedder?.model ?? null;
  }

  /** Embedding models are small: they stay loaded beside the chat model. */
  loadsBeside(model: string): boolean {
    return this.#options.catalog().find((e) => e.id === model)?.embedding !== undefined;
  }

  /** What a load would use now: GPU or CPU, threads. */
  #plan(): { runtime: LlamaRuntime; gpuLayers: number } {
    const { isolated, cores, threads, compat } = (this.#options.platform ?? thisPlatform)();
    const gpu = llamaOnGpu(this.#options.gpu());
    return {
      runtime: {
        backend: gpu ? 'webgpu' : 'cpu',
        threads: isolated && threads !== undefined ? threads : llamaThreads(isolated, cores),
        isolated,
        build: compat ? 'compat' : 'default',
      },
      gpuLayers: gpu ? ALL_LAYERS : 0,
    };
  }

  /**
   * Reads again which models are on the device. Reads run one after another, so that an older
   * one never overwrites what a newer one found.
   */
  refresh(): Promise<void> {
    this.#refreshed = this.#refreshed.then(() => this.#read());
    return this.#refreshed;
  }

  /** Resolves once the reads asked for so far are done. */
  settled(): Promise<void> {
    return this.#refreshed;
  }

  async #read(): Promise<void> {
    const present: string[] = [];
    for (const entry of this.#options.catalog()) {
      if (await this.#files.present(entry).catch(() => false)) present.push(entry.id);
    }
    this.#models = present;
    this.#options.onChange();
  }

  #entry(model: string): GgufEntry {
    const entry = this.#options.catalog().find((e) => e.id === model);
    if (!entry) throw new OpenAIError('model_not_found', `No such model: ${model}`);
    return entry;
  }

  /** Takes the model out of memory (after the load in progress, if any, has settled). */
  /** Takes the models out of memory, the embedding model too (after a load in progress). */
  async unload(): Promise<void> {
    await this.#loading?.catch(() => undefined);
    const instances = [this.#wllama, this.#embedder?.wllama].filter((w) => w != null);
    if (instances.length === 0) return;
    this.#wllama = null;
    this.#loaded = null;
    this.#runtime = null;
    this.#embedder = null;
    for (const wllama of instances) await wllama.exit().catch(() => undefined);
    this.#options.onChange();
  }

  async load(model: string, onProgress?: (progress: LoadProgress) => void): Promise<void> {
    // One load at a time: a second caller waits for the first, then loads if it still must.
    while (this.#loading) await this.#loading.catch(() => undefined);
    if (this.isLoaded(model)) return;
    const done = this.#entry(model).embedding
      ? this.#loadEmbedder(model, onProgress)
      : this.#load(model, onProgress);
    this.#loading = done;
    try {
      await done;
    } finally {
      this.#loading = undefined;
      this.#progress = null;
      this.#options.onChange();
    }
  }

  #report(model: string, progress: LoadProgress, onProgress?: (p: LoadProgress) => void): void {
    this.#progress = { model, ...progress };
    onProgress?.(progress);
    this.#options.onChange();
  }

  async #load(model: string, onProgress?: (progress: LoadProgress) => void): Promise<void> {
    const entry = this.#entry(model);
    // A model switch is a new instance: wllama loads one model per instance.
    if (this.#wllama) {
      const old = this.#wllama;
      this.#wllama = null;
      this.#loaded = null;
      this.#runtime = null;
      await old.exit().catch(() => undefined);
    }
    const report = (progress: LoadProgress) => this.#report(model, progress, onProgress);
    const context = llamaContextSize(entry);
    const { wllama, runtime, vocab } = await this.#start(entry, report, {
      n_ctx: context,
      // The queue runs one request at a time: one slot holds the whole context.
      n_parallel: 1,
    });
    this.#wllama = wllama;
    this.#vocabSize = vocab;
    this.#runtime = runtime;
    this.#loaded = model;
    report({ phase: 'done', progress: 1, text: `${model} is loaded` });
  }

  /** Loads an embedding model into an instance of its own, beside the chat model. */
  async #loadEmbedder(model: string, onProgress?: (p: LoadProgress) => void): Promise<void> {
    const entry = this.#entry(model);
    const old = this.#embedder;
    this.#embedder = null;
    await old?.wllama.exit().catch(() => undefined);
    const report = (progress: LoadProgress) => this.#report(model, progress, onProgress);
    const context = llamaContextSize(entry);
    const { wllama, vocab } = await this.#start(entry, report, {
      n_ctx: context,
      n_parallel: 1,
      embeddings: true,
      // An input is embedded in one batch (its tokens attend to each other): the whole context.
      n_batch: context,
      n_ubatch: context,
    });
    this.#embedder = { model, wllama, context, vocab };
    report({ phase: 'done', progress: 1, text: `${model} is loaded` });
  }

  /** Starts a wllama instance with the model of `entry`, within the load's deadline. */
  async #start(
    entry: GgufEntry,
    report: (progress: LoadProgress) => void,
    params: Omit<LlamaLoadParams, 'n_threads' | 'n_gpu_layers'>,
  ): Promise<{ wllama: WllamaLike; runtime: LlamaRuntime; vocab: number }> {
    const model = entry.id;
    report({ phase: 'load', progress: 0, text: `Reading ${model} from the device` });
    const blobs = await this.#blobs(entry, report);
    const bytes = blobs.reduce((n, b) => n + b.size, 0);
    const { runtime, gpuLayers } = this.#plan();
    report({
      phase: 'compile',
      progress: 0,
      text: `Starting llama.cpp (${runtime.backend === 'webgpu' ? 'WebGPU' : `CPU, ${runtime.threads} thread${runtime.threads === 1 ? '' : 's'}`}${runtime.build === 'compat' ? ', compatibility build' : ''})`,
    });
    const wllama = await (
      this.#options.createWllama ??
      ((build) => createWllama(build, this.#options.filesUrl ?? this.#options.appUrl))
    )(runtime.build);
    const limitMs = (this.#options.loadDeadlineMs ?? defaultLoadDeadlineMs)(bytes);
    const loading = wllama.loadModel(blobs, {
      ...params,
      n_threads: runtime.threads,
      n_gpu_layers: gpuLayers,
    });
    try {
      await Promise.race([
        loading,
        deadline(
          limitMs,
          loading,
          () =>
            new OpenAIError(
              'engine_error',
              `Loading ${model} did not finish within ${Math.round(limitMs / 1000)} s. If the page's Content-Security-Policy lacks 'wasm-unsafe-eval' (script-src) or blob: (worker-src), llama.cpp cannot start.`,
            ),
        ),
      ]);
    } catch (err) {
      // An instance that hangs or failed is not reused; its exit may hang too.
      void wllama.exit().catch(() => undefined);
      if (err instanceof OpenAIError) throw err;
      const { message } = err instanceof Error ? err : { message: String(err) };
      throw new OpenAIError('engine_error', `Loading ${model} failed: ${message}`);
    }
    // wllama resolves even when llama.cpp could not load the file: only the context tells.
    const info = wllama.getLoadedContextInfo();
    if (!(info.n_vocab > 0)) {
      void wllama.exit().catch(() => undefined);
      throw new OpenAIError(
        'engine_error',
        `llama.cpp could not load ${model}: its file is cut short, or not a GGUF that llama.cpp reads. Delete it and download it again.`,
      );
    }
    return {
      wllama,
      vocab: info.n_vocab,
      runtime: { ...runtime, threads: wllama.isMultithread() ? wllama.getNumThreads() : 1 },
    };
  }

  /**
   * The model's files as Blobs, from the device; what is missing is fetched and not kept (a
   * download keeps files, a load only uses them).
   */
  async #blobs(entry: GgufEntry, report: (progress: LoadProgress) => void): Promise<Blob[]> {
    const stored = await this.#files.blobs(entry);
    if (stored) {
      report({ phase: 'load', progress: 1, text: `Read ${entry.id} from the device` });
      return stored;
    }
    // Not all on the device (a load asked for before the download): fetch every file.
    const fetchFile = this.#options.fetch ?? ((url: string) => fetch(url));
    const blobs: Blob[] = [];
    const files = ggufFiles(entry, this.#options.appUrl);
    for (const [i, file] of files.entries()) {
      report({
        phase: 'fetch',
        progress: i / files.length,
        text: `Fetching ${file.url} (not on the device)`,
      });
      let response: Response;
      try {
        response = await fetchFile(file.url);
      } catch (err) {
        const detail = err instanceof Error ? err.message : String(err);
        throw new OpenAIError('engine_error', `Fetching ${file.url} failed: ${detail}`);
      }
      if (!response.ok) {
        throw new OpenAIError(
          'engine_error',
          `Fetching ${file.url} failed: HTTP ${response.status}; download ${entry.id} first.`,
        );
      }
      blobs.push(await response.blob());
    }
    report({ phase: 'fetch', progress: 1, text: `Fetched ${entry.id}` });
    return blobs;
  }

  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    if (request.n <= 1) yield* this.#stream(request, signal);
    else yield* choicesOneByOne(request, signal, (one) => this.#stream(one, signal));
  }

  /** One streamed generation through llama-server, its stop strings held back. */
  async *#stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    const wllama = this.#wllama;
    const model = request.model;
    if (!wllama || this.#loaded !== model) {
      throw new OpenAIError('engine_unavailable', `${model} is not loaded; try again.`, {
        retryAfter: 1,
      });
    }
    if (signal.aborted) return;
    // llama.cpp drops bias on ids it has not: say so instead.
    const unknown = unknownBiasTokens(request, this.#vocabSize);
    if (unknown.length > 0) {
      throw new OpenAIError(
        'invalid_value',
        `Invalid key in 'logit_bias': ${unknown.join(', ')}; ${model} has ${this.#vocabSize} tokens (ids 0 to ${this.#vocabSize - 1}).`,
        { param: 'logit_bias' },
      );
    }
    // Only the signal stops llama.cpp: leaving the loop would let it generate on.
    const stop = new AbortController();
    const abort = () => stop.abort();
    signal.addEventListener('abort', abort);
    const reader = new LlamaChunkReader(
      request.logprobs ? { topLogprobs: request.top_logprobs ?? 0 } : {},
    );
    // llama-server cuts at stop strings itself; the filter holds Hearth's contract whatever it
    // sends (a stop string across reasoning and answer, a delta it did not hold back).
    const stops = new StopFilter(request.stop);
    try {
      const chunks = await wllama.createChatCompletion({
        ...(toLlamaRequest(request) as unknown as Record<string, unknown>),
        stream: true,
        abortSignal: stop.signal,
      });
      for await (const chunk of chunks) {
        // After a stop string only llama.cpp's usage is wanted: it stops at the same string.
        if (!stops.stopped) yield* filtered(stops, reader.read(chunk));
        else reader.read(chunk);
      }
    } catch (err) {
      if (signal.aborted) return;
      if (isFatal(err)) this.#drop();
      throw fromLlamaError(err, { model, request });
    } finally {
      signal.removeEventListener('abort', abort);
    }
    if (signal.aborted) return;
    yield* stops.end().map(outputOf);
    for (const output of reader.finish()) {
      if (output.type !== 'end') {
        yield output;
        continue;
      }
      if (output.usage.speed) {
        this.#lastSpeed = output.usage.speed;
        this.#options.onChange();
      }
      yield stops.stopped ? { ...output, finish_reason: 'stop' } : output;
    }
  }

  /**
   * Embeds the inputs with the embedding model, `EMBED_CHUNK` at a time, as llama.cpp computes
   * them (pooled as the model's metadata says, BOS/EOS as its tokenizer adds them, L2-normalised).
   */
  async *embed(request: EmbeddingRequest, signal: AbortSignal): AsyncGenerator<EmbedOutput> {
    const embedder = this.#embedder;
    if (!embedder || embedder.model !== request.model) {
      throw new OpenAIError('engine_unavailable', `${request.model} is not loaded; try again.`, {
        retryAfter: 1,
      });
    }
    const { input } = request;
    assertEmbeddable(input, embedder);
    const vectors: Float32Array[] = [];
    let tokens = 0;
    for (let start = 0; start < input.length; start += EMBED_CHUNK) {
      if (start > 0) yield { type: 'progress' };
      if (signal.aborted) return;
      const chunk = input.slice(start, start + EMBED_CHUNK) as string[] | number[][];
      let response: LlamaEmbeddingResponse;
      try {
        response = await embedder.wllama.createEmbedding({
          input: chunk,
          embd_normalize: 2,
          abortSignal: signal,
        });
      } catch (err) {
        if (signal.aborted) return;
        if (isFatal(err)) this.#dropEmbedder();
        throw await this.#embedError(err, embedder, chunk, start, input.length, signal);
      }
      const data = [...response.data].sort((a, b) => a.index - b.index);
      if (data.length !== chunk.length) {
        throw new OpenAIError(
          'engine_error',
          `llama.cpp returned ${data.length} vectors for ${chunk.length} inputs.`,
        );
      }
      for (const { embedding } of data) {
        if (typeof embedding === 'string') {
          throw new OpenAIError('engine_error', 'llama.cpp returned a vector as text.');
        }
        vectors.push(Float32Array.from(embedding));
      }
      tokens += response.usage.prompt_tokens;
      if (tokens > MAX_EMBEDDING_TOKENS) {
        throw new OpenAIError(
          'context_length_exceeded',
          `This request has more than ${MAX_EMBEDDING_TOKENS} tokens in all (${tokens} in its first ${start + chunk.length} inputs); send fewer inputs at a time.`,
          { param: 'input' },
        );
      }
    }
    if (signal.aborted) return;
    yield { type: 'embeddings', vectors, prompt_tokens: tokens };
  }

  /**
   * Why llama.cpp refused a chunk. When an input is longer than the context, llama.cpp does not
   * say which: the inputs that may be (by their length) are tried alone, and the first that fails
   * is named.
   */
  async #embedError(
    err: unknown,
    embedder: Embedder,
    chunk: string[] | number[][],
    start: number,
    total: number,
    signal: AbortSignal,
  ): Promise<OpenAIError> {
    const error = fromLlamaError(err, { model: embedder.model });
    if (!isTooLong(err)) return error;
    const embedOne = (one: string | number[]) =>
      embedder.wllama.createEmbedding({
        input: [one] as string[] | number[][],
        embd_normalize: 2,
        abortSignal: signal,
      });
    const i = await findTooLong(chunk, embedder.context, embedOne, isTooLong, signal);
    return i === null ? error : inputTooLong(embedder.model, embedder.context, start + i, total);
  }

  #dropEmbedder(): void {
    const embedder = this.#embedder;
    this.#embedder = null;
    void embedder?.wllama.exit().catch(() => undefined);
    this.#options.onChange();
  }

  /** The instance failed for good: the next request loads the model again. */
  #drop(): void {
    const wllama = this.#wllama;
    this.#wllama = null;
    this.#loaded = null;
    this.#runtime = null;
    void wllama?.exit().catch(() => undefined);
    this.#options.onChange();
  }
}

/** Throws 400 for a token id the embedding model does not have, or a token input too long. */
function assertEmbeddable(input: string[] | number[][], embedder: Embedder): void {
  for (const [i, one] of input.entries()) {
    if (typeof one === 'string') continue;
    const bad = one.find((id) => id >= embedder.vocab);
    if (bad !== undefined) {
      const param = inputParam(i, input.length);
      throw new OpenAIError(
        'invalid_value',
        `Invalid value for '${param}': token id ${bad} is not in ${embedder.model}'s vocabulary (ids 0 to ${embedder.vocab - 1}).`,
        { param },
      );
    }
    if (one.length > embedder.context)
      throw inputTooLong(embedder.model, embedder.context, i, input.length);
  }
}

/** llama-server's refusal of an input longer than its batch: "input (513 tokens) is too large…". */
function isTooLong(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /too large to process/i.test(message);
}
