/**
 * Embeddings through the real engine: the embedding fixture (scripts/fixture-gguf.mjs, a GGUF
 * with crafted weights, mean pooling) downloaded from the tests' model server, loaded by llama.cpp
 * in the engine worker beside the chat fixture, and asked through the service worker with the
 * official `openai` SDK and with plain fetch. Its vectors are known in closed form
 * (`fixtureEmbedding`), so every test compares numbers, not shapes.
 */
import { readFileSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';
import {
  FIXTURE_EMBEDDING_CONTEXT,
  FIXTURE_EMBEDDING_DIMENSIONS,
  FIXTURE_SENTENCE,
  fixtureEmbedding,
  fixtureEmbeddingTokens,
} from '../../scripts/fixture-gguf.mjs';
import { KEY } from './helpers';
import { endSuite, openSuitePage, test } from './warm-context';
import { ModelServer } from './model-server';

const MODEL = 'e2e/fixture-embed-GGUF:F32';
/** The same file, labelled in the e2e catalogue as trained for 64 and 32 dimensions. */
const MRL_MODEL = 'e2e/fixture-embed-mrl-GGUF:F32';
const CHAT_MODEL = 'e2e/fixture-GGUF:F32';

const server = new ModelServer();

/** The texts most tests embed: words of the fixture's vocabulary. */
const TEXTS = ['the cat is on the mat', 'a dog', 'we do be in my room'];

/** What the fixture gives `text`, in closed form. */
const expected = (text: string) => fixtureEmbedding(fixtureEmbeddingTokens(text));

/** Largest absolute difference between two vectors of the same length. */
function maxDiff(a: readonly number[], b: readonly number[]): number {
  expect(a).toHaveLength(b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - (b[i] ?? NaN))));
}

/** A request with plain fetch: its status, body and request id. */
function post(page: Page, path: string, body: Record<string, unknown>) {
  return page.evaluate(
    async ({ path, body, KEY }) => {
      const response = await fetch(path, {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify(body),
      });
      return {
        status: response.status,
        requestId: response.headers.get('x-request-id'),
        body: (await response.json()) as {
          data?: { object: string; index: number; embedding: number[] | string }[];
          model?: string;
          object?: string;
          usage?: { prompt_tokens: number; total_tokens: number; estimated_cost: number };
          error?: { code: string; param: string | null; message: string; type: string };
        },
      };
    },
    { path, body, KEY },
  );
}

/** `GET` a Hearth endpoint. */
function get<T>(page: Page, path: string): Promise<T> {
  return page.evaluate(
    async ({ path, KEY }) => (await (await fetch(path, { headers: KEY })).json()) as T,
    { path, KEY },
  );
}

/** Decodes the API's base64 (little-endian float32) as a test would, with Node's Buffer. */
function fromBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) out.push(bytes.readFloatLE(i));
  return out;
}

