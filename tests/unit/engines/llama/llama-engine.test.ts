/**
 * The llama.cpp engine's own logic with wllama faked at its seam: how it loads (context, threads,
 * GPU layers, deadline, the vocabulary check, a model switch), streams, stops, aborts and runs
 * several choices. The real wllama runs in tests/e2e/llama.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import type { EmbedOutput, EngineOutput } from '../../../../src/engines/engine';
import { choiceSeed } from '../../../../src/engines/seeds';
import { LlamaEngine, type LlamaEngineOptions } from '../../../../src/engines/llama/llama-engine';
import type { LlamaLoadParams, WllamaLike } from '../../../../src/engines/llama/llama-library';
import { llamaThreads } from '../../../../src/engines/llama/llama-runtime';
import type { LlamaChunk } from '../../../../src/engines/llama/llama-chunks';
import { ggufEntry, LLAMA_MAX_CONTEXT, type GpuFacts } from '../../../../src/models/catalog';
import { OpenAIError } from '../../../../src/protocol/errors';
import { parseChatRequest } from '../../../../src/protocol/validate';
import { MemoryCaches } from '../../fake-storage';
import { eventually, ROOMY_LIMITS } from '../../helpers';

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
    limits: ROOMY_LIMITS,
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

  it('runs n choices one after another, each seeded from the seed and its index, counting the prompt once', async () => {
    const { engine, fake } = setup();
    await engine.load(A.id);
    const outputs = await collect(engine, request({ n: 2, seed: 7 }));
    expect(fake.instances[0]?.requests.map((r) => r.seed)).toEqual([7, choiceSeed(7, 1)]);
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

/** An embedding model of a small context (48 tokens), so that the fake's 50-long refusal is one. */
const E = ggufEntry(
  {
    id: 'acme/e-GGUF:Q8_0',
    files: ['https://models.example/e.gguf'],
    context_window: 48,
    embedding: { dimensions: 2, pooling: 'mean', normalized: true, matryoshka: [] },
  },
  'self-hosted',
);

/** An engine whose catalogue has the embedding model too, with A loaded and E beside it. */
async function embedding() {
  const made = setup({ catalog: () => [A, B, E], present: [A.id, B.id, E.id] });
  await made.engine.load(A.id);
  await made.engine.load(E.id);
  const [chat, embedder] = made.fake.instances;
  if (!chat || !embedder) throw new Error('expected two instances');
  return { ...made, chat, embedder };
}

/** Every output of an embeddings request, or what it threw. */
async function embedAll(
  engine: LlamaEngine,
  input: string[] | number[][],
  signal = new AbortController().signal,
): Promise<EmbedOutput[]> {
  const outputs: EmbedOutput[] = [];
  for await (const output of engine.embed({ model: E.id, input }, signal)) outputs.push(output);
  return outputs;
}

async function refusalOf(promise: Promise<unknown>): Promise<OpenAIError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OpenAIError);
  return error as OpenAIError;
}

/** Short inputs of different lengths (1 to 20 characters). */
const texts = (n: number) => Array.from({ length: n }, (_, i) => 'x'.repeat((i % 20) + 1));

