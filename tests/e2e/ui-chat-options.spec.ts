/**
 * Chat options: a non-modal popover that takes the focus when it opens, closes with Esc (focus
 * back on its button) or a click outside, and sits above the messages without hiding any of their
 * actions. Its parameters (temperature, top P, seed, stop sequences, maximum length, context
 * limit) reach the request as the API takes them, an out-of-range value is said inline and never
 * sent; Settings holds their defaults for new conversations and a library of saved system
 * prompts to pick from. The echo engine answers.
 */
import { expect, type Locator, type Page } from '@playwright/test';
import { axe, violations } from './axe';
import { test } from './warm-context';
import { composer, openChat, openSettings, replaceNumber, replies, send } from './ui';

const toggle = (page: Page) => page.getByRole('button', { name: 'Chat options', exact: true });
const options = (page: Page) => page.getByRole('dialog', { name: 'Chat options' });

/** What has focus, looked for through the shadow roots: its id and its accessible name. */
const focused = (page: Page) =>
  page.evaluate(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return {
      id: active?.id ?? '',
      name: active?.getAttribute('aria-label') ?? active?.textContent?.trim() ?? '',
    };
  });

/** Whether a click at the middle of `target` lands on it (nothing lies over it). */
const uncovered = (target: Locator) =>
  target.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    let hit: Element | null = document.elementFromPoint(x, y);
    while (hit?.shadowRoot) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit !== null && (hit === el || el.contains(hit));
  });

/** axe-core on the page as it is now: no violation. */
async function expectNoAxeViolations(page: Page, where: string): Promise<void> {
  expect(violations(await axe(page).analyze()), `axe on ${where}`).toEqual([]);
}

/**
 * Records the body of every chat request the page sends, as the app hands it to `fetch` (Firefox
 * shows no body of a request its service worker answers). Call before the app opens.
 */
const recordChatRequests = (page: Page) =>
  page.addInitScript(() => {
    const bodies: unknown[] = [];
    (globalThis as { chatBodies?: unknown[] }).chatBodies = bodies;
    const fetch = globalThis.fetch.bind(globalThis);
    globalThis.fetch = (input: RequestInfo | URL, init?: RequestInit) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.endsWith('/chat/completions') && typeof init?.body === 'string') {
        bodies.push(JSON.parse(init.body));
      }
      return fetch(input, init);
    };
  });

/** The body of the last chat request the page sent. */
const lastChatRequest = async (page: Page) => {
  const bodies = await page.evaluate(
    () => (globalThis as { chatBodies?: Record<string, unknown>[] }).chatBodies ?? [],
  );
  return bodies.at(-1) ?? {};
};

test('Chat options takes the focus when it opens, Esc closes it and gives the focus back to its button, and a click outside closes it', async ({
  page,
}) => {
  await openChat(page);
  await toggle(page).click();
  await expect(options(page)).toBeVisible();
  await expect(toggle(page)).toHaveAttribute('aria-expanded', 'true');
  // The focus is in it, on its first field.
  await expect.poll(async () => (await focused(page)).id).toBe('opt-system');

  await page.keyboard.press('Escape');
  await expect(options(page)).toHaveCount(0);
  await expect(toggle(page)).toHaveAttribute('aria-expanded', 'false');
  await expect.poll(async () => (await focused(page)).name).toBe('Chat options');

  // Enter on its button opens it again; Tab goes on through its fields, never out to the page.
  await page.keyboard.press('Enter');
  await expect(options(page)).toBeVisible();
  await expect.poll(async () => (await focused(page)).id).toBe('opt-system');
  await page.keyboard.press('Tab');
  await expect.poll(async () => (await focused(page)).id).toBe('opt-temperature');

  // A click elsewhere (here the composer) closes it, and leaves the focus where it was put.
  await composer(page).click();
  await expect(options(page)).toHaveCount(0);
  await expect(composer(page)).toBeFocused();

  // Its button still opens and closes it.
  await toggle(page).click();
  await expect(options(page)).toBeVisible();
  await toggle(page).click();
  await expect(options(page)).toHaveCount(0);
});

for (const size of [
  { name: 'desktop', width: 1280, height: 720 },
  { name: 'phone', width: 390, height: 844 },
]) {
  test(`open while a chat goes on (${size.name}), Chat options hides none of the messages' actions`, async ({
    page,
  }) => {
    await page.setViewportSize({ width: size.width, height: size.height });
    await openChat(page);
    await send(page, 'first question');
    await expect(replies(page)).toHaveText(['first question']);
    await toggle(page).click();
    await expect(page.getByLabel('System prompt')).toBeVisible();
    await send(page, 'second question');
    await expect(replies(page)).toHaveText(['first question', 'second question']);
    // Still open: sending is no click outside.
    await expect(page.getByLabel('System prompt')).toBeVisible();
    const log = page.getByRole('log', { name: 'Messages' });
    await log.evaluate((el) => (el.scrollTop = 0));
    for (const name of ['Edit message 1', 'Copy reply 1', 'Regenerate reply 1']) {
      const action = page.getByRole('button', { name, exact: true });
      await action.scrollIntoViewIfNeeded();
      expect(await uncovered(action), `${name} is not covered`).toBe(true);
    }
  });
}

