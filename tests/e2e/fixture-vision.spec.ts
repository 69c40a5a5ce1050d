/**
 * The vision fixture (scripts/fixture-vision.mjs) through the real llama.cpp: wllama 3.13 in
 * Chromium, one thread, no WebGPU, the language model and its projector from Blobs, on an origin
 * of its own served from memory, as tests/e2e/fixture-gguf.spec.ts does (both with the helpers of
 * tests/e2e/wllama-page.ts). Two pictures, two known replies: the proof that an image reaches the
 * model.
 *
 * HEARTH_FIXTURE_MEASURE=1 adds a measurement of the bench projector's encode time to the log.
 */
import { expect, test, type Page } from '@playwright/test';
import type { ChatCompletionResponse } from '@wllama/wllama';
import {
  VISION_BENCH_OPTIONS,
  VISION_IMAGE_SIZE,
  VISION_IMAGE_TOKENS,
  VISION_PIECES,
  VISION_REPLIES,
  fixtureVisionGguf,
} from '../../scripts/fixture-vision.mjs';
import { solidPng } from '../test-images';
import { loadModel, servePage, type WllamaPage } from './wllama-page';

/** The page's site: models and pictures are served by name under /files/. */
const SITE = { origin: 'https://fixture-vision.test', folder: 'files', title: 'vision' };

const RED: [number, number, number] = [230, 20, 20];
const BLUE: [number, number, number] = [20, 40, 230];

/** The pictures the page can send, by name under /files/. */
const IMAGES = {
  'red.png': solidPng(VISION_IMAGE_SIZE, VISION_IMAGE_SIZE, RED),
  'blue.png': solidPng(VISION_IMAGE_SIZE, VISION_IMAGE_SIZE, BLUE),
  'red-big.png': solidPng(300, 300, RED),
  'red-wide.png': solidPng(96, 40, RED),
  'blue-tall.png': solidPng(24, 70, BLUE),
};

/** A message part as the tests write it: text, or a picture served under /files/. */
type Part = { type: 'text'; text: string } | { type: 'image'; file: keyof typeof IMAGES };

/** One user message of `parts`, non-streamed, with `params` (sampling) over the defaults. */
function ask(
  page: Page,
  parts: Part[],
  params: Record<string, unknown> = {},
): Promise<ChatCompletionResponse> {
  return page.evaluate(
    async ({ parts, params }) => {
      const content = await Promise.all(
        parts.map(async (part) =>
          part.type === 'text'
            ? part
            : {
                type: 'image' as const,
                data: await (await fetch(`/files/${part.file}`)).arrayBuffer(),
              },
        ),
      );
      const { wllama } = globalThis as unknown as WllamaPage;
      // wllama's types know no image parts in messages, nor the sampling fields passed through.
      const body = { ...params, messages: [{ role: 'user', content }], stream: false as const };
      return wllama.createChatCompletion(body as unknown as { messages: []; stream: false });
    },
    { parts, params },
  );
}

const QUESTION: Part = { type: 'text', text: 'What colour is this?' };
const GREEDY = { temperature: 0 };
const HOT = { temperature: 1, top_k: 0, top_p: 1, seed: 7 };

const replyOf = (response: ChatCompletionResponse) => response.choices[0]?.message.content;

