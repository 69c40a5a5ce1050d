/**
 * The relay paired with a page of a site that is not Hearth's own: the plain fixture site
 * (sites/make.mjs), whose pages only call `startHearth()` from the copied loader, served under
 * `/repo/` by a plain static server. `hearth-relay` is started as its users start it, with
 * `--app` naming the site's `/repo/docs/` page; the loader asks in a dialog of its own, in the
 * app's words, and callers outside the browser (the `openai` SDK in Node, curl) reach the page's
 * API through the relay.
 */
import { expect, test, type Page } from '@playwright/test';
import OpenAI from 'openai';
import { PAIRING_WORDS as WORDS } from '../../src/relay-tab/pairing-words';
import { curl, startRelay, type RunningRelay } from './relay';
import { PLAIN_PUBLIC } from './sites/make.mjs';
import { StaticServer } from './sites/static-server.mjs';

/** A port of its own, past site.spec.ts's (E2E_SITE_PORT moves both, for runs side by side). */
const SITE_PORT = Number(process.env.E2E_SITE_PORT ?? 4193) + 5;
const site = new StaticServer(SITE_PORT, { '/repo/': PLAIN_PUBLIC });
/** The page the relay pairs with: not the site's root, and no page of Hearth's app. */
const PAGE = `${site.origin}/repo/docs/`;

let relay: RunningRelay;

test.beforeAll(() => site.start());
test.afterAll(() => site.stop());
test.beforeEach(async () => {
  relay = await startRelay(PAGE);
});
test.afterEach(() => relay.stop());

/** The loader's confirmation, by its role and name, as a user finds it. */
const confirmation = (page: Page) => page.getByRole('dialog', { name: WORDS.title });

/** Asks `hearth/echo` through the relay with the stock `openai` SDK in Node, whole and streamed. */
async function askThroughRelay(content: string): Promise<{ whole: string; streamed: string }> {
  const client = new OpenAI({ baseURL: relay.sdkBaseUrl, apiKey: relay.key, maxRetries: 0 });
  const messages = [{ role: 'user' as const, content }];
  const reply = await client.chat.completions.create({ model: 'hearth/echo', messages });
  const stream = await client.chat.completions.create({
    model: 'hearth/echo',
    messages,
    stream: true,
  });
  let streamed = '';
  for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
  return { whole: reply.choices[0]?.message.content ?? '', streamed };
}

/** What the relay answers a call on its models now (503 while no tab is paired). */
const modelsStatus = async () =>
  (await curl(['-H', `authorization: Bearer ${relay.key}`, `${relay.baseUrl}/models`])).status;

test('the relay’s link opens the site’s page given as --app, with the pairing query', () => {
  expect(relay.link).toMatch(
    new RegExp(
      `^${PAGE.replaceAll('.', '\\.')}\\?relay=ws://127\\.0\\.0\\.1:\\d+/relay&pair=\\S+$`,
    ),
  );
  expect(relay.output()).toContain('Pair a tab of the app: open this link');
});

test('the loader asks in the app’s words, focused on “Don’t share”, and a yes pairs: the openai SDK in Node gets hearth/echo’s reply exactly through the relay', async ({
  page,
}) => {
  await page.goto(relay.link);
  const dialog = confirmation(page);
  await expect(dialog).toBeVisible();
  await expect(dialog.getByRole('heading')).toHaveText(WORDS.title);
  await expect(dialog.locator('p').first()).toHaveText(
    `${WORDS.question[0]}${relay.wsUrl}${WORDS.question[1]}`,
  );
  await expect(dialog.locator('p').nth(1)).toHaveText(WORDS.detail);
  // Unchecked on a site, where the app checks it: the site's own keys must go on working.
  await expect(dialog.getByRole('checkbox', { name: WORDS.requireKeys })).not.toBeChecked();
  await expect(dialog.getByRole('button')).toHaveText([WORDS.decline, WORDS.accept]);
  await expect(dialog.getByRole('button', { name: WORDS.decline })).toBeFocused();
  // The link's one-time code left the address as it was read; the page is the one given.
  expect(new URL(page.url()).search).toBe('');
  expect(new URL(page.url()).pathname).toBe('/repo/docs/');

  await dialog.getByRole('button', { name: WORDS.accept, exact: true }).click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByRole('status')).toHaveText(
    `${WORDS.paired[0]}${relay.baseUrl}${WORDS.paired[1]} ${WORDS.stop}`,
  );
  await expect.poll(relay.output).toContain(`Paired with a tab of ${site.origin}.`);
  expect(await askThroughRelay('Hello from Node, through a site')).toEqual({
    whole: 'Hello from Node, through a site',
    streamed: 'Hello from Node, through a site',
  });
  // The site's own code, with a key of its own, is still answered.
  const own = await page.evaluate(async () => {
    const response = await fetch('/repo/v1/openai/models', {
      headers: { authorization: 'Bearer the-sites-own-key' },
    });
    return response.status;
  });
  expect(own).toBe(200);
});

test('a reload of the paired page reconnects with its session; “Stop sharing” ends the pairing', async ({
  page,
}) => {
  await page.goto(relay.link);
  await confirmation(page).getByRole('button', { name: WORDS.accept, exact: true }).click();
  await expect.poll(() => relay.output().match(/Paired with a tab/g)?.length).toBe(1);

  await page.reload();
  await expect(page.getByText(WORDS.paired[0])).toBeVisible();
  await expect(confirmation(page)).toHaveCount(0);
  await expect.poll(() => relay.output().match(/Paired with a tab/g)?.length).toBe(2);
  expect((await askThroughRelay('after the reload')).whole).toBe('after the reload');

  await page.getByRole('button', { name: WORDS.stop }).click();
  await expect(page.getByText('The pairing was ended.')).toBeVisible();
  await expect.poll(relay.output).toContain('The tab ended the pairing');
  expect(await modelsStatus()).toBe(503);
});

for (const [how, answer] of [
  [
    '“Don’t share”',
    (page: Page) => confirmation(page).getByRole('button', { name: WORDS.decline }).click(),
  ],
  ['Escape', (page: Page) => page.keyboard.press('Escape')],
] as const) {
  test(`saying no with ${how} pairs nothing: the dialog goes, the code leaves the address, and the relay answers 503 engine_unavailable`, async ({
    page,
  }) => {
    await page.goto(relay.link);
    await expect(confirmation(page)).toBeVisible();
    await answer(page);
    await expect(confirmation(page)).toHaveCount(0);
    await expect(page.getByRole('status')).toHaveText(`Not shared. ${WORDS.dismiss}`);
    expect(new URL(page.url()).searchParams.has('pair')).toBe(false);
    // The page goes on as any page of the site, its API answering its own code.
    await page.waitForFunction(() => 'hearth' in globalThis);
    expect(relay.output()).not.toContain('Paired');
    const refused = await curl([
      '-H',
      `authorization: Bearer ${relay.key}`,
      '-H',
      'content-type: application/json',
      '--data-binary',
      JSON.stringify({ model: 'hearth/echo', messages: [{ role: 'user', content: 'x' }] }),
      `${relay.baseUrl}/chat/completions`,
    ]);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toMatchObject({ code: 'engine_unavailable' });
  });
}

test('a page of the site opened without a pairing link shows nothing of the relay', async ({
  page,
}) => {
  await page.goto(PAGE);
  await page.waitForFunction(() => 'hearth' in globalThis);
  await expect(page.locator('.hearth-relay')).toHaveCount(0);
  await expect(page.getByRole('dialog')).toHaveCount(0);
});
