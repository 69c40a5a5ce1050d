/**
 * The fixture GGUF (scripts/fixture-gguf.mjs) through the real llama.cpp: wllama 3.13 in
 * Chromium, one thread, no WebGPU, the model from a Blob. The page lives on an origin of its own
 * that `page.route` serves from memory and node_modules (tests/e2e/wllama-page.ts), so none of
 * the app is involved: this holds the fixture to what the engine tests will rely on (the
 * sentence, whatever the sampler).
 *
 * HEARTH_FIXTURE_MEASURE=1 adds a measurement of both variants (load time, tokens/s) to the log.
 */
import { expect, test, type Page } from '@playwright/test';
import type {
  ChatCompletionChunk,
  ChatCompletionResponse,
  CreateEmbeddingResponse,
  EmbeddingCreateParams,
  LoadModelParams,
} from '@wllama/wllama';
import {
  BENCH_OPTIONS,
  FIXTURE_EMBEDDING_CONTEXT,
  FIXTURE_EMBEDDING_DIMENSIONS,
  FIXTURE_EMBEDDING_WORDS,
  FIXTURE_PIECES,
  FIXTURE_SENTENCE,
  FIXTURE_TOKEN_IDS,
  fixtureEmbedding,
  fixtureEmbeddingGguf,
  fixtureEmbeddingTokens,
  fixtureGguf,
  splitGguf,
} from '../../scripts/fixture-gguf.mjs';
import { loadModel, servePage, type WllamaPage } from './wllama-page';

/** The page's site: the models are served by name under /models/. */
const SITE = { origin: 'https://fixture.test', folder: 'models', title: 'fixture' };

/** A request body as llama-server takes it: wllama passes fields its types lack (`stop`, …). */
type ChatBody = Record<string, unknown>;

const USER = [{ role: 'user', content: 'Tell me something.' }];

function chat(page: Page, body: ChatBody): Promise<ChatCompletionResponse> {
  return page.evaluate(
    (body) =>
      (globalThis as unknown as WllamaPage).wllama.createChatCompletion({
        ...(body as { messages: [] }),
        stream: false,
      }),
    body,
  );
}

