/**
 * Embeddings requests in the engine queue: in turn with chats, cancelled wherever they are, and an
 * embedding model loaded beside the chat model (no unload, no model switch).
 */
import { describe, expect, it } from 'vitest';
import type { EmbedOutput, Engine, EngineOutput } from '../../../src/engines/engine';
import { EngineQueue } from '../../../src/engine-host/queue';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { OpenAIError } from '../../../src/protocol/errors';
import type { ChatRequest, EmbeddingRequest } from '../../../src/protocol/types';
import { eventually, sleep } from '../helpers';

/** Work held until the test releases it (or its signal aborts). */
class Gates {
  readonly #open = new Map<string, () => void>();
  wait(key: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#open.set(key, resolve);
      signal.addEventListener('abort', () => resolve());
    });
  }
  release(key: string): void {
    this.#open.get(key)?.();
  }
}

/**
 * An engine for the models of one organisation, as llama.cpp's is: one chat model in memory, and
 * its embedding models loaded beside it. Each chat and each embeddings request is held until
 * released; `started` lists them as they reach the engine (an embeddings request as `e:<first
 * input>`).
 */
class FakeEngine implements Engine {
  loadedModel: string | null = null;
  beside: string | null = null;
  readonly models: string[] = [];
  loads: string[] = [];
  unloads = 0;
  started: string[] = [];
  active = 0;
  maxActive = 0;
  /** The signal each embeddings request got. */
  embedSignals: AbortSignal[] = [];
  readonly gates = new Gates();

  constructor(
    readonly org: string,
    readonly embeddingModels: readonly string[] = [],
  ) {}

  serves(model: string): boolean {
    return model.startsWith(`${this.org}/`);
  }
  isLoaded(model: string): boolean {
    return this.loadedModel === model || this.beside === model;
  }
  loadsBeside(model: string): boolean {
    return this.embeddingModels.includes(model);
  }
  async load(model: string): Promise<void> {
    this.loads.push(model);
    await sleep(2);
    if (this.loadsBeside(model)) this.beside = model;
    else this.loadedModel = model;
  }
  async unload(): Promise<void> {
    this.unloads += 1;
    this.loadedModel = null;
    this.beside = null;
  }
  release(key: string): void {
    this.gates.release(key);
  }
  #enter(key: string): void {
    this.started.push(key);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
  }
  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    const text = request.messages.at(-1)?.content ?? '';
    this.#enter(text);
    try {
      await this.gates.wait(text, signal);
      if (signal.aborted) return;
      yield { type: 'token', text };
      yield {
        type: 'end',
        finish_reason: 'stop',
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      };
    } finally {
      this.active -= 1;
    }
  }
  async *embed(request: EmbeddingRequest, signal: AbortSignal): AsyncGenerator<EmbedOutput> {
    const key = `e:${String(request.input[0])}`;
    this.embedSignals.push(signal);
    this.#enter(key);
    try {
      yield { type: 'progress' };
      await this.gates.wait(key, signal);
      if (signal.aborted) return;
      yield {
        type: 'embeddings',
        vectors: request.input.map((_, i) => new Float32Array([i, 1])),
        prompt_tokens: request.input.length,
      };
    } finally {
      this.active -= 1;
    }
  }
}

/** An engine that chats and makes no embeddings. */
class ChatOnlyEngine implements Engine {
  loadedModel: string | null = null;
  readonly models: string[] = [];
  serves(): boolean {
    return true;
  }
  isLoaded(model: string): boolean {
    return this.loadedModel === model;
  }
  async load(model: string): Promise<void> {
    this.loadedModel = model;
  }
  // eslint-disable-next-line require-yield
  async *generate(): AsyncGenerator<EngineOutput> {
    throw new Error('not asked in these tests');
  }
}

const CHAT = 'acme/chat';
const OTHER_CHAT = 'acme/other';
const EMBED = 'acme/embed';

