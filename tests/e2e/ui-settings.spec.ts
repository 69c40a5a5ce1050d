/**
 * Settings in the chat app. Preferences: the theme, and the model, system prompt and send key a
 * new conversation starts with. Developer: the device and the engine in plain words, storage,
 * issued keys (created, copied, revoked, the key the app uses itself, and what switching to them
 * does, said first), prices for `estimated_cost`, and the API's snippets that work as they are.
 */
import { expect, type Page } from '@playwright/test';
import { axe, violations } from './axe';
import { test } from './warm-context';
import { loadOpenAI, openApp } from './helpers';
import { composer, openChat, openSettings, replies, send, userMessages } from './ui';

/** Opens Settings from the app's bar, then one of its sections from the row of links. */
async function openSettingsView(
  page: Page,
  section: 'Preferences' | 'Servers' | 'Developer',
): Promise<void> {
  await page.getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { name: 'Settings', exact: true })).toBeVisible();
  const sections = page.getByRole('navigation', { name: 'Settings sections' });
  // Settings opens on Preferences.
  await expect(sections.getByRole('link', { name: 'Preferences' })).toHaveAttribute(
    'aria-current',
    'page',
  );
  if (section !== 'Preferences') await sections.getByRole('link', { name: section }).click();
  await expect(sections.getByRole('link', { name: section })).toHaveAttribute(
    'aria-current',
    'page',
  );
}

/** The page's background colour, as painted. */
const background = (page: Page) =>
  page.evaluate(() => getComputedStyle(document.body).backgroundColor);

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

test('Preferences: Dark applies at once and after a reload; a new conversation starts with the default system prompt; Ctrl+Enter sends when chosen', async ({
  page,
}) => {
  await openChat(page);
  // The browser's own scheme is light here.
  const light = await background(page);
  await openSettingsView(page, 'Preferences');
  await expect(page.getByRole('radio', { name: 'System' })).toBeChecked();
  await expect(page.getByRole('group', { name: 'Theme' })).toHaveAccessibleDescription(
    /follows your device's light or dark setting/,
  );
  await page.getByRole('radio', { name: 'Dark' }).check();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect.poll(() => background(page)).toBe('rgb(24, 24, 27)');
  expect(light).not.toBe('rgb(24, 24, 27)');
  // Nothing in Settings breaks an accessibility rule in the dark either.
  const results = await axe(page)
    .include({ fromShadowDom: ['hearth-app', 'settings-view'] })
    .analyze();
  expect(violations(results)).toEqual([]);

  // A reload keeps the view it was on, and the theme.
  await page.reload();
  await expect(page.getByRole('radio', { name: 'Dark' })).toBeChecked();
  expect(await background(page)).toBe('rgb(24, 24, 27)');

  // Where new conversations start: the model (the choices are the models that chat here).
  const model = page.getByLabel('Default model for new conversations');
  await expect(model).toHaveValue('');
  await expect(model.getByRole('option')).toHaveText([
    'Automatic (the loaded model, else one on this device)',
    'hearth/echo',
  ]);
  await page
    .getByLabel('Default system prompt for new conversations')
    .fill('Answer like a pirate.');
  await page.getByRole('radio', { name: /^Ctrl\+Enter .* sends/ }).check();

  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await openSettings(page);
  await expect(page.getByLabel('System prompt')).toHaveValue('Answer like a pirate.');
  await page.getByRole('button', { name: 'Chat options', exact: true }).click();
  // Enter is a new line now, and Ctrl+Enter sends.
  await composer(page).fill('ahoy');
  await composer(page).press('Enter');
  await expect(composer(page)).toHaveValue('ahoy\n');
  await expect(userMessages(page)).toHaveCount(0);
  await composer(page).press('Control+Enter');
  await expect(userMessages(page)).toHaveText(['ahoy']);
  // The echo engine shows the system prompt it was sent.
  await expect(replies(page)).toHaveText(['[Answer like a pirate.] ahoy']);
});

