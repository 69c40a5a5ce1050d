/**
 * Images through llama.cpp, for real: the vision fixture (scripts/fixture-vision.mjs), a language
 * model and its projector, added by URL with `mmproj`, downloaded as one model, loaded by wllama in
 * the engine worker and asked through the service worker with the official `openai` SDK. A red
 * square and a blue one get two different known replies, which only an image that reached the
 * model can make; usage counts the image's tokens as llama.cpp's multimodal library does.
 */
import { expect, type Page } from '@playwright/test';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { VISION_IMAGE_TOKENS, VISION_REPLIES } from '../../scripts/fixture-vision.mjs';
import { dataUrl, imageMessage, solidPng } from '../test-images';
import { KEY } from './helpers';
import { endSuite, openSuitePage, test } from './warm-context';
import { ModelServer, VISION_GGUF_URL, VISION_MMPROJ_URL } from './model-server';

const MODEL = 'e2e/fixture-vision-GGUF:F32';
const RED = dataUrl(solidPng(32, 32, [230, 20, 20]));
const BLUE = dataUrl(solidPng(32, 32, [20, 20, 230]));
/** A red picture ten times the projector's size, and not square: llama.cpp pads and resizes it. */
const BIG_RED = dataUrl(solidPng(320, 300, [230, 20, 20]));
const QUESTION = 'What colour is this?';

const server = new ModelServer();

/** A request of Hearth's own API with plain fetch: its status and body. */
function call(page: Page, method: string, path: string, body?: object) {
  return page.evaluate(
    async ({ method, path, body, KEY }) => {
      const response = await fetch(path, {
        method,
        headers: KEY,
        ...(body && { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    { method, path, body, KEY },
  );
}

/** A completion through the SDK in the page; streamed, its chunks' text put together. */
function ask(page: Page, messages: unknown[], stream = false) {
  return page.evaluate(
    async ({ MODEL, messages, stream }) => {
      const request = { model: MODEL, messages, temperature: 1 } as never;
      if (!stream) {
        const reply = (await client.chat.completions.create(request)) as ChatCompletion;
        return { text: reply.choices[0]?.message.content ?? '', usage: reply.usage };
      }
      const chunks = (await client.chat.completions.create({
        ...(request as object),
        stream: true,
        stream_options: { include_usage: true },
      } as never)) as unknown as AsyncIterable<ChatCompletionChunk>;
      let text = '';
      let usage: ChatCompletionChunk['usage'];
      for await (const chunk of chunks) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage = chunk.usage ?? usage;
      }
      return { text, usage };
    },
    { MODEL, messages, stream },
  );
}

test.describe('a GGUF with its vision projector through llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    test.setTimeout(120_000);
    page = await openSuitePage({ browser, warmContexts }, testInfo, server);
    const added = await call(page, 'POST', 'v1/hearth/models', {
      source: VISION_GGUF_URL,
      mmproj: VISION_MMPROJ_URL,
      id: MODEL,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect(added.body).toMatchObject({ id: MODEL, vision: true, downloaded: false });
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
    await server.stop();
  });

  test('downloads the model and its projector as one model, which /models lists as seeing images', async () => {
    const download = await call(page, 'POST', `v1/hearth/models/${MODEL}/download`, {
      stream: false,
    });
    expect(download.body).toMatchObject({ model: MODEL, phase: 'done', files_total: 2 });
    expect(server.ggufRequests.some((r) => r.includes('/gguf/mmproj-fixture-vision.gguf'))).toBe(
      true,
    );
    const models = await page.evaluate(async () => (await client.models.list()).data);
    expect(models.find((m) => m.id === MODEL)).toMatchObject({ vision: true });
  });

  test('tells a red square from a blue one: each gets its own known reply, streamed and not', async () => {
    const red = await ask(page, [imageMessage(QUESTION, RED)]);
    expect(red.text).toBe(VISION_REPLIES.red);
    const blue = await ask(page, [imageMessage(QUESTION, BLUE)]);
    expect(blue.text).toBe(VISION_REPLIES.other);
    const streamed = await ask(page, [imageMessage(QUESTION, RED)], true);
    expect(streamed).toEqual(red);
    // Without an image the model has nothing red to see.
    expect((await ask(page, [{ role: 'user', content: QUESTION }])).text).toBe(
      VISION_REPLIES.other,
    );
  });

  test('sees a larger picture that is not square, which llama.cpp pads and resizes', async () => {
    expect((await ask(page, [imageMessage(QUESTION, BIG_RED)])).text).toBe(VISION_REPLIES.red);
  });

  test("counts the image chunk's tokens in prompt_tokens, as llama.cpp's multimodal library does", async () => {
    const seen = await ask(page, [imageMessage(QUESTION, BLUE)]);
    const unseen = await ask(page, [{ role: 'user', content: QUESTION }]);
    // One token a patch, and the newline llama-server puts between the text and the image.
    expect(seen.usage!.prompt_tokens - unseen.usage!.prompt_tokens).toBe(VISION_IMAGE_TOKENS + 1);
    expect(seen.usage!.completion_tokens).toBe(unseen.usage!.completion_tokens);
  });

  test('deletes the projector with the model, leaving none of its files on the device', async () => {
    const deleted = await call(page, 'DELETE', `v1/hearth/models/${MODEL}`);
    expect(deleted.body).toMatchObject({ id: MODEL, deleted: true });
    const left = await page.evaluate(async () => {
      const urls: string[] = [];
      for (const name of await caches.keys()) {
        for (const request of await (await caches.open(name)).keys()) urls.push(request.url);
      }
      return urls.filter((url) => url.includes('fixture-vision'));
    });
    expect(left).toEqual([]);
  });
});
