/**
 * Helpers for the chat app's tests: they drive it by role and label, as a person would.
 */
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
