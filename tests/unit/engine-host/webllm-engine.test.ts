/**
 * The WebLLM engine adapter, driving a fake `MLCEngine` that behaves as 0.2.86 does: streams
 * that must be returned to release the model's lock, an engine-wide interrupt, errors thrown at
 * the first `next()`, and a pipeline that knows how many tokens its KV cache holds.
 */
import { describe, expect, it } from 'vitest';
import type { AppConfig } from '@mlc-ai/web-llm';
import type { EngineOutput } from '../../../src/engine-host/engine';
import {
  WebLLMEngine,
  loadPhase,
  type MLCEngineLike,
} from '../../../src/engine-host/webllm-engine';
import type { WebLLMChunk } from '../../../src/engine-host/webllm-mapping';
import { catalogEntry } from '../../../src/openai/catalog';
import { OpenAIError } from '../../../src/openai/errors';
import { parseChatRequest } from '../../../src/openai/validate';

const prebuilt = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Smol-q4f32_1-MLC',
    model_id: 'Smol-q4f32_1-MLC',
    model_lib: 'https://libs.example/smol.wasm',
    overrides: { context_window_size: 2048 },
    vram_required_MB: 500,
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
const selfHosted = catalogEntry(
  { model: 'models/local', model_id: 'local-q4f32_1', model_lib: 'models/local.wasm' },
  { owner: 'acme', id: 'acme/local', source: 'self-hosted', tools: false },
);
const MODEL = prebuilt.id;

const chunk = (content: string): WebLLMChunk => ({
  choices: [
    { index: 0, delta: { content, role: 'assistant' }, finish_reason: null, logprobs: null },
  ],
});

/** A fake MLCEngine: `script` decides what each `create` returns. */
class FakeMLC {
  reloads: string[] = [];
  interrupts = 0;
  returns = 0;
  progress: ((report: { progress: number; timeElapsed: number; text: string }) => void) | undefined;
  loadedModelIdToPipeline = new Map<string, { filledKVCacheLength: number }>();
  reloadError: unknown;
  reloadGate: Promise<void> = Promise.resolve();
  /** The chunks of the next stream; a function may throw or wait. */
  chunks: (WebLLMChunk | (() => Promise<WebLLMChunk>))[] = [];

  setInitProgressCallback(callback: FakeMLC['progress']) {
    this.progress = callback;
  }
  async reload(model: string) {
    this.progress?.({
      progress: 0.5,
      timeElapsed: 1,
      text: 'Fetching param cache[1/2]: 100MB fetched.',
    });
    await this.reloadGate;
    if (this.reloadError) throw this.reloadError;
    this.reloads.push(model);
    this.loadedModelIdToPipeline.set(model, { filledKVCacheLength: 0 });
  }
  interruptGenerate() {
    this.interrupts += 1;
  }
  unloads = 0;
  async unload() {
    this.unloads += 1;
    this.loadedModelIdToPipeline.clear();
  }
  chat = {
    completions: {
      create: async (body: {
        stream: boolean;
        model: string;
      }): Promise<AsyncIterable<WebLLMChunk>> => {
        const chunks = [...this.chunks];
        const pipeline = this.loadedModelIdToPipeline.get(body.model);
        let first = true;
        // eslint-disable-next-line @typescript-eslint/no-this-alias
        const fake = this;
        return {
          [Symbol.asyncIterator]() {
            return {
              async next(): Promise<IteratorResult<WebLLMChunk>> {
                const item = chunks.shift();
                if (item === undefined) return { done: true, value: undefined };
                const value = typeof item === 'function' ? await item() : item;
                // Prefill happened before the first chunk: the KV cache holds the whole prompt.
                if (first && pipeline) pipeline.filledKVCacheLength = 42;
                first = false;
                return { done: false, value };
              },
              async return(): Promise<IteratorResult<WebLLMChunk>> {
                fake.returns += 1;
                return { done: true, value: undefined };
              },
            };
          },
        };
      },
    },
  };
}