const chatReq = (text: string, model = CHAT): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: text }],
  stream: false,
  include_usage: false,
  n: 1,
});
const embedReq = (first: string, model = EMBED): EmbeddingRequest => ({
  model,
  input: [first, `${first}-2`],
});

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const options = (signal = new AbortController().signal) => ({ signal });

/** Runs a chat to its end, releasing it as soon as it reaches the engine. */
async function chatThrough(queue: EngineQueue, engine: FakeEngine, text: string, model = CHAT) {
  const reply = collect(queue.chat(chatReq(text, model), options()));
  await eventually(() => engine.started.includes(text));
  engine.release(text);
  return reply;
}

describe('EngineQueue.embed', () => {
  it('reports queued, loading, running and generating, then ends with the vectors', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([engine]);
    const reply = collect(queue.embed(embedReq('a'), options()));
    await eventually(() => engine.started.includes('e:a'));
    engine.release('e:a');
    expect(await reply).toEqual([
      { type: 'state', state: 'queued' },
      { type: 'state', state: 'loading' },
      { type: 'state', state: 'running' },
      { type: 'state', state: 'generating' },
      {
        type: 'embeddings',
        vectors: [new Float32Array([0, 1]), new Float32Array([1, 1])],
        prompt_tokens: 2,
      },
    ]);
    expect(engine.loads).toEqual([EMBED]);
  });

  it('runs embeddings in turn with chats, first in first out, one at a time', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([engine]);
    const replies = [
      collect(queue.chat(chatReq('c1'), options())),
      collect(queue.embed(embedReq('x'), options())),
      collect(queue.chat(chatReq('c2'), options())),
      collect(queue.embed(embedReq('y'), options())),
    ];
    await eventually(() => engine.started.length === 1);
    expect(queue.counts).toEqual({ running: 1, waiting: 3 });
    for (const key of ['c1', 'e:x', 'c2', 'e:y']) {
      await eventually(() => engine.started.at(-1) === key);
      engine.release(key);
    }
    const [c1, x, c2, y] = await Promise.all(replies);
    expect(engine.started).toEqual(['c1', 'e:x', 'c2', 'e:y']);
    expect(engine.maxActive).toBe(1);
    expect(c1?.at(-1)?.type).toBe('end');
    expect(c2?.at(-1)?.type).toBe('end');
    expect(x?.at(-1)?.type).toBe('embeddings');
    expect(y?.at(-1)?.type).toBe('embeddings');
    expect(queue.counts).toEqual({ running: 0, waiting: 0 });
  });

  it('takes a waiting embeddings request out of the queue as soon as it is aborted, and never runs it', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([engine]);
    const running = collect(queue.chat(chatReq('c1'), options()));
    const abort = new AbortController();
    const waiting = collect(queue.embed(embedReq('x'), options(abort.signal)));
    await eventually(() => queue.counts.waiting === 1);
    abort.abort();
    expect(queue.counts.waiting).toBe(0);
    const events = await waiting;
    expect(events.some((e) => e.type === 'embeddings')).toBe(false);
    await eventually(() => engine.started.length === 1);
    engine.release('c1');
    await running;
    await sleep(10);
    expect(engine.started).toEqual(['c1']);
  });

  it('aborts the engine’s signal when a running embeddings request is aborted, ends without vectors, and starts the next', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([engine]);
    const abort = new AbortController();
    const running = collect(queue.embed(embedReq('x'), options(abort.signal)));
    const next = collect(queue.chat(chatReq('c1'), options()));
    await eventually(() => engine.started.includes('e:x'));
    expect(engine.embedSignals[0]?.aborted).toBe(false);
    abort.abort();
    expect(engine.embedSignals[0]?.aborted).toBe(true);
    expect((await running).some((e) => e.type === 'embeddings')).toBe(false);
    await eventually(() => engine.started.includes('c1'));
    engine.release('c1');
    expect((await next).at(-1)?.type).toBe('end');
    expect(engine.active).toBe(0);
  });

  it('refuses an embeddings request on an engine without embed with 400 invalid_value naming model', async () => {
    const queue = new EngineQueue([new ChatOnlyEngine()]);
    const error = await collect(queue.embed(embedReq('x', 'hearth/echo'), options())).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OpenAIError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'model' });
    // The queue goes on.
    expect(queue.counts).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses an embeddings request for a model no engine serves with model_not_found', async () => {
    const queue = new EngineQueue([new FakeEngine('acme', [EMBED])]);
    const error = await collect(queue.embed(embedReq('x', 'other/embed'), options())).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'model_not_found', param: 'model' });
  });

  it('passes an engine’s refusal of the inputs on as it is', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    // eslint-disable-next-line require-yield
    engine.embed = async function* () {
      throw new OpenAIError('context_length_exceeded', 'too long', { param: 'input[1]' });
    };
    const queue = new EngineQueue([engine]);
    const error = await collect(queue.embed(embedReq('x'), options())).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input[1]' });
  });
});

