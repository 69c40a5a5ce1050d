/**
 * @module
 * The WebLLM engine: `@mlc-ai/web-llm` 0.2.86 behind the `Engine` interface, in the engine
 * worker. The only file that imports the library, and lazily, so that a host that serves only
 * the echo engine never loads its 6.8 MB. Its traps (notes/webllm-0.2.86.md) are handled here:
 * a stream holds the model's lock until `return()`; `interruptGenerate()` is engine-wide;
 * `prompt_tokens` leaves out a reused prefix; a device lost after loading is not thrown.
 */
import type { AppConfig, MLCEngine, ModelRecord } from '@mlc-ai/web-llm';
import type { ChoiceResult, SpeedFigures, Token } from '../openai/backend';
import { ReplyAccumulator } from '../openai/completion';
import type { CatalogEntry } from '../openai/catalog';
import { OpenAIError } from '../openai/errors';
import {
  missingFiles,
  modelBaseUrl,
  modelLibUrl,
  type CacheStorageLike,
} from '../openai/on-device';
import type { HostStatus } from '../openai/status';
import type { ChatRequest } from '../openai/types';
import { DeviceLosses, LOSSES_TO_FAIL } from './device-losses';
import type { Engine, EngineOutput, LoadProgress } from './engine';
import {
  ChunkReader,
  errorParts,
  fromWebLLMError,
  toWebLLMRequest,
  type MappedModel,
  type WebLLMChunk,
} from './webllm-mapping';

/** A model load in progress, for the host's status. */
export interface LoadState extends LoadProgress {
  model: string;
}

/** The part of WebLLM's `MLCEngine` this engine drives (tests give a fake one). */
export type MLCEngineLike = Pick<
  MLCEngine,
  'reload' | 'unload' | 'setInitProgressCallback' | 'interruptGenerate' | 'chat'
>;

/** Where device losses are counted (IndexedDB in the worker; a fake in tests). */
export type LossStore = Pick<DeviceLosses, 'record' | 'failing'>;

/** What the engine needs from the worker. */
export interface WebLLMEngineOptions {
  catalog: readonly CatalogEntry[];
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

/** The app config WebLLM needs: every catalogue model, with absolute URLs, by its Hearth id. */
function appConfigOf(catalog: readonly CatalogEntry[], appUrl: string): AppConfig {
  const model_list: ModelRecord[] = catalog.map((entry) => {
    const record: ModelRecord = {
      model: modelBaseUrl(entry, appUrl),
      model_id: entry.id,
      model_lib: modelLibUrl(entry, appUrl),
      required_features: entry.required_features,
      low_resource_required: entry.low_resource,
    };
    if (entry.vram_required_mb !== null) record.vram_required_MB = entry.vram_required_mb;
    if (entry.overrides) record.overrides = entry.overrides;
    if (entry.integrity) record.integrity = entry.integrity as ModelRecord['integrity'];
    if (entry.model_manifest) record.model_manifest = entry.model_manifest;
    return record;
  });
  return { model_list, cacheBackend: 'cache' };
}

/** The slice of the WebGPU API used to watch devices (TypeScript's DOM types lack WebGPU). */
interface GpuDeviceLike {
  lost: Promise<{ reason?: string; message?: string }>;
}

/** Who hears of lost devices; the adapter is patched once, whatever the number of engines. */
const deviceListeners = new Set<(detail: string) => void>();

/**
 * Calls `onLost` whenever a GPU device is lost for a reason other than being destroyed. WebLLM
 * unloads the model and only logs when that happens after loading (notes §4), so the engine
 * watches every device the adapter hands out.
 */
function watchDevices(onLost: (detail: string) => void): void {
  deviceListeners.add(onLost);
  const proto = (globalThis as { GPUAdapter?: { prototype: Record<string, unknown> } }).GPUAdapter
    ?.prototype;
  if (!proto || typeof proto.requestDevice !== 'function' || proto.hearthWatched) return;
  const requestDevice = proto.requestDevice as (...args: unknown[]) => Promise<GpuDeviceLike>;
  proto.hearthWatched = true;
  proto.requestDevice = async function (this: unknown, ...args: unknown[]) {
    const device = await requestDevice.apply(this, args);
    void device.lost.then((info) => {
      if (info.reason === 'destroyed') return;
      for (const listener of deviceListeners) listener(info.message || info.reason || 'unknown');
    });
    return device;
  };
}

/** An engine token as the API carries it. */
function tokenOf(output: Extract<EngineOutput, { type: 'token' }>): Token {
  const { text, reasoning, logprobs } = output;
  return reasoning || logprobs
    ? { text, ...(reasoning && { reasoning }), ...(logprobs && { logprobs }) }
    : text;
}

function deviceLostError(detail: string): OpenAIError {
  return new OpenAIError(
    'engine_error',
    `The GPU device was lost while generating (often: out of GPU memory): ${detail}. The model will load again for the next request.`,
  );
}

/** WebLLM behind the `Engine` interface. */
export class WebLLMEngine implements Engine {
  readonly #options: WebLLMEngineOptions;
  readonly #byId: Map<string, CatalogEntry>;
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
  /** Rejects when the current device is lost; replaced at every load. */
  #deviceLost: { promise: Promise<never>; reject: (err: OpenAIError) => void } =
    this.#newLossWatch();

