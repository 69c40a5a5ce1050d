/**
 * @module
 * src/engines/webllm/ is the WebLLM engine: the engine, the request mapping (webllm-mapping.ts),
 * the reading of its stream (webllm-chunks.ts, webllm-thinking.ts), its errors
 * (webllm-errors.ts), what it reads of WebLLM's pipeline and its signs of life. It imports src/engines, the API's folders,
 * the engine host's device losses, and (this file only) WebLLM.
 *
 * The WebLLM engine: `@mlc-ai/web-llm` 0.2.86 behind the `Engine` interface, in the engine
 * worker. The only file that imports the library, and lazily, so that a host that serves only
 * the echo engine never loads its 6.8 MB. Its traps (notes/webllm-0.2.86.md) are handled here:
 * a stream holds the model's lock until `return()`; `interruptGenerate()` is engine-wide;
 * `prompt_tokens` leaves out a reused prefix; a device lost after loading is not thrown (and an
 * out-of-memory shows only as a destroyed device); records are found by WebLLM's bare
 * `model_id`, first match; deltas keep the start of a matched stop string and hold back text
 * that ends mid-character, so the reply is settled against the pipeline's own text at the end.
 * tests/unit/engines/webllm/webllm-harness.ts runs this file against WebLLM's real engine code.
 */
import type { AppConfig, CreateEmbeddingResponse, MLCEngine, ModelRecord } from '@mlc-ai/web-llm';
import type { SpeedFigures } from '../../protocol/host/backend';
import type { WebLLMEntry } from '../../models/catalog';
import { OpenAIError } from '../../protocol/errors';
import {
  missingFiles,
  modelBaseUrl,
  modelLibUrl,
  type CacheStorageLike,
} from '../../models/on-device';
import type { HostStatus } from '../../protocol/host/status';
import { normalizeInPlace } from '../../protocol/vectors';
import type { ChatRequest, EmbeddingRequest } from '../../protocol/types';
import { DeviceLosses, LOSSES_TO_FAIL } from '../../engine-host/device-losses';
import { findTooLong, inputTooLong } from '../embed-inputs';
import type { EmbedOutput, Engine, EngineOutput, LoadProgress } from '../engine';
import { PROGRESS_EVERY_MS, choicesOneByOne, filtered, outputOf } from '../engine-outputs';
import { Pulse, beatOnSteps } from './pulse';
import { pipelineView, writtenIds, type PipelineLike } from './webllm-pipeline';
import { StopFilter } from '../../protocol/host/stop';
import { ChunkReader, type WebLLMChunk } from './webllm-chunks';
import { errorParts, fromWebLLMError } from './webllm-errors';
import { toWebLLMRequest, type MappedModel } from './webllm-mapping';

/** A model load in progress, for the host's status. */
export interface LoadState extends LoadProgress {
  model: string;
}

/** The part of WebLLM's `MLCEngine` this engine drives (tests give a fake one). */
export type MLCEngineLike = Pick<
  MLCEngine,
  | 'reload'
  | 'unload'
  | 'setInitProgressCallback'
  | 'interruptGenerate'
  | 'chat'
  | 'embeddings'
  | 'setAppConfig'
>;

/** Where device losses are counted (IndexedDB in the worker; a fake in tests). */
export type LossStore = Pick<DeviceLosses, 'record' | 'failing' | 'clear'>;

/** What the engine needs from the worker. */
export interface WebLLMEngineOptions {
  catalog: readonly WebLLMEntry[];
  /** The app's address, against which self-hosted URLs resolve. */
  appUrl: string;
  caches: CacheStorageLike;
  /** Told whenever what `status` shows changes. */
  onChange: () => void;
  losses?: LossStore;
  /** Makes the WebLLM engine; by default, WebLLM's own, imported on first use. */
  createEngine?: (appConfig: AppConfig) => Promise<MLCEngineLike>;
  /** WebLLM's own `hasModelInCache`; by default, the library's, imported on first use. */
  hasModelInCache?: (model: string, appConfig: AppConfig) => Promise<boolean>;
}