async function chatStream(page: Page, body: ChatBody): Promise<ChatCompletionChunk[]> {
  return page.evaluate(async (body) => {
    const stream = await (globalThis as unknown as WllamaPage).wllama.createChatCompletion({
      ...(body as { messages: [] }),
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    return chunks;
  }, body);
}

const contentOf = (chunks: ChatCompletionChunk[]) =>
  chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '');

test.describe('the fixture GGUF in llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser }) => {
    page = await browser.newPage();
    const model = fixtureGguf();
    await servePage(page, SITE, {
      'fixture.gguf': model,
      ...Object.fromEntries(splitGguf(model, 2).map((part, i) => [`part-${i + 1}.gguf`, part])),
    });
    await loadModel(page, SITE, ['fixture.gguf']);
  });

  test.afterAll(async () => {
    await page.evaluate(() => (globalThis as unknown as WllamaPage).wllama?.exit());
    await page.close();
  });

  test('loads with its special tokens and chat template', async () => {
    const info = await page.evaluate(() =>
      (globalThis as unknown as WllamaPage).wllama.getLoadedContextInfo(),
    );
    expect(info).toMatchObject({
      token_bos: FIXTURE_TOKEN_IDS.bos,
      token_eos: FIXTURE_TOKEN_IDS.eos,
      token_eot: FIXTURE_TOKEN_IDS.imEnd,
      has_chat: true,
      n_layer: 1,
    });
    expect([...info.list_tokens_eog].sort()).toEqual([
      FIXTURE_TOKEN_IDS.eos,
      FIXTURE_TOKEN_IDS.imEnd,
    ]);
  });

  test('answers with the sentence at temperature 0', async () => {
    const reply = await chat(page, { messages: USER, temperature: 0 });
    expect(reply.choices[0]?.message.content).toBe(FIXTURE_SENTENCE);
    expect(reply.choices[0]?.finish_reason).toBe('stop');
    // One token a piece, and the end of the turn.
    expect(reply.usage.completion_tokens).toBe(FIXTURE_PIECES.length + 1);
    expect(reply.usage.prompt_tokens).toBeGreaterThan(10);
  });

  test('answers the same at temperature 1.5 with a seed, after a system prompt and turns', async () => {
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello! How can I help?' },
      { role: 'user', content: 'What is on your mind?' },
    ];
    for (const seed of [1, 42]) {
      const reply = await chat(page, { messages, temperature: 1.5, seed, top_k: 0, top_p: 1 });
      expect(reply.choices[0]?.message.content).toBe(FIXTURE_SENTENCE);
    }
  });

  test('streams one piece a chunk, then usage on request', async () => {
    const chunks = await chatStream(page, {
      messages: USER,
      stream_options: { include_usage: true },
    });
    expect(contentOf(chunks).join('')).toBe(FIXTURE_SENTENCE);
    expect(contentOf(chunks).filter(Boolean)).toEqual(FIXTURE_PIECES);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual([
      'stop',
    ]);
    const usage = chunks.at(-1)?.usage;
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  test('stops at max_tokens with finish_reason length', async () => {
    const reply = await chat(page, { messages: USER, max_tokens: 3 });
    expect(reply.choices[0]?.message.content).toBe(FIXTURE_PIECES.slice(0, 3).join(''));
    expect(reply.choices[0]?.finish_reason).toBe('length');
  });

  test('repeats the sentence when the end is ignored', async () => {
    const reply = await chat(page, { messages: USER, ignore_eos: true, max_tokens: 20 });
    expect(reply.choices[0]?.message.content).toBe(
      FIXTURE_SENTENCE + FIXTURE_PIECES.slice(0, 5).join(''),
    );
    expect(reply.choices[0]?.finish_reason).toBe('length');
  });

  test('cuts at a stop string', async () => {
    const reply = await chat(page, { messages: USER, stop: [' fox'] });
    expect(reply.choices[0]?.message.content).toBe('The quick brown');
    expect(reply.choices[0]?.finish_reason).toBe('stop');
  });

  test('takes prompts of any characters', async () => {
    for (const content of [
      '🦊🐕‍🦺 emoji, a ZWJ sequence too',
      '敏捷的棕色狐狸跳过了懒狗。',
      'Ελληνικά, العربية, עברית, हिन्दी',
      'tabs\tand\nnewlines\r\n and <|im_end|> as text',
      '',
    ]) {
      const reply = await chat(page, { messages: [{ role: 'user', content }], temperature: 0 });
      expect(reply.choices[0]?.message.content, content).toBe(FIXTURE_SENTENCE);
    }
  });

  test('stops generating on abortSignal', async () => {
    const outcome = await page.evaluate(async () => {
      const controller = new AbortController();
      const stream = await (globalThis as unknown as WllamaPage).wllama.createChatCompletion({
        messages: [{ role: 'user', content: 'go on' }],
        ignore_eos: true,
        max_tokens: 100_000,
        stream: true,
        abortSignal: controller.signal,
      });
      let pieces = 0;
      try {
        for await (const chunk of stream) {
          if (chunk.choices[0]?.delta.content && ++pieces === 5) controller.abort();
        }
        return 'ended';
      } catch (error) {
        return (error as Error).name;
      }
    });
    expect(outcome).toBe('AbortError');
    // And it answers the next request.
    const reply = await chat(page, { messages: USER, max_tokens: 2 });
    expect(reply.choices[0]?.message.content).toBe(FIXTURE_PIECES.slice(0, 2).join(''));
  });

  test('a cut-short file: loadModel resolves, and only the context info shows the failure', async () => {
    const outcome = await page.evaluate(async () => {
      const { Wllama } = globalThis as unknown as WllamaPage;
      const wllama = new Wllama(
        { default: new URL('/wllama/wllama.wasm', location.href).href },
        { suppressNativeLog: true },
      );
      const blob = (await (await fetch('/models/fixture.gguf')).blob()).slice(0, 200_000);
      await wllama.loadModel([blob], { n_threads: 1, n_gpu_layers: 0 });
      const info = wllama.getLoadedContextInfo() as { n_vocab: number; success?: boolean };
      const loaded = wllama.isModelLoaded();
      await wllama.exit();
      return { success: info.success, n_vocab: info.n_vocab, loaded };
    });
    // wllama 3.13 does not check llama.cpp's answer; a chat would then abort the wasm.
    expect(outcome).toEqual({ success: false, n_vocab: 0, loaded: true });
  });

  test('loads split into two GGUF files', async () => {
    await loadModel(page, SITE, ['part-1.gguf', 'part-2.gguf']);
    const reply = await chat(page, { messages: USER });
    expect(reply.choices[0]?.message.content).toBe(FIXTURE_SENTENCE);
  });
});