  constructor(options: WebLLMEngineOptions) {
    this.#options = options;
    this.#byId = new Map(options.catalog.map((e) => [e.id, e]));
    this.#losses = options.losses ?? new DeviceLosses();
    watchDevices((detail) => void this.deviceLost(detail));
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

  /**
   * WebLLM's own answer to "is this model in the cache" (it looks at the weight shards only),
   * asked with the same app config as the engine, so that it looks where the engine would.
   */
  async hasModelInCache(model: string): Promise<boolean> {
    const appConfig = appConfigOf(this.#options.catalog, this.#options.appUrl);
    const check =
      this.#options.hasModelInCache ?? (await import('@mlc-ai/web-llm')).hasModelInCache;
    return check(model, appConfig);
  }

  /** Takes the model off the GPU (after the load in progress, if any, has settled). */
  async unload(): Promise<void> {
    await this.#loading?.done.catch(() => undefined);
    if (this.#loaded === null || !this.#engine) return;
    this.#loaded = null;
    await (await this.#engine).unload();
    this.#options.onChange();
  }

  #mlc(): Promise<MLCEngineLike> {
    const appConfig = appConfigOf(this.#options.catalog, this.#options.appUrl);
    this.#engine ??= this.#options.createEngine
      ? this.#options.createEngine(appConfig)
      : import('@mlc-ai/web-llm').then(
          ({ MLCEngine }) => new MLCEngine({ appConfig, logLevel: 'WARN' }),
        );
    return this.#engine;
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
      this.#loadError = { model, error: OpenAIError.from(err).toBody().error };
      throw err;
    } finally {
      this.#loading = undefined;
      this.#progress = null;
      this.#options.onChange();
    }
  }

  async #reload(model: string, onProgress?: (progress: LoadProgress) => void): Promise<void> {
    const engine = await this.#mlc();
    this.#loaded = null;
    this.#deviceLost = this.#newLossWatch();
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
    try {
      await engine.reload(model);
    } catch (err) {
      const error = fromWebLLMError(err);
      if (error.code !== 'engine_error') throw error;
      // Most often its files could not be fetched: say which model, and what went wrong.
      const { name, message } = errorParts(err);
      throw new OpenAIError('engine_error', `Loading ${model} failed: ${name}: ${message}`);
    }
    this.#loaded = model;
    // The load fetched whatever was missing: the model is on the device now.
    void this.refresh();
  }

  /** The GPU device was lost: the running request fails, and the model must load again. */
  async deviceLost(detail: string): Promise<void> {
    const model = this.#loaded;
    this.#loaded = null;
    this.#deviceLost.reject(deviceLostError(detail));
    if (model === null) return;
    const record = await this.#losses.record(model, detail).catch(() => undefined);
    if (record && record.losses >= LOSSES_TO_FAIL) await this.refresh();
    this.#options.onChange();
  }

  /**
   * The number of tokens in the KV cache right after prefill: every prompt token, a reused prefix
   * included. WebLLM's `usage.prompt_tokens` counts only the new ones (notes §3.4), and keeps the
   * count it needs on its pipeline, which 0.2.86 (pinned) does not expose otherwise.
   */
  async #promptTokens(model: string): Promise<number | undefined> {
    const engine = (await this.#mlc()) as unknown as {
      loadedModelIdToPipeline?: Map<string, { filledKVCacheLength?: unknown }>;
    };
    const filled = engine.loadedModelIdToPipeline?.get(model)?.filledKVCacheLength;
    return typeof filled === 'number' ? filled : undefined;
  }

  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    if (request.n <= 1) {
      yield* this.#stream(request, signal);
      return;
    }
    // Several choices run one after another, each a stream of its own: WebLLM does the same
    // inside, but this way each can be stopped, and usage counts the prompt once and every
    // completion token (WebLLM sums prompt tokens over the choices).
    const choices: ChoiceResult[] = [];
    let promptTokens = 0;
    let completionTokens = 0;
    for (let i = 0; i < request.n; i += 1) {
      const reply = new ReplyAccumulator();
      let finish: EngineOutput | undefined;
      for await (const output of this.#stream({ ...request, n: 1 }, signal)) {
        if (output.type === 'token') reply.tokens([tokenOf(output)]);
        else if (output.type === 'tool_calls') reply.toolCalls(output.calls);
        else if (output.type === 'end') finish = output;
      }
      if (signal.aborted || finish?.type !== 'end') return;
      if (i === 0) promptTokens = finish.usage.prompt_tokens;
      completionTokens += finish.usage.completion_tokens;
      choices.push(...reply.result(finish.finish_reason));
    }
    yield { type: 'choices', choices };
    yield {
      type: 'end',
      finish_reason: choices[0]?.finish_reason ?? 'stop',
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens },
    };
  }

