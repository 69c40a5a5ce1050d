/**
 * The chat's frame as a person meets it: on a phone with the keyboard open and a banner shown,
 * with the keyboard alone (where focus goes after each action, the shortcuts), and the pieces
 * around the messages (the growing composer, "↓ Latest", Continue, the title).
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import {
  composer,
  ECHO_MODEL_ID,
  openChat,
  pickModel,
  replies,
  send,
  setEchoDelay,
  userMessages,
} from './ui';

/**
 * The element that has focus, looked up through shadow roots: its tag, name and text. Focus moves
 * after a render, so tests poll it.
 */
function focused(page: Page) {
  return page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return {
      tag: el?.tagName.toLowerCase() ?? null,
      id: el?.id ?? '',
      label: el?.getAttribute('aria-label') ?? '',
      text: el?.textContent?.trim() ?? '',
    };
  });
}

/** Whether `box` lies inside the viewport, top to bottom. */
async function onScreen(page: Page, name: string, locator: ReturnType<Page['locator']>) {
  const box = await locator.boundingBox();
  const height = page.viewportSize()!.height;
  expect(box, `${name} is laid out`).not.toBeNull();
  expect(box!.y, `${name} starts on screen`).toBeGreaterThanOrEqual(0);
  expect(box!.y + box!.height, `${name} ends on screen`).toBeLessThanOrEqual(height);
}

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true });

  test('with the keyboard open and the offline banner shown, the composer and Send stay on screen, the log keeps room to read, and one bar holds the model', async ({
    page,
    context,
  }) => {
    await openChat(page);
    await send(page, 'Hello from a phone');
    await expect(replies(page)).toHaveText(['Hello from a phone']);
    // The echo engine has no real context window: no meter counts against one.
    await expect(page.getByRole('meter')).toHaveCount(0);
    // One bar: the menu, the model and the options, in one row, the model's name not cut.
    const bar = page.locator('chat-view .bar');
    expect((await bar.boundingBox())!.height).toBeLessThanOrEqual(56);
    const picker = page.getByRole('combobox', { name: 'Model', exact: true });
    const fits = await picker.evaluate((el) => el.scrollWidth <= el.clientWidth + 1);
    expect(fits, "the model's name fits in the picker").toBe(true);
    await expect(page.getByRole('button', { name: 'Menu', exact: true })).toBeVisible();

    await context.setOffline(true);
    await expect(page.getByRole('status').filter({ hasText: 'Offline.' })).toBeVisible();
    // The on-screen keyboard takes about 340 px of an 844 px phone.
    await page.setViewportSize({ width: 390, height: 500 });
    await onScreen(page, 'the composer', composer(page));
    await onScreen(page, 'Send', page.getByRole('button', { name: 'Send' }));
    const log = page.getByRole('log', { name: 'Messages' });
    expect((await log.boundingBox())!.height).toBeGreaterThanOrEqual(150);
    // And it still works: the echo engine answers offline.
    await send(page, 'Still here');
    await expect(replies(page).last()).toHaveText('Still here');
    await context.setOffline(false);
  });

  test('the menu opens the conversations and views in a drawer, and Esc closes it and gives focus back', async ({
    page,
  }) => {
    await openChat(page);
    const menu = page.getByRole('button', { name: 'Menu', exact: true });
    await menu.click();
    await expect(page.getByRole('navigation', { name: 'Views' })).toBeVisible();
    await expect(composer(page)).toBeHidden();
    await page.keyboard.press('Escape');
    await expect(composer(page)).toBeVisible();
    await expect.poll(async () => (await focused(page)).label).toBe('Menu');
  });
});

test('focus moves on purpose: to the composer after Stop, to Stop after Regenerate and back to the composer when the reply ends', async ({
  page,
}) => {
  await openChat(page);
  // On load the composer has focus, as in the chat apps people know.
  await expect.poll(async () => (await focused(page)).id).toBe('composer');
  await setEchoDelay(page, 150);
  await page.getByRole('button', { name: 'Chat options' }).click();
  await send(page, 'one two three four five six seven eight nine ten');
  await expect(replies(page).last()).toContainText('one');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  await expect.poll(async () => (await focused(page)).id).toBe('composer');

  // Continue goes on with the stopped reply, in the same reply.
  const stopped = await replies(page).last().innerText();
  await setEchoDelay(page, 0);
  await page.getByRole('button', { name: 'Chat options' }).click();
  await page.getByRole('button', { name: /^Continue reply 1/ }).click();
  await expect(replies(page)).toHaveCount(1);
  await expect(replies(page).last()).toContainText('Continue your last reply');
  expect((await replies(page).last().innerText()).startsWith(stopped.split('\n')[0]!)).toBe(true);

  await setEchoDelay(page, 150);
  await page.getByRole('button', { name: 'Chat options' }).click();
  await page.getByRole('button', { name: /^Regenerate reply 1/ }).click();
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
  await expect.poll(async () => (await focused(page)).text).toBe('Stop');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible({ timeout: 15_000 });
  await expect.poll(async () => (await focused(page)).id).toBe('composer');
});