test.describe('the vision fixture in llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser }) => {
    page = await browser.newPage();
    const { model, mmproj } = fixtureVisionGguf();
    await servePage(page, SITE, {
      'fixture-vision.gguf': model,
      'mmproj-fixture-vision.gguf': mmproj,
      ...IMAGES,
    });
  });

  test.afterAll(async () => {
    await page.evaluate(() => (globalThis as unknown as WllamaPage).wllama?.exit());
    await page.close();
  });

  test('loads with its projector and says it takes images', async () => {
    await loadModel(page, SITE, ['fixture-vision.gguf', 'mmproj-fixture-vision.gguf']);
    const images = await page.evaluate(() =>
      (globalThis as unknown as WllamaPage).wllama.supportInputModality('image'),
    );
    expect(images).toBe(true);
  });

  test('answers a red square with the red reply and a blue one with the other, greedy and at temperature 1', async () => {
    for (const params of [GREEDY, HOT]) {
      const red = await ask(page, [QUESTION, { type: 'image', file: 'red.png' }], params);
      expect(replyOf(red)).toBe(VISION_REPLIES.red);
      expect(red.choices[0]?.finish_reason).toBe('stop');
      // One token a piece, and the end of the turn.
      expect(red.usage.completion_tokens).toBe(VISION_PIECES.red.length + 1);
      const blue = await ask(page, [QUESTION, { type: 'image', file: 'blue.png' }], params);
      expect(replyOf(blue)).toBe(VISION_REPLIES.other);
      expect(blue.usage.completion_tokens).toBe(VISION_PIECES.other.length + 1);
    }
  });

  test('answers by the picture whatever its size or shape, before or after the text', async () => {
    const cases: [Part[], string][] = [
      [[{ type: 'image', file: 'red-big.png' }, QUESTION], VISION_REPLIES.red],
      [[QUESTION, { type: 'image', file: 'red-wide.png' }], VISION_REPLIES.red],
      [[{ type: 'image', file: 'blue-tall.png' }], VISION_REPLIES.other],
    ];
    for (const [parts, reply] of cases) expect(replyOf(await ask(page, parts, HOT))).toBe(reply);
  });

  test('answers the other reply with no image', async () => {
    expect(replyOf(await ask(page, [QUESTION], HOT))).toBe(VISION_REPLIES.other);
  });

  test(`counts an image as ${VISION_IMAGE_TOKENS} prompt tokens, and the text around it as usual`, async () => {
    const tokens = async (parts: Part[]) => (await ask(page, parts, GREEDY)).usage.prompt_tokens;
    const image: Part = { type: 'image', file: 'red.png' };
    const empty = await tokens([{ type: 'text', text: '' }]);
    const question = await tokens([QUESTION]);
    expect(await tokens([image])).toBe(empty + VISION_IMAGE_TOKENS);
    // llama-server joins a message's parts with '\n': one token (the byte <0x0A>) more.
    const after = await tokens([QUESTION, image]);
    expect(after).toBe(question + VISION_IMAGE_TOKENS + 1);
    // Text after an image is tokenized on its own, and SentencePiece starts it with '▁'.
    expect(await tokens([image, QUESTION])).toBe(question + VISION_IMAGE_TOKENS + 2);
    expect(await tokens([QUESTION, image, image])).toBe(after + VISION_IMAGE_TOKENS + 2);
  });

  test('the language model alone takes no images and answers the other reply', async () => {
    await loadModel(page, SITE, ['fixture-vision.gguf']);
    const images = await page.evaluate(() =>
      (globalThis as unknown as WllamaPage).wllama.supportInputModality('image'),
    );
    expect(images).toBe(false);
    expect(replyOf(await ask(page, [QUESTION], HOT))).toBe(VISION_REPLIES.other);
  });
});

test('measures the bench projector (HEARTH_FIXTURE_MEASURE=1)', async ({ page }) => {
  test.skip(!process.env.HEARTH_FIXTURE_MEASURE, 'a measurement, not a check');
  test.setTimeout(180_000);
  const { model, mmproj } = fixtureVisionGguf(VISION_BENCH_OPTIONS);
  await servePage(page, SITE, { 'model.gguf': model, 'mmproj.gguf': mmproj, ...IMAGES });
  const loadMs = await loadModel(page, SITE, ['model.gguf', 'mmproj.gguf']);
  const started = Date.now();
  const red = await ask(page, [QUESTION, { type: 'image', file: 'red.png' }], GREEDY);
  const askMs = Date.now() - started;
  expect(replyOf(red)).toBe(VISION_REPLIES.red);
  const timings = (red as unknown as { timings?: Record<string, number> }).timings;
  console.log(
    `bench projector: ${mmproj.length} bytes, load ${Math.round(loadMs)} ms, ask ${askMs} ms,`,
    `prompt_tokens ${red.usage.prompt_tokens}, timings ${JSON.stringify(timings)}`,
  );
  await page.evaluate(() => (globalThis as unknown as WllamaPage).wllama?.exit());
});
