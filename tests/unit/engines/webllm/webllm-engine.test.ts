/**
 * Hearth's WebLLM engine driving WebLLM 0.2.86's own `MLCEngine`, with only the GPU replaced
 * (./webllm-harness.ts): request checks, mutations, prompt templates, streams, stop handling,
 * seeding, usage, logprobs, locks and device losses are the library's, not a fake's. Embeddings
 * are the exception: the harness's pipelines are chat ones, so `engine.embeddings.create` is a
 * fake with WebLLM's signature (`embedFake`), on the same engine and the same devices.
 */
import type { EmbeddingCreateParams } from '@mlc-ai/web-llm';
import { describe, expect, it } from 'vitest';
import type { EmbedOutput } from '../../../../src/engines/engine';
import { WebLLMEngine } from '../../../../src/engines/webllm/webllm-engine';
import { loadPhase } from '../../../../src/engines/webllm/webllm-load';
import { NO_TOOL_ROLE, WebLLMHarness, type ScriptedModel } from './webllm-harness';
import {
  CALL,
  EMBED_ID,
  WEATHER,
  arctic,
  collect,
  copy,
  endOf,
  hermes,
  plain,
  request,
  run,
  setup,
  smol,
  textOf,
  useFakeAdapter,
  type EmbedFake,
} from './webllm-fixture';

useFakeAdapter();

describe('WebLLMEngine on WebLLM 0.2.86', () => {
  it('streams a reply, counts every prompt token, and frees WebLLM’s lock for the next request', async () => {
    const { engine, harness } = setup({ [smol.id]: { reply: () => ['Hel', 'lo'] } });
    await engine.load(smol.id);
    const first = await run(engine, request(smol));
    expect(first.slice(0, -1)).toEqual([
      { type: 'token', text: 'Hel' },
      { type: 'token', text: 'lo' },
    ]);
    const prompt = harness.tokenizer.encode(harness.prompts[0] ?? '').length;
    expect(endOf(first)).toMatchObject({
      finish_reason: 'stop',
      usage: { prompt_tokens: prompt, completion_tokens: 3 },
    });
    expect(textOf(await run(engine, request(smol)))).toBe('Hello');
  });

  it('loads a model by WebLLM’s own id, and a self-hosted copy of it from the copy’s files', async () => {
    const { engine, harness } = setup({
      [smol.id]: { reply: () => ['prebuilt'] },
      [copy.id]: { reply: () => ['copy'] },
    });
    await engine.load(copy.id);
    expect(textOf(await run(engine, request(copy)))).toBe('copy');
    await engine.load(smol.id);
    expect(textOf(await run(engine, request(smol)))).toBe('prebuilt');
    expect(harness.loads).toEqual(['Smol-q4f32_1-MLC', 'Smol-q4f32_1-MLC']);
  });

  it('says which model failed to load, and why', async () => {
    const { engine } = setup({});
    await expect(engine.load(smol.id)).rejects.toMatchObject({
      code: 'engine_error',
      message: expect.stringMatching(
        /^Loading mlc-ai\/Smol-q4f32_1-MLC failed: Error: Failed to fetch/,
      ),
    });
    expect(engine.loadError).toMatchObject({ model: smol.id, error: { code: 'engine_error' } });
  });

  it('interrupts WebLLM when the request is aborted, and the next request runs', async () => {
    const abort = new AbortController();
    const { engine } = setup({
      [smol.id]: {
        reply: () => ['tick '],
        endless: true,
        onToken: (_, step) => step === 3 && abort.abort(),
      },
    });
    await engine.load(smol.id);
    const outputs = await collect(
      engine.generate(request(smol, { max_tokens: 100 }), abort.signal),
    );
    expect(outputs.every((o) => o.type === 'token')).toBe(true);
    expect(outputs.length).toBeLessThan(5);
    const next = await run(engine, request(smol, { max_tokens: 2 }));
    expect(endOf(next).finish_reason).toBe('length');
  });

  it('turns the context window error WebLLM throws at prefill into a 400', async () => {
    const { engine } = setup({
      [plain.id]: { reply: () => ['x'], chatConfig: { context_window_size: 64 } },
    });
    await engine.load(plain.id);
    const long = [{ role: 'user', content: 'a long prompt '.repeat(20) }];
    await expect(run(engine, request(plain, { messages: long }))).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
  });
});

