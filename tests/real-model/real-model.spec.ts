/**
 * A real model through the API with the official `openai` SDK, on this machine's GPU: load,
 * answers streamed and not, usage, the order of a stream, an abort. Skips, saying why, where it
 * cannot run: no WebGPU adapter, only a fallback (CPU) adapter, or no way to get the files.
 */
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { filesUnreachable, realModel } from '../../scripts/real-model.mjs';
import { OPENAI_BUNDLE } from '../e2e/helpers';

const model = await realModel();
test.describe.configure({ mode: 'serial' });

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

test(`loads ${model.id} onto the GPU, downloading what is missing`, async () => {
  const result = await page.evaluate(async (id) => {
    const response = await fetch(`v1/hearth/models/${encodeURIComponent(id)}/load`, {
      method: 'POST',
      headers: { authorization: 'Bearer real-model' },
    });
    const catalog = (await (
      await fetch('v1/hearth/catalog', { headers: { authorization: 'Bearer real-model' } })
    ).json()) as {
      data: { id: string; downloaded: boolean; loaded: boolean }[];
    };
    return {
      status: response.status,
      body: await response.json(),
      entry: catalog.data.find((m) => m.id === id),
    };
  }, model.id);
  expect(result.status, JSON.stringify(result.body)).toBe(200);
  expect(result.entry).toMatchObject({ downloaded: true, loaded: true });
});

test('answers a non-streamed request, with usage', async () => {
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

test('streams in DESIGN §3’s order: the role first, content, the finish, usage, then the end', async () => {
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
  // WebLLM itself would count only the new tokens of the second request (notes §3.4).
  expect(usages[1]!.prompt_tokens).toBeGreaterThan(
    usages[0]!.prompt_tokens + usages[0]!.completion_tokens,
  );
});

test('stops a stream that is aborted, and answers the next request', async () => {
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

declare global {
  var client: InstanceType<typeof OpenAI>;
}
