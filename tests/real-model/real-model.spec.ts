/**
 * A real model through the API with the official `openai` SDK, on this machine's GPU: load,
 * answers streamed and not, usage, the order of a stream, an abort, stop strings, `n` with a
 * `seed`, `name` on messages, logprobs of multi-byte text, embeddings with WebLLM's small Snowflake
 * Arctic Embed, and tools on a function-calling model. Skips, saying why, where it cannot run: no
 * WebGPU adapter, only a fallback (CPU) adapter, or no way to get the files (the embeddings test
 * also when its model's files cannot be had or this GPU cannot run it; the tools tests when no
 * function-calling model fits this GPU or the browser's storage).
 */
import { readFileSync } from 'node:fs';
import { prebuiltAppConfig } from '@mlc-ai/web-llm';
import { expect, test, type Page } from '@playwright/test';
import type {
  ChatCompletionMessageParam,
  ChatCompletionTokenLogprob,
} from 'openai/resources/chat/completions';
import { filesUnreachable, realModel, realToolsModels } from '../../scripts/real-model.mjs';
import { OPENAI_BUNDLE } from '../e2e/helpers';
import { redSquare } from './red-square';

const model = await realModel();
const toolsCandidates = await realToolsModels();
/** WebLLM's small embedding model (384 numbers a vector, 512 tokens), always from the network. */
const EMBED_MODEL_ID = 'snowflake-arctic-embed-s-q0f32-MLC-b4';
const embedRecord = prebuiltAppConfig.model_list.find((r) => r.model_id === EMBED_MODEL_ID);
if (!embedRecord) throw new Error(`${EMBED_MODEL_ID} is not one of WebLLM 0.2.86's models`);
const embedModel = {
  id: `mlc-ai/${EMBED_MODEL_ID}`,
  record: embedRecord,
  dir: undefined,
  catalogue: undefined,
};
// Not serial: a failing check does not skip the ones after it. After a failure Playwright starts
// a new worker (a new browser, whose storage is empty): `beforeAll` opens the app again, and each
// test loads the model it needs (`ready`), downloading it again if it must.

let page: Page;
let skip: string | null = null;

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('./');
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready', { timeout: 60_000 });
  // The page's Content Security Policy allows no inline script: evaluate the SDK instead.
  await page.evaluate(readFileSync(OPENAI_BUNDLE, 'utf8'));
  const adapter = await page.evaluate(async () => {
    const gpu = (navigator as { gpu?: { requestAdapter(): Promise<unknown> } }).gpu;
    const found = (await gpu?.requestAdapter()) as
      | {
          info?: { vendor?: string; architecture?: string; isFallbackAdapter?: boolean };
          isFallbackAdapter?: boolean;
        }
      | null
      | undefined;
    if (!found) return null;
    return {
      name: `${found.info?.vendor ?? '?'} ${found.info?.architecture ?? ''}`.trim(),
      fallback: found.info?.isFallbackAdapter ?? found.isFallbackAdapter ?? false,
    };
  });
  if (!adapter)
    skip =
      'this browser has no WebGPU adapter (try HEARTH_CHROMIUM_ARGS="--enable-features=Vulkan")';
  else if (adapter.fallback)
    skip = `the only WebGPU adapter is a fallback (CPU) one (${adapter.name}): a real model would not be measured on a GPU`;
  else skip = await filesUnreachable(model);
  if (skip) console.log(`test:real-model skips: ${skip}`);
  await page.evaluate((baseURL) => {
    (globalThis as Record<string, unknown>).client = new OpenAI({
      baseURL,
      apiKey: 'real-model',
      dangerouslyAllowBrowser: true,
    });
  }, new URL('v1/openai', page.url()).href);
});

test.beforeEach(() => {
  test.skip(skip !== null, skip ?? '');
});

/** A model's entry in `GET /v1/hearth/catalog`. */
interface CatalogEntry {
  id: string;
  size_mb: number | null;
  available: boolean;
  unavailable_reason?: string;
  downloaded: boolean;
  loaded: boolean;
  tools: boolean;
}