describe('WebLLMEngine: tools on a function-calling model', () => {
  it('calls a tool (WebLLM decides function calling by its own model id)', async () => {
    const { engine, harness } = setup({ [hermes.id]: { reply: () => [CALL] } });
    await engine.load(hermes.id);
    const outputs = await run(engine, request(hermes, { tools: [WEATHER] }));
    const calls = outputs.find((o) => o.type === 'tool_calls');
    expect(calls?.type === 'tool_calls' && calls.calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(endOf(outputs).finish_reason).toBe('tool_calls');
    // WebLLM forced its JSON-array grammar and wrote its system prompt.
    expect(harness.responseFormats[0]).toMatchObject({ type: 'json_object' });
    expect(harness.prompts[0]).toContain('get_weather');
  });

  it('answers every choice of a tools request with several choices', async () => {
    const { engine } = setup({ [hermes.id]: { reply: () => [CALL] } });
    await engine.load(hermes.id);
    const outputs = await run(engine, request(hermes, { tools: [WEATHER], n: 2 }));
    const choices = outputs.find((o) => o.type === 'choices');
    expect(choices?.type === 'choices' && choices.choices.map((c) => c.finish_reason)).toEqual([
      'tool_calls',
      'tool_calls',
    ]);
  });

  it('answers a reply that calls no tool with a plain stop, not an empty tool call', async () => {
    const { engine } = setup({ [hermes.id]: { reply: () => ['[]'] } });
    await engine.load(hermes.id);
    const outputs = await run(engine, request(hermes, { tools: [WEATHER] }));
    expect(outputs).toEqual([endOf(outputs)]);
    expect(endOf(outputs).finish_reason).toBe('stop');
  });

  it('writes an earlier turn’s tool calls into the prompt as the model emits them', async () => {
    const { engine, harness } = setup({ [hermes.id]: { reply: () => ['It is sunny.'] } });
    await engine.load(hermes.id);
    const body = request(hermes, {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '21 °C, sunny' },
      ],
    });
    expect(textOf(await run(engine, body))).toBe('It is sunny.');
    expect(harness.prompts[0]).toContain(
      '<|im_start|>assistant\n[{"name":"get_weather","arguments":{"city":"Paris"}}]<|im_end|>',
    );
    expect(harness.prompts[0]).toContain('<|im_start|>tool\n21 °C, sunny<|im_end|>');
  });

  it('refuses a tool message on a template without a tool role with a 400 naming messages', async () => {
    const { engine } = setup({
      [plain.id]: { reply: () => ['ok'], chatConfig: { conv_template: NO_TOOL_ROLE } },
    });
    await engine.load(plain.id);
    const body = request(plain, {
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c', content: 'r' },
      ],
    });
    await expect(run(engine, body)).rejects.toMatchObject({
      status: 400,
      code: 'unsupported_parameter',
      param: 'messages',
    });
  });
});

