import { describe, expect, it } from 'vitest';
import type { Engine, EngineOutput } from '../../../src/engines/engine';
import { EchoEngine } from '../../../src/engines/echo/echo-engine';
import { EngineQueue, MAX_AHEAD } from '../../../src/engine-host/queue';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { ECHO_MODEL } from '../../../src/models/models';
import { OpenAIError } from '../../../src/protocol/errors';
import type { ChatRequest } from '../../../src/protocol/types';
import { eventually, sleep } from '../helpers';

/** An engine that records concurrency and holds each generation until released. */
class GateEngine implements Engine {
  loadedModel: string | null = null;
  readonly models = ['acme/m'];
  loads: string[] = [];
  active = 0;
  maxActive = 0;
  started: string[] = [];
  readonly #gates = new Map<string, () => void>();
  fail = new Set<string>();

  serves(): boolean {
    return true;
  }
  isLoaded(model: string): boolean {
    return this.loadedModel === model;
  }
  async load(model: string): Promise<void> {
    this.loads.push(model);
    await sleep(5);
    this.loadedModel = model;
  }
  release(text: string): void {
    this.#gates.get(text)?.();
  }
  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    const text = request.messages.at(-1)?.content ?? '';
    this.started.push(text);
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      if (this.fail.has(text)) throw new Error(`engine failed on ${text}`);
      await new Promise<void>((resolve) => {
        this.#gates.set(text, resolve);
        signal.addEventListener('abort', () => resolve());
      });
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
}

const req = (text: string, model = 'acme/m'): ChatRequest => ({
  model,
  messages: [{ role: 'user', content: text }],
  stream: false,
  include_usage: false,
  n: 1,
});