/** `GET /v1/hearth/catalog`'s entry for `id`. */
function catalogEntry(id: string): Promise<CatalogEntry | undefined> {
  return page.evaluate(async (id) => {
    const response = await fetch('v1/hearth/catalog', {
      headers: { authorization: 'Bearer real-model' },
    });
    const catalog = (await response.json()) as { data: CatalogEntry[] };
    return catalog.data.find((m) => m.id === id);
  }, id);
}

/** `POST …/load`: puts `id` on the GPU, fetching through WebLLM whatever it lacks. */
function load(id: string) {
  return page.evaluate(async (id) => {
    const response = await fetch(`v1/hearth/models/${encodeURIComponent(id)}/load`, {
      method: 'POST',
      headers: { authorization: 'Bearer real-model' },
    });
    return { status: response.status, body: (await response.json()) as unknown };
  }, id);
}

/** Makes sure `id` is the model on the GPU (a no-op when it is already). */
async function ready(id: string): Promise<void> {
  const result = await load(id);
  expect(result.status, `loading ${id}: ${JSON.stringify(result.body)}`).toBe(200);
}

test(`loads ${model.id} onto the GPU, downloading what is missing`, async () => {
  const result = await load(model.id);
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  const entry = await catalogEntry(model.id);
  expect(entry).toMatchObject({ downloaded: true, loaded: true });
});

test('answers a non-streamed request, with usage', async () => {
  await ready(model.id);
  const completion = await page.evaluate(async (id) => {
    return client.chat.completions.create({
      model: id,
      messages: [{ role: 'user', content: 'Name three colours.' }],
      max_tokens: 32,
      temperature: 0,
    });
  }, model.id);
  const choice = completion.choices[0]!;
  expect(choice.message.content?.trim().length).toBeGreaterThan(0);
  expect(['stop', 'length']).toContain(choice.finish_reason);
  expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
  expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
  expect(completion.usage!.total_tokens).toBe(
    completion.usage!.prompt_tokens + completion.usage!.completion_tokens,
  );
});

test('streams in docs/api.md’s order (Responses): the role first, content, the finish, usage, then the end', async () => {
  await ready(model.id);
  const chunks = await page.evaluate(async (id) => {
    const stream = await client.chat.completions.create({
      model: id,
      messages: [{ role: 'user', content: 'Count from one to five.' }],
      max_tokens: 40,
      stream: true,
      stream_options: { include_usage: true },
    });
    const out = [];
    for await (const chunk of stream) out.push(chunk);
    return out;
  }, model.id);
  expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
  const usage = chunks.at(-1)!;
  expect(usage.choices).toEqual([]);
  expect(usage.usage!.completion_tokens).toBeGreaterThan(0);
  const final = chunks.at(-2)!.choices[0]!;
  expect(final.delta).toEqual({});
  expect(['stop', 'length']).toContain(final.finish_reason);
  for (const chunk of chunks.slice(1, -2)) {
    expect(chunk.choices[0]!.finish_reason).toBeNull();
    expect(chunk.choices[0]!.delta.role).toBeUndefined();
  }
  expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
});

test('counts every prompt token of a follow-up, the cached conversation included', async () => {
  await ready(model.id);
  const usages = await page.evaluate(async (id) => {
    const first = await client.chat.completions.create({
      model: id,
      messages: [{ role: 'user', content: 'Say hello.' }],
      max_tokens: 16,
      temperature: 0,
    });
    const second = await client.chat.completions.create({
      model: id,
      messages: [
        { role: 'user', content: 'Say hello.' },
        { role: 'assistant', content: first.choices[0]!.message.content ?? '' },
        { role: 'user', content: 'Again.' },
      ],
      max_tokens: 16,
      temperature: 0,
    });
    return [first.usage!, second.usage!];
  }, model.id);
  // WebLLM itself would count only the new tokens of the second request (docs/models.md, Real
  // models: usage).
  expect(usages[1]!.prompt_tokens).toBeGreaterThan(
    usages[0]!.prompt_tokens + usages[0]!.completion_tokens,
  );
});

