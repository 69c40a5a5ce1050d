/**
 * A real model through the real engine: the fixture GGUF (scripts/fixture-gguf.mjs) downloaded
 * from the tests' model server, loaded by llama.cpp (wllama 3.13) in the engine worker, and asked
 * through the service worker with the official `openai` SDK in the page. Whatever the prompt and
 * the sampler, the model answers FIXTURE_SENTENCE, one word piece a token, so that text, usage,
 * stop strings, limits, aborts, the queue and several choices are checked against llama.cpp's
 * own tokenizer, sampler and chat template.
 */
import { expect, type Page } from '@playwright/test';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { FIXTURE_PIECES, FIXTURE_SENTENCE } from '../../scripts/fixture-gguf.mjs';
import { dataUrl, imageMessage, solidPng } from '../test-images';
import { KEY } from './helpers';
import { endSuite, openSuitePage, test } from './warm-context';
import { ModelServer } from './model-server';

const MODEL = 'e2e/fixture-GGUF:F32';
/** One token a piece, and the end of the turn, which llama.cpp counts. */
const SENTENCE_TOKENS = FIXTURE_PIECES.length + 1;

const server = new ModelServer();

/** A request body: the model, one user message, and `extra`. */
type Body = Record<string, unknown>;

/** A non-streamed completion through the SDK in the page. */
function complete(page: Page, extra: Body = {}): Promise<ChatCompletion> {
  return page.evaluate(
    async ({ MODEL, extra }) =>
      (await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Tell me something.' }],
        ...extra,
        stream: false,
      } as never)) as ChatCompletion,
    { MODEL, extra },
  );
}

/** A streamed completion through the SDK in the page: every chunk. */
function stream(page: Page, extra: Body = {}): Promise<ChatCompletionChunk[]> {
  return page.evaluate(
    async ({ MODEL, extra }) => {
      const chunks: ChatCompletionChunk[] = [];
      const events = (await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Tell me something.' }],
        ...extra,
        stream: true,
      } as never)) as unknown as AsyncIterable<ChatCompletionChunk>;
      for await (const chunk of events) chunks.push(chunk);
      return chunks;
    },
    { MODEL, extra },
  );
}

