/**
 * @module
 * src/engines/webllm/ is the WebLLM engine: the engine (this file: loads, the calls into WebLLM),
 * one streamed reply (webllm-stream.ts), embeddings (webllm-embed.ts), the request mapping
 * (webllm-mapping.ts), the reading of its stream (webllm-chunks.ts, webllm-thinking.ts), its
 * errors (webllm-errors.ts), a load's reports (webllm-load.ts), the GPU device and its losses
 * (webllm-devices.ts), the models on the device (webllm-on-device.ts), what it reads of
 * WebLLM's pipeline (webllm-pipeline.ts) and its signs of life (pulse.ts). It imports
 * src/engines, the API's folders, the engine host's device losses, and (this file only) WebLLM.
 *
 * The WebLLM engine: `@mlc-ai/web-llm` 0.2.86 behind the `Engine` interface, in the engine
 * worker. The only file that imports the library, and lazily, so that a host that serves only
 * the echo engine never loads its 6.8 MB. Its traps (notes/webllm-0.2.86.md) are handled here
 * and in the modules it hands them to: a stream holds the model's lock until `return()`;
 * `interruptGenerate()` is engine-wide; `prompt_tokens` leaves out a reused prefix; a device
 * lost after loading is not thrown (and an out-of-memory shows only as a destroyed device);
 * records are found by WebLLM's bare `model_id`, first match; deltas keep the start of a
 * matched stop string and hold back text that ends mid-character, so the reply is settled
 * against the pipeline's own text at the end.
 * tests/unit/engines/webllm/webllm-harness.ts runs this file against WebLLM's real engine code.
 */
import type { AppConfig, CreateEmbeddingResponse, MLCEngine, ModelRecord } from '@mlc-ai/web-llm';
import type { SpeedFigures } from '../../protocol/host/backend';
import type { WebLLMEntry } from '../../models/catalog';
import { OpenAIError } from '../../protocol/errors';
import { modelBaseUrl, modelLibUrl, type CacheStorageLike } from '../../models/on-device';
import type { HostStatus } from '../../protocol/host/status';
import type { ChatRequest, EmbeddingRequest } from '../../protocol/types';
import { DeviceLosses } from '../../engine-host/device-losses';
import type { EmbedOutput, Engine, EngineOutput, LoadProgress } from '../engine';
import { choicesOneByOne } from '../engine-outputs';
import type { PipelineLike } from './webllm-pipeline';
import { DeviceGuard, type LossStore } from './webllm-devices';
import { embedReply } from './webllm-embed';
import { errorParts, fromWebLLMError } from './webllm-errors';
import { loadCutShort, loadFailure, progressOf, type LoadState } from './webllm-load';
import { toWebLLMRequest, type MappedModel } from './webllm-mapping';
import { ModelsOnDevice } from './webllm-on-device';
import { streamReply } from './webllm-stream';

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
  // WebLLM builds an embedding pipeline, not a chat one, for `ModelType.embedding` (1), and
  // takes images only in a `ModelType.VLM` (2) model's messages.
  if (entry.embedding) record.model_type = 1;
  if (entry.vision) record.model_type = 2;
  return record;
}

/**
 * An app config of `entry` alone: WebLLM finds records by `model_id`, first match, and a
 * self-hosted copy may repeat a prebuilt model's `model_id`.
 */
function appConfigOf(entry: WebLLMEntry, appUrl: string): AppConfig {
  return { model_list: [recordOf(entry, appUrl)], cacheBackend: 'cache' };
}

/** WebLLM behind the `Engine` interface. */
export class WebLLMEngine implements Engine {
  readonly #options: WebLLMEngineOptions;
  readonly #byId: Map<string, WebLLMEntry>;
  readonly #gpu: DeviceGuard;
  readonly #onDevice: ModelsOnDevice;
  #engine: Promise<MLCEngineLike> | undefined;
  #loaded: string | null = null;
  #loading: { model: string; done: Promise<void> } | undefined;
  #progress: LoadState | null = null;
  #loadError: HostStatus['load_error'] = null;
  #lastSpeed: SpeedFigures | null = null;