test('stops a stream that is aborted, and answers the next request', async () => {
  await ready(model.id);
  const result = await page.evaluate(async (id) => {
    const abort = new AbortController();
    const stream = await client.chat.completions.create(
      {
        model: id,
        messages: [{ role: 'user', content: 'Write a long story about the sea.' }],
        max_tokens: 1000,
        stream: true,
      },
      { signal: abort.signal },
    );
    let chunks = 0;
    for await (const _chunk of stream) {
      chunks += 1;
      if (chunks === 5) abort.abort();
    }
    const next = await client.chat.completions.create({
      model: id,
      messages: [{ role: 'user', content: 'Say yes.' }],
      max_tokens: 8,
    });
    const status = await (
      await fetch('v1/hearth/status', { headers: { authorization: 'Bearer real-model' } })
    ).json();
    return { chunks, next: next.choices[0]!.message.content, status };
  }, model.id);
  expect(result.chunks).toBe(5);
  expect(result.next?.length).toBeGreaterThan(0);
  expect(result.status).toMatchObject({ queue: { running: 0, waiting: 0 }, open_ports: 0 });
});

/** Few-shot conversations whose replies hold each stop string, and the stop string. */
const STOP_CASES: { stop: string; messages: ChatCompletionMessageParam[] }[] = [
  {
    // Most tokenizers make ',' and ' 5' tokens of their own: the ',' arrives alone, and may be
    // sent before the ' 5' that completes the stop string.
    stop: ', 5',
    messages: [
      { role: 'user', content: 'Count from 1 to 3, separated by commas.' },
      { role: 'assistant', content: '1, 2, 3' },
      { role: 'user', content: 'Count from 1 to 10, separated by commas.' },
    ],
  },
  {
    // Begins inside the token ' quick' and ends inside ' brown': the reply is cut mid-token.
    stop: 'ick bro',
    messages: [
      { role: 'user', content: 'Repeat exactly: Hello there, my friend.' },
      { role: 'assistant', content: 'Hello there, my friend.' },
      { role: 'user', content: 'Repeat exactly: The quick brown fox jumps over the lazy dog.' },
    ],
  },
];

/** The longest non-empty start of `stop` that `text` ends with, or ''. */
function partialStopAtEnd(text: string, stop: string): string {
  for (let n = stop.length; n > 0; n -= 1) {
    if (text.endsWith(stop.slice(0, n))) return stop.slice(0, n);
  }
  return '';
}

for (const { stop, messages } of STOP_CASES) {
  test(`cuts the reply before the stop string ${JSON.stringify(stop)}, streamed and not, and sends no part of it`, async () => {
    await ready(model.id);
    const result = await page.evaluate(
      async ({ id, messages, stop }) => {
        const base = { model: id, messages, max_tokens: 48, temperature: 0, seed: 7 };
        const full = await client.chat.completions.create(base);
        const cut = await client.chat.completions.create({ ...base, stop: [stop] });
        const stream = await client.chat.completions.create({
          ...base,
          stop: [stop],
          stream: true,
        });
        let streamed = '';
        let streamedFinish: string | null = null;
        for await (const chunk of stream) {
          const choice = chunk.choices[0];
          streamed += choice?.delta.content ?? '';
          streamedFinish = choice?.finish_reason ?? streamedFinish;
        }
        return {
          full: full.choices[0]!.message.content ?? '',
          cut: cut.choices[0]!.message.content ?? '',
          cutFinish: cut.choices[0]!.finish_reason,
          streamed,
          streamedFinish,
        };
      },
      { id: model.id, messages, stop },
    );
    // At temperature 0 the reply is the same with the stop string as without it, up to it.
    expect(
      result.full,
      `without \`stop\` the model says ${JSON.stringify(result.full)}, which does not hold the stop string: nothing would be checked`,
    ).toContain(stop);
    const expected = result.full.slice(0, result.full.indexOf(stop));
    for (const [how, text] of [
      ['non-streamed', result.cut],
      ['streamed', result.streamed],
    ] as const) {
      expect(text, `the ${how} reply`).not.toContain(stop);
      // A start of the stop string sent before the rest of it arrived cannot be taken back.
      expect(
        partialStopAtEnd(text, stop),
        `the ${how} reply ${JSON.stringify(text)} ends with a start of ${JSON.stringify(stop)}`,
      ).toBe(partialStopAtEnd(expected, stop));
      expect(text, `the ${how} reply`).toBe(expected);
    }
    expect(result.streamed).toBe(result.cut);
    expect(result.cutFinish).toBe('stop');
    expect(result.streamedFinish).toBe('stop');
  });
}