test('the device, the engine and the storage are shown in plain words', async ({ page }) => {
  await openChat(page);
  await openSettingsView(page, 'Developer');
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

test('issued keys: switching them on says first what it does (Cancel or Esc changes nothing), then locks other callers out, not the app; keys are shown once and revoked', async ({
  page,
  context,
}) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openChat(page);
  await openSettingsView(page, 'Developer');
  const keys = page.getByRole('region', { name: 'API keys' });
  await expect(keys).toContainText(/This app sends\s+hearth-app\s*\./);
  expect(await chatWith(page, 'anything')).toBe(200);

  const any = keys.getByRole('radio', { name: 'Any non-empty key (as local servers do)' });
  const issued = keys.getByRole('radio', { name: 'Only keys issued here' });
  const confirm = page.getByRole('dialog', { name: 'Only keys issued here?' });
  await issued.click();
  await expect(confirm).toContainText("Every caller of this app's API will need a key issued here");
  await expect(confirm).toContainText('This app gets a key of its own automatically');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  await expect(confirm).toHaveCount(0);
  await expect(any).toBeChecked();
  await expect(any).toBeFocused();
  await expect(issued).not.toBeChecked();
  expect(await chatWith(page, 'anything')).toBe(200);
  await expect(keys).toContainText(/This app sends\s+hearth-app\s*\./);
  // Esc is a no too.
  await issued.click();
  await expect(confirm).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(confirm).toHaveCount(0);
  await expect(any).toBeChecked();

  await issued.click();
  await confirm.getByRole('button', { name: 'Switch to issued keys' }).click();
  await expect(keys.getByText('Only issued keys may call the API now.')).toHaveRole('status');
  await expect(issued).toBeChecked();
  await expect(keys).toContainText(/This app sends\s+its own issued key, ending in\s+\S{4}\./);
  await expect(keys.getByRole('row', { name: /This app/ })).toContainText('this app');
  // Disabled, and it says why.
  await expect(keys.getByRole('button', { name: 'Revoke This app' })).toBeDisabled();
  await expect(keys.getByRole('button', { name: 'Revoke This app' })).toHaveAccessibleDescription(
    'This app sends it.',
  );
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

  await openSettingsView(page, 'Developer');
  await keys.getByRole('button', { name: 'Revoke my gateway' }).click();
  await expect(keys.getByRole('row', { name: /my gateway/ })).toHaveCount(0);
  expect(await chatWith(page, key)).toBe(401);

  await any.check();
  await expect(keys.getByText('Any non-empty key may call the API now.')).toHaveRole('status');
  expect(await chatWith(page, 'anything')).toBe(200);
});

test('a price set for a model shows as the estimated cost of its replies', async ({ page }) => {
  await openChat(page);
  await openSettingsView(page, 'Developer');
  await page.getByLabel('Prompt price of hearth/echo').fill('100000');
  await page.getByLabel('Completion price of hearth/echo').fill('200000');
  await page.getByRole('button', { name: 'Save prices of hearth/echo' }).click();
  await expect(page.getByRole('region', { name: 'Prices' }).getByRole('status')).toContainText(
    'Prices of hearth/echo saved.',
  );
  await page.getByRole('link', { name: 'Chat' }).click();
  await send(page, 'one two three');
  // 3 prompt tokens at $0.10 each and 3 completion tokens at $0.20 each.
  await expect(page.locator('chat-message .stats')).toContainText('$0.90');
});

test('the API panel (Settings → Developer, where #/api leads now) gives the base URL, a key, and snippets that work as they are', async ({
  page,
}) => {
  await openChat(page);
  await loadOpenAI(page);
  await page.evaluate(() => (location.hash = '#/api'));
  await expect(
    page
      .getByRole('navigation', { name: 'Settings sections' })
      .getByRole('link', { name: 'Developer' }),
  ).toHaveAttribute('aria-current', 'page');
  const base = new URL('v1/openai', page.url()).href;
  await expect(page.getByLabel('Base URL')).toHaveText(base);
  await expect(page.getByLabel('Key', { exact: true })).toHaveText('hearth-app');
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

test('with no model on the device, the API snippets name the recommended model and say to download it, not the echo engine', async ({
  page,
}) => {
  // A fresh profile, no model chosen: what a newcomer sees.
  await openApp(page);
  await openSettingsView(page, 'Developer');
  const note = page.getByRole('note').filter({ hasText: 'these snippets name' });
  await expect(note).toContainText(/^\s*No model is on this device yet: these snippets name \S+/);
  const named = /these snippets name (\S+), the one recommended here/.exec(
    (await note.textContent()) ?? '',
  )?.[1];
  expect(named).toMatch(/^[\w.-]+\/[\w.:-]+$/);
  expect(named).not.toBe('hearth/echo');
  await expect(note).toContainText('Download it in Models before the first call.');
  for (const snippet of await page.locator('api-panel pre').allTextContents()) {
    expect(snippet).toContain(`model: '${named}'`);
    expect(snippet).not.toContain('hearth/echo');
  }
});

test('the responses a program kept through the Responses API are counted in Settings → Developer, and forgotten there', async ({
  page,
}) => {
  await openChat(page);
  const keep = (input: string) =>
    page.evaluate(async (input) => {
      const response = await fetch('v1/openai/responses', {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'hearth/echo', input }),
      });
      return ((await response.json()) as { id: string }).id;
    }, input);
  const ids = [await keep('first kept'), await keep('second kept')];
  await openSettingsView(page, 'Developer');
  const kept = page.getByRole('region', { name: 'Kept responses' });
  await expect(kept).toContainText('2 kept responses');
  await kept.getByRole('button', { name: 'Forget kept responses' }).click();
  await expect(kept.getByRole('status')).toContainText('2 kept responses were forgotten.');
  await expect(kept).toContainText('0 kept responses');
  await expect(kept.getByRole('button', { name: 'Forget kept responses' })).toBeDisabled();
  // Forgotten for the API too: the ids are OpenAI's 404 now.
  const statuses = await page.evaluate(
    (ids) =>
      Promise.all(
        ids.map(
          async (id) =>
            (await fetch(`v1/openai/responses/${id}`, { headers: { authorization: 'Bearer k' } }))
              .status,
        ),
      ),
    ids,
  );
  expect(statuses).toEqual([404, 404]);
});