/** A request with plain fetch: its status and body. */
function post(page: Page, path: string, body: Body) {
  return page.evaluate(
    async ({ path, body, KEY }) => {
      const response = await fetch(path, {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    { path, body, KEY },
  );
}

/** `GET` a Hearth endpoint. */
function get(page: Page, path: string) {
  return page.evaluate(
    async ({ path, KEY }) =>
      (await (await fetch(path, { headers: KEY })).json()) as Record<string, unknown>,
    { path, KEY },
  );
}

const contents = (chunks: ChatCompletionChunk[]) =>
  chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? ''));

test.describe('a GGUF model through llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    test.setTimeout(120_000);
    page = await openSuitePage({ browser, warmContexts }, testInfo, server);
    const download = await post(page, `v1/hearth/models/${MODEL}/download`, { stream: false });
    expect(download.body).toMatchObject({ model: MODEL, phase: 'done' });
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
    await server.stop();
  });

  test('is in the catalogue as llama.cpp’s, downloaded, and listed among the models', async () => {
    const catalog = (await get(page, 'v1/hearth/catalog')) as {
      data: { id: string; engine: string; downloaded: boolean; available: boolean | null }[];
    };
    expect(catalog.data.find((m) => m.id === MODEL)).toMatchObject({
      engine: 'llama.cpp',
      downloaded: true,
      available: true,
    });
    const models = await page.evaluate(async () =>
      (await client.models.list()).data.map((m) => m.id),
    );
    expect(models).toContain(MODEL);
  });

  test('answers the sentence at temperature 0, with usage from llama.cpp’s tokenizer', async () => {
    const reply = await complete(page, { temperature: 0 });
    expect(reply.choices[0]).toMatchObject({
      message: { role: 'assistant', content: FIXTURE_SENTENCE },
      finish_reason: 'stop',
    });
    expect(reply.model).toBe(MODEL);
    expect(reply.usage?.completion_tokens).toBe(SENTENCE_TOKENS);
    expect(reply.usage?.prompt_tokens).toBeGreaterThan(10);
    expect(reply.usage?.total_tokens).toBe(
      (reply.usage?.prompt_tokens ?? 0) + (reply.usage?.completion_tokens ?? 0),
    );
  });

  test('answers the same sampling at temperature 1.5, with a seed and without', async () => {
    for (const extra of [
      { temperature: 1.5, seed: 42 },
      { temperature: 1.5, top_p: 0.9 },
    ]) {
      const reply = await complete(page, extra);
      expect(reply.choices[0]?.message.content).toBe(FIXTURE_SENTENCE);
    }
  });

  test('streams one piece a chunk, with the same usage as the JSON reply', async () => {
    const json = await complete(page);
    const chunks = await stream(page, { stream_options: { include_usage: true } });
    expect(contents(chunks).join('')).toBe(FIXTURE_SENTENCE);
    expect(contents(chunks).filter(Boolean)).toEqual(FIXTURE_PIECES);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: 'The' });
    expect(chunks.at(-2)?.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    const usage = chunks.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage).toMatchObject({
      prompt_tokens: json.usage?.prompt_tokens,
      completion_tokens: json.usage?.completion_tokens,
      total_tokens: json.usage?.total_tokens,
    });
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  });

  test('stops at max_tokens with finish_reason length', async () => {
    const reply = await complete(page, { max_tokens: 3 });
    expect(reply.choices[0]).toMatchObject({
      message: { content: FIXTURE_PIECES.slice(0, 3).join('') },
      finish_reason: 'length',
    });
    expect(reply.usage?.completion_tokens).toBe(3);
    const chunks = await stream(page, { max_completion_tokens: 2 });
    expect(contents(chunks).join('')).toBe(FIXTURE_PIECES.slice(0, 2).join(''));
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
  });

  test('cuts at a stop string, one that ends inside a token too, streamed or not', async () => {
    expect((await complete(page, { stop: [' fox'] })).choices[0]).toMatchObject({
      message: { content: 'The quick brown' },
      finish_reason: 'stop',
    });
    // "ick br" starts inside " quick" and ends inside " brown".
    expect((await complete(page, { stop: 'ick br' })).choices[0]?.message.content).toBe('The qu');
    const chunks = await stream(page, { stop: ['zzz', 'ick br'] });
    expect(contents(chunks).join('')).toBe('The qu');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  test('goes on past the end with ignore_eos, as long as max_tokens lets it', async () => {
    const reply = await complete(page, { ignore_eos: true, max_tokens: 20 });
    expect(reply.choices[0]).toMatchObject({
      message: { content: FIXTURE_SENTENCE + FIXTURE_PIECES.slice(0, 5).join('') },
      finish_reason: 'length',
    });
  });

  test('gives each token’s logprobs, with the alternatives asked for', async () => {
    const reply = await complete(page, { logprobs: true, top_logprobs: 2, max_tokens: 4 });
    const entries = reply.choices[0]?.logprobs?.content ?? [];
    expect(entries.map((e) => e.token)).toEqual(FIXTURE_PIECES.slice(0, 4));
    for (const entry of entries) {
      expect(entry.logprob).toBeLessThanOrEqual(0);
      expect(entry.top_logprobs).toHaveLength(2);
      expect(entry.top_logprobs[0]?.token).toBe(entry.token);
    }
  });

  test('an abort mid-stream stops llama.cpp: the next request answers at once', async () => {
    const read = await page.evaluate(async (MODEL) => {
      const events = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Go on and on.' }],
        stream: true,
        ignore_eos: true,
        max_tokens: 1_000_000,
      } as never);
      let pieces = 0;
      for await (const chunk of events as unknown as AsyncIterable<ChatCompletionChunk>) {
        if (chunk.choices[0]?.delta.content && ++pieces === 5) break; // the SDK aborts the fetch
      }
      return pieces;
    }, MODEL);
    expect(read).toBe(5);
    await expect
      .poll(async () => ((await get(page, 'v1/hearth/status')) as { queue: unknown }).queue)
      .toEqual({ running: 0, waiting: 0 });
    // Were llama.cpp still generating a million tokens, this would wait behind them.
    const reply = await complete(page, { max_tokens: 2 });
    expect(reply.choices[0]?.message.content).toBe(FIXTURE_PIECES.slice(0, 2).join(''));
  });

  test('serves concurrent requests whole, one at a time, in the order they came', async () => {
    const replies = await page.evaluate(async (MODEL) => {
      const finished: number[] = [];
      const headers = { authorization: 'Bearer k', 'content-type': 'application/json' };
      // Each long enough (100 tokens past the end) to keep the next one waiting, and their ends
      // far enough apart to be seen in order.
      const ask = async (i: number) => {
        const response = await fetch('v1/openai/chat/completions', {
          method: 'POST',
          headers,
          body: JSON.stringify({
            model: MODEL,
            messages: [{ role: 'user', content: `Question ${i}` }],
            max_tokens: 100,
            ignore_eos: true,
          }),
        });
        const reply = (await response.json()) as {
          choices: { message: { content: string } }[];
          usage: { completion_tokens: number };
        };
        finished.push(i);
        return {
          content: reply.choices[0]?.message.content,
          tokens: reply.usage.completion_tokens,
        };
      };
      const most = { running: 0, waiting: 0 };
      /** Whether the engine has had the first `count` requests: queued, running or answered. */
      const had = async (count: number) => {
        const status = await fetch('v1/hearth/status', { headers });
        const { queue } = (await status.json()) as { queue: { running: number; waiting: number } };
        most.running = Math.max(most.running, queue.running);
        most.waiting = Math.max(most.waiting, queue.waiting);
        return queue.running + queue.waiting + finished.length >= count;
      };
      const asks = [];
      for (const i of [0, 1, 2, 3]) {
        asks.push(ask(i));
        // The next leaves once the engine has this one, so that the order they came in is known:
        // Firefox may reorder fetches sent close together, the more so on a busy machine.
        while (!(await had(i + 1))) await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return { replies: await Promise.all(asks), finished, most };
    }, MODEL);
    for (const reply of replies.replies) {
      expect(reply.tokens).toBe(100);
      expect(reply.content?.startsWith(FIXTURE_SENTENCE)).toBe(true);
    }
    // They were there at once, and ran one at a time.
    expect(replies.most).toEqual({ running: 1, waiting: expect.any(Number) });
    expect(replies.most.waiting).toBeGreaterThan(0);
    expect(replies.finished).toEqual([0, 1, 2, 3]);
  });

  test('gives n choices with a seed, counting the prompt once', async () => {
    const one = await complete(page, { seed: 3 });
    const reply = await complete(page, { n: 2, seed: 3, temperature: 1 });
    expect(reply.choices.map((c) => [c.index, c.message.content, c.finish_reason])).toEqual([
      [0, FIXTURE_SENTENCE, 'stop'],
      [1, FIXTURE_SENTENCE, 'stop'],
    ]);
    expect(reply.usage).toMatchObject({
      prompt_tokens: one.usage?.prompt_tokens,
      completion_tokens: 2 * SENTENCE_TOKENS,
    });
  });

  test('shapes the reply as JSON with response_format, by llama.cpp’s grammar', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { enum: ['yes', 'no'] } },
      required: ['answer'],
      additionalProperties: false,
    };
    const reply = await complete(page, {
      temperature: 0,
      max_tokens: 60,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema } },
    });
    expect(reply.choices[0]?.finish_reason).toBe('stop');
    const answer = JSON.parse(reply.choices[0]?.message.content ?? '') as { answer: string };
    expect(Object.keys(answer)).toEqual(['answer']);
    expect(['yes', 'no']).toContain(answer.answer);
    // Any object: the model would write the sentence, the grammar makes it start an object.
    const object = await complete(page, {
      temperature: 0,
      max_tokens: 8,
      response_format: { type: 'json_object' },
    });
    expect(object.choices[0]?.message.content).toMatch(/^\s*\{/);
  });

  test('refuses what llama.cpp cannot do, saying why, and never drops it', async () => {
    const tooLong = await post(page, 'v1/openai/chat/completions', {
      model: MODEL,
      messages: [{ role: 'user', content: 'word '.repeat(3000) }],
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'messages',
    });
    const bias = await post(page, 'v1/openai/chat/completions', {
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      logit_bias: { '100000': 5 },
    });
    expect(bias.status).toBe(400);
    expect(bias.body.error).toMatchObject({ code: 'invalid_value', param: 'logit_bias' });
    // A GGUF without a projector sees no images: refused by its part, before anything runs.
    const image = await post(page, 'v1/openai/chat/completions', {
      model: MODEL,
      messages: [imageMessage('what is this?', dataUrl(solidPng(2, 2, [255, 0, 0])))],
    });
    expect(image.status).toBe(400);
    expect(image.body.error).toMatchObject({
      code: 'unsupported_parameter',
      param: 'messages[0].content[1]',
    });
    // And the model answers on.
    expect((await complete(page)).choices[0]?.message.content).toBe(FIXTURE_SENTENCE);
  });

  test('the status says llama.cpp runs it on the CPU, and with how many threads', async () => {
    const status = (await get(page, 'v1/hearth/status')) as {
      loaded_model: string | null;
      llama: { backend: string; threads: number; isolated: boolean };
      last_speed: { decode_tokens_per_s: number } | null;
    };
    expect(status.loaded_model).toBe(MODEL);
    // SwiftShader has no shader-f16, which llama.cpp's WebGPU backend needs.
    expect(status.llama.backend).toBe('cpu');
    expect(status.llama.threads).toBe(status.llama.isolated ? status.llama.threads : 1);
    expect(status.llama.threads).toBeGreaterThanOrEqual(1);
    expect(status.last_speed?.decode_tokens_per_s).toBeGreaterThan(0);
  });

  test('loads the model again from the device with the model host gone', async () => {
    await server.stop();
    const unloaded = await post(page, 'v1/hearth/unload', {});
    expect(unloaded.body).toMatchObject({ loaded_model: null });
    expect(((await get(page, 'v1/hearth/status')) as { loaded_model: unknown }).loaded_model).toBe(
      null,
    );
    const reply = await complete(page, { temperature: 0 });
    expect(reply.choices[0]?.message.content).toBe(FIXTURE_SENTENCE);
    expect(((await get(page, 'v1/hearth/status')) as { loaded_model: unknown }).loaded_model).toBe(
      MODEL,
    );
    await server.start();
  });
});