test('gives n choices that differ for one seed, and the same choices again for it', async () => {
  await ready(model.id);
  const [first, again] = await page.evaluate(async (id) => {
    const request = {
      model: id,
      messages: [{ role: 'user' as const, content: 'Write one sentence about the sea.' }],
      n: 3,
      seed: 42,
      temperature: 1,
      max_tokens: 24,
    };
    const replies = [
      await client.chat.completions.create(request),
      await client.chat.completions.create(request),
    ];
    return replies.map((r) =>
      r.choices.map((c) => ({
        index: c.index,
        content: c.message.content,
        finish_reason: c.finish_reason,
      })),
    );
  }, model.id);
  expect(first!.map((c) => c.index)).toEqual([0, 1, 2]);
  for (const choice of first!) expect(choice.content?.trim().length).toBeGreaterThan(0);
  // WebLLM seeds every stream with the request's seed: each choice needs a seed of its own.
  expect(
    new Set(first!.map((c) => c.content)).size,
    `three choices alike: ${JSON.stringify(first)}`,
  ).toBeGreaterThan(1);
  expect(again, 'the same request with the same seed').toEqual(first);
});

test('answers a conversation whose messages carry a `name` as it answers the same without', async () => {
  await ready(model.id);
  const [named, plain] = await page.evaluate(async (id) => {
    const conversation = (names: boolean): ChatCompletionMessageParam[] => [
      { role: 'user', content: 'My favourite colour is green.' },
      {
        role: 'assistant',
        content: 'Noted: your favourite colour is green.',
        ...(names && { name: 'bot' }),
      },
      {
        role: 'user',
        content: 'What is my favourite colour? Answer in one word.',
        ...(names && { name: 'alice' }),
      },
    ];
    const replies = [];
    for (const names of [true, false]) {
      const reply = await client.chat.completions.create({
        model: id,
        messages: conversation(names),
        max_tokens: 16,
        temperature: 0,
      });
      replies.push({
        content: reply.choices[0]!.message.content,
        finish_reason: reply.choices[0]!.finish_reason,
        prompt_tokens: reply.usage!.prompt_tokens,
      });
    }
    return replies;
  }, model.id);
  expect(named!.content?.trim().length, JSON.stringify(named)).toBeGreaterThan(0);
  expect(['stop', 'length']).toContain(named!.finish_reason);
  // WebLLM would write a name in place of the role, and its template's special tokens with it
  // (`<|im_start|>user` becomes `alice`): a shorter prompt. Names dropped give the same prompt;
  // names written into the content, a few tokens more.
  const extra = named!.prompt_tokens - plain!.prompt_tokens;
  expect(
    extra,
    `prompt tokens: ${named!.prompt_tokens} named, ${plain!.prompt_tokens} not`,
  ).toBeGreaterThanOrEqual(0);
  expect(
    extra,
    `prompt tokens: ${named!.prompt_tokens} named, ${plain!.prompt_tokens} not`,
  ).toBeLessThanOrEqual(8);
});

