/**
 * A real GGUF through llama.cpp on this machine's GPU (`npm run test:real-model`, beside the
 * WebLLM model): the smallest curated GGUF (Qwen2.5 0.5B Instruct, Q4_K_M, ~400 MB from Hugging
 * Face) downloaded through the API, loaded with every layer offloaded to WebGPU, and asked
 * through the `openai` SDK. Skips, saying why, where it cannot run: no WebGPU adapter with
 * `shader-f16` (llama.cpp's WebGPU backend needs it; such a device runs GGUFs on the CPU, which
 * `npm test` covers with the fixture model), or Hugging Face out of reach. The curated model that
 * sees images (SmolVLM 500M) is then downloaded with its projector and shown a red square.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { CURATED_GGUF } from '../../src/models/curated-gguf';
import { OPENAI_BUNDLE } from '../e2e/helpers';
import { redSquare } from './red-square';

const MODEL = CURATED_GGUF[0]!;

let page: Page;
let skip: string | null = null;

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto('./');
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready', { timeout: 60_000 });
  await page.evaluate(readFileSync(OPENAI_BUNDLE, 'utf8'));
  const f16 = await page.evaluate(async () => {
    const gpu = (navigator as { gpu?: { requestAdapter(o?: object): Promise<unknown> } }).gpu;
    const adapter = (await gpu?.requestAdapter({ powerPreference: 'high-performance' })) as
      { features: Set<string>; info?: { isFallbackAdapter?: boolean } } | null | undefined;
    if (!adapter) return 'no WebGPU adapter';
    if (adapter.info?.isFallbackAdapter) return 'only a fallback (CPU) WebGPU adapter';
    return adapter.features.has('shader-f16') ? null : 'the WebGPU adapter lacks shader-f16';
  });
  skip = f16;
  if (!skip) {
    try {
      const head = await fetch(MODEL.files[0]!, {
        method: 'HEAD',
        signal: AbortSignal.timeout(10_000),
      });
      if (!head.ok) skip = `${MODEL.files[0]} answered ${head.status}`;
    } catch (err) {
      skip = `Hugging Face is out of reach (${err instanceof Error ? err.message : String(err)})`;
    }
  }
  if (skip) console.log(`real GGUF on the GPU skips: ${skip}`);
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

/** A request of Hearth's own API from the page. */
function call(method: string, path: string): Promise<{ status: number; body: unknown }> {
  return page.evaluate(
    async ({ method, path }) => {
      const response = await fetch(path, {
        method,
        headers: { authorization: 'Bearer real-model', 'content-type': 'application/json' },
        ...(method === 'POST' && { body: JSON.stringify({ stream: false }) }),
      });
      return { status: response.status, body: (await response.json()) as unknown };
    },
    { method, path },
  );
}

test(`downloads ${MODEL.id} and loads it onto the GPU through llama.cpp's WebGPU backend`, async () => {
  test.setTimeout(30 * 60_000);
  const download = await call('POST', `v1/hearth/models/${MODEL.id}/download`);
  expect(download.body).toMatchObject({ phase: 'done' });
  expect((await call('POST', `v1/hearth/models/${MODEL.id}/load`)).status).toBe(200);
  const status = (await call('GET', 'v1/hearth/status')).body as {
    loaded_model: string;
    llama: { backend: string; build: string };
  };
  expect(status.loaded_model).toBe(MODEL.id);
  expect(status.llama).toMatchObject({ backend: 'webgpu', build: 'default' });
});

test('answers in words on the GPU, streamed and not, with usage', async () => {
  const reply = await page.evaluate(async (model) => {
    const messages = [{ role: 'user' as const, content: 'What is the capital of France?' }];
    const whole = await client.chat.completions.create({ model, messages, temperature: 0 });
    let streamed = '';
    const stream = await client.chat.completions.create({
      model,
      messages,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown = null;
    for await (const chunk of stream) {
      streamed += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    return {
      whole: whole.choices[0]?.message.content ?? '',
      usage: whole.usage,
      streamed,
      streamUsage: usage,
    };
  }, MODEL.id);
  expect(reply.whole).toMatch(/Paris/);
  // The same request at temperature 0: the same words, streamed or not.
  expect(reply.streamed).toBe(reply.whole);
  expect(reply.usage?.completion_tokens).toBeGreaterThan(0);
  expect(reply.streamUsage).toEqual(reply.usage);
});

/** The curated model that sees images, with its projector. */
const VISION = CURATED_GGUF.find((record) => record.mmproj !== undefined)!;

test(`downloads ${VISION.id} and its projector as one model, of the size the catalogue gives`, async () => {
  test.setTimeout(30 * 60_000);
  const download = await call('POST', `v1/hearth/models/${VISION.id}/download`);
  expect(download.body).toMatchObject({ phase: 'done', files_total: 2 });
  // The curated sizes were read off Hugging Face's pages: within 2% of the bytes that came.
  const bytes = (download.body as { bytes_total: number }).bytes_total;
  expect(Math.abs(bytes / 1e6 - VISION.size_mb!)).toBeLessThan(VISION.size_mb! * 0.02);
  const models = (await call('GET', 'v1/openai/models')).body as {
    data: { id: string; vision?: boolean }[];
  };
  expect(models.data.find((m) => m.id === VISION.id)?.vision).toBe(true);
});

test(`${VISION.id} says that a plain red square is red, counting the image's tokens`, async () => {
  test.setTimeout(10 * 60_000);
  const url = await redSquare(page, 128);
  const answer = await page.evaluate(
    async ({ model, url }) => {
      const question = 'What colour is this picture? Answer with one word.';
      const seen = await client.chat.completions.create({
        model,
        temperature: 0,
        max_tokens: 16,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: question },
              { type: 'image_url', image_url: { url } },
            ],
          },
        ],
      });
      const unseen = await client.chat.completions.create({
        model,
        temperature: 0,
        max_tokens: 1,
        messages: [{ role: 'user', content: question }],
      });
      return {
        text: seen.choices[0]?.message.content ?? '',
        withImage: seen.usage?.prompt_tokens ?? 0,
        without: unseen.usage?.prompt_tokens ?? 0,
      };
    },
    { model: VISION.id, url },
  );
  expect(answer.text).toMatch(/red/i);
  // SmolVLM's projector makes 64 tokens of an image (more where it tiles a large one).
  expect(answer.withImage - answer.without).toBeGreaterThanOrEqual(64);
});
