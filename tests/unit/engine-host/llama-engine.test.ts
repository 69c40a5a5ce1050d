/**
 * The llama.cpp engine's own logic with wllama faked at its seam: how it loads (context, threads,
 * GPU layers, deadline, the vocabulary check, a model switch), streams, stops, aborts and runs
 * several choices. The real wllama runs in tests/e2e/llama.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../../src/engine-host/engine';
import {
  LlamaEngine,
  llamaThreads,
  type LlamaEngineOptions,
  type LlamaLoadParams,
  type WllamaLike,
} from '../../../src/engine-host/llama-engine';
import type { LlamaChunk } from '../../../src/engine-host/llama-mapping';
import { ggufEntry, LLAMA_MAX_CONTEXT, type GpuFacts } from '../../../src/openai/catalog';
import { OpenAIError } from '../../../src/openai/errors';
import { parseChatRequest } from '../../../src/openai/validate';
import { MemoryCaches } from '../fake-storage';

const APP = 'https://app.example/';
const A = ggufEntry(
  { id: 'acme/a-GGUF:Q4_K_M', files: ['https://models.example/a.gguf'], context_window: 2048 },
  'self-hosted',
);
const B = ggufEntry(
  { id: 'acme/b-GGUF:Q8_0', files: ['https://models.example/b.gguf'], context_window: 131_072 },
  'self-hosted',
);
const PIECES = ['The', ' quick', ' brown', ' fox', '.'];
const F16_GPU: GpuFacts = {
  webgpu: true,
  adapter: {
    vendor: 'v',
    architecture: 'a',
    fallback: false,
    features: ['shader-f16'],
    limits: {
      maxBufferSize: 1 << 30,
      maxStorageBufferBindingSize: 1 << 30,
      maxComputeWorkgroupStorageSize: 32 << 10,
      maxStorageBuffersPerShaderStage: 10,
      maxComputeInvocationsPerWorkgroup: 256,
    },
  },
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

/** A stream as llama-server sends it: role, one piece a chunk, the end, usage. */
function reply(pieces: readonly string[], finish = 'stop'): LlamaChunk[] {
  return [
    { choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] },
    ...pieces.map((content) => ({
      choices: [{ index: 0, delta: { content }, finish_reason: null }],
    })),
    { choices: [{ index: 0, delta: {}, finish_reason: finish }] },
    {
      choices: [],
      usage: { prompt_tokens: 30, completion_tokens: pieces.length + 1 },
      timings: { prompt_ms: 10, prompt_per_second: 3000, predicted_per_second: 500 },
    },
  ];
}

/** What the fake wllama was asked, and what it does. */
interface Fake {
  instances: FakeWllama[];
  /** The build each instance was made for. */
  builds: string[];
  /** Chunks each request gets (by default the pieces). */
  script: (options: Record<string, unknown>) => LlamaChunk[];
  /** Makes a load fail, hang or load nothing. */
  loadBehaviour: 'ok' | 'hang' | 'empty';
}

