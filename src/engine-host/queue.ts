/**
 * @module
 * The queue in front of the engines: one generation at a time, at most `maxWaiting` requests behind
 * it (then 429). Not first in, first out: work that runs alone goes before the requests waiting,
 * and requests for the loaded model overtake one that waits for a switch (below). A request leaves
 * the queue the moment its signal aborts; a running one stops its engine. A request that had to
 * wait asks, when it reaches the front, whether its page is still there, and is dropped if not. A
 * generation runs at most `MAX_AHEAD` events ahead of whoever reads its channel: the bridge stops
 * reading when the service worker's reader is a whole window behind (src/bridge), and so the engine
 * pauses with it; the service worker ends a request whose reader takes nothing for too long, and
 * the queue moves on.
 *
 * Some work must run alone on the engines, because WebLLM's `reload()` and `unload()` take no lock
 * (only a generation holds WebLLM's per-model lock): a preload, an unload, a deletion. It runs
 * after the request running and before those waiting, and nothing starts until it is done.
 */
import { Channel } from '../bridge/channel';
import { MAX_TOKEN_BATCH } from '../bridge/messages';
import {
  clientGone,
  type LoadingBackend,
  type ChatEvent,
  type ChatOptions,
} from '../protocol/host/backend';
import { OpenAIError, type ErrorBody } from '../protocol/errors';
import type { ChatRequest, EmbeddingRequest } from '../protocol/types';
import { tokenOf } from '../engines/engine-outputs';
import type { Engine } from '../engines/engine';

/** Requests allowed to wait behind the running one (docs/api.md, Responses: one at a time). */
export const MAX_WAITING = 32;
/**
 * Events (one token each) a generation may run ahead of its reader before the engine waits; the
 * bridge batches at most `MAX_TOKEN_BATCH` tokens a message, so it always has a batch to send.
 */
export const MAX_AHEAD = 2 * MAX_TOKEN_BATCH;
/** Seconds a client told `queue_full` should wait. */
const QUEUE_FULL_RETRY_AFTER_S = 5;

interface Job {
  request: ChatRequest;
  options: ChatOptions;
  events: Channel<ChatEvent>;
  /** Whether it queued behind another request (rather than starting at once). */
  waited: boolean;
  /** Its place in the order of arrival. */
  seq: number;
  /** Only puts the model on the GPU (`POST /v1/hearth/models/{id}/load`), no generation. */
  loadOnly?: boolean;
  /** An embeddings request (`request` then only names its model). */
  embed?: EmbeddingRequest;
}

/** A load that failed: the model, and why. */
export interface LoadError {
  model: string;
  error: ErrorBody['error'];
}

/** Queue counts for status. */
export interface QueueCounts {
  running: number;
  waiting: number;
}

/** Options of the queue. */
export interface QueueOptions {
  maxWaiting?: number;
  /** Told whenever the counts or the loaded model change. */
  onChange?: () => void;
  /**
   * Runs, in turn, before a load asked for on its own (`load`) puts a model on the GPU: the
   * user asked for that model, so the worker lifts a mark of failing there.
   */
  beforeLoad?: (model: string) => Promise<void>;
}

/** A `ChatBackend` that runs requests one at a time on the engine serving their model. */
export class EngineQueue implements LoadingBackend {
  readonly #engines: readonly Engine[];
  readonly #maxWaiting: number;
  readonly #onChange: () => void;
  readonly #beforeLoad: (model: string) => Promise<void>;
  readonly #waiting: Job[] = [];
  #running: Job | undefined;
  /** Work waiting to run alone, first in first out. */
  readonly #alone: (() => Promise<void>)[] = [];
  /** Whether work is running alone now. */
  #aloneRunning = false;
  /** The model being put on the GPU, by a request or a preload. */
  #loading: string | null = null;
  #loadError: LoadError | null = null;
  #seq = 0;
  #loads = 0;
  /**
   * While the request at the front waits for another model: the requests that arrived before
   * this number may go first, on the model that is loaded (docs/models.md, Real models: one
   * model on the GPU at a time). Later ones may not, or a steady stream of them would keep the
   * front waiting for ever.
   */
  #switchCutoff: number | undefined;

  constructor(engines: readonly Engine[], options: QueueOptions = {}) {
    this.#engines = engines;
    this.#maxWaiting = options.maxWaiting ?? MAX_WAITING;
    this.#onChange = options.onChange ?? (() => {});
    this.#beforeLoad = options.beforeLoad ?? (async () => {});
  }