describe('EngineQueue and an embedding model loaded beside the chat model', () => {
  it('loads it without unloading another engine’s model (and a chat model of its own engine does unload the other)', async () => {
    const webllm = new FakeEngine('mlc-ai');
    const llama = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([webllm, llama]);
    await chatThrough(queue, webllm, 'w1', 'mlc-ai/m');
    expect(queue.loadedModel).toBe('mlc-ai/m');

    const vectors = collect(queue.embed(embedReq('x'), options()));
    await eventually(() => llama.started.includes('e:x'));
    llama.release('e:x');
    expect((await vectors).at(-1)?.type).toBe('embeddings');
    expect(webllm.unloads).toBe(0);
    expect(webllm.loadedModel).toBe('mlc-ai/m');
    expect(llama.beside).toBe(EMBED);
    expect(queue.loadedModel).toBe('mlc-ai/m');

    // And the chat model answers again without a load.
    await chatThrough(queue, webllm, 'w2', 'mlc-ai/m');
    expect(webllm.loads).toEqual(['mlc-ai/m']);

    // Whereas a chat model of llama.cpp's takes WebLLM's place.
    await chatThrough(queue, llama, 'l1', CHAT);
    expect(webllm.unloads).toBe(1);
    expect(webllm.loadedModel).toBeNull();
  });

  it('serves a waiting embeddings request on the loaded chat model’s turn, not as a switch', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([engine]);
    await chatThrough(queue, engine, 'warm');
    const running = collect(queue.chat(chatReq('a1'), options()));
    await eventually(() => engine.started.at(-1) === 'a1');
    // Waiting: a chat that needs a switch, then an embeddings request, then a chat for the loaded model.
    const waiting = [
      collect(queue.chat(chatReq('b1', OTHER_CHAT), options())),
      collect(queue.embed(embedReq('x'), options())),
      collect(queue.chat(chatReq('a2'), options())),
    ];
    for (const key of ['a1', 'e:x', 'a2', 'b1']) {
      await eventually(() => engine.started.at(-1) === key);
      engine.release(key);
    }
    await Promise.all([running, ...waiting]);
    // The embeddings request and a2 went before the switch to b1's model: neither counted as one.
    expect(engine.started).toEqual(['warm', 'a1', 'e:x', 'a2', 'b1']);
    expect(engine.loads).toEqual([CHAT, EMBED, OTHER_CHAT]);
  });

  it('runs an embeddings request whose model is already beside without a load', async () => {
    const engine = new FakeEngine('acme', [EMBED]);
    const queue = new EngineQueue([engine]);
    await chatThrough(queue, engine, 'warm');
    const first = collect(queue.embed(embedReq('x'), options()));
    await eventually(() => engine.started.includes('e:x'));
    engine.release('e:x');
    await first;
    const second = collect(queue.embed(embedReq('y'), options()));
    await eventually(() => engine.started.includes('e:y'));
    engine.release('e:y');
    const events = await second;
    expect(
      events.filter((e) => e.type === 'state').map((e) => e.type === 'state' && e.state),
    ).toEqual(['queued', 'running', 'generating']);
    expect(engine.loads).toEqual([CHAT, EMBED]);
    expect(engine.loadedModel).toBe(CHAT);
  });
});