test('gives logprobs of multi-byte text, one per token, whose tokens spell the reply', async () => {
  await ready(model.id);
  const replies = await page.evaluate(async (id) => {
    const request = {
      model: id,
      messages: [
        { role: 'user' as const, content: 'Reply with exactly: Grüße aus Köln' },
        { role: 'assistant' as const, content: 'Grüße aus Köln' },
        { role: 'user' as const, content: 'Reply with exactly: こんにちは 👋' },
      ],
      logprobs: true,
      top_logprobs: 2,
      max_tokens: 64,
      temperature: 0,
      seed: 3,
    };
    const whole = await client.chat.completions.create(request);
    const stream = await client.chat.completions.create({
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    const streamed = {
      content: '',
      finish_reason: null as string | null,
      logprobs: [] as ChatCompletionTokenLogprob[],
      completion_tokens: -1,
    };
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      streamed.content += choice?.delta.content ?? '';
      streamed.finish_reason = choice?.finish_reason ?? streamed.finish_reason;
      streamed.logprobs.push(...(choice?.logprobs?.content ?? []));
      if (chunk.usage) streamed.completion_tokens = chunk.usage.completion_tokens;
    }
    const choice = whole.choices[0]!;
    return {
      whole: {
        content: choice.message.content ?? '',
        finish_reason: choice.finish_reason as string | null,
        logprobs: choice.logprobs?.content ?? [],
        completion_tokens: whole.usage!.completion_tokens,
      },
      streamed,
    };
  }, model.id);
  for (const [how, reply] of Object.entries(replies)) {
    const label = `${how}: ${JSON.stringify(reply.content)}`;
    expect(
      reply.content,
      `${label} holds no multi-byte character: nothing would be checked`,
    ).toMatch(/[^\p{ASCII}]/u);
    expect(['stop', 'length'], label).toContain(reply.finish_reason);
    // WebLLM counts the stop token that ends a reply (SmolLM2's `<|im_end|>`) in
    // `completion_tokens` (its `curRoundCompletionTotalTokens`); that token has no text, and no
    // logprobs entry (as in OpenAI's replies).
    const expected = reply.completion_tokens - (reply.finish_reason === 'stop' ? 1 : 0);
    expect(
      reply.logprobs.length,
      `${label}: entries for ${reply.completion_tokens} completion tokens`,
    ).toBe(expected);
    for (const entry of reply.logprobs) {
      expect(entry.logprob, label).toBeLessThanOrEqual(0);
      expect(entry.top_logprobs, label).toHaveLength(2);
    }
    // The entries' tokens spell the reply. WebLLM 0.2.86 decodes each token on its own, so a
    // token that holds only part of a character reads U+FFFD (its `bytes` are U+FFFD's): such a
    // run stands for one or more characters outside ASCII. A reply cut by `max_tokens` in the
    // middle of a character leaves that character out of the content.
    const joined = reply.logprobs.map((entry) => entry.token).join('');
    const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const spelling = joined
      .split(/\uFFFD+/u)
      .map(escape)
      .join('[^\\x00-\\x7F]+');
    const tail = reply.finish_reason === 'length' ? '[^\\x00-\\x7F]*' : '';
    expect(reply.content, `${label}: the entries' tokens`).toMatch(
      new RegExp(`^${spelling}${tail}$`, 'u'),
    );
    for (const entry of reply.logprobs) {
      if (!entry.token.includes('\uFFFD')) {
        expect(entry.bytes, label).toEqual([...new TextEncoder().encode(entry.token)]);
      }
    }
  }
  expect(replies.streamed.content).toBe(replies.whole.content);
  expect(replies.streamed.logprobs.map((e) => e.bytes)).toEqual(
    replies.whole.logprobs.map((e) => e.bytes),
  );
});

/** Downloads `id` through the app (`POST …/download`, its progress as SSE); the last event. */
function download(id: string) {
  return page.evaluate(async (id) => {
    const response = await fetch(`v1/hearth/models/${encodeURIComponent(id)}/download`, {
      method: 'POST',
      headers: { authorization: 'Bearer real-model' },
    });
    // Progress as SSE: the stream keeps the service worker's answer alive for as long as it takes.
    const text = await response.text();
    if (!response.ok) return { status: response.status, last: text };
    const events = text.split('\n\n').filter((e) => e.startsWith('data: '));
    return { status: response.status, last: events.at(-1)?.slice('data: '.length) ?? '' };
  }, id);
}

/** The cosine of the angle between two vectors. */
function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (const [i, x] of a.entries()) dot += x * (b[i] ?? 0);
  return dot / (Math.hypot(...a) * Math.hypot(...b));
}

