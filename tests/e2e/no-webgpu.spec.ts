/**
 * Chromium without a WebGPU adapter (no `--enable-unsafe-webgpu`, no GPU): every WebLLM model is
 * unavailable, with the reason, and the echo engine still works.
 */
import { expect, test } from '@playwright/test';
import { ask, KEY, openApp } from './helpers';

test('makes every WebLLM model unavailable and answers chat with 503 webgpu_unavailable, not to be retried', async ({
  page,
}) => {
  await openApp(page);
  const result = await page.evaluate(async (KEY) => {
    const catalog = (await (await fetch('v1/hearth/catalog', { headers: KEY })).json()) as {
      data: { id: string; available: boolean; unavailable_reason?: string }[];
    };
    const response = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({
        model: 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    return {
      webllm: catalog.data.filter((m) => m.id.startsWith('mlc-ai/')),
      status: response.status,
      retry: response.headers.get('x-should-retry'),
      error: (await response.json()).error,
    };
  }, KEY);
  expect(result.webllm.length).toBeGreaterThan(100);
  expect(
    result.webllm.every(
      (m) => !m.available && /GPU adapter|WebGPU/.test(m.unavailable_reason ?? ''),
    ),
  ).toBe(true);
  expect(result).toMatchObject({
    status: 503,
    retry: 'false',
    error: { code: 'webgpu_unavailable' },
  });
  expect(await ask(page, 'the echo engine still works')).toEqual({
    status: 200,
    content: 'the echo engine still works',
  });
});

test('refuses to download a model this browser cannot run, before fetching anything', async ({
  page,
}) => {
  await openApp(page);
  const result = await page.evaluate(async (KEY) => {
    const response = await fetch(
      'v1/hearth/models/mlc-ai%2FSmolLM2-360M-Instruct-q4f32_1-MLC/download',
      { method: 'POST', headers: KEY },
    );
    const status = (await (await fetch('v1/hearth/status', { headers: KEY })).json()) as {
      downloads: unknown[];
      webgpu: unknown;
    };
    return {
      status: response.status,
      error: (await response.json()).error,
      downloads: status.downloads,
      webgpu: status.webgpu,
    };
  }, KEY);
  expect(result).toMatchObject({
    status: 503,
    error: { code: 'webgpu_unavailable' },
    downloads: [],
    // The engine worker asked and got no adapter: known, not guessed.
    webgpu: { available: false, adapter: null, limits: null, reason: expect.any(String) },
  });
});

test('the app explains in plain words that without WebGPU GGUF models run on the processor', async ({
  page,
}) => {
  await openApp(page);
  await page.getByRole('link', { name: 'Settings' }).click();
  await page
    .getByRole('navigation', { name: 'Settings sections' })
    .getByRole('link', { name: 'Developer' })
    .click();
  const device = page.getByRole('region', { name: 'This device' });
  await expect(device).toContainText('No WebGPU here.');
  await expect(device).toContainText('GGUF models run on the processor through llama.cpp');
  await page.getByRole('link', { name: 'Models' }).click();
  // Said once at the top, with the next step: a GGUF on the CPU through llama.cpp, one button away.
  const here = page.getByRole('region', { name: 'What this device can run' });
  await expect(here.getByRole('note')).toContainText(
    "WebLLM's models cannot run in this browser: WebGPU found no usable GPU adapter",
  );
  await expect(here.getByRole('note')).toContainText('GGUF models run here through llama.cpp');
  await expect(here).toContainText(
    'No language model is on this device yet. A good first one here: Qwen2.5 0.5B Instruct (Q4_K_M, about',
  );
  await expect(here).toContainText('llama.cpp on the CPU');
  await expect(here.getByRole('button', { name: 'Download Qwen2.5 0.5B Instruct' })).toBeVisible();
  // Not a dead end below either: the GGUF models this device runs, on the CPU.
  const models = page.getByRole('list', { name: 'Models' });
  const gguf = models.getByRole('listitem', {
    name: 'bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M',
  });
  await expect(gguf.getByText('CPU', { exact: true })).toBeVisible();
  await expect(gguf.getByRole('button', { name: 'Download' })).toBeVisible();
  await expect(models.getByText('WebLLM', { exact: true })).toHaveCount(0);
  await page.getByRole('link', { name: 'Chat' }).click();
  // No model yet, and never the echo engine in its place: the first-run card offers a real one.
  // The picker by its role: right after the click, the Models view's "Search models" may still be
  // there for a moment, and a label match would find both.
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue('');
  await expect(page.getByRole('region', { name: 'Welcome to Hearth' })).toBeVisible();
});