class FakeWllama implements WllamaLike {
  loads: { blobs: Blob[]; params: LlamaLoadParams }[] = [];
  requests: Record<string, unknown>[] = [];
  exited = false;
  constructor(readonly fake: Fake) {}
  async loadModel(blobs: Blob[], params: LlamaLoadParams) {
    this.loads.push({ blobs, params });
    if (this.fake.loadBehaviour === 'hang') await new Promise(() => {});
  }
  getLoadedContextInfo() {
    return { n_vocab: this.fake.loadBehaviour === 'empty' ? 0 : 300, n_ctx: 2048 };
  }
  isMultithread() {
    return (this.loads[0]?.params.n_threads ?? 1) > 1;
  }
  getNumThreads() {
    return this.loads[0]?.params.n_threads ?? 1;
  }
  async createChatCompletion(options: Record<string, unknown> & { abortSignal: AbortSignal }) {
    this.requests.push(options);
    const chunks = this.fake.script(options);
    const signal = options.abortSignal;
    return (async function* () {
      for (const chunk of chunks) {
        await tick();
        // As wllama does: the signal is checked before each result is fetched.
        if (signal.aborted) {
          const error = new Error('aborted');
          error.name = 'AbortError';
          throw error;
        }
        yield chunk;
      }
    })();
  }
  /** The inputs of each embeddings call, in order. */
  embedCalls: (string[] | number[][])[] = [];
  /**
   * As llama-server does, in essence: one vector per input (here its length, and its place in the
   * call), listed out of order; an input of more than 50 characters or ids is refused, without
   * saying which.
   */
  async createEmbedding(options: {
    input: string[] | number[][];
    embd_normalize: number;
    abortSignal: AbortSignal;
  }) {
    this.embedCalls.push(options.input);
    await tick();
    if (options.abortSignal.aborted) {
      const error = new Error('aborted');
      error.name = 'AbortError';
      throw error;
    }
    if (options.input.some((one) => one.length > 50)) {
      throw new Error('input is too large to process. increase the physical batch size');
    }
    const data = options.input.map((one, index) => ({ index, embedding: [one.length, index] }));
    return { data: data.reverse(), usage: { prompt_tokens: 3 * options.input.length } };
  }
  async exit() {
    this.exited = true;
  }
}

function setup(options: Partial<LlamaEngineOptions> & { present?: string[] } = {}) {
  const fake: Fake = {
    instances: [],
    builds: [],
    script: () => reply(PIECES),
    loadBehaviour: 'ok',
  };
  const present = new Set(options.present ?? [A.id, B.id]);
  const fetched: string[] = [];
  const engine = new LlamaEngine({
    catalog: () => [A, B],
    appUrl: APP,
    caches: new MemoryCaches(),
    onChange: () => undefined,
    gpu: () => null,
    platform: () => ({ isolated: false, cores: 8, compat: false }),
    files: {
      blobs: async (entry) => (present.has(entry.id) ? [new Blob([entry.id])] : null),
      present: async (entry) => present.has(entry.id),
    },
    fetch: async (url) => {
      fetched.push(url);
      return new Response(`bytes of ${url}`);
    },
    createWllama: async (build) => {
      const wllama = new FakeWllama(fake);
      fake.instances.push(wllama);
      fake.builds.push(build);
      return wllama;
    },
    ...options,
  });
  return { engine, fake, fetched };
}

const request = (extra: Record<string, unknown> = {}) =>
  parseChatRequest({ model: A.id, messages: [{ role: 'user', content: 'hi' }], ...extra });

async function collect(
  engine: LlamaEngine,
  body: ReturnType<typeof request>,
  signal = new AbortController().signal,
): Promise<EngineOutput[]> {
  const outputs: EngineOutput[] = [];
  for await (const output of engine.generate(body, signal)) outputs.push(output);
  return outputs;
}

const text = (outputs: EngineOutput[]) =>
  outputs.map((o) => (o.type === 'token' ? o.text : '')).join('');

describe('llamaThreads', () => {
  it('uses one thread unless the worker is cross-origin isolated, then half the cores, up to four', () => {
    expect(llamaThreads(false, 16)).toBe(1);
    expect(llamaThreads(true, 2)).toBe(1);
    expect(llamaThreads(true, 4)).toBe(2);
    expect(llamaThreads(true, 6)).toBe(3);
    expect(llamaThreads(true, 16)).toBe(4);
    expect(llamaThreads(true, 0)).toBe(1);
  });
});