/** The phase of a load, from WebLLM's progress text (notes §7). */
export function loadPhase(text: string): string {
  if (text.startsWith('Fetching param cache')) return 'fetch';
  if (text.startsWith('Loading model from cache')) return 'load';
  if (text.startsWith('Loading GPU shader modules')) return 'compile';
  if (text.startsWith('Finish loading')) return 'done';
  return 'start';
}

/** The record WebLLM needs for `entry`: its own `model_id`, absolute URLs. */
function recordOf(entry: WebLLMEntry, appUrl: string): ModelRecord {
  const record: ModelRecord = {
    model: modelBaseUrl(entry, appUrl),
    // WebLLM's own id: it decides function calling by it (`functionCallingModelIds`).
    model_id: entry.model_id,
    model_lib: modelLibUrl(entry, appUrl),
    required_features: entry.required_features,
    low_resource_required: entry.low_resource,
  };
  if (entry.vram_required_mb !== null) record.vram_required_MB = entry.vram_required_mb;
  if (entry.overrides) record.overrides = entry.overrides;
  if (entry.integrity) record.integrity = entry.integrity as ModelRecord['integrity'];
  if (entry.model_manifest) record.model_manifest = entry.model_manifest;
  // WebLLM builds an embedding pipeline, not a chat one, for `ModelType.embedding` (1).
  if (entry.embedding) record.model_type = 1;
  return record;
}

/**
 * An app config of `entry` alone: WebLLM finds records by `model_id`, first match, and a
 * self-hosted copy may repeat a prebuilt model's `model_id`.
 */
function appConfigOf(entry: WebLLMEntry, appUrl: string): AppConfig {
  return { model_list: [recordOf(entry, appUrl)], cacheBackend: 'cache' };
}

/** The slice of the WebGPU API used to watch devices (TypeScript's DOM types lack WebGPU). */
interface GpuDeviceLike {
  lost: Promise<{ reason?: string; message?: string }>;
}

/** Who hears of devices and their loss; the adapter is patched once, whatever the engines. */
interface DeviceWatch {
  created(device: GpuDeviceLike): void;
  lost(device: GpuDeviceLike, info: { reason?: string; message?: string }): void;
}
const deviceWatches = new Set<DeviceWatch>();

/**
 * Tells `watch` of every GPU device the adapter hands out and of its loss, whatever the reason.
 * WebLLM unloads the model and only logs when a device is lost after loading, and answers a
 * failed allocation (out of memory) by destroying the device itself (notes §4), so a
 * `destroyed` device is a loss too unless Hearth disposed of it.
 */
function watchDevices(watch: DeviceWatch): void {
  deviceWatches.add(watch);
  const proto = (globalThis as { GPUAdapter?: { prototype: Record<string, unknown> } }).GPUAdapter
    ?.prototype;
  if (!proto || typeof proto.requestDevice !== 'function' || proto.hearthWatched) return;
  const requestDevice = proto.requestDevice as (...args: unknown[]) => Promise<GpuDeviceLike>;
  proto.hearthWatched = true;
  proto.requestDevice = async function (this: unknown, ...args: unknown[]) {
    const device = await requestDevice.apply(this, args);
    for (const w of deviceWatches) w.created(device);
    void device.lost.then((info) => {
      for (const w of deviceWatches) w.lost(device, info);
    });
    return device;
  };
}

function deviceLostError(model: string, detail: string): OpenAIError {
  return new OpenAIError(
    'webgpu_unavailable',
    `The GPU device was lost while running ${model} (most often: not enough GPU memory): ${detail}. Try a smaller model or a shorter conversation; the model loads again for the next request.`,
    { shouldRetry: false },
  );
}

function outOfMemory(model: string, detail: string): OpenAIError {
  return new OpenAIError(
    'webgpu_unavailable',
    `${model} does not fit this device: the GPU device was lost while loading it (most often: not enough GPU memory; ${detail}). Try a smaller model, or one with a shorter context.`,
    { shouldRetry: false },
  );
}