test(`embeds with ${embedModel.id}: unit vectors, the similar sentences closer, and chat after`, async () => {
  const entry = await catalogEntry(embedModel.id);
  expect(entry, `${embedModel.id} is in the catalogue`).toBeDefined();
  const why = !entry!.available
    ? `${embedModel.id} cannot run here: ${entry!.unavailable_reason ?? 'unavailable'}`
    : await filesUnreachable(embedModel).then((u) =>
        u ? `the files of ${embedModel.id} cannot be had: ${u}` : null,
      );
  if (why) console.log(`test:real-model skips the embeddings test: ${why}`);
  test.skip(why !== null, why ?? '');

  // The chat model first: the embedding model must not leave it unable to answer.
  await ready(model.id);
  const fetched = await download(embedModel.id);
  expect(fetched.status, fetched.last).toBe(200);
  expect(JSON.parse(fetched.last), fetched.last).toMatchObject({ phase: 'done' });
  expect(await catalogEntry(embedModel.id)).toMatchObject({ downloaded: true });

  const sentences = [
    'A cat sat on the mat.',
    'A kitten rested on the rug.',
    'Stock markets fell sharply today.',
  ];
  // The request loads the embedding model itself (WebLLM holds one model at a time here).
  const response = await page.evaluate(
    async ({ id, input }) => client.embeddings.create({ model: id, input }),
    { id: embedModel.id, input: sentences },
  );
  expect(response.object).toBe('list');
  expect(response.data.map((d) => d.index)).toEqual([0, 1, 2]);
  const vectors = response.data.map((d) => d.embedding);
  for (const [i, vector] of vectors.entries()) {
    expect(vector, `vector ${i}`).toHaveLength(384);
    expect(vector.every(Number.isFinite), `vector ${i} is all numbers`).toBe(true);
    expect(Math.abs(Math.hypot(...vector) - 1), `length of vector ${i}`).toBeLessThan(1e-3);
  }
  const [cat, kitten, stocks] = vectors as [number[], number[], number[]];
  const similar = cosine(cat, kitten);
  const detail = `cat·kitten ${similar}, cat·stocks ${cosine(cat, stocks)}, kitten·stocks ${cosine(kitten, stocks)}`;
  expect(similar, detail).toBeGreaterThan(cosine(cat, stocks));
  expect(similar, detail).toBeGreaterThan(cosine(kitten, stocks));
  expect(response.usage.prompt_tokens).toBeGreaterThan(0);
  expect(response.usage.total_tokens).toBe(response.usage.prompt_tokens);
  expect(await catalogEntry(embedModel.id)).toMatchObject({ downloaded: true, loaded: true });

  // The chat model answers after, loaded again if the embedding model took its place.
  const completion = await page.evaluate(
    async (id) =>
      client.chat.completions.create({
        model: id,
        messages: [{ role: 'user', content: 'Name three colours.' }],
        max_tokens: 32,
        temperature: 0,
      }),
    model.id,
  );
  expect(completion.choices[0]!.message.content?.trim().length).toBeGreaterThan(0);
});

/** The function-calling model of the tools tests, or why there is none. */
let toolsChoice: Promise<{ id: string } | { skip: string }> | undefined;

/**
 * The first candidate (smallest first) that this GPU can run, if its files can be had and the
 * browser's storage can hold them: Playwright's browser contexts are Chromium's incognito ones,
 * whose storage quota is a fraction of the machine's memory.
 */