test('measures both variants (HEARTH_FIXTURE_MEASURE=1)', async ({ page }) => {
  test.skip(!process.env.HEARTH_FIXTURE_MEASURE, 'a measurement, not a check');
  test.setTimeout(180_000);
  const variants = { default: fixtureGguf(), bench: fixtureGguf(BENCH_OPTIONS) };
  await servePage(page, SITE, variants);
  for (const [name, bytes] of Object.entries(variants)) {
    const loadMs = await loadModel(page, SITE, [name]);
    // The first request warms up; the second is measured.
    for (const round of ['warm-up', 'measured']) {
      const started = Date.now();
      const reply = await chat(page, { messages: USER, ignore_eos: true, max_tokens: 256 });
      const wallMs = Date.now() - started;
      const timings = (reply as unknown as { timings?: Record<string, number> }).timings;
      if (round === 'measured') {
        console.log(
          `${name}: ${bytes.length} bytes, load ${Math.round(loadMs)} ms, ` +
            `${reply.usage.completion_tokens} tokens in ${wallMs} ms wall ` +
            `(${Math.round((1000 * reply.usage.completion_tokens) / wallMs)} tok/s), ` +
            `llama.cpp: ${JSON.stringify(timings)}`,
        );
      }
    }
  }
  await page.evaluate(() => (globalThis as unknown as WllamaPage).wllama?.exit());
});

/** `createEmbedding`'s answer, or the message of the error it threw. */
async function embed(
  page: Page,
  body: EmbeddingCreateParams,
): Promise<CreateEmbeddingResponse | { error: string }> {
  return page.evaluate(async (body) => {
    try {
      return await (globalThis as unknown as WllamaPage).wllama.createEmbedding(body);
    } catch (error) {
      return { error: (error as Error).message };
    }
  }, body);
}

/** Throws unless `response` is an answer; gives its vectors, in the order of `data`. */
function vectorsOf(response: CreateEmbeddingResponse | { error: string }): number[][] {
  if ('error' in response) throw new Error(response.error);
  return response.data.map((item) => item.embedding as number[]);
}

const maxDiff = (a: number[], b: number[]) => {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
};

/** Texts of one-token words, and two that SentencePiece splits into letters and merges. */
const TEXTS = [
  'is to be',
  'we do no',
  'me my me my me my',
  FIXTURE_EMBEDDING_WORDS.join(' '),
  'to be or not to be',
  'the cat is on the mat',
];

/** Loads the embedding fixture (or another GGUF of it by name) as an embedding model. */
const loadEmbedding = (
  page: Page,
  name = 'embedding.gguf',
  params: Partial<LoadModelParams> = {},
) =>
  loadModel(page, SITE, [name], { embeddings: true, n_ctx: FIXTURE_EMBEDDING_CONTEXT, ...params });

/**
 * The embedding fixture through llama-server's embedding handler in wllama 3.13 (facts seen here,
 * Chromium, November 2026): llama.cpp reads `llama.pooling_type` from the GGUF for the llama
 * architecture (no `pooling_type` needed at load; one given overrides it), adds `<s>` and `</s>`
 * to texts as `add_bos_token`/`add_eos_token` say but nothing to token-id input, L2-normalises by
 * default (`embd_normalize` 2), and refuses an input longer than the physical batch (`n_ubatch`,
 * 512 = the context here) with "input (N tokens) is too large to process. increase the physical
 * batch size (current batch size: 512)".
 */