describe('LlamaEngine embeddings', () => {
  it('loads an embedding model into a second instance with embeddings on and a batch of the whole context, leaving the chat model loaded', async () => {
    const { engine, fake, chat, embedder } = await embedding();
    expect(fake.instances).toHaveLength(2);
    expect(embedder.loads[0]?.params).toEqual({
      n_ctx: 48,
      n_threads: 1,
      n_gpu_layers: 0,
      n_parallel: 1,
      embeddings: true,
      n_batch: 48,
      n_ubatch: 48,
    });
    expect(chat.exited).toBe(false);
    expect(engine.loadedModel).toBe(A.id);
    expect(engine.isLoaded(A.id)).toBe(true);
    expect(engine.isLoaded(E.id)).toBe(true);
    expect(engine.besideModel).toBe(E.id);
    // The chat model still answers.
    expect(text(await collect(engine, request()))).toBe(PIECES.join(''));
  });

  it('says which models load beside the chat model: the embedding ones', () => {
    const { engine } = setup({ catalog: () => [A, B, E] });
    expect(engine.loadsBeside(E.id)).toBe(true);
    expect(engine.loadsBeside(A.id)).toBe(false);
    expect(engine.loadsBeside('acme/unknown-GGUF:Q4_0')).toBe(false);
  });

  it('has no beside model until one loads, and loads one with no chat model', async () => {
    const { engine, fake } = setup({ catalog: () => [A, B, E], present: [E.id] });
    expect(engine.besideModel).toBeNull();
    await engine.load(E.id);
    expect(engine.besideModel).toBe(E.id);
    expect(engine.loadedModel).toBeNull();
    expect(fake.instances).toHaveLength(1);
  });

  it('keeps the embedding model loaded when the chat model switches', async () => {
    const { engine, fake, chat, embedder } = await embedding();
    await engine.load(B.id);
    expect(chat.exited).toBe(true);
    expect(embedder.exited).toBe(false);
    expect(fake.instances).toHaveLength(3);
    expect(engine.besideModel).toBe(E.id);
    expect(engine.loadedModel).toBe(B.id);
  });

  it('returns one vector per input in input order, though llama.cpp lists them reversed', async () => {
    const { engine, embedder } = await embedding();
    const outputs = await embedAll(engine, ['abc', 'a', 'abcdefg']);
    expect(embedder.embedCalls).toEqual([['abc', 'a', 'abcdefg']]);
    expect(outputs).toEqual([
      {
        type: 'embeddings',
        vectors: [new Float32Array([3, 0]), new Float32Array([1, 1]), new Float32Array([7, 2])],
        prompt_tokens: 9,
      },
    ]);
  });

  it('embeds 65 inputs in chunks of 32 (3 calls), says progress between chunks, keeps the order and sums the tokens', async () => {
    const { engine, embedder, chat } = await embedding();
    const input = texts(65);
    const outputs = await embedAll(engine, input);
    expect(embedder.embedCalls.map((c) => c.length)).toEqual([32, 32, 1]);
    expect(embedder.embedCalls.flat()).toEqual(input);
    expect(chat.requests).toHaveLength(0);
    expect(outputs.map((o) => o.type)).toEqual(['progress', 'progress', 'embeddings']);
    const last = outputs.at(-1);
    if (last?.type !== 'embeddings') throw new Error('expected vectors');
    expect(last.prompt_tokens).toBe(3 * 65);
    expect(last.vectors).toHaveLength(65);
    for (const [i, vector] of last.vectors.entries()) {
      expect(Array.from(vector)).toEqual([input[i]?.length, i % 32]);
    }
  });

  it('names input[40] of 65 as too long (context_length_exceeded), trying it alone after llama.cpp refuses its chunk', async () => {
    const { engine, embedder } = await embedding();
    const input = texts(65);
    input[40] = 'y'.repeat(60);
    const error = await refusalOf(embedAll(engine, input));
    expect(error).toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
      param: 'input[40]',
    });
    expect(error.message).toContain('48 tokens');
    // The first chunk, the second (refused), then input 40 alone; never the third chunk.
    expect(embedder.embedCalls.map((c) => c.length)).toEqual([32, 32, 1]);
    expect(embedder.embedCalls[2]).toEqual([input[40]]);
  });

  it('names a single too-long input as input', async () => {
    const { engine } = await embedding();
    const error = await refusalOf(embedAll(engine, ['y'.repeat(60)]));
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
  });

  it('refuses a token id the vocabulary has not (300 of 300) with invalid_value naming input[i], before llama.cpp is asked', async () => {
    const { engine, embedder } = await embedding();
    const error = await refusalOf(embedAll(engine, [[1, 2], [299], [5, 300]]));
    expect(error).toMatchObject({ status: 400, code: 'invalid_value', param: 'input[2]' });
    expect(error.message).toContain('300');
    expect(embedder.embedCalls).toHaveLength(0);
  });

  it('names a single input with a token id out of the vocabulary as input', async () => {
    const { engine } = await embedding();
    const error = await refusalOf(embedAll(engine, [[300]]));
    expect(error).toMatchObject({ code: 'invalid_value', param: 'input' });
  });

  it('refuses token ids longer than the context with context_length_exceeded naming input[i], before llama.cpp is asked', async () => {
    const { engine, embedder } = await embedding();
    const ids = Array.from({ length: 49 }, () => 1);
    const error = await refusalOf(embedAll(engine, [[1], ids]));
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input[1]' });
    expect(embedder.embedCalls).toHaveLength(0);
    expect(await embedAll(engine, [ids.slice(0, 48)])).toHaveLength(1);
  });

  it('refuses a request of more than 300,000 tokens in all with context_length_exceeded naming input', async () => {
    const { engine, embedder } = await embedding();
    embedder.createEmbedding = async ({ input }) => ({
      data: input.map((_, index) => ({ index, embedding: [1, 0] })),
      usage: { prompt_tokens: 200_000 },
    });
    const error = await refusalOf(embedAll(engine, texts(33)));
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    expect(error.message).toContain('300000');
  });

  it('ends without vectors when aborted between chunks, and asks llama.cpp for no more', async () => {
    const { engine, embedder } = await embedding();
    const abort = new AbortController();
    const outputs: EmbedOutput[] = [];
    for await (const output of engine.embed({ model: E.id, input: texts(65) }, abort.signal)) {
      outputs.push(output);
      if (output.type === 'progress') abort.abort();
    }
    expect(outputs).toEqual([{ type: 'progress' }]);
    expect(embedder.embedCalls).toHaveLength(1);
  });

  it('ends without vectors or error when aborted while llama.cpp computes, through its abort signal', async () => {
    const { engine, embedder } = await embedding();
    const abort = new AbortController();
    const outputs = embedAll(engine, texts(3), abort.signal);
    await eventually(() => embedder.embedCalls.length === 1);
    abort.abort();
    expect(await outputs).toEqual([]);
  });

  it('says an embedding model that is not loaded is unavailable', async () => {
    const { engine } = setup({ catalog: () => [A, B, E] });
    const error = await refusalOf(embedAll(engine, ['a']));
    expect(error).toMatchObject({ code: 'engine_unavailable' });
  });

  it('lets the embedding instance go after the wasm failed for good, keeping the chat model', async () => {
    const { engine, embedder, chat } = await embedding();
    embedder.createEmbedding = async () => {
      const error = new Error('memory access out of bounds');
      error.name = 'RuntimeError';
      throw error;
    };
    const error = await refusalOf(embedAll(engine, ['a']));
    expect(error.code).toBe('engine_error');
    expect(engine.besideModel).toBeNull();
    expect(engine.isLoaded(E.id)).toBe(false);
    expect(embedder.exited).toBe(true);
    expect(chat.exited).toBe(false);
    expect(engine.loadedModel).toBe(A.id);
  });

  it('unload() exits both instances and forgets both models', async () => {
    const { engine, chat, embedder } = await embedding();
    await engine.unload();
    expect(chat.exited).toBe(true);
    expect(embedder.exited).toBe(true);
    expect(engine.loadedModel).toBeNull();
    expect(engine.besideModel).toBeNull();
    expect(engine.isLoaded(A.id)).toBe(false);
    expect(engine.isLoaded(E.id)).toBe(false);
  });
});