async function chooseToolsModel(): Promise<{ id: string } | { skip: string }> {
  const status = await page.evaluate(async () => {
    const response = await fetch('v1/hearth/status', {
      headers: { authorization: 'Bearer real-model' },
    });
    return (await response.json()) as {
      storage: { usage_bytes: number | null; quota_bytes: number | null };
    };
  });
  const refused: string[] = [];
  for (const candidate of toolsCandidates) {
    const entry = await catalogEntry(candidate.id);
    if (!entry) throw new Error(`${candidate.id} is not in the catalogue`);
    expect(entry.tools, `${candidate.id} takes tools in the catalogue`).toBe(true);
    if (!entry.available) {
      refused.push(`${candidate.id}: ${entry.unavailable_reason ?? 'unavailable'}`);
      continue;
    }
    const unreachable = await filesUnreachable(candidate);
    if (unreachable) return { skip: `the files of ${candidate.id} cannot be had: ${unreachable}` };
    const { quota_bytes: quota, usage_bytes: usage } = status.storage;
    const free = quota === null ? Infinity : quota - (usage ?? 0);
    if (!entry.downloaded && entry.size_mb !== null && free < entry.size_mb * 1e6) {
      return {
        skip: `the browser's storage has ${Math.round(free / 1e6)} MB free, and ${candidate.id} needs about ${entry.size_mb} MB`,
      };
    }
    return { id: candidate.id };
  }
  return { skip: `no function-calling model can run on this GPU (${refused.join('; ')})` };
}

/** The function-calling model's id; skips the test, saying why, when there is none. */
async function toolsModel(): Promise<string> {
  toolsChoice ??= chooseToolsModel().then((choice) => {
    if ('skip' in choice) console.log(`test:real-model skips the tools tests: ${choice.skip}`);
    else console.log(`test:real-model tools tests on ${choice.id}`);
    return choice;
  });
  const choice = await toolsChoice;
  test.skip('skip' in choice, 'skip' in choice ? choice.skip : '');
  return 'id' in choice ? choice.id : '';
}

/** The tool of the tools tests. */
const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Gets the current weather in a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', description: 'The city, e.g. Paris' } },
      required: ['city'],
    },
  },
};

test('downloads and loads a function-calling model (several GB)', async () => {
  // Gigabytes: longer than the other tests may take on a slow line.
  test.setTimeout(60 * 60_000);
  const id = await toolsModel();
  const fetched = await download(id);
  expect(fetched.status, fetched.last).toBe(200);
  expect(JSON.parse(fetched.last), fetched.last).toMatchObject({ phase: 'done' });
  await ready(id);
  expect(await catalogEntry(id)).toMatchObject({ downloaded: true, loaded: true, tools: true });
});

test('calls a tool, then answers from its result in a turn without tools', async () => {
  const id = await toolsModel();
  await ready(id);
  const { first, second } = await page.evaluate(
    async ({ id, tool }) => {
      const question = {
        role: 'user' as const,
        content: 'What is the weather like in Paris right now? Answer in one short sentence.',
      };
      const first = await client.chat.completions.create({
        model: id,
        messages: [question],
        tools: [tool],
        tool_choice: 'auto',
        temperature: 0,
        max_tokens: 128,
      });
      const message = first.choices[0]!.message;
      const call = message.tool_calls?.[0];
      if (!call) return { first, second: null };
      // With tools WebLLM allows only a JSON array of calls: the answer comes in a turn without.
      const second = await client.chat.completions.create({
        model: id,
        messages: [
          question,
          { role: 'assistant', content: message.content, tool_calls: message.tool_calls },
          {
            role: 'tool',
            tool_call_id: call.id,
            content: JSON.stringify({ city: 'Paris', temperature_c: 18, conditions: 'sunny' }),
          },
        ],
        temperature: 0,
        max_tokens: 128,
      });
      return { first, second };
    },
    { id, tool: WEATHER_TOOL },
  );
  const choice = first.choices[0]!;
  expect(choice.finish_reason, JSON.stringify(choice)).toBe('tool_calls');
  expect(choice.message.content).toBeNull();
  const call = choice.message.tool_calls?.[0];
  expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  expect(call!.id).toEqual(expect.any(String));
  expect(call!.id.length).toBeGreaterThan(0);
  const args = JSON.parse((call as { function: { arguments: string } }).function.arguments) as {
    city?: unknown;
  };
  expect(args.city, JSON.stringify(args)).toEqual(expect.stringMatching(/paris/i));

  const answer = second!.choices[0]!;
  expect(answer.finish_reason, JSON.stringify(answer)).toBe('stop');
  expect(answer.message.tool_calls ?? []).toEqual([]);
  expect(answer.message.content?.trim().length, JSON.stringify(answer)).toBeGreaterThan(0);
  // The tool's result reached the model.
  expect(answer.message.content).toMatch(/18|sun/i);
});