  constructor(options: WebLLMEngineOptions) {
    this.#options = options;
    this.#byId = new Map(options.catalog.map((e) => [e.id, e]));
    const losses = options.losses ?? new DeviceLosses();
    this.#gpu = new DeviceGuard(losses, (detail) => void this.deviceLost(detail));
    const { catalog, appUrl, caches } = options;
    this.#onDevice = new ModelsOnDevice({
      catalog,
      appUrl,
      caches,
      losses,
      onChange: () => options.onChange(),
    });
    void this.refresh();
  }

  get loadedModel(): string | null {
    return this.#loaded;
  }

  /** The downloaded models this engine can answer with now. */
  get models(): readonly string[] {
    return this.#onDevice.models;
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
    return this.#onDevice.failing;
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

  /** Reads again which models are on the device and which are failing (one read at a time). */
  refresh(): Promise<void> {
    return this.#onDevice.refresh();
  }

  /** Resolves once the reads asked for so far are done. */
  settled(): Promise<void> {
    return this.#onDevice.settled();
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
    this.#gpu.release();
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
    const reason = this.#onDevice.failing[model];
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
    this.#gpu.loadBegins();
    engine.setInitProgressCallback((report) => {
      const progress = progressOf(report);
      this.#progress = { model, ...progress };
      onProgress?.(progress);
      this.#options.onChange();
    });
    engine.setAppConfig(appConfigOf(entry, this.#options.appUrl));
    this.#gpu.busy = 'load';
    try {
      await engine.reload(entry.model_id);
    } catch (err) {
      throw loadFailure(err, model, this.#gpu.lostInLoad);
    } finally {
      this.#gpu.busy = null;
    }
    // `reload()` resolves without a model when it was aborted (WebLLM unloads on a lost device).
    if (!(await this.#pipeline(entry.model_id))) {
      this.#gpu.release();
      throw loadCutShort(model, this.#gpu.lostInLoad);
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
    const counted = this.#gpu.lose(model, detail);
    if (counted && (await counted)) await this.refresh();
    this.#options.onChange();
  }

  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    this.#gpu.busy = 'generate';
    try {
      if (request.n <= 1) yield* this.#stream(request, signal);
      else yield* choicesOneByOne(request, signal, (one) => this.#stream(one, signal));
    } finally {
      this.#gpu.busy = null;
    }
  }

  /** One streamed generation, its stop strings held back and its text settled at the end. */
  async *#stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    const entry = this.#entry(request.model);
    const model: MappedModel = { webllmId: entry.model_id, reasoning: entry.reasoning };
    const body = toWebLLMRequest(request, model);
    const engine = await this.#mlc();
    yield* streamReply(
      {
        request,
        model,
        body,
        engine,
        lost: this.#gpu.lost,
        pipeline: () => this.#pipeline(entry.model_id),
        failure: (err) => this.#failure(err, request.model),
        ended: (end) => {
          this.#noteSpeed(end);
          void this.#gpu.succeeded(request.model);
        },
      },
      signal,
    );
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
    const lost = this.#gpu.lost;
    const embedAll = async (input: string[] | number[][]) => {
      const created = engine.embeddings.create({ input, model: entry.model_id });
      return (await Promise.race([created, lost])) as CreateEmbeddingResponse;
    };
    this.#gpu.busy = 'generate';
    try {
      yield* embedReply(
        {
          request,
          context: entry.context_window,
          embedAll,
          failure: (err) => this.#failure(err, request.model),
          succeeded: () => void this.#gpu.succeeded(request.model),
        },
        signal,
      );
    } finally {
      this.#gpu.busy = null;
    }
  }

  /** A failure of WebLLM's, as the API's; a model WebLLM no longer has is loaded again. */
  #failure(err: unknown, model: string): OpenAIError {
    const { name } = errorParts(err);
    if (name === 'ModelNotLoadedError' || name === 'SpecifiedModelNotFoundError') {
      // WebLLM dropped the model (it unloads on a lost device): load it again next time.
      this.#loaded = null;
      this.#gpu.release();
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