async function collect(events: AsyncIterable<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const signal = () => new AbortController().signal;

describe('EngineQueue', () => {
  it('runs one request at a time, first in first out', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const replies = ['a', 'b', 'c'].map((t) => collect(queue.chat(req(t), { signal: signal() })));
    await eventually(() => engine.started.length === 1);
    expect(queue.counts).toEqual({ running: 1, waiting: 2 });
    for (const t of ['a', 'b', 'c']) {
      await eventually(() => engine.started.at(-1) === t);
      engine.release(t);
    }
    await Promise.all(replies);
    expect(engine.started).toEqual(['a', 'b', 'c']);
    expect(engine.maxActive).toBe(1);
    expect(queue.counts).toEqual({ running: 0, waiting: 0 });
  });

  it('reports queued, then loading when the model is not on the GPU, then running', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const reply = collect(queue.chat(req('a'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    const events = await reply;
    expect(events.slice(0, 3)).toEqual([
      { type: 'state', state: 'queued' },
      { type: 'state', state: 'loading' },
      { type: 'state', state: 'running' },
    ]);
    expect(engine.loads).toEqual(['acme/m']);
  });

  it('refuses a request when the given number already wait, with queue_full and retry-after', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine], { maxWaiting: 2 });
    const held = ['a', 'b', 'c'].map((t) => collect(queue.chat(req(t), { signal: signal() })));
    await eventually(() => engine.started.length === 1);
    const error = (await collect(queue.chat(req('d'), { signal: signal() })).catch(
      (e: unknown) => e,
    )) as OpenAIError;
    expect(error).toBeInstanceOf(OpenAIError);
    expect(error.code).toBe('queue_full');
    expect(error.responseHeaders()['retry-after']).toBeDefined();
    for (const t of ['a', 'b', 'c']) {
      await eventually(() => engine.started.at(-1) === t);
      engine.release(t);
    }
    await Promise.all(held);
  });

  it('takes a waiting request out of the queue as soon as it is aborted', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const a = collect(queue.chat(req('a'), { signal: signal() }));
    const abort = new AbortController();
    const b = collect(queue.chat(req('b'), { signal: abort.signal }));
    await eventually(() => queue.counts.waiting === 1);
    abort.abort();
    expect(queue.counts.waiting).toBe(0);
    expect((await b).some((e) => e.type === 'tokens')).toBe(false);
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    await a;
    expect(engine.started).toEqual(['a']);
  });

  it('stops the engine when the running request is aborted, and starts the next', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const abort = new AbortController();
    const a = collect(queue.chat(req('a'), { signal: abort.signal }));
    const b = collect(queue.chat(req('b'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    abort.abort();
    await a;
    await eventually(() => engine.started.length === 2);
    engine.release('b');
    expect((await b).at(-1)?.type).toBe('end');
  });

  it('runs a generation at most MAX_AHEAD events ahead of its reader, and on as it reads', async () => {
    const engine = new EchoEngine();
    const queue = new EngineQueue([engine]);
    const words = Array.from({ length: 5 * MAX_AHEAD }, (_, i) => `w${i}`).join(' ');
    const events = queue.chat(
      { ...req(words), model: ECHO_MODEL.id },
      { signal: new AbortController().signal },
    );
    await sleep(50);
    // queued and running, then the tokens up to the limit: the engine waits there.
    expect(events.size).toBe(MAX_AHEAD);
    const read = await collect(events);
    expect(read.filter((e) => e.type === 'tokens')).toHaveLength(5 * MAX_AHEAD);
    expect(read.at(-1)?.type).toBe('end');
  });

  it('never waits for a reader of a short reply: the next request runs while it sits unread', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const unread = queue.chat(req('a'), { signal: signal() });
    const b = collect(queue.chat(req('b'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    await eventually(() => engine.started.length === 2);
    engine.release('b');
    expect((await b).at(-1)?.type).toBe('end');
    expect((await collect(unread)).at(-1)?.type).toBe('end');
  });

  it('fails only the request whose generation threw, as an engine_error', async () => {
    const engine = new GateEngine();
    engine.fail.add('bad');
    const queue = new EngineQueue([engine]);
    const bad = collect(queue.chat(req('bad'), { signal: signal() })).catch((e: unknown) => e);
    const good = collect(queue.chat(req('good'), { signal: signal() }));
    await eventually(() => engine.started.length === 2);
    engine.release('good');
    expect(((await bad) as OpenAIError).code).toBe('engine_error');
    expect((await good).at(-1)?.type).toBe('end');
  });

  it('fails a request for a model no engine serves with model_not_found', async () => {
    const queue = new EngineQueue([]);
    const error = (await collect(queue.chat(req('a'), { signal: signal() })).catch(
      (e: unknown) => e,
    )) as OpenAIError;
    expect(error.code).toBe('model_not_found');
  });
});

describe('EngineQueue and the pages behind its requests', () => {
  it('drops a request that waited when its page is gone by the time it reaches the front', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const first = collect(queue.chat(req('a'), { signal: signal() }));
    let asked = 0;
    const gone = collect(
      queue.chat(req('b'), {
        signal: signal(),
        alive: async () => {
          asked += 1;
          return false;
        },
      }),
    ).catch((e: unknown) => e);
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    await first;
    expect(await gone).toBeInstanceOf(OpenAIError);
    expect(asked).toBe(1);
    expect(engine.started).toEqual(['a']);
  });

  it('does not ask about the page of a request that starts at once', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    let asked = 0;
    const reply = collect(
      queue.chat(req('a'), { signal: signal(), alive: async () => (asked += 1) > 0 }),
    );
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    await reply;
    expect(asked).toBe(0);
  });

  it('loads the previous host’s model on its own, and requests wait for that load', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    queue.preload('acme/m');
    const reply = collect(queue.chat(req('a'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    const events = await reply;
    expect(engine.loads).toEqual(['acme/m']);
    expect(events.some((e) => e.type === 'state' && e.state === 'loading')).toBe(false);
  });

  it('tells its owner whenever the counts change', async () => {
    const engine = new GateEngine();
    const seen: string[] = [];
    const queue = new EngineQueue([engine], {
      onChange: () => seen.push(JSON.stringify(queue.counts)),
    });
    const reply = collect(queue.chat(req('a'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    await reply;
    await eventually(() => seen.at(-1) === JSON.stringify({ running: 0, waiting: 0 }));
    expect(seen).toContain(JSON.stringify({ running: 1, waiting: 0 }));
  });
});

describe('EngineQueue and models on the GPU', () => {
  const loadedWith = async (queue: EngineQueue, engine: GateEngine, model: string) => {
    const first = collect(queue.chat(req('warm', model), { signal: signal() }));
    await eventually(() => engine.started.includes('warm'));
    engine.release('warm');
    await first;
  };

  it('serves the requests already queued for the loaded model before switching to another', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    await loadedWith(queue, engine, 'acme/a');
    const running = collect(queue.chat(req('a1', 'acme/a'), { signal: signal() }));
    await eventually(() => engine.started.at(-1) === 'a1');
    const order = ['b1', 'a2', 'a3'].map((t) =>
      collect(queue.chat(req(t, t.startsWith('a') ? 'acme/a' : 'acme/b'), { signal: signal() })),
    );
    for (const t of ['a1', 'a2', 'a3', 'b1']) {
      await eventually(() => engine.started.at(-1) === t);
      engine.release(t);
    }
    await Promise.all([running, ...order]);
    expect(engine.started).toEqual(['warm', 'a1', 'a2', 'a3', 'b1']);
    expect(engine.loads).toEqual(['acme/a', 'acme/b']);
  });

  it('does not let requests that arrive later keep the switch waiting', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    await loadedWith(queue, engine, 'acme/a');
    const running = collect(queue.chat(req('a1', 'acme/a'), { signal: signal() }));
    await eventually(() => engine.started.at(-1) === 'a1');
    const b = collect(queue.chat(req('b1', 'acme/b'), { signal: signal() }));
    const a2 = collect(queue.chat(req('a2', 'acme/a'), { signal: signal() }));
    engine.release('a1');
    await eventually(() => engine.started.at(-1) === 'a2');
    // Arrives while b1 waits for its switch: it goes after b1.
    const late = collect(queue.chat(req('a3', 'acme/a'), { signal: signal() }));
    for (const t of ['a2', 'b1', 'a3']) {
      await eventually(() => engine.started.at(-1) === t);
      engine.release(t);
    }
    await Promise.all([running, b, a2, late]);
    expect(engine.started).toEqual(['warm', 'a1', 'a2', 'b1', 'a3']);
  });
});

/** A GateEngine that serves only models under one organisation, and can unload. */
class OwnEngine extends GateEngine {
  unloads = 0;
  constructor(readonly org: string) {
    super();
  }
  override serves(model?: string): boolean {
    return model?.startsWith(`${this.org}/`) ?? false;
  }
  async unload(): Promise<void> {
    this.unloads += 1;
    this.loadedModel = null;
  }
}

describe('EngineQueue with two engines that load models', () => {
  const run = async (queue: EngineQueue, engine: GateEngine, text: string, model: string) => {
    const reply = collect(queue.chat(req(text, model), { signal: signal() }));
    await eventually(() => engine.started.includes(text));
    engine.release(text);
    return reply;
  };

  it('unloads one engine’s model before the other loads: one model in memory at a time', async () => {
    const webllm = new OwnEngine('mlc-ai');
    const llama = new OwnEngine('acme');
    const queue = new EngineQueue([webllm, llama]);
    await run(queue, webllm, 'w1', 'mlc-ai/m');
    expect(queue.loadedModel).toBe('mlc-ai/m');
    await run(queue, llama, 'l1', 'acme/g');
    expect(webllm.unloads).toBe(1);
    expect(webllm.loadedModel).toBeNull();
    expect(queue.loadedModel).toBe('acme/g');
    await run(queue, webllm, 'w2', 'mlc-ai/m');
    expect(llama.unloads).toBe(1);
    expect(queue.loadedModel).toBe('mlc-ai/m');
  });

  it('serves the requests queued for the loaded model before switching to the other engine’s', async () => {
    const webllm = new OwnEngine('mlc-ai');
    const llama = new OwnEngine('acme');
    const queue = new EngineQueue([webllm, llama]);
    await run(queue, webllm, 'warm', 'mlc-ai/m');
    const running = collect(queue.chat(req('w1', 'mlc-ai/m'), { signal: signal() }));
    await eventually(() => webllm.started.at(-1) === 'w1');
    const g = collect(queue.chat(req('g1', 'acme/g'), { signal: signal() }));
    const w2 = collect(queue.chat(req('w2', 'mlc-ai/m'), { signal: signal() }));
    webllm.release('w1');
    await eventually(() => webllm.started.at(-1) === 'w2');
    expect(llama.started).toEqual([]);
    webllm.release('w2');
    await eventually(() => llama.started.at(-1) === 'g1');
    llama.release('g1');
    await Promise.all([running, g, w2]);
    expect(webllm.loads).toEqual(['mlc-ai/m']);
  });

  it('keeps the last failed load, whichever engine’s, until a load succeeds', async () => {
    const webllm = new OwnEngine('mlc-ai');
    const llama = new OwnEngine('acme');
    llama.load = async () => {
      throw new OpenAIError('engine_error', 'no such file');
    };
    const queue = new EngineQueue([webllm, llama]);
    await expect(collect(queue.chat(req('g1', 'acme/g'), { signal: signal() }))).rejects.toThrow(
      'no such file',
    );
    expect(queue.loadError).toMatchObject({
      model: 'acme/g',
      error: { code: 'engine_error', message: 'no such file' },
    });
    await run(queue, webllm, 'w1', 'mlc-ai/m');
    expect(queue.loadError).toBeNull();
  });
});

describe('EngineQueue and work that runs alone (unloads, deletions, preloads)', () => {
  it('runs it after the running request and before those waiting, and starts nothing meanwhile', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const a = collect(queue.chat(req('a'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    const order: string[] = [];
    let finish = () => {};
    const alone = queue.alone(async () => {
      order.push(`alone with ${engine.active} running`);
      await new Promise<void>((resolve) => (finish = resolve));
    });
    const b = collect(queue.chat(req('b'), { signal: signal() }));
    await sleep(10);
    expect(order).toEqual([]);
    engine.release('a');
    await eventually(() => order.length === 1);
    expect(order).toEqual(['alone with 0 running']);
    await sleep(10);
    expect(engine.started).toEqual(['a']);
    finish();
    await alone;
    await eventually(() => engine.started.length === 2);
    engine.release('b');
    await Promise.all([a, b]);
    expect(engine.maxActive).toBe(1);
  });

  it('waits for a preload, and answers with what the work returned or threw', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    queue.preload('acme/m');
    expect(await queue.alone(async () => engine.loadedModel)).toBe('acme/m');
    await expect(
      queue.alone(async () => {
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    // The queue serves on after a failure.
    const reply = collect(queue.chat(req('a'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    engine.release('a');
    expect((await reply).at(-1)?.type).toBe('end');
  });

  it('says which model a request or a preload is putting on the GPU', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    expect(queue.loading).toBeNull();
    queue.preload('acme/m');
    expect(queue.loading).toBe('acme/m');
    await queue.alone(async () => undefined);
    expect(queue.loading).toBeNull();
  });

  it('fails the waiting requests for a model that is gone, and only those', async () => {
    const engine = new GateEngine();
    const queue = new EngineQueue([engine]);
    const gone = new OpenAIError('model_not_downloaded', 'gone');
    const a = collect(queue.chat(req('a', 'acme/a'), { signal: signal() }));
    await eventually(() => engine.started.length === 1);
    const b = collect(queue.chat(req('b', 'acme/b'), { signal: signal() })).catch((e) => e);
    const c = collect(queue.chat(req('c', 'acme/c'), { signal: signal() }));
    queue.refuse('acme/b', gone);
    expect(await b).toBe(gone);
    expect(queue.counts).toEqual({ running: 1, waiting: 1 });
    engine.release('a');
    await eventually(() => engine.started.length === 2);
    engine.release('c');
    await Promise.all([a, c]);
    expect(engine.started).toEqual(['a', 'c']);
  });
});