test.describe('embeddings from a GGUF model through llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    test.setTimeout(120_000);
    page = await openSuitePage({ browser, warmContexts }, testInfo, server);
    for (const model of [MODEL, CHAT_MODEL]) {
      const download = await post(page, `v1/hearth/models/${model}/download`, { stream: false });
      expect(download.body).toMatchObject({ model, phase: 'done' });
    }
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
    await server.stop();
  });

  test('is listed as an embedding model with its dimensions, in the catalogue and among the models', async () => {
    const catalog = await get<{ data: { id: string; embedding?: unknown; engine: string }[] }>(
      page,
      'v1/hearth/catalog',
    );
    expect(catalog.data.find((m) => m.id === MODEL)).toMatchObject({
      engine: 'llama.cpp',
      embedding: { dimensions: 128, pooling: 'mean', normalized: true, matryoshka: [] },
    });
    expect(catalog.data.find((m) => m.id === CHAT_MODEL)?.embedding).toBeUndefined();
    const models = await page.evaluate(async () => (await client.models.list()).data);
    expect(models.find((m) => m.id === MODEL)).toMatchObject({
      embeddings: true,
      dimensions: FIXTURE_EMBEDDING_DIMENSIONS,
    });
    expect(models.find((m) => m.id === CHAT_MODEL)).not.toHaveProperty('embeddings');
  });

  test('embeds one text as llama.cpp computes it, with usage from its tokenizer', async () => {
    const text = TEXTS[0]!;
    const reply = await post(page, 'v1/openai/embeddings', { model: MODEL, input: text });
    expect(reply.status).toBe(200);
    expect(reply.requestId).toBeTruthy();
    expect(reply.body).toMatchObject({ object: 'list', model: MODEL });
    const [item] = reply.body.data ?? [];
    expect(item).toMatchObject({ object: 'embedding', index: 0 });
    expect(maxDiff(item!.embedding as number[], expected(text))).toBeLessThan(1e-5);
    const tokens = fixtureEmbeddingTokens(text).length;
    expect(reply.body.usage).toEqual({
      prompt_tokens: tokens,
      total_tokens: tokens,
      estimated_cost: 0,
    });
  });

  test('embeds a batch in the input’s order, each vector its own text’s', async () => {
    const reply = await post(page, 'v1/embeddings', { model: MODEL, input: TEXTS });
    expect(reply.status).toBe(200);
    const data = reply.body.data ?? [];
    expect(data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const [i, text] of TEXTS.entries()) {
      expect(maxDiff(data[i]!.embedding as number[], expected(text))).toBeLessThan(1e-5);
    }
    const tokens = TEXTS.reduce((n, t) => n + fixtureEmbeddingTokens(t).length, 0);
    expect(reply.body.usage?.prompt_tokens).toBe(tokens);
  });

  test('embeds a batch of 100 (more than one chunk of llama.cpp work) in order', async () => {
    const words = ['is', 'to', 'in', 'of', 'on', 'at', 'me', 'my', 'we', 'be'];
    const texts = Array.from({ length: 100 }, (_, i) =>
      Array.from({ length: 1 + (i % 7) }, (_, j) => words[(i + j) % words.length]).join(' '),
    );
    const reply = await post(page, 'v1/openai/embeddings', { model: MODEL, input: texts });
    expect(reply.status).toBe(200);
    const data = reply.body.data ?? [];
    expect(data).toHaveLength(100);
    for (const [i, text] of texts.entries()) {
      expect(data[i]!.index).toBe(i);
      expect(maxDiff(data[i]!.embedding as number[], expected(text))).toBeLessThan(1e-5);
    }
  });

  test('returns base64 that decodes to the same float32 vector', async () => {
    const text = TEXTS[1]!;
    const float = await post(page, 'v1/openai/embeddings', { model: MODEL, input: text });
    const base64 = await post(page, 'v1/openai/embeddings', {
      model: MODEL,
      input: text,
      encoding_format: 'base64',
    });
    const encoded = base64.body.data?.[0]?.embedding;
    expect(typeof encoded).toBe('string');
    const decoded = fromBase64(encoded as string);
    expect(decoded).toEqual((float.body.data?.[0]?.embedding as number[]).map(Math.fround));
    expect(maxDiff(decoded, expected(text))).toBeLessThan(1e-5);
  });

  test('the openai SDK’s embeddings.create (base64 by default) gives the closed-form vectors', async () => {
    const reply = await page.evaluate(
      async ({ MODEL, TEXTS }) => await client.embeddings.create({ model: MODEL, input: TEXTS }),
      { MODEL, TEXTS },
    );
    expect(reply.data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const [i, text] of TEXTS.entries()) {
      expect(maxDiff(reply.data[i]!.embedding, expected(text))).toBeLessThan(1e-5);
    }
  });

  test('takes token ids as input and gives the vector of the text they spell', async () => {
    const text = TEXTS[0]!;
    const ids = fixtureEmbeddingTokens(text);
    const one = await post(page, 'v1/openai/embeddings', { model: MODEL, input: ids });
    expect(one.status).toBe(200);
    expect(maxDiff(one.body.data?.[0]?.embedding as number[], expected(text))).toBeLessThan(1e-5);
    const many = await post(page, 'v1/openai/embeddings', {
      model: MODEL,
      input: [ids, fixtureEmbeddingTokens(TEXTS[1]!)],
    });
    expect(many.body.data?.map((d) => d.index)).toEqual([0, 1]);
    expect(maxDiff(many.body.data?.[1]?.embedding as number[], expected(TEXTS[1]!))).toBeLessThan(
      1e-5,
    );
  });

  test('refuses dimensions for a model not trained for them, naming the field', async () => {
    const reply = await post(page, 'v1/openai/embeddings', {
      model: MODEL,
      input: 'a dog',
      dimensions: 64,
    });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'dimensions' });
    // Its own length is no change, and is answered.
    const same = await post(page, 'v1/openai/embeddings', {
      model: MODEL,
      input: 'a dog',
      dimensions: FIXTURE_EMBEDDING_DIMENSIONS,
    });
    expect(same.body.data?.[0]?.embedding).toHaveLength(FIXTURE_EMBEDDING_DIMENSIONS);
  });

  test('cuts a Matryoshka model’s vectors to the dimensions asked and normalises them again', async () => {
    const text = 'the cat is on the mat';
    const reply = await post(page, 'v1/openai/embeddings', {
      model: MRL_MODEL,
      input: text,
      dimensions: 64,
    });
    expect(reply.status).toBe(200);
    const vector = reply.body.data?.[0]?.embedding as number[];
    const full = expected(text).slice(0, 64);
    const norm = Math.hypot(...full);
    expect(
      maxDiff(
        vector,
        full.map((x) => x / norm),
      ),
    ).toBeLessThan(1e-5);
    const odd = await post(page, 'v1/openai/embeddings', {
      model: MRL_MODEL,
      input: text,
      dimensions: 50,
    });
    expect(odd.status).toBe(400);
    expect(odd.body.error).toMatchObject({ code: 'invalid_value', param: 'dimensions' });
  });

  test('refuses bad input with a 400 naming the field, and the next request still works', async () => {
    const tooLong = Array.from({ length: FIXTURE_EMBEDDING_CONTEXT }, () => 'a').join(' ');
    const cases: [Record<string, unknown>, string, string][] = [
      [{ input: '' }, 'invalid_value', 'input'],
      [{ input: [] }, 'invalid_value', 'input'],
      [{ input: ['a dog', ''] }, 'invalid_value', 'input[1]'],
      [{ input: [[]] }, 'invalid_value', 'input[0]'],
      [{ input: 42 }, 'invalid_type', 'input'],
      [{ input: ['a', 1] }, 'invalid_type', 'input[1]'],
      [{ input: [1.5] }, 'invalid_value', 'input[0]'],
      [{ input: [[1, 99999]] }, 'invalid_value', 'input'],
      [{ input: ['a dog', tooLong] }, 'context_length_exceeded', 'input[1]'],
      [{ input: tooLong }, 'context_length_exceeded', 'input'],
      [{ input: 'a dog', encoding_format: 'int8' }, 'invalid_value', 'encoding_format'],
      [{ input: 'a dog', model: CHAT_MODEL }, 'invalid_value', 'model'],
      [{ input: 'a dog', model: 'e2e/nothing-GGUF:F32' }, 'model_not_found', 'model'],
    ];
    for (const [body, code, param] of cases) {
      const reply = await post(page, 'v1/openai/embeddings', { model: MODEL, ...body });
      expect
        .soft(reply.body.error, JSON.stringify(body).slice(0, 80))
        .toMatchObject({ code, param });
    }
    const chat = await page.evaluate(async (MODEL) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return { status: response.status, body: (await response.json()) as { error?: object } };
    }, MODEL);
    expect(chat.status).toBe(400);
    expect(chat.body.error).toMatchObject({ code: 'invalid_value', param: 'model' });
    const after = await post(page, 'v1/openai/embeddings', { model: MODEL, input: 'a dog' });
    expect(maxDiff(after.body.data?.[0]?.embedding as number[], expected('a dog'))).toBeLessThan(
      1e-5,
    );
  });

  test('an aborted request stops, and the next one is answered at once', async () => {
    const started = await page.evaluate(async (MODEL) => {
      const big = Array.from({ length: 2048 }, (_, i) =>
        Array.from({ length: 200 }, (_, j) => ((i + j) % 2 ? 'is' : 'to')).join(' '),
      );
      const controller = new AbortController();
      const request = fetch('v1/openai/embeddings', {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, input: big }),
        signal: controller.signal,
      })
        // The status line leaves once llama.cpp is under way: the abort cuts the body.
        .then((response) => response.json())
        .then(
          () => 'answered',
          (err: Error) => err.name,
        );
      await new Promise((resolve) => setTimeout(resolve, 1500));
      controller.abort();
      return request;
    }, MODEL);
    expect(started).toBe('AbortError');
    const t0 = Date.now();
    const next = await post(page, 'v1/openai/embeddings', { model: MODEL, input: 'a dog' });
    expect(next.status).toBe(200);
    // 2,048 inputs of 200 words take llama.cpp tens of seconds here; the abort freed it.
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  test('runs the retrieval example of docs/api.md as written, on the fixture models', async () => {
    const readme = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const block = /<!-- retrieval-example[^>]*-->\s*```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeTruthy();
    // The same code, with the fixture models in place of the real ones this machine cannot fetch.
    const code = block!
      .replace(/const EMBED = '[^']+';/, `const EMBED = '${MODEL}';`)
      .replace(/const CHAT = '[^']+';/, `const CHAT = '${CHAT_MODEL}';`)
      .replace(/console\.log\(([^;]*)\);\s*$/, 'return [$1];');
    expect(code).toContain(MODEL);
    expect(code).toContain(CHAT_MODEL);
    // A string, evaluated over the automation protocol: the page's CSP allows no eval.
    const [best, content] = (await page.evaluate(`(async () => {\n${code}\n})()`)) as string[];
    expect(['Hearth runs models in the browser.', 'The relay listens on localhost.']).toContain(
      best,
    );
    expect(content).toBe(FIXTURE_SENTENCE);
  });

  test('keeps the embedding model loaded beside the chat model: retrieval then chat reloads neither', async () => {
    const chat = () =>
      page.evaluate(
        async (CHAT_MODEL) =>
          (
            await client.chat.completions.create({
              model: CHAT_MODEL,
              messages: [{ role: 'user', content: 'Tell me something.' }],
              temperature: 0,
            })
          ).choices[0]?.message.content,
        CHAT_MODEL,
      );
    expect(await chat()).toBe(FIXTURE_SENTENCE);
    const embedded = await post(page, 'v1/openai/embeddings', { model: MODEL, input: 'a dog' });
    expect(embedded.status).toBe(200);
    const status = await get<{ loaded_model: string; loaded_embedding_model: string }>(
      page,
      'v1/hearth/status',
    );
    expect(status).toMatchObject({ loaded_model: CHAT_MODEL, loaded_embedding_model: MODEL });
    // Both are loaded: chats and embeddings after it run with no load between them.
    const loads = async () => (await get<{ loads: number }>(page, 'v1/hearth/status')).loads;
    const before = await loads();
    expect(await chat()).toBe(FIXTURE_SENTENCE);
    await post(page, 'v1/openai/embeddings', { model: MODEL, input: 'a cat' });
    expect(await chat()).toBe(FIXTURE_SENTENCE);
    await post(page, 'v1/openai/embeddings', { model: MODEL, input: 'a dog' });
    expect(await loads()).toBe(before);
    // The count moves when there is a load: another embedding model takes the slot.
    await post(page, 'v1/openai/embeddings', { model: MRL_MODEL, input: 'a cat' });
    expect(await loads()).toBe(before + 1);
  });
});
