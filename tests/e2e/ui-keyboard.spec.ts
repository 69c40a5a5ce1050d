/**
 * The app by keyboard and on a phone: a skip link as the first Tab stop, the conversation list as
 * one Tab stop that the arrow keys move through, and the phone's drawer — a step that Back, Esc
 * and its Close button undo — beside a chat bar with New chat and a Menu named as everywhere.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { openApp } from './helpers';
import { composer, conversationRow as row, openChat, replies, send, userMessages } from './ui';

/** The focused element, looked up through shadow roots: its tag, id and text. */
function focused(page: Page) {
  return page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    return {
      tag: el?.tagName.toLowerCase() ?? '',
      id: el?.id ?? '',
      text: el?.textContent?.trim(),
    };
  });
}

/** Whether focus is in the app's main view (through shadow roots). */
const focusInMain = (page: Page) =>
  page.evaluate(() => {
    let el: Element | null = document.activeElement;
    while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
    for (let at: Node | null = el; at; at = at.parentNode ?? (at as ShadowRoot).host ?? null) {
      if (at.nodeName === 'MAIN') return true;
    }
    return false;
  });

const skipLink = (page: Page) => page.getByRole('button', { name: 'Skip to main content' });

/** Starts conversations "talk 0" … "talk n-1", each with one message, the last one open. */
async function talks(page: Page, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (i > 0) await page.getByRole('button', { name: 'New chat' }).click();
    await send(page, `talk ${i}`);
    await expect(replies(page)).toHaveText([`talk ${i}`]);
  }
}

test('the first Tab stop is "Skip to main content": it shows once focused and moves focus to the view', async ({
  page,
}) => {
  // The Models view puts focus nowhere on load, so the first Tab is the page's first stop.
  await openApp(page, './#/models');
  await expect(page.getByRole('heading', { name: 'Models', level: 2 })).toBeVisible();
  await expect(skipLink(page)).not.toBeInViewport();
  await page.keyboard.press('Tab');
  await expect(skipLink(page)).toBeFocused();
  await expect(skipLink(page)).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect.poll(async () => (await focused(page)).tag).toBe('main');
  await expect(skipLink(page)).not.toBeInViewport();
  // The next stop is in the view, not in the header or the sidebar (Firefox first stops on the
  // view's scrolling box, Chromium on its first control).
  await page.keyboard.press('Tab');
  expect(await focusInMain(page)).toBe(true);
  expect(new URL(page.url()).hash).toBe('#/models');
});

test('with eight conversations, Tab from the skip link reaches the chat in a few stops, the list being one; arrows move in the list, Enter opens, Right arrow and Shift+F10 reach the ⋯ menu', async ({
  page,
}) => {
  await openChat(page);
  await talks(page, 8);

  // Skip link, Chat, Models, Settings, Keyboard shortcuts, New chat, search, the list, Export,
  // Import, the engine's status: then the chat's Model picker.
  await skipLink(page).focus();
  const stops: string[] = [];
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    if (now.id === 'model') break;
    stops.push(now.id || now.text || now.tag);
  }
  expect(stops.length, stops.join(', ')).toBeLessThanOrEqual(12);
  const inList = stops.filter((id) => /^(open|more)-/.test(id));
  expect(inList, 'one stop in the list: the open conversation').toHaveLength(1);

  // The list's stop is the open conversation; the arrows move from there.
  await row(page, 'talk 7').focus();
  await page.keyboard.press('ArrowDown');
  await expect(row(page, 'talk 6')).toBeFocused();
  await page.keyboard.press('End');
  await expect(row(page, 'talk 0')).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await expect(row(page, 'talk 0')).toBeFocused();
  await page.keyboard.press('Home');
  await expect(row(page, 'talk 7')).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowUp');
  await expect(row(page, 'talk 6')).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(userMessages(page)).toHaveText(['talk 6']);
  await expect(page).toHaveTitle('talk 6 — Hearth');

  // Right arrow goes to the row's ⋯, Left comes back; Shift+F10 opens its menu from the title.
  await row(page, 'talk 6').focus();
  await page.keyboard.press('ArrowRight');
  const options = page.getByRole('button', { name: 'Options for talk 6' });
  await expect(options).toBeFocused();
  await page.keyboard.press('ArrowLeft');
  await expect(row(page, 'talk 6')).toBeFocused();
  await page.keyboard.press('Shift+F10');
  await expect(page.getByRole('menuitem', { name: 'Rename' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(options).toBeFocused();

  // Tab from the list leaves it at once, on to what follows it, and Shift+Tab comes back to
  // the row last focused.
  await row(page, 'talk 3').focus();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('button', { name: 'Export', exact: true })).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  await expect(row(page, 'talk 3')).toBeFocused();
});

/**
 * The browser's Back. (Playwright's `goBack` waits for a load that a step within the page never
 * has, in Firefox.)
 */
const back = (page: Page) => page.evaluate(() => history.back());

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 } });

  const menuButton = (page: Page) => page.getByRole('button', { name: 'Menu', exact: true });
  const views = (page: Page) => page.getByRole('navigation', { name: 'Views' });

  test('the drawer that Menu opens closes by its Close button, by Esc and by Back, and Back stays in the app', async ({
    page,
  }) => {
    await openChat(page);
    const app = page.url();

    await menuButton(page).click();
    await expect(views(page)).toBeVisible();
    await expect(composer(page)).toBeHidden();
    await page.getByRole('button', { name: 'Close', exact: true }).click();
    await expect(views(page)).toBeHidden();
    await expect(composer(page)).toBeVisible();
    await expect(menuButton(page)).toBeFocused();

    await menuButton(page).click();
    await expect(views(page)).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(composer(page)).toBeVisible();
    await expect(menuButton(page)).toBeFocused();

    await menuButton(page).click();
    await expect(views(page)).toBeVisible();
    await back(page);
    await expect(composer(page)).toBeVisible();
    await expect(views(page)).toBeHidden();
    expect(page.url()).toBe(app);

    // A view picked in the drawer takes the drawer's place in the history: Back returns to
    // the chat, not to a drawer.
    await menuButton(page).click();
    await views(page).getByRole('link', { name: 'Settings' }).click();
    await expect(page.getByRole('heading', { name: 'Settings', level: 2 })).toBeVisible();
    await back(page);
    await expect(composer(page)).toBeVisible();
    await expect(views(page)).toBeHidden();
  });

  test('the chat bar has New chat, the menu button reads "☰" and is named "Menu" in every view, and no "drop" wording shows', async ({
    page,
  }) => {
    await openChat(page);
    await send(page, 'a first talk');
    await expect(replies(page)).toHaveText(['a first talk']);
    await page.getByRole('button', { name: 'New chat' }).click();
    await expect(page).toHaveTitle('New conversation — Hearth');
    await expect(userMessages(page)).toHaveCount(0);
    await expect(composer(page)).toBeFocused();

    for (const hash of ['#/chat', '#/models', '#/settings']) {
      await page.goto(hash);
      await expect(menuButton(page), hash).toBeVisible();
      await expect(menuButton(page), hash).toHaveText('☰');
    }

    await page.goto('#/models');
    await page.getByRole('button', { name: 'Add a model' }).click();
    await expect(page.getByText('Choose a .gguf file')).toBeVisible();
    // A phone has nothing to drag a file from.
    await expect(page.getByText(/drop one here/i)).toBeHidden();
  });
});