function setup(options: { losses?: Record<string, number> } = {}) {
  const fake = new FakeMLC();
  const losses = { ...options.losses };
  const configs: AppConfig[] = [];
  const engine = new WebLLMEngine({
    catalog: [prebuilt, selfHosted],
    appUrl: 'https://app.example/hearth/',
    caches: { open: async () => ({ match: async () => undefined }) },
    onChange: () => undefined,
    losses: {
      record: async (model: string, detail: string) => {
        losses[model] = (losses[model] ?? 0) + 1;
        return { losses: losses[model]!, at: Date.now(), detail };
      },
      failing: async () =>
        Object.fromEntries(
          Object.entries(losses)
            .filter(([, n]) => n >= 2)
            .map(([m]) => [m, `${m} failed twice`]),
        ),
    },
    createEngine: async (appConfig) => {
      configs.push(appConfig);
      return fake as unknown as MLCEngineLike;
    },
    hasModelInCache: async (model, appConfig) => {
      configs.push(appConfig);
      return model === MODEL;
    },
  });
  return { engine, fake, configs, losses };
}

async function collect(outputs: AsyncIterable<EngineOutput>): Promise<EngineOutput[]> {
  const out: EngineOutput[] = [];
  for await (const o of outputs) out.push(o);
  return out;
}

const request = (extra: Record<string, unknown> = {}) =>
  parseChatRequest({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], ...extra });

const usageChunk: WebLLMChunk = { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } };

describe('WebLLMEngine', () => {
  it('gives WebLLM every catalogue model by its Hearth id, with absolute URLs', async () => {
    const { engine, configs } = setup();
    await engine.load(MODEL);
    expect(configs[0]?.model_list).toEqual([
      expect.objectContaining({
        model_id: 'mlc-ai/Smol-q4f32_1-MLC',
        model: 'https://huggingface.co/mlc-ai/Smol-q4f32_1-MLC/resolve/main/',
        model_lib: 'https://libs.example/smol.wasm',
        overrides: { context_window_size: 2048 },
        vram_required_MB: 500,
      }),
      expect.objectContaining({
        model_id: 'acme/local',
        model: 'https://app.example/hearth/models/local/resolve/main/',
        model_lib: 'https://app.example/hearth/models/local.wasm',
      }),
    ]);
  });

  it('loads a model once, reporting the phase, and shares a load already under way', async () => {
    const { engine, fake } = setup();
    let release: () => void = () => undefined;
    fake.reloadGate = new Promise((resolve) => (release = resolve));
    const phases: string[] = [];
    const first = engine.load(MODEL, (p) => phases.push(p.phase));
    const second = engine.load(MODEL);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(engine.loading).toMatchObject({ model: MODEL, phase: 'fetch', progress: 0.5 });
    release();
    await Promise.all([first, second]);
    await engine.load(MODEL);
    expect(fake.reloads).toEqual([MODEL]);
    expect(phases).toEqual(['fetch']);
    expect(engine.isLoaded(MODEL)).toBe(true);
    expect(engine.loading).toBeNull();
  });

  it('unloads the model after the load under way, and is loaded no more', async () => {
    const { engine, fake } = setup();
    await engine.unload();
    expect(fake.unloads).toBe(0); // nothing was loaded
    let release: () => void = () => undefined;
    fake.reloadGate = new Promise((resolve) => (release = resolve));
    const load = engine.load(MODEL);
    const unload = engine.unload();
    release();
    await Promise.all([load, unload]);
    expect(fake.unloads).toBe(1);
    expect(engine.loadedModel).toBeNull();
    expect(engine.isLoaded(MODEL)).toBe(false);
  });

  it('asks WebLLM’s own hasModelInCache with the engine’s app config', async () => {
    const { engine, configs } = setup();
    expect(await engine.hasModelInCache(MODEL)).toBe(true);
    expect(await engine.hasModelInCache('acme/local')).toBe(false);
    expect(configs[0]?.model_list.map((m) => m.model_id)).toEqual([MODEL, 'acme/local']);
  });

  it('says which model failed to load, and why', async () => {
    const { engine, fake } = setup();
    fake.reloadError = new TypeError('Failed to fetch');
    await expect(engine.load(MODEL)).rejects.toMatchObject({
      code: 'engine_error',
      message: `Loading ${MODEL} failed: TypeError: Failed to fetch`,
    });
    expect(engine.loadedModel).toBeNull();
    expect(engine.loadError).toMatchObject({ model: MODEL, error: { code: 'engine_error' } });
    fake.reloadError = undefined;
    await engine.load(MODEL);
    expect(engine.loadError).toBeNull();
  });

  it('streams tokens, counts every prompt token, and returns the stream to release WebLLM’s lock', async () => {
    const { engine, fake } = setup();
    await engine.load(MODEL);
    fake.chunks = [
      chunk('Hel'),
      chunk('lo'),
      { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      usageChunk,
    ];
    const outputs = await collect(engine.generate(request(), new AbortController().signal));
    expect(outputs).toEqual([
      { type: 'token', text: 'Hel' },
      { type: 'token', text: 'lo' },
      { type: 'end', finish_reason: 'stop', usage: { prompt_tokens: 42, completion_tokens: 2 } },
    ]);
    expect(fake.returns).toBe(1);
  });

  it('interrupts WebLLM when the request is aborted, ends without an end, and still returns the stream', async () => {
    const { engine, fake } = setup();
    await engine.load(MODEL);
    const abort = new AbortController();
    fake.chunks = [
      chunk('a'),
      async () => {
        abort.abort();
        return chunk('b');
      },
      { choices: [{ index: 0, delta: {}, finish_reason: 'abort' }] },
      usageChunk,
    ];
    const outputs = await collect(engine.generate(request(), abort.signal));
    expect(outputs).toEqual([{ type: 'token', text: 'a' }]);
    expect(fake.interrupts).toBe(1);
    expect(fake.returns).toBe(1);
  });

  it('turns the context window error WebLLM throws at the first chunk into a 400', async () => {
    const { engine, fake } = setup();
    await engine.load(MODEL);
    const error = Object.assign(new Error('Prompt tokens exceed context window size'), {
      name: 'ContextWindowSizeExceededError',
    });
    fake.chunks = [() => Promise.reject(error)];
    await expect(
      collect(engine.generate(request(), new AbortController().signal)),
    ).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
    expect(fake.returns).toBe(1);
  });

  it('fails the running request when the GPU device is lost, and loads again for the next', async () => {
    const { engine, fake, losses } = setup();
    await engine.load(MODEL);
    fake.chunks = [chunk('a'), () => new Promise<WebLLMChunk>(() => undefined)];
    const running = collect(engine.generate(request(), new AbortController().signal));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await engine.deviceLost('out of memory');
    await expect(running).rejects.toMatchObject({
      code: 'engine_error',
      message: expect.stringMatching(/device was lost/),
    });
    expect(engine.isLoaded(MODEL)).toBe(false);
    expect(losses[MODEL]).toBe(1);
    await engine.load(MODEL);
    expect(fake.reloads).toEqual([MODEL, MODEL]);
  });

  it('refuses a model that lost the device twice, instead of loading it again and again', async () => {
    const { engine } = setup();
    await engine.load(MODEL);
    await engine.deviceLost('one');
    await engine.load(MODEL);
    await engine.deviceLost('two');
    expect(engine.failing[MODEL]).toMatch(/failed twice/);
    const error = await engine.load(MODEL).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAIError);
    expect((error as OpenAIError).code).toBe('webgpu_unavailable');
  });

  it('runs several choices as streams one after another, counting the prompt once', async () => {
    const { engine, fake } = setup();
    await engine.load(MODEL);
    const replies = [['one'], ['two', 'more']];
    const create = fake.chat.completions.create;
    fake.chat.completions.create = async (body) => {
      const tokens = replies.shift() ?? [];
      fake.chunks = [
        ...tokens.map(chunk),
        { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
        { choices: [], usage: { prompt_tokens: 3, completion_tokens: tokens.length } },
      ];
      return create(body);
    };
    const outputs = await collect(engine.generate(request({ n: 2 }), new AbortController().signal));
    expect(outputs).toEqual([
      {
        type: 'choices',
        choices: [
          { content: 'one', finish_reason: 'stop' },
          { content: 'twomore', finish_reason: 'stop' },
        ],
      },
      { type: 'end', finish_reason: 'stop', usage: { prompt_tokens: 42, completion_tokens: 3 } },
    ]);
  });
});

describe('loadPhase', () => {
  it.each([
    ['Start to fetch params', 'start'],
    ['Fetching param cache[3/10]: 100MB fetched. 30% completed', 'fetch'],
    ['Loading model from cache[1/10]: 50MB loaded.', 'load'],
    ['Loading GPU shader modules[2/40]: 5% completed', 'compile'],
    ['Finish loading on WebGPU - google', 'done'],
  ])('reads %j as %s', (text, phase) => {
    expect(loadPhase(text)).toBe(phase);
  });
});