  /** One streamed generation. */
  async *#stream(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    const entry = this.#byId.get(request.model);
    if (!entry) throw new OpenAIError('model_not_found', `No such model: ${request.model}`);
    const model: MappedModel = { webllmId: entry.id, reasoning: entry.reasoning };
    const body = toWebLLMRequest(request, model);
    const engine = await this.#mlc();
    const lost = this.#deviceLost.promise;
    let chunks: AsyncIterable<WebLLMChunk>;
    try {
      // Field errors are thrown here; the context window only at the first `next()`.
      const created: unknown = await engine.chat.completions.create(body as never);
      chunks = created as AsyncIterable<WebLLMChunk>;
    } catch (err) {
      throw fromWebLLMError(err);
    }
    const iterator = chunks[Symbol.asyncIterator]();
    const reader = new ChunkReader({ model, tools: body.tools !== undefined });
    // Engine-wide, but the queue runs one request at a time: this one holds the model's lock.
    const interrupt = () => void engine.interruptGenerate();
    signal.addEventListener('abort', interrupt);
    let promptTokens: number | undefined;
    try {
      for (;;) {
        let result: IteratorResult<WebLLMChunk>;
        try {
          result = await Promise.race([iterator.next(), lost]);
        } catch (err) {
          throw fromWebLLMError(err);
        }
        if (result.done) break;
        // The first chunk comes right after prefill: the KV cache holds the whole prompt.
        promptTokens ??= await this.#promptTokens(entry.id);
        if (signal.aborted) continue; // drain to WebLLM's end, which releases its lock
        yield* reader.read(result.value);
      }
      if (signal.aborted || reader.aborted) return;
      const outputs = reader.finish(promptTokens);
      this.#noteSpeed(outputs);
      yield* outputs;
    } finally {
      signal.removeEventListener('abort', interrupt);
      // Releases WebLLM's per-model lock even when the loop ended early (notes §8).
      await iterator.return?.();
    }
  }

  #noteSpeed(outputs: readonly EngineOutput[]): void {
    const end = outputs.at(-1);
    if (end?.type === 'end' && end.usage.speed) {
      this.#lastSpeed = end.usage.speed;
      this.#options.onChange();
    }
  }
}
