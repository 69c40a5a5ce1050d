/**
 * Hearth's WebLLM engine driving WebLLM 0.2.86's own `MLCEngine`, with only the GPU replaced
 * (./webllm-harness.ts): request checks, mutations, prompt templates, streams, stop handling,
 * seeding, usage, logprobs, locks and device losses are the library's, not a fake's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../../src/engine-host/engine';
import {
  WebLLMEngine,
  loadPhase,
  type LossStore,
  type MLCEngineLike,
} from '../../../src/engine-host/webllm-engine';
import { catalogEntry, type CatalogEntry } from '../../../src/openai/catalog';
import { modelBaseUrl } from '../../../src/openai/on-device';
import { parseChatRequest } from '../../../src/openai/validate';
import { FakeGPUAdapter, NO_TOOL_ROLE, WebLLMHarness, type ScriptedModel } from './webllm-harness';

const APP = 'https://app.example/hearth/';
const HERMES_ID = 'Hermes-2-Pro-Llama-3-8B-q4f16_1-MLC';

const hermes = catalogEntry(
  {
    model: `https://huggingface.co/mlc-ai/${HERMES_ID}`,
    model_id: HERMES_ID,
    model_lib: 'https://libs.example/hermes.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: true },
);
const smol = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Smol-q4f32_1-MLC',
    model_id: 'Smol-q4f32_1-MLC',
    model_lib: 'https://libs.example/smol.wasm',
    overrides: { context_window_size: 2048 },
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
/** A self-hosted copy that repeats the prebuilt model's WebLLM id, from files of its own. */
const copy = catalogEntry(
  { model: 'models/smol', model_id: 'Smol-q4f32_1-MLC', model_lib: 'models/smol.wasm' },
  { owner: 'acme', id: 'acme/smol', source: 'self-hosted', tools: false },
);
/** A model whose template has no tool role. */
const plain = catalogEntry(
  {
    model: 'https://huggingface.co/mlc-ai/Plain-q4f32_1-MLC',
    model_id: 'Plain-q4f32_1-MLC',
    model_lib: 'https://libs.example/plain.wasm',
  },
  { owner: 'mlc-ai', source: 'prebuilt', tools: false },
);
const CATALOG = [hermes, smol, copy, plain];

let savedAdapter: unknown;
beforeAll(() => {
  // Hearth watches the devices the adapter hands out; the harness's loads ask this one.
  savedAdapter = (globalThis as { GPUAdapter?: unknown }).GPUAdapter;
  (globalThis as { GPUAdapter?: unknown }).GPUAdapter = FakeGPUAdapter;
});
afterAll(() => {
  (globalThis as { GPUAdapter?: unknown }).GPUAdapter = savedAdapter;
});

/** Losses kept in memory, as `DeviceLosses` keeps them in IndexedDB. */
function lossStore(initial: Record<string, number> = {}) {
  const counts: Record<string, number> = { ...initial };
  const store: LossStore = {
    record: async (model, detail) => {
      counts[model] = (counts[model] ?? 0) + 1;
      return { losses: counts[model] ?? 0, at: Date.now(), detail };
    },
    failing: async () =>
      Object.fromEntries(
        Object.entries(counts)
          .filter(([, n]) => n >= 2)
          .map(([m]) => [m, `${m} lost the device twice`]),
      ),
    clear: async (model) => {
      delete counts[model];
    },
  };
  return { store, counts };
}

function setup(
  scripts: Partial<Record<string, ScriptedModel>>,
  options: { losses?: Record<string, number> } = {},
) {
  const harness = new WebLLMHarness();
  for (const entry of CATALOG) {
    const script = scripts[entry.id];
    if (script) harness.models.set(modelBaseUrl(entry, APP), script);
  }
  const { store, counts } = lossStore(options.losses);
  const engine = new WebLLMEngine({
    catalog: CATALOG,
    appUrl: APP,
    caches: { open: async () => ({ match: async () => undefined }) },
    onChange: () => undefined,
    losses: store,
    createEngine: async (appConfig) =>
      (await harness.create(appConfig)) as unknown as MLCEngineLike,
  });
  return { engine, harness, losses: counts };
}

async function collect(outputs: AsyncIterable<EngineOutput>): Promise<EngineOutput[]> {
  const out: EngineOutput[] = [];
  for await (const o of outputs) out.push(o);
  return out;
}

const request = (model: CatalogEntry, extra: Record<string, unknown> = {}) =>
  parseChatRequest({ model: model.id, messages: [{ role: 'user', content: 'hi' }], ...extra });

const run = (engine: WebLLMEngine, body: ReturnType<typeof request>) =>
  collect(engine.generate(body, new AbortController().signal));

const textOf = (outputs: EngineOutput[]) =>
  outputs.map((o) => (o.type === 'token' ? o.text : '')).join('');

const endOf = (outputs: EngineOutput[]) => {
  const end = outputs.at(-1);
  if (end?.type !== 'end') throw new Error(`no end: ${JSON.stringify(outputs)}`);
  return end;
};

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  },
};
const CALL = '[{"name": "get_weather", "arguments": {"city": "Paris"}}]';

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
    expect(harness.seeds.filter((s) => s < 1000)).toEqual([42, 43, 44, 42, 43, 44]);
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