test('answers a tools request with n: 2 with two choices, each a call', async () => {
  const id = await toolsModel();
  await ready(id);
  const completion = await page.evaluate(
    async ({ id, tool }) =>
      client.chat.completions.create({
        model: id,
        messages: [{ role: 'user', content: 'What is the weather like in Paris right now?' }],
        tools: [tool],
        tool_choice: 'auto',
        n: 2,
        temperature: 0,
        max_tokens: 128,
      }),
    { id, tool: WEATHER_TOOL },
  );
  // WebLLM adds its system prompt and grammar to the request it is given: a second choice run
  // from the same request object would be refused.
  expect(completion.choices.map((c) => c.index)).toEqual([0, 1]);
  const ids = [];
  for (const choice of completion.choices) {
    expect(choice.finish_reason, JSON.stringify(choice)).toBe('tool_calls');
    const call = choice.message.tool_calls?.[0];
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    const args = JSON.parse((call as { function: { arguments: string } }).function.arguments) as {
      city?: unknown;
    };
    expect(args.city, JSON.stringify(args)).toEqual(expect.any(String));
    ids.push(call!.id);
  }
  expect(new Set(ids).size, 'tool call ids').toBe(2);
});

declare global {
  var client: InstanceType<typeof OpenAI>;
}

/** WebLLM's vision-language models, f16 first (smaller and faster where the GPU has shader-f16). */
const VISION_IDS = [
  'Phi-3.5-vision-instruct-q4f16_1-MLC',
  'Phi-3.5-vision-instruct-q4f32_1-MLC',
] as const;

test('Phi-3.5-vision on WebGPU says that a plain red square is red, counting the image in its prompt', async () => {
  test.setTimeout(60 * 60_000);
  const candidates = [];
  for (const modelId of VISION_IDS) {
    const entry = await catalogEntry(`mlc-ai/${modelId}`);
    expect(entry, `mlc-ai/${modelId} is in the catalogue`).toBeDefined();
    if (entry!.available) candidates.push(modelId);
  }
  const modelId = candidates[0];
  const record = prebuiltAppConfig.model_list.find((r) => r.model_id === modelId);
  const vision = record && {
    id: `mlc-ai/${modelId}`,
    record,
    dir: undefined,
    catalogue: undefined,
  };
  const why = !vision
    ? 'neither Phi-3.5-vision model can run on this GPU'
    : await filesUnreachable(vision).then((u) =>
        u ? `the files of ${vision.id} cannot be had: ${u}` : null,
      );
  if (why) console.log(`test:real-model skips the vision test: ${why}`);
  test.skip(why !== null, why ?? '');

  await ready(vision!.id);
  const url = await redSquare(page, 336);
  const answer = await page.evaluate(
    async ({ id, url }) => {
      const question = 'What colour is this picture? Answer with one word.';
      const ask = (content: ChatCompletionMessageParam['content']) =>
        client.chat.completions.create({
          model: id,
          temperature: 0,
          max_tokens: 16,
          messages: [{ role: 'user', content } as ChatCompletionMessageParam],
        });
      const seen = await ask([
        { type: 'text', text: question },
        { type: 'image_url', image_url: { url } },
      ]);
      const unseen = await ask(question);
      return {
        text: seen.choices[0]?.message.content ?? '',
        withImage: seen.usage?.prompt_tokens ?? 0,
        without: unseen.usage?.prompt_tokens ?? 0,
      };
    },
    { id: vision!.id, url },
  );
  expect(answer.text).toMatch(/red/i);
  // Phi-3.5-vision embeds a 336×336 image in several hundred positions.
  expect(answer.withImage - answer.without).toBeGreaterThan(100);
});
