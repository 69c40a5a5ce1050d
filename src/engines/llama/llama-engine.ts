/**
 * @module
 * src/engines/llama/ is the llama.cpp engine (wllama): the engine, its loads, its runtime facts,
 * its embeddings, its request mapping (llama-mapping.ts), the reading of its stream
 * (llama-chunks.ts) and its errors (llama-errors.ts). It imports src/engines, the API's folders
 * and wllama.
 *
 * The llama.cpp engine: `@wllama/wllama` 3.13 (llama.cpp and llama-server compiled to
 * WebAssembly) behind the `Engine` interface, in the engine worker, for GGUF models; the library
 * is imported lazily, by llama-library.ts only. Its traps (notes/wllama-3.13.md) are handled
 * here and in llama-load.ts: `loadModel` never settles when the CSP blocks its wasm or worker, so
 * every load has a deadline; it resolves even when llama.cpp failed to load, so the vocabulary is
 * checked after; only the `abortSignal` stops a generation (leaving the `for await` loop lets it
 * run on); threads need cross-origin isolation; a model switch is `exit()` and a new instance.
 */
import type { SpeedFigures } from '../../protocol/host/backend';
import { llamaContextSize, type GgufEntry, type GpuFacts } from '../../models/catalog';
import { OpenAIError } from '../../protocol/errors';
import { ggufBlobs, missingFiles, type CacheStorageLike } from '../../models/on-device';
import type { LlamaRuntime } from '../../protocol/host/status';
import { StopFilter } from '../../protocol/host/stop';
import type { ChatRequest, EmbeddingRequest } from '../../protocol/types';
import type { EmbedOutput, Engine, EngineOutput, LoadProgress } from '../engine';
import { choicesOneByOne, filtered, outputOf } from '../engine-outputs';
import { embedInputs, type Embedder } from './llama-embeddings';
import type { WllamaLike } from './llama-library';
import { startWllama, type GgufFiles, type LlamaLoadOptions, type StartParams } from './llama-load';
import { LlamaChunkReader } from './llama-chunks';
import { fromLlamaError, isFatal } from './llama-errors';
import { toLlamaRequest, unknownBiasTokens } from './llama-mapping';
import { llamaPlan, thisPlatform, type LlamaPlan, type LlamaPlatform } from './llama-runtime';
import { SerialReads, storedIds } from '../stored-models';

/** What the engine needs from the worker (with what a load needs). */
export interface LlamaEngineOptions extends LlamaLoadOptions {
  /** The GGUF models of the catalogue now (users add models while the host runs). */
  catalog: () => readonly GgufEntry[];
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
}

/** A model load in progress, for the host's status. */
export interface LlamaLoadState extends LoadProgress {
  model: string;
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
  readonly #reads = new SerialReads(() => this.#read());
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
  #plan(): LlamaPlan {
    return llamaPlan((this.#options.platform ?? thisPlatform)(), this.#options.gpu());
  }

  /**
   * Reads again which models are on the device. Reads run one after another, so that an older
   * one never overwrites what a newer one found.
   */
  refresh(): Promise<void> {
    return this.#reads.refresh();
  }

  /** Resolves once the reads asked for so far are done. */
  settled(): Promise<void> {
    return this.#reads.settled();
  }

  async #read(): Promise<void> {
    this.#models = await storedIds(this.#options.catalog(), (entry) => this.#files.present(entry));
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
  #start(
    entry: GgufEntry,
    report: (progress: LoadProgress) => void,
    params: StartParams,
  ): ReturnType<typeof startWllama> {
    return startWllama(this.#options, this.#files, () => this.#plan(), entry, report, params);
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
   * Embeds the inputs with the embedding model, a chunk at a time (llama-embeddings.ts), as
   * llama.cpp computes them (pooled as the model's metadata says, BOS/EOS as its tokenizer adds
   * them, L2-normalised).
   */
  async *embed(request: EmbeddingRequest, signal: AbortSignal): AsyncGenerator<EmbedOutput> {
    const embedder = this.#embedder;
    if (!embedder || embedder.model !== request.model) {
      throw new OpenAIError('engine_unavailable', `${request.model} is not loaded; try again.`, {
        retryAfter: 1,
      });
    }
    yield* embedInputs(embedder, request, signal, () => this.#dropEmbedder());
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