  get counts(): QueueCounts {
    return { running: this.#running ? 1 : 0, waiting: this.#waiting.length };
  }

  /** The model on the GPU, if any engine has one. */
  get loadedModel(): string | null {
    return this.#engines.find((e) => e.loadedModel !== null)?.loadedModel ?? null;
  }

  /** The model a request or a preload is putting on the GPU now, if any. */
  get loading(): string | null {
    return this.#loading;
  }

  /** Models put in memory since the queue started, by requests, preloads and switches. */
  get loads(): number {
    return this.#loads;
  }

  /** The last load that failed, whichever engine's, until a load succeeds. */
  get loadError(): LoadError | null {
    return this.#loadError;
  }

  /** Whether nothing runs and nothing waits: a new request starts at once. */
  get #idle(): boolean {
    return !this.#running && !this.#aloneRunning && this.#alone.length === 0;
  }

  /** Whether a request (or a load) running or waiting is for `model`. */
  inUse(model: string): boolean {
    const jobs = this.#running ? [this.#running, ...this.#waiting] : this.#waiting;
    return jobs.some((job) => job.request.model === model);
  }

  /** The models the engines can answer with now. */
  get models(): string[] {
    return this.#engines.flatMap((e) => e.models);
  }

  /**
   * Loads `model` without a request, as a new host does with the model its predecessor had. It
   * runs alone: requests that arrive meanwhile wait for it; a failure is left for them to meet.
   */
  preload(model: string): void {
    const engine = this.#engines.find((e) => e.serves(model));
    if (!engine || engine.isLoaded(model)) return;
    this.alone(() => this.#load(engine, model)).catch(() => undefined);
  }

  /**
   * Runs `work` alone on the engines: after the request running (and any work before it), before
   * the requests waiting; no load or generation starts until it settles. Resolves to what it
   * returns.
   */
  alone<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#alone.push(async () => {
        try {
          resolve(await work());
        } catch (err) {
          reject(err);
        }
      });
      void this.#next();
    });
  }

  /**
   * Fails every waiting request for `model` with `error`: the model is gone, and loading it would
   * fetch it again. Requests for other models wait on.
   */
  refuse(model: string, error: OpenAIError): void {
    const refused = this.#waiting.filter((job) => job.request.model === model);
    if (refused.length === 0) return;
    for (const job of refused) this.#waiting.splice(this.#waiting.indexOf(job), 1);
    for (const job of refused) job.events.fail(error);
    this.#onChange();
  }

  chat(request: ChatRequest, options: ChatOptions): Channel<ChatEvent> {
    return this.#submit(request, options);
  }

  /**
   * Puts `model` on the GPU, in turn with the requests (one thing at a time on the GPU). The
   * channel ends when it is loaded, or fails with why not.
   */
  load(model: string, options: ChatOptions): Channel<ChatEvent> {
    return this.#submit(modelOnly(model), options, { loadOnly: true });
  }

  /** Runs an embeddings request in turn with the others; the channel ends with its vectors. */
  embed(request: EmbeddingRequest, options: ChatOptions): Channel<ChatEvent> {
    return this.#submit(modelOnly(request.model), options, { embed: request });
  }

  #submit(
    request: ChatRequest,
    options: ChatOptions,
    kind: Pick<Job, 'loadOnly' | 'embed'> = {},
  ): Channel<ChatEvent> {
    const events = new Channel<ChatEvent>();
    const { signal } = options;
    if (!this.#idle && this.#waiting.length >= this.#maxWaiting) {
      events.fail(
        new OpenAIError(
          'queue_full',
          `${this.#waiting.length} requests are already waiting for the engine; try again shortly.`,
          { retryAfter: QUEUE_FULL_RETRY_AFTER_S },
        ),
      );
      return events;
    }
    const job: Job = {
      request,
      options,
      events,
      waited: !this.#idle,
      seq: (this.#seq += 1),
      ...kind,
    };
    signal.addEventListener(
      'abort',
      () => {
        const at = this.#waiting.indexOf(job);
        if (at !== -1) {
          this.#waiting.splice(at, 1);
          this.#onChange();
        }
        events.close();
      },
      { once: true },
    );
    if (signal.aborted) {
      events.close();
      return events;
    }
    this.#waiting.push(job);
    events.push({ type: 'state', state: 'queued' });
    this.#onChange();
    void this.#next();
    return events;
  }

  /** Whether `job` needs the GPU to switch from the model on it (any engine's) to another. */
  #needsSwitch(job: Job): boolean {
    const { model } = job.request;
    const engine = this.#engines.find((e) => e.serves(model));
    if (engine === undefined || engine.loadsBeside?.(model)) return false;
    return this.loadedModel !== null && !engine.isLoaded(model);
  }

  /** Where the next request to run stands in the queue. */
  #pick(): number {
    const front = this.#waiting[0];
    if (!front || !this.#needsSwitch(front)) {
      this.#switchCutoff = undefined;
      return 0;
    }
    this.#switchCutoff ??= this.#seq + 1;
    const cutoff = this.#switchCutoff;
    const ready = this.#waiting.findIndex((j) => j.seq < cutoff && !this.#needsSwitch(j));
    if (ready !== -1) return ready;
    this.#switchCutoff = undefined; // nothing left for the loaded model: switch now
    return 0;
  }

  async #next(): Promise<void> {
    if (this.#running || this.#aloneRunning) return;
    const work = this.#alone.shift();
    if (work) {
      this.#aloneRunning = true;
      try {
        await work();
      } finally {
        this.#aloneRunning = false;
        void this.#next();
      }
      return;
    }
    const [job] = this.#waiting.splice(this.#pick(), 1);
    if (!job) return;
    this.#running = job;
    this.#onChange();
    try {
      await this.#run(job);
    } catch (err) {
      job.events.fail(OpenAIError.fromEngine(err));
    } finally {
      this.#running = undefined;
      this.#onChange();
      void this.#next();
    }
  }

  async #load(engine: Engine, model: string): Promise<void> {
    this.#loading = model;
    try {
      // One model in the device's memory: another engine's goes first (WebLLM's or llama.cpp's),
      // unless this one is kept beside it.
      const beside = engine.loadsBeside?.(model) ?? false;
      for (const other of this.#engines) {
        if (!beside && other !== engine && other.loadedModel !== null) await other.unload?.();
      }
      await engine.load(model);
      this.#loads += 1;
      this.#loadError = null;
    } catch (err) {
      this.#loadError = { model, error: OpenAIError.fromEngine(err).toBody().error };
      throw err;
    } finally {
      this.#loading = null;
      this.#onChange();
    }
  }

  async #run({ request, options, events, waited, loadOnly, embed }: Job): Promise<void> {
    const { signal, alive } = options;
    // A page closed while its request waited leaves no trace but this (docs/architecture.md,
    // Tabs, failover and restarts: a page that closes).
    if (waited && alive && !(await alive())) throw clientGone();
    if (signal.aborted) return;
    const engine = this.#engines.find((e) => e.serves(request.model));
    if (!engine) {
      throw new OpenAIError('model_not_found', `No engine here serves '${request.model}'.`, {
        param: 'model',
      });
    }
    if (!engine.isLoaded(request.model)) {
      if (loadOnly) await this.#beforeLoad(request.model);
      events.push({ type: 'state', state: 'loading' });
      await this.#load(engine, request.model);
    }
    if (loadOnly) return events.close();
    if (signal.aborted) return;
    events.push({ type: 'state', state: 'running' });
    if (embed) return this.#embed(engine, embed, signal, events);
    for await (const output of engine.generate(request, signal)) {
      if (output.type === 'progress') {
        events.push({ type: 'state', state: 'generating' });
        continue;
      }
      if (output.type !== 'token') {
        events.push(output);
        continue;
      }
      // A plain token travels as a string: the common case stays cheap.
      events.push({ type: 'tokens', tokens: [tokenOf(output)] });
      if (events.size >= MAX_AHEAD) await events.whenBelow(MAX_AHEAD / 2);
    }
    events.close();
  }

  async #embed(
    engine: Engine,
    request: EmbeddingRequest,
    signal: AbortSignal,
    events: Channel<ChatEvent>,
  ): Promise<void> {
    if (!engine.embed) {
      throw new OpenAIError('invalid_value', `${request.model} cannot make embeddings.`, {
        param: 'model',
      });
    }
    for await (const output of engine.embed(request, signal)) {
      events.push(output.type === 'progress' ? { type: 'state', state: 'generating' } : output);
    }
    events.close();
  }
}

/** The request of a job that only names its model (a load, an embeddings request). */
function modelOnly(model: string): ChatRequest {
  return { model, messages: [], stream: false, include_usage: false, n: 1 };
}