describe('LlamaEngine', () => {
  it('lists the GGUF models whose files are all on the device', async () => {
    const { engine } = setup({ present: [B.id] });
    await engine.settled();
    expect(engine.models).toEqual([B.id]);
    expect(engine.serves(A.id)).toBe(true);
    expect(engine.serves('mlc-ai/x')).toBe(false);
  });

  it('loads on the CPU with one thread, the model’s context and one slot', async () => {
    const { engine, fake } = setup();
    await engine.load(A.id);
    expect(engine.isLoaded(A.id)).toBe(true);
    expect(fake.instances[0]?.loads[0]?.params).toEqual({
      n_ctx: 2048,
      n_threads: 1,
      n_gpu_layers: 0,
      n_parallel: 1,
    });
    expect(engine.runtime).toEqual({
      backend: 'cpu',
      threads: 1,
      isolated: false,
      build: 'default',
    });
  });

  it('offloads every layer to WebGPU where the adapter has shader-f16, caps the context, and uses the threads the platform sets', async () => {
    const { engine, fake } = setup({
      gpu: () => F16_GPU,
      platform: () => ({ isolated: true, cores: 8, threads: 3, compat: false }),
    });
    expect(engine.runtime).toEqual({
      backend: 'webgpu',
      threads: 3,
      isolated: true,
      build: 'default',
    });
    await engine.load(B.id);
    expect(fake.instances[0]?.loads[0]?.params).toEqual({
      n_ctx: LLAMA_MAX_CONTEXT,
      n_threads: 3,
      n_gpu_layers: 999,
      n_parallel: 1,
    });
  });

  it('runs the compatibility build where the browser lacks what the default one needs, and says so', async () => {
    const { engine, fake } = setup({
      platform: () => ({ isolated: false, cores: 2, compat: true }),
    });
    expect(engine.runtime.build).toBe('compat');
    await engine.load(A.id);
    expect(fake.builds).toEqual(['compat']);
    expect(engine.runtime).toEqual({
      backend: 'cpu',
      threads: 1,
      isolated: false,
      build: 'compat',
    });
    const other = setup();
    await other.engine.load(A.id);
    expect(other.fake.builds).toEqual(['default']);
  });

  it('fails a load that never settles once its deadline passes, and lets the instance go', async () => {
    const { engine, fake } = setup({ loadDeadlineMs: () => 20 });
    fake.loadBehaviour = 'hang';
    const error = await engine.load(A.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAIError);
    expect((error as OpenAIError).toBody().error.code).toBe('engine_error');
    expect((error as Error).message).toContain('wasm-unsafe-eval');
    expect(fake.instances[0]?.exited).toBe(true);
    expect(engine.loadedModel).toBeNull();
  });

  it('fails a load after which llama.cpp has no vocabulary (wllama resolves anyway)', async () => {
    const { engine, fake } = setup();
    fake.loadBehaviour = 'empty';
    await expect(engine.load(A.id)).rejects.toThrow(/could not load/);
    expect(engine.isLoaded(A.id)).toBe(false);
    expect(fake.instances[0]?.exited).toBe(true);
  });

  it('switches models by exiting the old instance before a new one loads', async () => {
    const { engine, fake } = setup();
    await engine.load(A.id);
    await engine.load(B.id);
    expect(fake.instances).toHaveLength(2);
    expect(fake.instances[0]?.exited).toBe(true);
    expect(engine.loadedModel).toBe(B.id);
    await engine.unload();
    expect(fake.instances[1]?.exited).toBe(true);
    expect(engine.loadedModel).toBeNull();
  });

  it('fetches the files of a model that is not on the device, for this load only', async () => {
    const { engine, fake, fetched } = setup({ present: [] });
    await engine.load(A.id);
    expect(fetched).toEqual([A.files[0]]);
    expect(await fake.instances[0]?.loads[0]?.blobs[0]?.text()).toBe(`bytes of ${A.files[0]}`);
  });

  it('streams one token a chunk and ends with llama.cpp’s usage', async () => {
    const { engine, fake } = setup();
    await engine.load(A.id);
    const outputs = await collect(engine, request({ temperature: 0 }));
    expect(
      outputs.filter((o) => o.type === 'token').map((o) => o.type === 'token' && o.text),
    ).toEqual(PIECES);
    expect(outputs.at(-1)).toMatchObject({
      type: 'end',
      finish_reason: 'stop',
      usage: { prompt_tokens: 30, completion_tokens: PIECES.length + 1 },
    });
    expect(fake.instances[0]?.requests[0]).toMatchObject({
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(engine.lastSpeed).toMatchObject({ decode_tokens_per_s: 500 });
  });

  it('holds back a stop string whatever llama.cpp sends, and ends with stop', async () => {
    const { engine, fake } = setup();
    // As if llama.cpp had streamed the stop string (it does not): the filter still cuts.
    fake.script = () => reply(PIECES, 'length');
    await engine.load(A.id);
    const outputs = await collect(engine, request({ stop: ['n f'] }));
    expect(text(outputs)).toBe('The quick brow');
    expect(outputs.at(-1)).toMatchObject({
      type: 'end',
      finish_reason: 'stop',
      usage: { prompt_tokens: 30, completion_tokens: PIECES.length + 1 },
    });
    expect(fake.instances[0]?.requests[0]).toMatchObject({ stop: ['n f'] });
  });

  it('stops llama.cpp through its abort signal when the request’s aborts, with no end', async () => {
    const { engine, fake } = setup();
    fake.script = () =>
      reply(
        Array.from({ length: 1000 }, (_, i) => `t${i} `),
        'length',
      );
    await engine.load(A.id);
    const abort = new AbortController();
    const outputs: EngineOutput[] = [];
    for await (const output of engine.generate(request(), abort.signal)) {
      outputs.push(output);
      if (outputs.length === 3) abort.abort();
    }
    const sent = fake.instances[0]?.requests[0]?.abortSignal as AbortSignal;
    expect(sent.aborted).toBe(true);
    expect(outputs.length).toBeLessThan(10);
    expect(outputs.some((o) => o.type === 'end')).toBe(false);
    // And the next request answers.
    fake.script = () => reply(PIECES);
    expect(text(await collect(engine, request()))).toBe(PIECES.join(''));
  });

  it('runs n choices one after another with seed + i, counting the prompt once', async () => {
    const { engine, fake } = setup();
    await engine.load(A.id);
    const outputs = await collect(engine, request({ n: 2, seed: 7 }));
    expect(fake.instances[0]?.requests.map((r) => r.seed)).toEqual([7, 8]);
    expect(outputs[0]).toEqual({ type: 'progress' });
    const choices = outputs.find((o) => o.type === 'choices');
    expect(choices?.type === 'choices' && choices.choices.map((c) => c.content)).toEqual([
      PIECES.join(''),
      PIECES.join(''),
    ]);
    expect(outputs.at(-1)).toEqual({
      type: 'end',
      finish_reason: 'stop',
      usage: { prompt_tokens: 30, completion_tokens: 2 * (PIECES.length + 1) },
    });
  });

  it('refuses logit_bias on ids the vocabulary has not, instead of dropping them', async () => {
    const { engine } = setup();
    await engine.load(A.id);
    const error = await collect(engine, request({ logit_bias: { '300': 5 } })).catch(
      (e: unknown) => e,
    );
    expect((error as OpenAIError).toBody().error).toMatchObject({
      code: 'invalid_value',
      param: 'logit_bias',
    });
  });

  it('loads the model again after the wasm failed for good', async () => {
    const { engine, fake } = setup();
    fake.script = () => {
      const error = new Error('memory access out of bounds');
      error.name = 'RuntimeError';
      throw error;
    };
    await engine.load(A.id);
    const error = await collect(engine, request()).catch((e: unknown) => e);
    expect((error as OpenAIError).toBody().error.code).toBe('engine_error');
    expect(engine.isLoaded(A.id)).toBe(false);
    expect(fake.instances[0]?.exited).toBe(true);
  });

  it('says a model that is not loaded is unavailable rather than running another', async () => {
    const { engine } = setup();
    await expect(collect(engine, request())).rejects.toThrow(/not loaded/);
  });
});