describe('WebLLMEngine: prompts, stop strings, seeds and logprobs', () => {
  it('keeps the template’s role tokens when messages carry a name', async () => {
    const { engine, harness } = setup({ [smol.id]: { reply: () => ['ok'] } });
    await engine.load(smol.id);
    await run(
      engine,
      request(smol, {
        messages: [
          { role: 'user', content: 'q', name: 'alice' },
          { role: 'assistant', content: 'a', name: 'bot' },
          { role: 'user', content: 'hi', name: 'alice' },
        ],
      }),
    );
    expect(harness.prompts[0]).toContain('<|im_start|>user\nq<|im_end|>');
    expect(harness.prompts[0]).toContain('<|im_start|>assistant\na<|im_end|>');
    expect(harness.prompts[0]).not.toContain('alice');
  });

  it.each([
    ['a stop string within one token', ['Hello', ' w', 'orld', '!'], 'wor', 'Hello '],
    ['a stop string across tokens', ['Hello', ' wo', 'rld'], 'lo w', 'Hel'],
  ])(
    'never lets the start of %s reach the reply, streamed or not',
    async (_, reply, stop, expected) => {
      const { engine } = setup({ [smol.id]: { reply: () => reply } });
      await engine.load(smol.id);
      for (const stream of [true, false]) {
        const outputs = await run(engine, request(smol, { stop, stream }));
        expect(textOf(outputs)).toBe(expected);
        expect(endOf(outputs).finish_reason).toBe('stop');
      }
    },
  );

  it('seeds each choice differently, and the same request the same way again', async () => {
    const { engine, harness } = setup({
      [smol.id]: { reply: (turn) => [`seed ${turn.seed ?? 'none'}`] },
    });
    await engine.load(smol.id);
    const body = request(smol, { n: 3, seed: 42, temperature: 1 });
    const contents = async () => {
      const outputs = await run(engine, body);
      const choices = outputs.find((o) => o.type === 'choices');
      return choices?.type === 'choices' ? choices.choices.map((c) => c.content) : [];
    };
    const first = await contents();
    expect(new Set(first).size).toBe(3);
    expect(await contents()).toEqual(first);
    // Three seeds of WebLLM's range, and the same three again (WebLLM reseeds from the clock
    // after each choice: those are left out).
    const seeds = harness.seeds.filter((s) => s < 2 ** 31);
    expect(new Set(seeds.slice(0, 3)).size).toBe(3);
    expect(seeds.slice(3)).toEqual(seeds.slice(0, 3));
  });

  it('shows a reply of several choices under way before it is complete', async () => {
    const { engine } = setup({ [smol.id]: { reply: () => ['a', 'b'] } });
    await engine.load(smol.id);
    const outputs = await run(engine, request(smol, { n: 2 }));
    expect(outputs.map((o) => o.type)).toEqual(['progress', 'choices', 'end']);
  });

  it('gives a logprob entry for every token of text that splits characters across tokens', async () => {
    // こ is three bytes, each a token of its own (the byte fallback); ん is one token.
    const reply = [{ bytes: [0xe3] }, { bytes: [0x81] }, { bytes: [0x93] }, 'ん', ' 👋'];
    const { engine } = setup({ [smol.id]: { reply: () => reply } });
    await engine.load(smol.id);
    for (const stream of [true, false]) {
      const outputs = await run(engine, request(smol, { logprobs: true, top_logprobs: 2, stream }));
      expect(textOf(outputs)).toBe('こん 👋');
      const entries = outputs.flatMap((o) => (o.type === 'token' ? (o.logprobs ?? []) : []));
      expect(entries).toHaveLength(reply.length);
      expect(entries.every((e) => e.top_logprobs.length === 2)).toBe(true);
    }
  });

  it('gives logprobs when they are asked for without top_logprobs', async () => {
    const { engine } = setup({ [smol.id]: { reply: () => ['a', 'b'] } });
    await engine.load(smol.id);
    const outputs = await run(engine, request(smol, { logprobs: true }));
    const entries = outputs.flatMap((o) => (o.type === 'token' ? (o.logprobs ?? []) : []));
    expect(entries.map((e) => e.token)).toEqual(['a', 'b']);
    expect(entries.every((e) => e.top_logprobs.length === 0)).toBe(true);
  });

  it('sends the text WebLLM held back mid-character when max_tokens cuts the reply', async () => {
    // The second token is 'c' and the first byte of こ: WebLLM holds the whole delta back.
    const { engine } = setup({ [smol.id]: { reply: () => ['ab', { bytes: [0x63, 0xe3] }] } });
    await engine.load(smol.id);
    const outputs = await run(engine, request(smol, { max_tokens: 2 }));
    expect(textOf(outputs)).toBe('abc');
    expect(endOf(outputs).finish_reason).toBe('length');
  });

  it('takes top_p 0 as "the most likely token only", which WebLLM would refuse', async () => {
    const { engine } = setup({ [smol.id]: { reply: () => ['ok'] } });
    await engine.load(smol.id);
    expect(textOf(await run(engine, request(smol, { top_p: 0 })))).toBe('ok');
  });

  it('honours ignore_eos up to max_tokens', async () => {
    const { engine } = setup({ [smol.id]: { reply: () => ['a'] } });
    await engine.load(smol.id);
    const outputs = await run(engine, request(smol, { ignore_eos: true, max_tokens: 3 }));
    expect(endOf(outputs)).toMatchObject({
      finish_reason: 'length',
      usage: { completion_tokens: 3 },
    });
  });
});