test('top P, seed, stop sequences and the maximum length reach the request; the echo reply ends at the stop sequence', async ({
  page,
}) => {
  await recordChatRequests(page);
  await openChat(page);
  await openSettings(page);
  await replaceNumber(page.getByLabel('Temperature'), 0.3);
  await replaceNumber(page.getByLabel('Top P'), 0.5);
  await replaceNumber(page.getByLabel('Seed'), 42);
  await replaceNumber(page.getByLabel('Maximum length (tokens)'), 50);
  await page.getByLabel('Stop sequences').fill('STOP\nhalt');
  await page.getByLabel('Stop sequences').blur();
  await send(page, 'alpha beta STOP gamma');
  await expect(replies(page)).toHaveText(['alpha beta']);
  expect(await lastChatRequest(page)).toMatchObject({
    temperature: 0.3,
    top_p: 0.5,
    seed: 42,
    max_completion_tokens: 50,
    stop: ['STOP', 'halt'],
  });

  // Blank, the seed is random again and top P is the model's own: neither is sent.
  await openSettings(page);
  await page.getByLabel('Seed').fill('');
  await page.getByLabel('Seed').blur();
  await page.getByLabel('Top P').fill('');
  await page.getByLabel('Top P').blur();
  await send(page, 'delta');
  // The reply shows before its request goes (the conversation is stored first).
  const lastMessage = async () =>
    ((await lastChatRequest(page)).messages as { content: string }[] | undefined)?.at(-1)?.content;
  await expect.poll(lastMessage).toBe('delta');
  const next = await lastChatRequest(page);
  expect(next).not.toHaveProperty('seed');
  expect(next).not.toHaveProperty('top_p');
});

test('an out-of-range value is said beside its field and never sent: the request keeps the last valid one', async ({
  page,
}) => {
  await recordChatRequests(page);
  await openChat(page);
  await openSettings(page);
  const topP = page.getByLabel('Top P');
  await replaceNumber(topP, 0.9);
  // Typed key by key: no prefix of "5" is a valid top P, so 0.9 stays the kept one.
  await replaceNumber(topP, 5);
  await expect(topP).toHaveAttribute('aria-invalid', 'true');
  await expect(topP).toHaveAccessibleDescription(/from 0 to 1/);
  const stops = page.getByLabel('Stop sequences');
  await stops.fill('a\nb\nc\nd\ne');
  await stops.blur();
  await expect(stops).toHaveAttribute('aria-invalid', 'true');
  await expect(stops).toHaveAccessibleDescription(/At most 4 stop sequences/);
  await expectNoAxeViolations(page, 'Chat options with errors');
  await send(page, 'hello');
  await expect(replies(page)).toHaveText(['hello']);
  const body = await lastChatRequest(page);
  expect(body.top_p).toBe(0.9);
  expect(body).not.toHaveProperty('stop');
  // Put right, the error goes.
  await openSettings(page);
  await replaceNumber(page.getByLabel('Top P'), 0.7);
  await expect(page.getByLabel('Top P')).not.toHaveAttribute('aria-invalid', 'true');
});

test('a context limit sends only the latest messages that fit in it; the conversation keeps them all', async ({
  page,
}) => {
  await recordChatRequests(page);
  await openChat(page);
  const long = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
  await send(page, long);
  await expect(replies(page)).toHaveCount(1);
  await openSettings(page);
  await replaceNumber(page.getByLabel('Context limit (tokens)'), 128);
  await send(page, 'short question');
  await expect(replies(page)).toHaveText([long, 'short question']);
  const body = (await lastChatRequest(page)) as { messages?: { content: string }[] };
  expect(body.messages?.map((m) => m.content)).toEqual(['short question']);
});

test('Settings keeps saved system prompts (add, rename, delete) and defaults for new conversations; Chat options picks a saved prompt', async ({
  page,
}) => {
  await recordChatRequests(page);
  await openChat(page);
  await page.goto('#/settings/preferences');
  const library = page.getByRole('region', { name: 'Saved system prompts' });
  await library.getByLabel("New prompt's name").fill('Pirate');
  await library.getByLabel("New prompt's text").fill('Answer like a pirate.');
  await library.getByRole('button', { name: 'Save prompt' }).click();
  await library.getByLabel("New prompt's name").fill('Brief');
  await library.getByLabel("New prompt's text").fill('Answer in one line.');
  await library.getByRole('button', { name: 'Save prompt' }).click();
  await expect(library.getByRole('listitem')).toHaveCount(2);
  await library.getByRole('button', { name: 'Rename Pirate' }).click();
  await library.getByLabel('New name for Pirate').fill('Captain');
  await library.getByLabel('New name for Pirate').press('Enter');
  await library.getByRole('button', { name: 'Delete Brief' }).click();
  await expect(library.getByRole('listitem')).toHaveCount(1);
  await expect(library.getByRole('listitem')).toContainText('Captain');
  await expectNoAxeViolations(page, 'Settings with a saved prompt');

  // Defaults for new conversations.
  const defaults = page.getByRole('group', { name: 'Defaults for new conversations' });
  await replaceNumber(defaults.getByLabel('Top P'), 0.8);
  await replaceNumber(defaults.getByLabel('Seed'), 7);

  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await openSettings(page);
  await expect(page.getByLabel('Top P')).toHaveValue('0.8');
  await expect(page.getByLabel('Seed')).toHaveValue('7');
  await page.getByLabel('Use a saved prompt').selectOption({ label: 'Captain' });
  await expect(page.getByLabel('System prompt')).toHaveValue('Answer like a pirate.');
  await expectNoAxeViolations(page, 'Chat options with saved prompts');
  await send(page, 'ahoy');
  await expect(replies(page)).toHaveText(['[Answer like a pirate.] ahoy']);
  expect(await lastChatRequest(page)).toMatchObject({ top_p: 0.8, seed: 7 });
});
