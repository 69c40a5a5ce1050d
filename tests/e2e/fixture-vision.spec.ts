/**
 * The vision fixture (scripts/fixture-vision.mjs) through the real llama.cpp: wllama 3.13 in
 * Chromium, one thread, no WebGPU, the language model and its projector from Blobs, on an origin
 * of its own served from memory, as tests/e2e/fixture-gguf.spec.ts does (its helpers live in a
 * test file, which Playwright does not let another import). Two pictures, two known replies: the
 * proof that an image reaches the model.
 *
 * HEARTH_FIXTURE_MEASURE=1 adds a measurement of the bench projector's encode time to the log.
 */
import { readFile } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';
import type { ChatCompletionResponse, Wllama as WllamaClass } from '@wllama/wllama';
import {
  VISION_BENCH_OPTIONS,
  VISION_IMAGE_SIZE,
  VISION_IMAGE_TOKENS,
  VISION_PIECES,
  VISION_REPLIES,
  fixtureVisionGguf,
} from '../../scripts/fixture-vision.mjs';
import { solidPng } from '../test-images';

// https: `new Wllama()` throws in an insecure context, where its model cache has no storage.
const ORIGIN = 'https://fixture-vision.test';
const WLLAMA = new URL('../../node_modules/@wllama/wllama/esm/', import.meta.url);

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

/** What the page keeps between calls. */
interface VisionPage {
  Wllama: typeof WllamaClass;
  wllama: WllamaClass;
}

/** A message part as the tests write it: text, or a picture served under /files/. */
type Part = { type: 'text'; text: string } | { type: 'image'; file: keyof typeof IMAGES };

/** Serves the page, wllama and `files` (models and pictures, by name under /files/) on ORIGIN. */
async function servePage(page: Page, files: Record<string, Uint8Array>): Promise<void> {
  const [script, wasm] = await Promise.all([
    readFile(new URL('index.js', WLLAMA)),
    readFile(new URL('wasm/wllama.wasm', WLLAMA)),
  ]);
  await page.route(`${ORIGIN}/**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    const file = path.startsWith('/files/') ? files[path.slice('/files/'.length)] : undefined;
    if (path === '/') {
      return route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><meta charset="utf-8"><title>vision</title><script type="module">
          import { Wllama } from '/wllama/index.js';
          globalThis.Wllama = Wllama;
        </script>`,
      });
    }
    if (path === '/wllama/index.js')
      return route.fulfill({ contentType: 'text/javascript', body: script });
    if (path === '/wllama/wllama.wasm')
      return route.fulfill({ contentType: 'application/wasm', body: wasm });
    if (file)
      return route.fulfill({ contentType: 'application/octet-stream', body: Buffer.from(file) });
    return route.fulfill({ status: 404 });
  });
  await page.goto(`${ORIGIN}/`);
  await page.waitForFunction(() => 'Wllama' in globalThis);
}

/** Loads the named files as Blobs (a model, and its projector if named); resolves to the ms. */
function loadModel(page: Page, names: string[]): Promise<number> {
  return page.evaluate(async (names) => {
    const scope = globalThis as unknown as VisionPage;
    await scope.wllama?.exit();
    const wllama = new scope.Wllama(
      { default: new URL('/wllama/wllama.wasm', location.href).href },
      { suppressNativeLog: true },
    );
    const blobs = await Promise.all(
      names.map(async (name) => (await fetch(`/files/${name}`)).blob()),
    );
    const started = performance.now();
    // loadModel never settles when the wasm or the worker is blocked (notes/wllama-3.13.md).
    await Promise.race([
      wllama.loadModel(blobs, { n_threads: 1, n_gpu_layers: 0, n_ctx: 1024 }),
      new Promise((_, reject) => setTimeout(() => reject(new Error('load timed out')), 20_000)),
    ]);
    // loadModel resolves even when llama.cpp failed to load: only the context info tells.
    if (wllama.getLoadedContextInfo().n_vocab === 0) throw new Error(`${names} did not load`);
    scope.wllama = wllama;
    return performance.now() - started;
  }, names);
}

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
      const { wllama } = globalThis as unknown as VisionPage;
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
    await servePage(page, {
      'fixture-vision.gguf': model,
      'mmproj-fixture-vision.gguf': mmproj,
      ...IMAGES,
    });
  });

  test.afterAll(async () => {
    await page.evaluate(() => (globalThis as unknown as VisionPage).wllama?.exit());
    await page.close();
  });

  test('loads with its projector and says it takes images', async () => {
    await loadModel(page, ['fixture-vision.gguf', 'mmproj-fixture-vision.gguf']);
    const images = await page.evaluate(() =>
      (globalThis as unknown as VisionPage).wllama.supportInputModality('image'),
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
    await loadModel(page, ['fixture-vision.gguf']);
    const images = await page.evaluate(() =>
      (globalThis as unknown as VisionPage).wllama.supportInputModality('image'),
    );
    expect(images).toBe(false);
    expect(replyOf(await ask(page, [QUESTION], HOT))).toBe(VISION_REPLIES.other);
  });
});

test('measures the bench projector (HEARTH_FIXTURE_MEASURE=1)', async ({ page }) => {
  test.skip(!process.env.HEARTH_FIXTURE_MEASURE, 'a measurement, not a check');
  test.setTimeout(180_000);
  const { model, mmproj } = fixtureVisionGguf(VISION_BENCH_OPTIONS);
  await servePage(page, { 'model.gguf': model, 'mmproj.gguf': mmproj, ...IMAGES });
  const loadMs = await loadModel(page, ['model.gguf', 'mmproj.gguf']);
  const started = Date.now();
  const red = await ask(page, [QUESTION, { type: 'image', file: 'red.png' }], GREEDY);
  const askMs = Date.now() - started;
  expect(replyOf(red)).toBe(VISION_REPLIES.red);
  const timings = (red as unknown as { timings?: Record<string, number> }).timings;
  console.log(
    `bench projector: ${mmproj.length} bytes, load ${Math.round(loadMs)} ms, ask ${askMs} ms,`,
    `prompt_tokens ${red.usage.prompt_tokens}, timings ${JSON.stringify(timings)}`,
  );
  await page.evaluate(() => (globalThis as unknown as VisionPage).wllama?.exit());
});