test.describe('the embedding fixture in llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser }) => {
    page = await browser.newPage();
    await servePage(page, SITE, {
      'embedding.gguf': fixtureEmbeddingGguf(),
      'embedding-last.gguf': fixtureEmbeddingGguf({ pooling: 3 }),
    });
    await loadEmbedding(page);
  });

  test.afterAll(async () => {
    await page.evaluate(() => (globalThis as unknown as WllamaPage).wllama?.exit());
    await page.close();
  });

  test('loads with BOS and EOS added, its width and context', async () => {
    const info = await page.evaluate(() =>
      (globalThis as unknown as WllamaPage).wllama.getLoadedContextInfo(),
    );
    expect(info).toMatchObject({
      n_embd: FIXTURE_EMBEDDING_DIMENSIONS,
      n_ctx: FIXTURE_EMBEDDING_CONTEXT,
      n_ctx_train: FIXTURE_EMBEDDING_CONTEXT,
      add_bos_token: true,
      add_eos_token: true,
      token_bos: FIXTURE_TOKEN_IDS.bos,
      token_eos: FIXTURE_TOKEN_IDS.eos,
    });
    expect(info.metadata['llama.pooling_type']).toBe('1');
  });

  test('embeds a text as the closed form says: mean pooling read from the GGUF, L2-normalised', async () => {
    const ids = fixtureEmbeddingTokens('is to be');
    const response = await embed(page, { input: 'is to be' });
    const [vector] = vectorsOf(response);
    expect(maxDiff(vector!, fixtureEmbedding(ids))).toBeLessThan(1e-5);
    expect(response).toMatchObject({
      object: 'list',
      data: [{ object: 'embedding', index: 0 }],
      // <s> ▁is ▁to ▁be </s>: EOS is added too.
      usage: { prompt_tokens: 5, total_tokens: 5 },
    });
  });

  test('embeds a batch in input order, and counts every text’s tokens', async () => {
    const response = await embed(page, { input: TEXTS });
    if ('error' in response) throw new Error(response.error);
    expect(response.data.map((item) => item.index)).toEqual(TEXTS.map((_, i) => i));
    const vectors = vectorsOf(response);
    TEXTS.forEach((text, i) => {
      expect(
        maxDiff(vectors[i]!, fixtureEmbedding(fixtureEmbeddingTokens(text))),
        text,
      ).toBeLessThan(1e-5);
    });
    const tokens = TEXTS.reduce((sum, text) => sum + fixtureEmbeddingTokens(text).length, 0);
    expect(response.usage.prompt_tokens).toBe(tokens);
  });

  test('takes token ids as they are: no BOS or EOS added to them', async () => {
    const ids = fixtureEmbeddingTokens('the cat is on the mat');
    const bare = ids.slice(1, -1);
    const vectors = vectorsOf(await embed(page, { input: [ids, bare] }));
    expect(maxDiff(vectors[0]!, fixtureEmbedding(ids))).toBeLessThan(1e-5);
    expect(maxDiff(vectors[1]!, fixtureEmbedding(bare))).toBeLessThan(1e-5);
    const [text] = vectorsOf(await embed(page, { input: 'the cat is on the mat' }));
    expect(maxDiff(vectors[0]!, text!)).toBeLessThan(1e-6);
  });

  test('returns the raw mean with embd_normalize -1, and the taxicab-normed one with 1', async () => {
    const ids = fixtureEmbeddingTokens('me my me my me my');
    for (const normalize of [-1, 1] as const) {
      const [vector] = vectorsOf(
        await embed(page, { input: 'me my me my me my', embd_normalize: normalize }),
      );
      expect(
        maxDiff(vector!, fixtureEmbedding(ids, { normalize })),
        String(normalize),
      ).toBeLessThan(1e-5);
    }
  });

  test('takes an input of 512 tokens, and refuses one of 513: the physical batch', async () => {
    const words = (n: number) =>
      Array.from({ length: n }, (_, i) => FIXTURE_EMBEDDING_WORDS[i % 12]).join(' ');
    const fits = words(FIXTURE_EMBEDDING_CONTEXT - 2);
    expect(fixtureEmbeddingTokens(fits)).toHaveLength(FIXTURE_EMBEDDING_CONTEXT);
    const [vector] = vectorsOf(await embed(page, { input: fits }));
    expect(maxDiff(vector!, fixtureEmbedding(fixtureEmbeddingTokens(fits)))).toBeLessThan(1e-5);
    const outcome = await embed(page, { input: words(FIXTURE_EMBEDDING_CONTEXT - 1) });
    // wllama 3.13: "input (513 tokens) is too large to process. increase the physical batch size
    // (current batch size: 512)", thrown as a WllamaError.
    expect(outcome).toEqual({
      error:
        'input (513 tokens) is too large to process. increase the physical batch size (current batch size: 512)',
    });
    // And it answers the next request.
    expect(vectorsOf(await embed(page, { input: 'we do no' }))).toHaveLength(1);
  });

  test('pools as the GGUF says (last token with pooling_type 3), unless the load says otherwise', async () => {
    const ids = fixtureEmbeddingTokens('is to be');
    const eosOnly = fixtureEmbedding([FIXTURE_TOKEN_IDS.eos]);
    await loadEmbedding(page, 'embedding-last.gguf');
    expect(maxDiff(vectorsOf(await embed(page, { input: 'is to be' }))[0]!, eosOnly)).toBeLessThan(
      1e-5,
    );
    await loadEmbedding(page, 'embedding-last.gguf', { pooling_type: 'mean' });
    const [mean] = vectorsOf(await embed(page, { input: 'is to be' }));
    expect(maxDiff(mean!, fixtureEmbedding(ids))).toBeLessThan(1e-5);
    await loadEmbedding(page, 'embedding.gguf', { pooling_type: 'last' });
    const [last] = vectorsOf(await embed(page, { input: 'is to be' }));
    expect(maxDiff(last!, eosOnly)).toBeLessThan(1e-5);
  });
});

