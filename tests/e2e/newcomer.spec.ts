/**
 * A newcomer's first minutes, in a fresh profile: the first message never goes to the echo test
 * engine; it waits, the first-run card offers the model this device runs best (and the other
 * ways to one), and it is answered once that model is ready. With the model hosts out of reach
 * the card says so plainly, and what works here. In the test Chromium, WebGPU's adapter is
 * SwiftShader, a software one: it counts as no GPU. Hugging Face is out of reach here: where a
 * test needs the model, its file is answered with the fixture GGUF (a real model that spells
 * FIXTURE_SENTENCE) from the test's model server.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { chromiumOnly } from './helpers';
import { FIXTURE_SENTENCE } from './fixture-model';
import { FIXTURE_GGUF_URL, ModelServer } from './model-server';
import { ECHO_MODEL_ID, openChat, pickModel, replies, send, userMessages } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
// Firefox keeps a context's routes (WebDriver BiDi intercepts) after the context closes, and
// they then send a later context's navigations past its service worker: offline.spec's reload
// with the network off failed after this file, every time, until the routes were removed.
test.afterEach(({ context }) => context.unrouteAll({ behavior: 'ignoreErrors' }));

const card = (page: Page) => page.getByRole('region', { name: 'Welcome to Hearth' });
const picker = (page: Page) => page.getByLabel('Model', { exact: true });

test("a newcomer's first message waits for a model instead of going to the echo engine, and is answered once the suggested one is ready", async ({
  page,
  context,
}) => {
  test.setTimeout(120_000);
  await context.route('https://huggingface.co/**', async (route) => {
    const response = await route.fetch({ url: FIXTURE_GGUF_URL });
    await route.fulfill({ response });
  });
  await openChat(page, './', { model: null });
  await expect(picker(page)).toHaveValue('');
  await expect(picker(page).locator('option:checked')).toHaveText('Choose a model');
  // Echo stays there for developers, named as the test engine it is.
  await expect(picker(page).locator(`option[value="${ECHO_MODEL_ID}"]`)).toHaveText(
    'Echo (test engine)',
  );
  await send(page, 'What is Hearth?');
  await expect(userMessages(page)).toHaveText(['What is Hearth?']);
  await expect(card(page).getByRole('status').first()).toHaveText(
    'Your message is kept. Hearth answers it once a model is ready on this device.',
  );
  await expect(replies(page)).toHaveCount(0);
  // Kept across a reload, still waiting.
  await page.reload();
  await expect(userMessages(page)).toHaveText(['What is Hearth?']);
  await expect(replies(page)).toHaveCount(0);
  // The suggestion is a small GGUF on the CPU (no GPU here, or only a software one).
  await expect(card(page)).toContainText('on its CPU with llama.cpp');
  const named = (await card(page).locator('strong').innerText()).trim();
  await card(page)
    .getByRole('button', { name: `Get ${named}` })
    .click();
  await expect(replies(page)).toHaveText([FIXTURE_SENTENCE], { timeout: 90_000 });
  await expect(picker(page)).toHaveValue(/-GGUF:Q4_K_M$/);
  await expect(card(page)).toHaveCount(0);
});

test('with the model hosts out of reach, the first message is kept and the card says plainly what works here', async ({
  page,
  context,
}) => {
  await context.route('https://huggingface.co/**', (route) => route.abort('internetdisconnected'));
  await openChat(page, './', { model: null });
  await send(page, 'Hello?');
  await expect(userMessages(page)).toHaveText(['Hello?']);
  // The suggestion shows once the device is measured (the card says "Checking…" until then).
  await expect(card(page).locator('strong')).toBeVisible({ timeout: 20_000 });
  const named = (await card(page).locator('strong').innerText()).trim();
  await card(page)
    .getByRole('button', { name: `Get ${named}` })
    .click();
  await expect(card(page).getByRole('alert')).toHaveText(
    `${named} could not be downloaded: the model hosts can't be reached from here (offline, or behind a firewall).`,
  );
  await expect(card(page)).toContainText(
    'What works here without them: a GGUF file from this computer, a server of yours on this network, and any model already downloaded.',
  );
  await expect(card(page).getByRole('button', { name: `Try again: get ${named}` })).toBeVisible();
  await expect(replies(page)).toHaveCount(0);
  // The way to a file of this computer opens "Add a model".
  await card(page)
    .getByRole('link', { name: 'A GGUF file from this computer, or one by its URL' })
    .click();
  await expect(page.getByRole('button', { name: 'Add a model' })).toHaveAttribute(
    'aria-expanded',
    'true',
  );
  // Back in the chat, a developer may still pick the echo engine: it answers the waiting message.
  await page.getByRole('link', { name: 'Chat', exact: true }).click();
  await pickModel(page, ECHO_MODEL_ID);
  await expect(replies(page)).toHaveText(['Hello?']);
});

test("a software graphics adapter counts as no GPU: the card says why, and WebLLM's models are marked slow here", async ({
  page,
  browserName,
}) => {
  chromiumOnly(
    browserName,
    "the test Chromium's WebGPU adapter is SwiftShader; Firefox here has no WebGPU",
  );
  await openChat(page, './', { model: null });
  await expect(card(page)).toContainText(
    "This device's graphics adapter is a software one, which runs on the processor: there is no usable GPU here",
  );
  await expect(card(page)).not.toContainText('with WebLLM');
  await page.getByRole('link', { name: 'Models', exact: true }).click();
  await expect(page.getByRole('note').filter({ hasText: 'software one' })).toContainText(
    "WebLLM's models would crawl",
  );
  const smol = page.getByRole('listitem', { name: 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC' });
  await expect(smol).toContainText('slow here');
  // Still there to download, for whoever wants to try one.
  await expect(smol.getByRole('button', { name: /^Download/ })).toBeVisible();
  const gguf = page.getByRole('listitem', { name: 'bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M' });
  // Not judged by the software adapter: a GGUF runs on the CPU, as fast as its size allows here.
  await expect(gguf.getByText('CPU', { exact: true })).toBeVisible();
  await expect(gguf).not.toContainText('software');
});