describe('WebLLMEngine: GPU device losses', () => {
  it('notices an out-of-memory after loading, and loads the model again for the next request', async () => {
    const { engine, harness, losses } = setup({ [smol.id]: { reply: () => ['ok'] } });
    await engine.load(smol.id);
    // WebLLM answers a failed allocation by destroying the device (tryCreateBuffer).
    harness.device.destroy();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(engine.isLoaded(smol.id)).toBe(false);
    expect(losses[smol.id]).toBeUndefined(); // idle: not the model's doing
    await engine.load(smol.id);
    expect(textOf(await run(engine, request(smol)))).toBe('ok');
  });

  it('refuses a model that runs out of GPU memory while loading with a 503 not to retry, and counts it', async () => {
    const { engine, losses } = setup({
      [smol.id]: { reply: () => ['ok'], onLoad: (h) => h.device.destroy() },
    });
    const error = await engine.load(smol.id).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 503,
      code: 'webgpu_unavailable',
      shouldRetry: false,
      message: expect.stringMatching(/GPU memory/),
    });
    expect(engine.isLoaded(smol.id)).toBe(false);
    expect(losses[smol.id]).toBe(1);
  });

  it('refuses a model whose device is lost as it allocates, after its download, alike', async () => {
    // WebLLM's own device-lost handler unloads; its reload then throws DeviceLostError.
    const { engine, losses } = setup({
      [smol.id]: { reply: () => ['ok'], onAllocate: (h) => h.device.destroy() },
    });
    const error = await engine.load(smol.id).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 503,
      code: 'webgpu_unavailable',
      shouldRetry: false,
      message: expect.stringMatching(/does not fit this device/),
    });
    expect(engine.isLoaded(smol.id)).toBe(false);
    expect(losses[smol.id]).toBe(1);
  });

  it('fails the running request when the device is lost mid-reply with a 503 not to retry', async () => {
    const { engine, losses } = setup({
      [smol.id]: {
        reply: () => ['a'],
        endless: true,
        onToken: (h, step) => step === 2 && h.device.loseUnexpectedly('GPU process crashed'),
      },
    });
    await engine.load(smol.id);
    await expect(run(engine, request(smol, { max_tokens: 50 }))).rejects.toMatchObject({
      status: 503,
      code: 'webgpu_unavailable',
      shouldRetry: false,
    });
    expect(engine.isLoaded(smol.id)).toBe(false);
    expect(losses[smol.id]).toBe(1);
  });

  it('counts no loss when Hearth unloads, nor when the device is lost while the model sits idle', async () => {
    const { engine, harness, losses } = setup({ [smol.id]: { reply: () => ['ok'] } });
    await engine.load(smol.id);
    await engine.unload();
    await engine.load(smol.id);
    harness.device.loseUnexpectedly();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(losses).toEqual({});
    expect(engine.isLoaded(smol.id)).toBe(false);
  });

  it('forgets a model’s earlier losses once it answers', async () => {
    const { engine, losses } = setup(
      { [smol.id]: { reply: () => ['ok'] } },
      { losses: { [smol.id]: 1 } },
    );
    await engine.load(smol.id);
    await run(engine, request(smol));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(losses[smol.id]).toBeUndefined();
  });

  it('refuses a model that lost the device twice while running, instead of loading it again and again', async () => {
    const { engine, harness } = setup({
      [smol.id]: {
        reply: () => ['a'],
        endless: true,
        onToken: (h, step) => step === 2 && h.device.loseUnexpectedly(),
      },
    });
    for (let i = 0; i < 2; i += 1) {
      await engine.load(smol.id);
      await run(engine, request(smol, { max_tokens: 50 })).catch(() => undefined);
    }
    await engine.settled();
    expect(engine.failing[smol.id]).toMatch(/twice/);
    await expect(engine.load(smol.id)).rejects.toMatchObject({ code: 'webgpu_unavailable' });
    expect(harness.loads).toHaveLength(2);
  });
});