test('measures the embedding fixture (HEARTH_FIXTURE_MEASURE=1)', async ({ page }) => {
  test.skip(!process.env.HEARTH_FIXTURE_MEASURE, 'a measurement, not a check');
  test.setTimeout(180_000);
  const variants = {
    embedding: { bytes: fixtureEmbeddingGguf(), width: FIXTURE_EMBEDDING_DIMENSIONS },
    'embedding-bench': { bytes: fixtureEmbeddingGguf(BENCH_OPTIONS), width: BENCH_OPTIONS.width },
  };
  await servePage(
    page,
    SITE,
    Object.fromEntries(Object.entries(variants).map(([name, { bytes }]) => [name, bytes])),
  );
  // 64 short texts of 2 to 9 words.
  const texts = Array.from({ length: 64 }, (_, i) =>
    Array.from(
      { length: 2 + (i % 8) },
      (_, j) => FIXTURE_EMBEDDING_WORDS[(i * 7 + j * 3) % FIXTURE_EMBEDDING_WORDS.length],
    ).join(' '),
  );
  for (const [name, { bytes, width }] of Object.entries(variants)) {
    const loadMs = await loadModel(page, SITE, [name], {
      embeddings: true,
      n_ctx: FIXTURE_EMBEDDING_CONTEXT,
    });
    for (const round of ['warm-up', 'measured']) {
      const started = Date.now();
      const response = await embed(page, { input: texts });
      const wallMs = Date.now() - started;
      const vectors = vectorsOf(response);
      const worst = Math.max(
        ...texts.map((text, i) =>
          maxDiff(vectors[i]!, fixtureEmbedding(fixtureEmbeddingTokens(text), { width })),
        ),
      );
      expect(worst).toBeLessThan(1e-5);
      if (round === 'measured' && !('error' in response)) {
        console.log(
          `${name}: ${bytes.length} bytes, load ${Math.round(loadMs)} ms, 64 texts ` +
            `(${response.usage.prompt_tokens} tokens) in ${wallMs} ms wall, ` +
            `max abs difference from fixtureEmbedding ${worst.toExponential(1)}`,
        );
      }
    }
  }
  await page.evaluate(() => (globalThis as unknown as WllamaPage).wllama?.exit());
});