test("while the app boots it says it is checking, never that the model is missing; the conversation's title is the tab's title and a heading; the keyboard shortcuts are listed and work", async ({
  page,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  // From the first frame: the picker never says "not on this device" and Send is never disabled
  // while the app is still reading the catalogue (it says "Checking this device…" instead).
  await page.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as { bootSeen?: string[] }).bootSeen = seen;
    const look = () => {
      const view = document.querySelector('hearth-app')?.shadowRoot?.querySelector('chat-view');
      const root = view?.shadowRoot;
      const picked = root?.querySelector<HTMLSelectElement>('#model')?.selectedOptions[0]?.text;
      if (picked) seen.push(picked.trim());
      if (root?.querySelector<HTMLButtonElement>('button[type="submit"]')?.disabled) {
        seen.push('Send disabled');
      }
      if (seen.length < 2000) requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  });
  await openChat(page);
  const boot = await page.evaluate(() => (globalThis as { bootSeen?: string[] }).bootSeen ?? []);
  expect(boot.length).toBeGreaterThan(0);
  expect(boot.filter((text) => /not on this device|Send disabled/.test(text))).toEqual([]);
  await send(page, 'Plans for the weekend');
  await expect(replies(page)).toHaveText(['Plans for the weekend']);
  await expect(page).toHaveTitle('Plans for the weekend — Hearth');
  await expect(
    page.getByRole('heading', { name: 'Plans for the weekend', level: 2 }),
  ).toBeVisible();

  await page.keyboard.press('ControlOrMeta+/');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(help).toBeVisible();
  await expect(help).toContainText('New conversation');
  await expect(help).toContainText('Copy the last reply');
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();

  await page.getByRole('link', { name: 'Models' }).focus();
  await page.keyboard.press('Shift+Escape');
  await expect.poll(async () => (await focused(page)).id).toBe('composer');
  await page.keyboard.press('ControlOrMeta+Shift+C');
  await expect
    .poll(() => page.evaluate(() => navigator.clipboard.readText()))
    .toBe('Plans for the weekend');
  await page.keyboard.press('ControlOrMeta+Shift+O');
  await expect(page).toHaveTitle('New conversation — Hearth');
  await expect(userMessages(page)).toHaveCount(0);
  await expect.poll(async () => (await focused(page)).id).toBe('composer');
});

test('the composer grows with its text up to 40% of the height, each reply ends in view, and "↓ Latest" brings back the newest message', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await openChat(page);
  const box = composer(page);
  const start = (await box.boundingBox())!.height;
  await box.fill('a\nb\nc\nd');
  const grown = (await box.boundingBox())!.height;
  expect(grown).toBeGreaterThan(start * 1.8);
  await box.fill(Array.from({ length: 80 }, (_, i) => `line ${i}`).join('\n'));
  const tall = (await box.boundingBox())!.height;
  const view = (await page.locator('chat-view').boundingBox())!.height;
  expect(tall).toBeLessThanOrEqual(view * 0.4 + 2);
  expect(tall).toBeGreaterThan(grown);
  await box.fill('');

  // One after the other: a message sent while a reply streams in is not sent.
  for (let i = 0; i < 6; i += 1) {
    await send(page, `Message ${i}\n\n${'A long line. '.repeat(60)}`);
    await expect(replies(page)).toHaveCount(i + 1);
    await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  }
  await expect(replies(page)).toHaveCount(6);
  // Each reply ends in view, its last line and its actions too, not just its start.
  await expect(replies(page).last()).toBeInViewport({ ratio: 1 });
  await expect(page.getByRole('button', { name: 'Copy reply 6' })).toBeInViewport();
  const latest = page.getByRole('button', { name: 'Scroll to the latest message' });
  await expect(latest).toBeHidden();
  await page.getByRole('log', { name: 'Messages' }).evaluate((log) => (log.scrollTop = 0));
  await expect(latest).toBeVisible();
  await latest.click();
  await expect(latest).toBeHidden();
  await expect(replies(page).last()).toBeInViewport();
});

/** Where the docs' screenshots (README, docs/chat-app.md) go when `HEARTH_SCREENSHOTS=docs` asks for them to be renewed. */
const SHOTS = process.env.HEARTH_SCREENSHOTS;

test('the app at desktop and phone width, light and dark, shows nothing sticking out sideways (screenshots)', async ({
  page,
}, testInfo) => {
  const shoot = async (name: string) => {
    // The newest message in view (the highlighter, loaded lazily, grows a reply after its end).
    await page.locator('chat-view .log').evaluate((log) => (log.scrollTop = log.scrollHeight));
    const path = testInfo.outputPath(name);
    await page.screenshot({ path });
    await testInfo.attach(name, { path, contentType: 'image/png' });
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}` });
  };
  await page.setViewportSize({ width: 1280, height: 800 });
  // A newcomer's first run: the card, and a first message waiting for a model.
  await openChat(page, './', { model: null });
  await send(page, 'What can Hearth do?');
  await expect(
    page.getByRole('region', { name: 'Welcome to Hearth' }).locator('strong'),
  ).toBeVisible();
  await composer(page).blur();
  await shoot('screenshot-first-run.png');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
  // A developer's chat with the echo engine, picked explicitly: it answers the waiting message.
  await pickModel(page, ECHO_MODEL_ID);
  await expect(replies(page)).toHaveCount(1);
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  await send(
    page,
    '**Hearth** runs a model in this browser:\n\n' +
      '| Engine | Runs on |\n|---|---|\n| WebLLM | WebGPU |\n| llama.cpp | WebGPU or the CPU |\n\n' +
      '```js\nconst client = new OpenAI({ baseURL, apiKey });\n```',
  );
  await expect(replies(page)).toHaveCount(2);
  await expect(replies(page).last().locator('[class*="hljs-"]').first()).toBeVisible();
  await page.getByRole('button', { name: 'Dismiss the test engine hint' }).click();
  await composer(page).blur();
  await shoot('screenshot-desktop.png');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1280);
  await page.emulateMedia({ colorScheme: 'dark' });
  await shoot('screenshot-dark.png');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 390, height: 844 });
  await shoot('screenshot-phone.png');
  // Nothing sticks out sideways at phone width.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  await page.getByRole('button', { name: 'Menu', exact: true }).click();
  await expect(page.getByRole('list', { name: 'Conversations' })).toBeVisible();
  await shoot('screenshot-phone-drawer.png');
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
});
