/**
 * Settings, status and the API panel in the chat app: the device and the engine in plain words,
 * storage, issued keys (created, copied, revoked, and the key the app uses itself), prices for
 * `estimated_cost`, and snippets that work as they are.
 */
import { expect, test, type Page } from '@playwright/test';
import { openChat, send } from './ui';

async function openSettingsView(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings and status' })).toBeVisible();
}

/** A chat request from the page with `key`: its status. */
const chatWith = (page: Page, key: string) =>
  page.evaluate(async (key) => {
    const response = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'hearth/echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    return response.status;
  }, key);

test('the device, the engine and the storage are shown in plain words', async ({ page }) => {
  await openChat(page);
  await openSettingsView(page);
  const device = page.getByRole('region', { name: 'This device' });
  await expect(device).toContainText(/WebGPU\s+available/);
  // SwiftShader: a software adapter, and no 16-bit shaders.
  await expect(device).toContainText('software one');
  await expect(device).toContainText('the f32 versions of models run here');
  // The limits WebLLM checks, as the engine worker measured them (SwiftShader: 10 buffers).
  await expect(device).toContainText(/Limits\s+buffers up to [\d.]+ (MB|GB)/);
  await expect(device).toContainText('10 storage buffers per shader stage');
  const engine = page.getByRole('region', { name: 'Engine' });
  await expect(engine).toContainText(/Host tab\s+this tab/);
  await expect(engine).toContainText(/Queue\s+0 running, 0 waiting/);
  const storage = page.getByRole('region', { name: 'Storage' });
  await expect(storage).toContainText(/Used\s+[\d.]+ (KB|MB) of [\d.]+ (MB|GB)/);
  await expect(storage.getByRole('progressbar', { name: 'Storage used' })).toBeVisible();
  await expect(storage).toContainText(/Persistent\s+(yes|no)/);
});

test('issued keys: switching them on locks other callers out, not the app; keys are shown once and revoked', async ({
  page,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openChat(page);
  await openSettingsView(page);
  const keys = page.getByRole('region', { name: 'API keys' });
  await expect(keys).toContainText(/This app sends\s+hearth-app\s*\./);
  expect(await chatWith(page, 'anything')).toBe(200);

  await keys.getByLabel('Only keys issued here').check();
  await expect(page.getByRole('status')).toContainText('Only issued keys may call the API now.');
  await expect(keys).toContainText(/This app sends\s+its own issued key, ending in\s+\S{4}\./);
  await expect(keys.getByRole('row', { name: /This app/ })).toContainText('this app');
  await expect(keys.getByRole('button', { name: 'Revoke This app' })).toBeDisabled();
  expect(await chatWith(page, 'anything')).toBe(401);

  // A key for a gateway: shown once, copied, and it works.
  await keys.getByLabel('Name of a new key').fill('my gateway');
  await keys.getByRole('button', { name: 'Issue a key' }).click();
  const shown = keys.getByRole('status').getByLabel('New key');
  await expect(shown).toHaveText(/^hk-/);
  const key = (await shown.textContent())!;
  await keys.getByRole('button', { name: 'Copy key' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
  expect(await chatWith(page, key)).toBe(200);
  await expect(keys.getByRole('row', { name: /my gateway/ })).toContainText(key.slice(-4));

  // The app itself still chats, with its own key.
  await page.getByRole('link', { name: 'Chat' }).click();
  await send(page, 'still allowed');
  await expect(page.getByRole('article', { name: 'Reply' })).toHaveText(['still allowed']);

  await openSettingsView(page);
  await keys.getByRole('button', { name: 'Revoke my gateway' }).click();
  await expect(keys.getByRole('row', { name: /my gateway/ })).toHaveCount(0);
  expect(await chatWith(page, key)).toBe(401);

  await keys.getByLabel('Any non-empty key (as local servers do)').check();
  await expect(page.getByRole('status')).toContainText('Any non-empty key may call the API now.');
  expect(await chatWith(page, 'anything')).toBe(200);
});

test('a price set for a model shows as the estimated cost of its replies', async ({ page }) => {
  await openChat(page);
  await openSettingsView(page);
  await page.getByLabel('Prompt price of hearth/echo').fill('100000');
  await page.getByLabel('Completion price of hearth/echo').fill('200000');
  await page.getByRole('button', { name: 'Save prices of hearth/echo' }).click();
  await expect(page.getByRole('status')).toContainText('Prices of hearth/echo saved.');
  await page.getByRole('link', { name: 'Chat' }).click();
  await send(page, 'one two three');
  // 3 prompt tokens at $0.10 each and 3 completion tokens at $0.20 each.
  await expect(page.locator('chat-message .stats')).toContainText('$0.90');
});

test('the API panel gives the base URL, a key, and snippets that work as they are', async ({
  page,
}) => {
  await openChat(page);
  await page.getByRole('link', { name: 'API' }).click();
  const base = new URL('v1/openai', page.url()).href;
  await expect(page.getByLabel('Base URL')).toHaveText(base);
  await expect(page.getByLabel('Key')).toHaveText('hearth-app');
  // Each snippet runs in the page as it is shown (what it logs is collected), the SDK's import
  // aside: the tests load the SDK's browser bundle as a global. Evaluated over the DevTools
  // protocol, as the page's Content Security Policy forbids eval.
  const run = async (code: string) =>
    (await page.evaluate(`(async () => {
      const lines = [];
      const log = console.log;
      console.log = (...args) => lines.push(...args);
      try {
        ${code.replace("import OpenAI from 'openai';", '')}
      } finally {
        console.log = log;
      }
      return lines;
    })()`)) as unknown[];
  const [sdk, fetchSnippet] = await page.locator('api-panel pre').allTextContents();
  expect(await run(fetchSnippet!)).toEqual(['Hello!']);
  const streamed = (await run(sdk!)).join('');
  expect(streamed).toBe('Hello!');
});