/** WebLLM's raw first-token states, by input position (lengths 5, 2 and 3: not normalised). */
const RAW = [
  [3, 4, 0],
  [0, 0, -2],
  [1, 2, 2],
];
/** The same vectors with length 1. */
const UNIT = [
  [0.6, 0.8, 0],
  [0, 0, -1],
  [1 / 3, 2 / 3, 2 / 3],
];

/** WebLLM's request input as a list of inputs (it takes one string or one token-id array too). */
function inputsOf(input: EmbeddingCreateParams['input']): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && input.every((x) => typeof x === 'number')) return [input as number[]];
  return input as (string | number[])[];
}

/** Tokens of an input for the fake: a word or an id each, and the [CLS] and [SEP] around them. */
const tokensOf = (input: string | number[]) =>
  (typeof input === 'string' ? input.split(' ').filter(Boolean).length : input.length) + 2;

/** WebLLM's error for an input over the context window, as its embedding pipeline throws it. */
function tooLong(context: number, size: number): Error {
  const err = new Error(
    `The embedding model you are using only supports up to ${context} context size.` +
      `However, an input in the batch has size ${size}.`,
  );
  err.name = 'EmbeddingExceedContextWindowSizeError';
  return err;
}

/**
 * `engine.embeddings.create` as WebLLM 0.2.86 answers it: the model by `getModelIdToUse`'s rules,
 * an input over 512 tokens refused for the whole batch, a state per input (`RAW`, not
 * normalised), and `data` listed in reverse, which nothing in the API forbids.
 */
function webllmEmbeddings(options: { before?: (h: WebLLMHarness) => Promise<void> | void } = {}) {
  const requests: EmbeddingCreateParams[] = [];
  const create: EmbedFake = async (request, harness) => {
    requests.push(structuredClone(request));
    await options.before?.(harness);
    const loaded = [...(harness.engine?.loadedModelIdToPipeline.keys() ?? [])];
    if (loaded.length === 0) {
      const err = new Error('Model not loaded before trying to complete EmbeddingCreateParams.');
      err.name = 'ModelNotLoadedError';
      throw err;
    }
    const inputs = inputsOf(request.input);
    const sizes = inputs.map(tokensOf);
    const over = sizes.find((n) => n > 512);
    if (over !== undefined) throw tooLong(512, over);
    const data = inputs.map((_, index) => ({
      object: 'embedding' as const,
      index,
      embedding: RAW[index % RAW.length] ?? [],
    }));
    const tokens = sizes.reduce((a, b) => a + b, 0);
    return {
      object: 'list',
      model: request.model ?? '',
      data: data.reverse(),
      usage: { prompt_tokens: tokens, total_tokens: tokens, extra: { prefill_tokens_per_s: 900 } },
    };
  };
  return { create, requests };
}

async function embedAll(outputs: AsyncIterable<EmbedOutput>): Promise<EmbedOutput[]> {
  const out: EmbedOutput[] = [];
  for await (const o of outputs) out.push(o);
  return out;
}

const embedRequest = (input: string[] | number[][]) => ({ model: arctic.id, input });

const vectorsOf = (outputs: EmbedOutput[]) => {
  const last = outputs.at(-1);
  if (last?.type !== 'embeddings') throw new Error(`no vectors: ${JSON.stringify(outputs)}`);
  return last;
};

