/**
 * @module
 * The FIFO queue in front of the engines: one generation at a time, at most `maxWaiting`
 * requests behind it (then 429). A request leaves the queue the moment its signal aborts; a
 * running one stops its engine. The queue never waits for a reader: replies are buffered in
 * each request's channel, so a slow client cannot hold the engine.
 */
import { Channel } from '../bridge/channel';
import type { ChatBackend, ChatEvent, ChatOptions } from '../openai/backend';
import { OpenAIError } from '../openai/errors';
import type { ChatRequest } from '../openai/types';
import type { Engine } from './engine';

/** Requests allowed to wait behind the running one (DESIGN §3). */
export const MAX_WAITING = 32;
/** Seconds a client told `queue_full` should wait. */
const QUEUE_FULL_RETRY_AFTER_S = 5;

interface Job {
  request: ChatRequest;
  signal: AbortSignal;
  events: Channel<ChatEvent>;
}

/** Queue counts for status. */
export interface QueueCounts {
  running: number;
  waiting: number;
}

/** A `ChatBackend` that runs requests one at a time on the engine serving their model. */
export class EngineQueue implements ChatBackend {
  readonly #engines: readonly Engine[];
  readonly #maxWaiting: number;
  readonly #waiting: Job[] = [];
  #running: Job | undefined;

  constructor(engines: readonly Engine[], options: { maxWaiting?: number } = {}) {
    this.#engines = engines;
    this.#maxWaiting = options.maxWaiting ?? MAX_WAITING;
  }

  get counts(): QueueCounts {
    return { running: this.#running ? 1 : 0, waiting: this.#waiting.length };
  }

  /** The model on the GPU, if any engine has one. */
  get loadedModel(): string | null {
    return this.#engines.find((e) => e.loadedModel !== null)?.loadedModel ?? null;
  }

  chat(request: ChatRequest, { signal }: ChatOptions): Channel<ChatEvent> {
    const events = new Channel<ChatEvent>();
    if (this.#running && this.#waiting.length >= this.#maxWaiting) {
      events.fail(
        new OpenAIError(
          'queue_full',
          `${this.#waiting.length} requests are already waiting for the engine; try again shortly.`,
          { retryAfter: QUEUE_FULL_RETRY_AFTER_S },
        ),
      );
      return events;
    }
    const job: Job = { request, signal, events };
    signal.addEventListener(
      'abort',
      () => {
        const at = this.#waiting.indexOf(job);
        if (at !== -1) this.#waiting.splice(at, 1);
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
    void this.#next();
    return events;
  }

  async #next(): Promise<void> {
    if (this.#running) return;
    const job = this.#waiting.shift();
    if (!job) return;
    this.#running = job;
    try {
      await this.#run(job);
    } catch (err) {
      job.events.fail(OpenAIError.from(err));
    } finally {
      this.#running = undefined;
      void this.#next();
    }
  }

  async #run({ request, signal, events }: Job): Promise<void> {
    const engine = this.#engines.find((e) => e.serves(request.model));
    if (!engine) {
      throw new OpenAIError('model_not_found', `No engine here serves '${request.model}'.`, {
        param: 'model',
      });
    }
    if (!engine.isLoaded(request.model)) {
      events.push({ type: 'state', state: 'loading' });
      await engine.load(request.model);
    }
    if (signal.aborted) return;
    events.push({ type: 'state', state: 'running' });
    for await (const output of engine.generate(request, signal)) {
      if (output.type === 'token') events.push({ type: 'tokens', tokens: [output.text] });
      else events.push(output);
    }
    events.close();
  }
}
