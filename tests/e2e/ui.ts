/**
 * Helpers for the chat app's tests: they drive it by role and label, as a person would.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, type Locator, type Page } from '@playwright/test';
import { openApp } from './helpers';

/**
 * Opens the app (at `path`) on a fresh conversation, with the echo engine answering: picked in
 * the conversation's model picker, as a developer does (a newcomer's conversation has no model
 * until a real one is ready), so that the conversations started after it have it too.
 * `model: null` leaves the picker as the app set it. The `openai` SDK is not loaded (`loadOpenAI`).
 */
export async function openChat(
  page: Page,
  path = './',
  { model = ECHO_MODEL_ID as string | null } = {},
): Promise<void> {
  await openApp(page, path, { sdk: false });
  await expect(composer(page)).toBeVisible();
  if (model !== null) await pickModel(page, model);
}

export const ECHO_MODEL_ID = 'hearth/echo';

/** Picks `id` in the conversation's model picker (the control labelled "Model"). */
export async function pickModel(page: Page, id: string): Promise<void> {
  const picker = page.getByLabel('Model', { exact: true });
  await expect(picker.locator(`option[value="${id}"]`)).toBeAttached();
  await picker.selectOption(id);
  await expect(picker).toHaveValue(id);
}

export const composer = (page: Page) => page.getByRole('textbox', { name: 'Message', exact: true });
export const replies = (page: Page) => page.getByRole('article', { name: 'Reply' });
export const userMessages = (page: Page) => page.getByRole('article', { name: 'You' });

/** Types `text` in the composer and sends it with Enter. */
export async function send(page: Page, text: string): Promise<void> {
  await composer(page).fill(text);
  await expect(composer(page)).toHaveValue(text);
  await composer(page).press('Enter');
}

/** Sets the echo engine's pause per token, in the conversation's settings. */
export async function setEchoDelay(page: Page, ms: number): Promise<void> {
  await openSettings(page);
  await replaceNumber(page.getByLabel('Delay per token, ms (test engine)'), ms);
}

/**
 * Replaces the number in a field as a person does: select what is there, type, leave the field.
 * (Playwright's `fill` of a number field in Firefox over BiDi adds to the text already there.)
 */
export async function replaceNumber(field: Locator, value: number): Promise<void> {
  await field.click();
  await field.press('ControlOrMeta+a');
  await field.pressSequentially(String(value));
  await field.blur();
}

/** Opens the conversation's options (system prompt, sampling), if they are closed. */
export async function openSettings(page: Page): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Chat options', exact: true });
  if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
}

/**
 * Records every request the page, its workers and its service worker make to another origin
 * than the app's, and collects the Content Security Policy violations the page reports.
 * Call before the app opens.
 */
export async function watchLeaks(page: Page): Promise<string[]> {
  const foreign: string[] = [];
  page.context().on('request', (request) => {
    const url = new URL(request.url());
    const app = new URL(page.url());
    if (
      url.protocol.startsWith('http') &&
      app.protocol.startsWith('http') &&
      url.origin !== app.origin
    ) {
      foreign.push(request.url());
    }
  });
  await page.addInitScript(() => {
    const seen: string[] = [];
    (globalThis as { cspViolations?: string[] }).cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => {
      seen.push(`${event.violatedDirective} ${event.blockedURI}`);
    });
  });
  return foreign;
}

/** The Content Security Policy violations the page reported so far. */
export const cspViolations = (page: Page) =>
  page.evaluate(() => (globalThis as { cspViolations?: string[] }).cspViolations ?? []);

/**
 * Clicks Export and returns the file the browser was handed: its name and where it is now. In
 * Chromium that is the real download. Playwright reports no downloads from Firefox over WebDriver
 * BiDi, so there the file is read where the app hands it over: the link it clicks, and the Blob
 * it made the link's address of (the page's CSP lets no `fetch` read a `blob:` address).
 */
export async function exportFile(
  page: Page,
  browserName: string,
  click: () => Promise<void> = () =>
    page.getByRole('button', { name: 'Export', exact: true }).click(),
): Promise<{ name: string; path: string }> {
  const exportButton = { click };
  if (browserName !== 'firefox') {
    const downloading = page.waitForEvent('download');
    await exportButton.click();
    const file = await downloading;
    return { name: file.suggestedFilename(), path: await file.path() };
  }
  await page.evaluate(() => {
    const blobs = new Map<string, Blob>();
    const seen: { name: string; text: Promise<string> }[] = [];
    (globalThis as { exported?: typeof seen }).exported = seen;
    const createObjectURL = URL.createObjectURL.bind(URL);
    URL.createObjectURL = (blob: Blob) => {
      const url = createObjectURL(blob);
      blobs.set(url, blob);
      return url;
    };
    HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) {
      seen.push({ name: this.download, text: blobs.get(this.href)?.text() ?? Promise.resolve('') });
    };
  });
  await exportButton.click();
  const { name, text } = await page.evaluate(async () => {
    const [link] = (globalThis as { exported?: { name: string; text: Promise<string> }[] })
      .exported ?? [{ name: '', text: Promise.resolve('') }];
    return { name: link?.name ?? '', text: (await link?.text) ?? '' };
  });
  const path = join(mkdtempSync(join(tmpdir(), 'hearth-export-')), name);
  writeFileSync(path, text);
  return { name, path };
}

/** The list of conversations beside the chat. */
export const conversationList = (page: Page) => page.getByRole('list', { name: 'Conversations' });

/** The row of the conversation titled `title` in that list. */
export const conversationRow = (page: Page, title: string) =>
  conversationList(page).getByRole('button', { name: title, exact: true });

/** Picks `item` in the "⋯" menu of the conversation titled `title`. */
export async function fromConversationMenu(page: Page, title: string, item: string): Promise<void> {
  await page.getByRole('button', { name: `Options for ${title}`, exact: true }).click();
  await page.getByRole('menu').getByRole('menuitem', { name: item, exact: true }).click();
}