const lengthOf = (v: Float32Array) => Math.hypot(...v);

describe('WebLLMEngine: embeddings', () => {
  async function loaded(
    fake = webllmEmbeddings(),
    extra: Partial<Record<string, ScriptedModel>> = {},
  ) {
    const setupResult = setup(
      { [arctic.id]: { reply: () => [] }, ...extra },
      { embed: fake.create },
    );
    await setupResult.engine.load(arctic.id);
    return { ...setupResult, requests: fake.requests };
  }
  const embed = (engine: WebLLMEngine, input: string[] | number[][], signal?: AbortSignal) =>
    embedAll(engine.embed(embedRequest(input), signal ?? new AbortController().signal));

  it('asks WebLLM once, with the model’s WebLLM id and all the inputs as given', async () => {
    const { engine, requests } = await loaded();
    const texts = ['a cat', 'a dog', 'a market'];
    await embed(engine, texts);
    const ids = [
      [101, 2009, 102],
      [101, 7592, 2088, 102],
    ];
    await embed(engine, ids);
    expect(requests).toEqual([
      { input: texts, model: EMBED_ID },
      { input: ids, model: EMBED_ID },
    ]);
  });

  it('returns the vectors in input order though WebLLM lists them otherwise, each of length 1', async () => {
    const { engine } = await loaded();
    const { vectors } = vectorsOf(await embed(engine, ['one', 'two', 'three']));
    expect(vectors).toHaveLength(3);
    vectors.forEach((vector, i) => {
      expect(vector).toBeInstanceOf(Float32Array);
      const expected = UNIT[i] ?? [];
      expect(vector).toHaveLength(expected.length);
      expected.forEach((x, j) => expect(vector[j]).toBeCloseTo(x, 6));
      expect(lengthOf(vector)).toBeCloseTo(1, 6);
    });
  });

  it('takes prompt_tokens from WebLLM’s usage', async () => {
    const { engine } = await loaded();
    // The fake counts a token a word and two special tokens an input: 2 + 3 and 3 + 2.
    const outputs = await embed(engine, ['hello there', 'how are you']);
    expect(outputs).toEqual([{ type: 'embeddings', vectors: expect.any(Array), prompt_tokens: 9 }]);
    const ids = await embed(engine, [[1, 2, 3, 4]]);
    expect(vectorsOf(ids).prompt_tokens).toBe(6);
  });

  it('gives WebLLM an embedding model’s record with model_type 1, and a chat model’s without one', async () => {
    const { engine, harness } = await loaded(webllmEmbeddings(), {
      [smol.id]: { reply: () => ['ok'] },
    });
    const record = (id: string) =>
      harness.engine?.appConfig.model_list.find((r) => r.model_id === id);
    expect(record(EMBED_ID)).toMatchObject({ model_id: EMBED_ID, model_type: 1 });
    expect(harness.engine?.loadedModelIdToModelType.get(EMBED_ID)).toBe(1);
    await engine.load(smol.id);
    expect(record(smol.model_id)).toBeDefined();
    expect(record(smol.model_id)).not.toHaveProperty('model_type');
    expect(harness.engine?.loadedModelIdToModelType.get(smol.model_id)).toBe(0);
  });

  it('names the input of a batch that WebLLM refuses alone as too long, trying only those that may be', async () => {
    const { engine, requests } = await loaded();
    // 600 bytes but one token: may be too long, and is not. 600 words: is.
    const long = 'word '.repeat(600).trim();
    const input = ['short', 'a'.repeat(600), long, 'word '.repeat(700).trim()];
    const error = await embed(engine, input).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
      param: 'input[2]',
      message: expect.stringContaining('Input 2 is longer than'),
    });
    // The batch, then the inputs that may be too long, alone, up to the first that is.
    expect(requests.map((r) => r.input)).toEqual([input, [input[1]], [long]]);
  });

  it('names `input` when a single input is too long, text or token ids', async () => {
    const { engine } = await loaded();
    for (const input of [['word '.repeat(600)], [Array.from({ length: 600 }, (_, i) => i)]]) {
      await expect(embed(engine, input as string[] | number[][])).rejects.toMatchObject({
        status: 400,
        code: 'context_length_exceeded',
        param: 'input',
      });
    }
  });

  it('ends without vectors when the request is aborted before WebLLM answers, and the next runs', async () => {
    const abort = new AbortController();
    let asked: () => void = () => undefined;
    const askedP = new Promise<void>((resolve) => (asked = resolve));
    let answer: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    let first = true;
    const fake = webllmEmbeddings({
      before: async () => {
        if (!first) return;
        first = false;
        asked();
        await gate;
      },
    });
    const { engine } = await loaded(fake);
    const pending = embed(engine, ['a', 'b'], abort.signal);
    await askedP;
    abort.abort();
    answer();
    expect(await pending).toEqual([]);
    expect(vectorsOf(await embed(engine, ['a'])).vectors).toHaveLength(1);
  });

  it('asks nothing of WebLLM for a request aborted before it starts', async () => {
    const { engine, requests } = await loaded();
    const abort = new AbortController();
    abort.abort();
    expect(await embed(engine, ['a'], abort.signal)).toEqual([]);
    expect(requests).toEqual([]);
  });

  it('fails as chat does when WebLLM has dropped the model: a 503 to retry, and a load next time', async () => {
    const notLoaded = () => {
      const err = new Error('Model not loaded before trying to complete EmbeddingCreateParams.');
      err.name = 'ModelNotLoadedError';
      return err;
    };
    let drop = true;
    const fake = webllmEmbeddings({
      before: () => {
        if (drop) throw notLoaded();
      },
    });
    const { engine, harness } = await loaded(fake, { [smol.id]: { reply: () => ['ok'] } });
    const embedding = await embed(engine, ['a']).catch((e: unknown) => e);
    // Chat, on WebLLM's own engine, after WebLLM unloaded by itself.
    await engine.load(smol.id);
    await harness.engine?.unload();
    const chat = await run(engine, request(smol)).catch((e: unknown) => e);
    expect(chat).toMatchObject({
      name: 'OpenAIError',
      message: expect.stringMatching(/loads again/),
    });
    const shape = (e: unknown) => {
      const { status, code, retryAfter, message } = e as Record<string, unknown>;
      return { status, code, retryAfter, message: String(message).replace(/^\S+/, '<model>') };
    };
    expect(shape(embedding)).toEqual(shape(chat));
    expect(shape(embedding)).toMatchObject({
      status: 503,
      code: 'engine_unavailable',
      retryAfter: 1,
    });
    expect(engine.isLoaded(arctic.id)).toBe(false);
    drop = false;
    await engine.load(arctic.id);
    expect(vectorsOf(await embed(engine, ['a'])).vectors).toHaveLength(1);
  });

  it('turns any other WebLLM failure into a 500 that keeps its name and message, as for chat', async () => {
    const fake = webllmEmbeddings({
      before: () => {
        throw new TypeError('Cannot read properties of undefined');
      },
    });
    const { engine } = await loaded(fake);
    await expect(embed(engine, ['a'])).rejects.toMatchObject({
      status: 500,
      code: 'engine_error',
      message: 'The engine failed: TypeError: Cannot read properties of undefined',
    });
  });

  it('fails the request when the device is lost while embedding with a 503 not to retry, and counts it', async () => {
    const fake = webllmEmbeddings({
      before: (h) => {
        h.device.loseUnexpectedly('GPU process crashed');
        return new Promise<never>(() => undefined); // WebLLM never answers
      },
    });
    const { engine, losses } = await loaded(fake);
    await expect(embed(engine, ['a'])).rejects.toMatchObject({
      status: 503,
      code: 'webgpu_unavailable',
      shouldRetry: false,
      message: expect.stringContaining('GPU process crashed'),
    });
    expect(engine.isLoaded(arctic.id)).toBe(false);
    await engine.settled();
    expect(losses[arctic.id]).toBe(1);
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