/** WebLLM behind the `Engine` interface. */
export class WebLLMEngine implements Engine {
  readonly #options: WebLLMEngineOptions;
  readonly #byId: Map<string, WebLLMEntry>;
  readonly #losses: LossStore;
  #engine: Promise<MLCEngineLike> | undefined;
  #loaded: string | null = null;
  #loading: { model: string; done: Promise<void> } | undefined;
  #progress: LoadState | null = null;
  #loadError: HostStatus['load_error'] = null;
  #models: string[] = [];
  #refreshed: Promise<void> = Promise.resolve();
  #failing: Record<string, string> = {};
  #lastSpeed: SpeedFigures | null = null;
  /** The GPU device of the model loaded or loading; the loss of any other is not ours. */
  #device: GpuDeviceLike | null = null;
  /** What runs on the GPU now: a loss then counts against the model. */
  #busy: 'load' | 'generate' | null = null;
  /** Why the device of the load under way was lost, if it was. */
  #lostInLoad: string | null = null;
  /** Models whose loss record is known to be clear since this host started. */
  readonly #clean = new Set<string>();
  /** Rejects when the current device is lost; replaced at every load. */
  #deviceLost: { promise: Promise<never>; reject: (err: OpenAIError) => void } =
    this.#newLossWatch();

  constructor(options: WebLLMEngineOptions) {
    this.#options = options;
    this.#byId = new Map(options.catalog.map((e) => [e.id, e]));
    this.#losses = options.losses ?? new DeviceLosses();
    watchDevices({
      created: (device) => {
        // Devices made while a model loads are that model's (WebLLM makes one per load).
        if (this.#busy === 'load') this.#device = device;
      },
      lost: (device, info) => {
        if (device !== this.#device) return; // one Hearth disposed of, or not an engine's
        void this.deviceLost(info.message || info.reason || 'unknown');
      },
    });
    void this.refresh();
  }

  #newLossWatch() {
    let reject: (err: OpenAIError) => void = () => undefined;
    const promise = new Promise<never>((_, r) => (reject = r));
    promise.catch(() => undefined);
    return { promise, reject };
  }

  get loadedModel(): string | null {
    return this.#loaded;
  }

  /** The downloaded models this engine can answer with now. */
  get models(): readonly string[] {
    return this.#models;
  }

  /** The load in progress, if any. */
  get loading(): LoadState | null {
    return this.#progress;
  }

  /** The last load that failed, until one succeeds. */
  get loadError(): HostStatus['load_error'] {
    return this.#loadError;
  }

  /** Models marked as failing on this device, with why. */
  get failing(): Readonly<Record<string, string>> {
    return this.#failing;
  }

  /** WebLLM's speed figures of the last reply, for the UI. */
  get lastSpeed(): SpeedFigures | null {
    return this.#lastSpeed;
  }

  serves(model: string): boolean {
    return this.#byId.has(model);
  }

  isLoaded(model: string): boolean {
    return this.#loaded === model;
  }

  /**
   * Reads again which models are on the device and which are failing. Reads run one after
   * another, so that an older one never overwrites what a newer one found.
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
    const { caches, appUrl } = this.#options;
    const present: string[] = [];
    for (const entry of this.#options.catalog) {
      if ((await missingFiles(entry, appUrl, caches).catch(() => ['?'])).length === 0) {
        present.push(entry.id);
      }
    }
    this.#models = present;
    this.#failing = await this.#losses.failing().catch(() => ({}));
    this.#options.onChange();
  }

  #entry(model: string): WebLLMEntry {
    const entry = this.#byId.get(model);
    if (!entry) throw new OpenAIError('model_not_found', `No such model: ${model}`);
    return entry;
  }

  /**
   * WebLLM's own answer to "is this model in the cache" (it looks at the weight shards only),
   * asked with the record the engine would load, so that it looks where the engine would.
   */
  async hasModelInCache(model: string): Promise<boolean> {
    const entry = this.#entry(model);
    const check =
      this.#options.hasModelInCache ?? (await import('@mlc-ai/web-llm')).hasModelInCache;
    return check(entry.model_id, appConfigOf(entry, this.#options.appUrl));
  }

  /** Takes the model off the GPU (after the load in progress, if any, has settled). */
  async unload(): Promise<void> {
    await this.#loading?.done.catch(() => undefined);
    if (this.#loaded === null || !this.#engine) return;
    this.#loaded = null;
    // Disposing destroys the device: that loss is Hearth's doing, not the model's.
    this.#device = null;
    await (await this.#engine).unload();
    this.#options.onChange();
  }

  #mlc(): Promise<MLCEngineLike> {
    if (!this.#engine) {
      const first = this.#options.catalog[0];
      const appConfig: AppConfig = first
        ? appConfigOf(first, this.#options.appUrl)
        : { model_list: [], cacheBackend: 'cache' };
      this.#engine = this.#options.createEngine
        ? this.#options.createEngine(appConfig)
        : import('@mlc-ai/web-llm').then(
            ({ MLCEngine }) => new MLCEngine({ appConfig, logLevel: 'WARN' }),
          );
    }
    return this.#engine;
  }

  /** WebLLM's pipeline for `webllmId`, when it is loaded. */
  async #pipeline(webllmId: string): Promise<PipelineLike | undefined> {
    const engine = (await this.#mlc()) as unknown as {
      loadedModelIdToPipeline?: Map<string, PipelineLike>;
    };
    return engine.loadedModelIdToPipeline?.get(webllmId);
  }

  async load(model: string, onProgress?: (progress: LoadProgress) => void): Promise<void> {
    // One load at a time: a second caller waits for the first, then loads if it still must.
    while (this.#loading) {
      const { model: loading, done } = this.#loading;
      await done.catch(() => undefined);
      if (loading === model && this.#loaded === model) return;
    }
    if (this.#loaded === model) return;
    const reason = this.#failing[model];
    if (reason) throw new OpenAIError('webgpu_unavailable', reason, { shouldRetry: false });
    const done = this.#reload(model, onProgress);
    this.#loading = { model, done };
    try {
      await done;
      this.#loadError = null;
    } catch (err) {
      this.#loadError = { model, error: OpenAIError.fromEngine(err).toBody().error };
      throw err;
    } finally {
      this.#loading = undefined;
      this.#progress = null;
      this.#options.onChange();
    }
  }

  async #reload(model: string, onProgress?: (progress: LoadProgress) => void): Promise<void> {
    const entry = this.#entry(model);
    const engine = await this.#mlc();
    this.#loaded = null;
    // WebLLM's reload disposes the model before: that device's loss is expected.
    this.#device = null;
    this.#deviceLost = this.#newLossWatch();
    this.#lostInLoad = null;
    engine.setInitProgressCallback((report) => {
      const progress = {
        phase: loadPhase(report.text),
        progress: report.progress,
        text: report.text,
      };
      this.#progress = { model, ...progress };
      onProgress?.(progress);
      this.#options.onChange();
    });
    engine.setAppConfig(appConfigOf(entry, this.#options.appUrl));
    this.#busy = 'load';
    try {
      await engine.reload(entry.model_id);
    } catch (err) {
      if (this.#lostInLoad !== null) throw outOfMemory(model, this.#lostInLoad);
      const error = fromWebLLMError(err);
      if (error.code !== 'engine_error') throw error;
      // Most often its files could not be fetched: say which model, and what went wrong.
      const { name, message } = errorParts(err);
      throw new OpenAIError('engine_error', `Loading ${model} failed: ${name}: ${message}`);
    } finally {
      this.#busy = null;
    }
    // `reload()` resolves without a model when it was aborted (WebLLM unloads on a lost device).
    if (!(await this.#pipeline(entry.model_id))) {
      this.#device = null;
      if (this.#lostInLoad !== null) throw outOfMemory(model, this.#lostInLoad);
      throw new OpenAIError('engine_error', `Loading ${model} was cut short; try again.`);
    }
    this.#loaded = model;
    // The load fetched whatever was missing: the model is on the device now.
    void this.refresh();
  }

  /**
   * The GPU device was lost: the running request fails, and the model must load again. A loss
   * while the model loads or generates counts against it (two in a row mark it as failing);
   * one while it sits idle (a driver reset) does not.
   */
  async deviceLost(detail: string): Promise<void> {
    const model = this.#loaded ?? this.#loading?.model ?? null;
    this.#loaded = null;
    this.#device = null;
    if (this.#busy === 'load') this.#lostInLoad = detail;
    this.#deviceLost.reject(deviceLostError(model ?? 'the model', detail));
    if (model === null || this.#busy === null) {
      this.#options.onChange();
      return;
    }
    this.#clean.delete(model);
    const record = await this.#losses.record(model, detail).catch(() => undefined);
    if (record && record.losses >= LOSSES_TO_FAIL) await this.refresh();
    this.#options.onChange();
  }

  /** A reply came through: earlier losses of the model were not its fault. */
  async #succeeded(model: string): Promise<void> {
    if (this.#clean.has(model)) return;
    this.#clean.add(model);
    await this.#losses.clear(model).catch(() => undefined);
  }

  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    this.#busy = 'generate';
    try {
      if (request.n <= 1) yield* this.#stream(request, signal);
      else yield* choicesOneByOne(request, signal, (one) => this.#stream(one, signal));
    } finally {
      this.#busy = null;
    }
  }

  /** One streamed generation, its stop strings held back and its text settled at the end. */
  async *#stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    const entry = this.#entry(request.model);
    const model: MappedModel = { webllmId: entry.model_id, reasoning: entry.reasoning };
    const body = toWebLLMRequest(request, model);
    const engine = await this.#mlc();
    const lost = this.#deviceLost.promise;
    let chunks: AsyncIterable<WebLLMChunk>;
    try {
      // Field errors are thrown here; the context window only at the first `next()`.
      const created: unknown = await engine.chat.completions.create(body as never);
      chunks = created as AsyncIterable<WebLLMChunk>;
    } catch (err) {
      throw this.#failure(err, request.model);
    }
    const iterator = chunks[Symbol.asyncIterator]();
    const reader = new ChunkReader({
      model,
      tools: body.tools !== undefined,
      ...(request.logprobs && { topLogprobs: request.top_logprobs ?? 0 }),
    });
    // The stop strings WebLLM was given (none beside offered tools: see `toWebLLMRequest`).
    const stops = new StopFilter(body.stop);
    // Engine-wide, but the queue runs one request at a time: this one holds the model's lock.
    const interrupt = () => void engine.interruptGenerate();
    signal.addEventListener('abort', interrupt);
    let promptTokens: number | undefined;
    let pipeline = await this.#pipeline(entry.model_id);
    let written: number | undefined;
    // The request lives by the engine's steps (prefill chunks, decoded tokens), not by its text:
    // a long prefill, or a reply to tools held back whole, sends none for a long time.
    const pulse = new Pulse(PROGRESS_EVERY_MS);
    const unwatch = beatOnSteps(pipeline, pulse);
    /** Whether WebLLM is computing a chunk that nobody will read now. */
    let waiting = false;
    try {
      for (;;) {
        let result: IteratorResult<WebLLMChunk>;
        try {
          waiting = true;
          result = yield* pulse.during(Promise.race([iterator.next(), lost]));
          waiting = false;
        } catch (err) {
          throw this.#failure(err, request.model);
        }
        if (result.done) break;
        pipeline ??= await this.#pipeline(entry.model_id);
        // The first chunk comes right after prefill: the KV cache holds the whole prompt.
        if (promptTokens === undefined && typeof pipeline?.filledKVCacheLength === 'number') {
          promptTokens = pipeline.filledKVCacheLength;
        }
        if (signal.aborted || stops.stopped) continue; // drain to WebLLM's end and its lock
        written ??= writtenIds(body, pipeline);
        for (const output of filtered(
          stops,
          reader.read(result.value, pipelineView(pipeline, written)),
        )) {
          pulse.sent();
          yield output;
        }
        if (stops.stopped) interrupt();
      }
      if (signal.aborted || (reader.aborted && !stops.stopped)) return;
      const { outputs, retract } = reader.finish(
        promptTokens,
        pipelineView(pipeline, written ?? writtenIds(body, pipeline)),
      );
      for (const output of outputs) {
        if (output.type === 'token') {
          yield* filtered(stops, [output]);
          continue;
        }
        if (output.type === 'end') {
          yield* stops.end(retract).map(outputOf);
          const end = stops.stopped ? { ...output, finish_reason: 'stop' as const } : output;
          this.#noteSpeed(end);
          void this.#succeeded(request.model);
          yield end;
          continue;
        }
        yield output;
      }
    } finally {
      unwatch();
      // Closed while a sign of life was out: stop WebLLM rather than wait for its whole reply.
      if (waiting) interrupt();
      signal.removeEventListener('abort', interrupt);
      // Releases WebLLM's per-model lock even when the loop ended early (notes §8).
      await iterator.return?.();
    }
  }

  /**
   * Embeds the inputs with the loaded embedding model, all in one call (WebLLM batches them
   * itself and cannot be interrupted meanwhile), and normalises the vectors: WebLLM returns the
   * first token's state as the model computes it, and Hearth's vectors have length 1.
   */
  async *embed(request: EmbeddingRequest, signal: AbortSignal): AsyncGenerator<EmbedOutput> {
    const entry = this.#entry(request.model);
    const engine = await this.#mlc();
    if (signal.aborted) return;
    const lost = this.#deviceLost.promise;
    const embedAll = async (input: string[] | number[][]) => {
      const created = engine.embeddings.create({ input, model: entry.model_id });
      return (await Promise.race([created, lost])) as CreateEmbeddingResponse;
    };
    this.#busy = 'generate';
    try {
      let response: CreateEmbeddingResponse;
      try {
        response = await embedAll(request.input);
      } catch (err) {
        throw await this.#embedFailure(err, request, embedAll, signal);
      }
      if (signal.aborted) return;
      const data = [...response.data].sort((a, b) => a.index - b.index);
      const vectors = data.map(({ embedding }) => normalizeInPlace(Float32Array.from(embedding)));
      void this.#succeeded(request.model);
      yield { type: 'embeddings', vectors, prompt_tokens: response.usage.prompt_tokens };
    } finally {
      this.#busy = null;
    }
  }

  /** Why WebLLM refused an embeddings request, naming the input that was too long. */
  async #embedFailure(
    err: unknown,
    request: EmbeddingRequest,
    embedAll: (input: string[] | number[][]) => Promise<unknown>,
    signal: AbortSignal,
  ): Promise<OpenAIError> {
    const error = this.#failure(err, request.model);
    const isTooLong = (e: unknown) =>
      errorParts(e).name === 'EmbeddingExceedContextWindowSizeError';
    if (!isTooLong(err)) return error;
    const context = this.#entry(request.model).context_window;
    const { input } = request;
    const embedOne = (one: string | number[]) => embedAll([one] as string[] | number[][]);
    const i = await findTooLong(input, context, embedOne, isTooLong, signal);
    return i === null ? error : inputTooLong(request.model, context, i, input.length);
  }

  /** A failure of WebLLM's, as the API's; a model WebLLM no longer has is loaded again. */
  #failure(err: unknown, model: string): OpenAIError {
    const { name } = errorParts(err);
    if (name === 'ModelNotLoadedError' || name === 'SpecifiedModelNotFoundError') {
      // WebLLM dropped the model (it unloads on a lost device): load it again next time.
      this.#loaded = null;
      this.#device = null;
      this.#options.onChange();
      return new OpenAIError(
        'engine_unavailable',
        `${model} was taken off the GPU (the device was lost); it loads again for the next request.`,
        { retryAfter: 1 },
      );
    }
    return fromWebLLMError(err);
  }

  #noteSpeed(end: EngineOutput): void {
    if (end.type === 'end' && end.usage.speed) {
      this.#lastSpeed = end.usage.speed;
      this.#options.onChange();
    }
  }
}
