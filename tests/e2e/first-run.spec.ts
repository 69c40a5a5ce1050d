/**
 * A newcomer on a device without WebGPU (Chromium with no adapter): the first-run card says what
 * Hearth is and what this device can run — a small GGUF on the CPU with llama.cpp — and one
 * button gets it; the conversation then answers with it. Hugging Face is out of reach here, so
 * the curated model's file is answered, for this test only, with the fixture GGUF (a real model
 * that spells FIXTURE_SENTENCE) from the test's model server.
 */
import { expect, test } from '@playwright/test';
import { FIXTURE_SENTENCE } from './fixture-model';
import { FIXTURE_GGUF_URL, ModelServer } from './model-server';
import { composer, openChat, replies, send } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());

test('the first-run card gets a small GGUF that runs on the CPU, and the conversation answers with it', async ({
  page,
  context,
}) => {
  test.setTimeout(120_000);
  const asked: string[] = [];
  await context.route('https://huggingface.co/**', async (route) => {
    asked.push(route.request().url());
    const response = await route.fetch({ url: FIXTURE_GGUF_URL });
    await route.fulfill({ response });
  });
  await openChat(page, './', { model: null });
  const card = page.getByRole('region', { name: 'Welcome to Hearth' });
  await expect(card).toBeVisible();
  await expect(card).toContainText('Nothing leaves this device.');
  await expect(card).toContainText('on its CPU with llama.cpp');
  // The suggestion is named in the card and on its one button.
  const named = (await card.locator('strong').innerText()).trim();
  await card.getByRole('button', { name: `Get ${named}`, exact: false }).click();
  await expect(card).toBeHidden({ timeout: 60_000 });
  expect(asked.length).toBeGreaterThan(0);
  // One of the curated GGUFs, which llama.cpp runs on the CPU, is the conversation's model now.
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue(
    /-GGUF:Q4_K_M$/,
  );
  await expect(
    page.getByRole('combobox', { name: 'Model', exact: true }).locator('option:checked'),
  ).toContainText(named);
  await expect(composer(page)).toBeFocused();
  await send(page, 'Hello, real model');
  await expect(replies(page)).toHaveText([FIXTURE_SENTENCE], { timeout: 60_000 });
  // The context meter counts against the model's own window (the catalogue's 4,096 tokens).
  await expect(page.getByText(/^\d+ of 4,096 tokens$/)).toBeVisible();
});

test("the first-run card's download can be cancelled: it says so, and Get takes the focus to start it again", async ({
  page,
  context,
}) => {
  // Hugging Face never answers: the download waits on its first bytes until it is cancelled.
  const asked: string[] = [];
  await context.route('https://huggingface.co/**', (route) => {
    asked.push(route.request().url());
  });
  await openChat(page, './', { model: null });
  const card = page.getByRole('region', { name: 'Welcome to Hearth' });
  const named = (await card.locator('strong').innerText()).trim();
  const get = card.getByRole('button', { name: `Get ${named}`, exact: false });
  await get.click();
  await expect(card.getByLabel(`Downloading ${named}`)).toBeVisible();
  await expect.poll(() => asked.length).toBeGreaterThan(0);
  await card.getByRole('button', { name: 'Cancel download' }).click();
  await expect(card.getByRole('status')).toHaveText(
    'Download cancelled. What came is kept: Get goes on from there.',
  );
  await expect(card.getByLabel(`Downloading ${named}`)).toBeHidden();
  await expect(get).toBeFocused();
  // Nothing was downloaded: the conversation still has no model (and never the echo engine).
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue('');
});
