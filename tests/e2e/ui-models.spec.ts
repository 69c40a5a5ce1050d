/**
 * Models in the chat app: the catalogue with what each model needs, and the model on this
 * device (the tests' self-hosted tiny model, served by their own server): download with
 * progress, cancel and resume, a download started in another tab, load (which fails: its library
 * is not WebAssembly), delete; the default model; an error shown where it happened; a model
 * marked failing, tried again.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { KEY, openApp } from './helpers';
import { ModelServer, TINY_ID } from './model-server';
import { composer, openChat, send, userMessages } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

const models = (page: Page) => page.getByRole('list', { name: 'Models' });
const tiny = (page: Page) => models(page).getByRole('listitem', { name: TINY_ID });
/** The live count of what the search and filters found. */
const count = (page: Page) =>
  page.getByRole('status').filter({ hasText: /^(\d+ models?|No models)/ });
const headings = (page: Page) => models(page).getByRole('heading');

async function openModels(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Models' }).click();
  await expect(page.getByRole('heading', { name: 'Models' })).toBeVisible();
}

async function downloadTiny(page: Page): Promise<void> {
  await tiny(page).getByRole('button', { name: 'Download' }).click();
  await expect(tiny(page).getByText('downloaded', { exact: true })).toBeVisible({
    timeout: 30_000,
  });
}

test('the catalogue shows what each model needs, and why one cannot run here', async ({ page }) => {
  await openChat(page);
  await openModels(page);
  const smol = models(page).getByRole('listitem', {
    name: 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC',
  });
  // Hundreds of megabytes read as a whole number: "376 MB", not "376.0 MB".
  await expect(smol).toContainText(
    /Download about \d{3} MB · GPU memory [\d,]+ MB · context 4,096 tokens/,
  );
  await expect(models(page).getByRole('listitem', { name: 'hearth/echo' })).toContainText(
    'test engine',
  );
  // Models this GPU cannot run (f16, without shader-f16) are hidden until asked for, with why.
  const f16 = models(page).getByRole('listitem', {
    name: 'mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC',
  });
  await expect(f16).toHaveCount(0);
  const limit = page.getByRole('note').filter({ hasText: 'This device cannot run' });
  await expect(limit).toContainText(/^\s*This device cannot run\s+\d+ of the variants/);
  await expect(limit).toContainText('most because this GPU lacks shader-f16');
  await page.getByLabel('Show', { exact: true }).selectOption('All models');
  await expect(f16).toContainText('cannot run here');
  await expect(f16).toContainText('shader-f16');
  await expect(f16.getByRole('button', { name: 'Download' })).toHaveCount(0);
  // Nothing real on the device yet: a small model is suggested.
  await expect(page.getByText('No language model is on this device yet.')).toBeVisible();
  await page.getByLabel('Search models').fill('e2e/tiny');
  await expect(count(page)).toHaveText('1 model');
  await expect(models(page).getByRole('heading')).toHaveText(['Tiny']);
  await expect(tiny(page)).toBeVisible();
});

test('search finds models by their words in any order, ignoring punctuation, and counts them', async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  const search = page.getByLabel('Search models');
  await search.fill('llama 3.2');
  await expect(headings(page)).toContainText(['Llama 3.2 1B Instruct', 'Llama 3.2 3B Instruct']);
  await expect(headings(page).filter({ hasText: 'Llama 3.1' })).toHaveCount(0);
  // One card per model, its variants inside: WebLLM's and the GGUF, each with what it means.
  const card = models(page).getByRole('listitem', { name: 'Llama 3.2 1B Instruct', exact: true });
  await expect(card).toContainText('Good for chat, tools');
  const gguf = card.getByRole('listitem', { name: 'bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M' });
  await expect(gguf).toContainText('4-bit, good balance');
  await expect(gguf.getByText('llama.cpp', { exact: true })).toBeVisible();
  await expect(
    card.getByRole('listitem', { name: 'mlc-ai/Llama-3.2-1B-Instruct-q4f32_1-MLC' }),
  ).toContainText('4-bit weights, 32-bit maths');

  // Words in any order, any case, with punctuation: the same four models and a count.
  const coders = [
    'Qwen2.5 Coder 0.5B Instruct',
    'Qwen2.5 Coder 1.5B Instruct',
    'Qwen2.5 Coder 3B Instruct',
    'Qwen2.5 Coder 7B Instruct',
  ];
  for (const words of ['qwen coder', 'Coder, QWEN!']) {
    await search.fill(words);
    await expect(headings(page)).toHaveText(coders);
    await expect(count(page)).toHaveText(
      '4 models (5 variants) · 5 more variants this device cannot run',
    );
  }
  await search.fill('qwen2.5 0.5b');
  await expect(headings(page)).toHaveText(['Qwen2.5 0.5B Instruct', 'Qwen2.5 Coder 0.5B Instruct']);
});

test('filters and sort narrow the cards; where nothing this device can run matches, what matches is offered with why', async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  await page.getByLabel('Good for').selectOption('Embeddings (retrieval)');
  await page.getByLabel('Engine').selectOption('llama.cpp');
  await page.getByLabel('Sort by').selectOption('Smallest first');
  await expect(headings(page).nth(0)).toHaveText('BGE Small English v1.5');
  await expect(headings(page).nth(1)).toHaveText('Nomic Embed Text v1.5');
  await expect(models(page).getByText('embeddings · 384 dims', { exact: true })).toBeVisible();
  await expect(models(page).getByText('WebLLM', { exact: true })).toHaveCount(0);
  // Nothing at all: said, with the way back.
  await page.getByLabel('Size').selectOption('Over 4 GB');
  await expect(count(page)).toHaveText('No models match.');
  await expect(models(page)).toHaveCount(0);
  await page.getByRole('button', { name: 'Clear the search and filters' }).click();
  await expect(page.getByLabel('Engine')).toHaveValue('any');
  await expect(headings(page).first()).toBeVisible();

  // Gemma 3 1B exists only in f16, which this GPU lacks: offered anyway, with why.
  await page.getByLabel('Search models').fill('gemma 3');
  await expect(page.getByText('Nothing this device can run matches.')).toBeVisible();
  const elsewhere = page.getByRole('list', { name: 'Models this device cannot run' });
  await expect(elsewhere.getByRole('heading')).toHaveText(['Gemma 3 1B Instruct']);
  const variant = elsewhere.getByRole('listitem', { name: 'mlc-ai/gemma3-1b-it-q4f16_1-MLC' });
  await expect(variant).toContainText('cannot run here');
  await expect(variant).toContainText('This GPU lacks shader-f16');
  await expect(variant.getByRole('button')).toHaveCount(0);
  await expect(count(page)).toHaveText('No models match · 1 more variant this device cannot run.');
});

test('a Models view opened before the catalogue is known says the models are loading, not that none match', async ({
  page,
}) => {
  // The catalogue's answer is held back until the test lets it through, as on a slow start.
  await page.addInitScript(() => {
    const held = new Promise<void>((resolve) => {
      (globalThis as { releaseCatalogue?: () => void }).releaseCatalogue = resolve;
    });
    const fetch = globalThis.fetch.bind(globalThis);
    globalThis.fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.includes('/v1/hearth/catalog')) await held;
      return fetch(input, init);
    };
  });
  await openApp(page, './#/models');
  await expect(page.getByRole('heading', { name: 'Models' })).toBeVisible();
  const loading = page.getByRole('status').filter({ hasText: 'Loading the models…' });
  await expect(loading).toBeVisible();
  await expect(models(page)).toHaveAttribute('aria-busy', 'true');
  await expect(page.getByText(/No models? match/)).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Clear the search and filters' })).toHaveCount(0);

  await page.evaluate(() => (globalThis as { releaseCatalogue?: () => void }).releaseCatalogue!());
  await expect(count(page)).toHaveText(/^\d+ models/);
  await expect(loading).toHaveCount(0);
  await expect(models(page)).not.toHaveAttribute('aria-busy', 'true');
  await expect(headings(page).first()).toBeVisible();
});

test('a download shows its progress, can be cancelled and resumed, and the model deleted', async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  server.trouble(server.model.shards[2]!, 'hold');
  await tiny(page).getByRole('button', { name: 'Download' }).click();
  const progress = tiny(page).getByRole('status', { name: `Download of ${TINY_ID}` });
  await expect(progress).toContainText(/[\d.]+ (KB|MB) of [\d.]+ MB/);
  await expect(tiny(page).getByRole('progressbar')).toBeVisible();
  // Every file but the held shard is stored (so the resume below has only that one to fetch).
  await expect
    .poll(() =>
      page.evaluate(
        async ({ KEY, id }) =>
          (
            (await (await fetch(`v1/hearth/models/${id}`, { headers: KEY })).json()) as {
              missing_files: string[];
            }
          ).missing_files.length,
        { KEY, id: TINY_ID },
      ),
    )
    .toBe(1);
  // The files are counted in words, not left as a bare "· files".
  await expect(progress).toContainText(/· \d+ of \d+ files\s*$/);
  await tiny(page).getByRole('button', { name: 'Cancel download' }).click();
  await expect(progress).toHaveCount(0);
  server.release();
  await tiny(page).getByRole('button', { name: 'Resume download' }).click();
  await expect(tiny(page).getByText('downloaded', { exact: true })).toBeVisible({
    timeout: 30_000,
  });
  // The resumed download fetched only what the first had not finished.
  expect(server.count(server.model.shards[0]!)).toBe(1);
  expect(server.count(server.model.shards[2]!)).toBe(2);

  await tiny(page).getByRole('button', { name: 'Delete' }).click();
  await tiny(page).getByRole('button', { name: 'Yes, delete' }).click();
  await expect(tiny(page).getByText('Deleted.')).toBeVisible();
  // The focus stays on the model, not lost with the buttons that went.
  await expect(tiny(page)).toBeFocused();
  await expect(tiny(page).getByRole('button', { name: 'Download' })).toBeVisible();
});

test('the list keeps its order while the user acts on it, and sorts again when the sort or filters change', async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  const cards = models(page).locator(':scope > li');
  const names = () =>
    cards.evaluateAll((items) => items.map((li) => li.getAttribute('aria-label')));
  // The fixture GGUF (from the tests' model server) runs here, on the CPU.
  const fixture = models(page).getByRole('listitem', { name: 'e2e/fixture-GGUF:F32' });
  await expect(fixture).toBeVisible();
  await expect(page.getByText('fit not known yet')).toHaveCount(0);
  const before = await names();
  // Below others, where a model on the device would not be.
  expect(before.indexOf('Fixture')).toBeGreaterThan(0);
  await fixture.getByRole('button', { name: 'Download' }).click();
  await expect(fixture.getByText('downloaded', { exact: true })).toBeVisible({ timeout: 30_000 });
  // Downloaded, it stays under the pointer that clicked Download.
  expect(await names()).toEqual(before);
  await page.getByLabel('Sort by').selectOption('Name');
  await page.getByLabel('Sort by').selectOption('Recommended');
  await expect(cards.first()).toHaveAccessibleName('Fixture');
});

test('a download another tab started shows here with its progress', async ({ page, context }) => {
  await openChat(page);
  await openModels(page);
  const other = await context.newPage();
  await openChat(other);
  server.trouble(server.model.shards[1]!, 'hold');
  await other.evaluate(
    ({ KEY, id }) =>
      void fetch(`v1/hearth/models/${id}/download`, { method: 'POST', headers: KEY }),
    { KEY, id: TINY_ID },
  );
  const progress = tiny(page).getByRole('status', { name: `Download of ${TINY_ID}` });
  await expect(progress).toContainText(/of [\d.]+ MB/);
  await expect(tiny(page).getByRole('button', { name: 'Cancel download' })).toBeVisible();
  server.release();
  await expect(tiny(page).getByText('downloaded', { exact: true })).toBeVisible({
    timeout: 30_000,
  });
});

test('a downloaded model becomes the default; a reply that fails says why and keeps the message', async ({
  page,
}) => {
  await openChat(page, './', { model: null });
  // Nothing real on the device: no model yet (never the echo engine), and the first-run card
  // that offers a real one.
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue('');
  await expect(page.getByRole('region', { name: 'Welcome to Hearth' })).toBeVisible();
  await openModels(page);
  await downloadTiny(page);
  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(composer(page)).toBeFocused();
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue(TINY_ID);
  await expect(page.getByRole('region', { name: 'Welcome to Hearth' })).toHaveCount(0);
  await expect(page.getByText('is a test engine')).toHaveCount(0);
  await send(page, 'will this load?');
  // The model's library is not WebAssembly: the load fails, and the reply says so.
  await expect(page.getByRole('alert')).toContainText(
    `The reply failed: Loading ${TINY_ID} failed:`,
    { timeout: 30_000 },
  );
  await expect(userMessages(page)).toHaveText(['will this load?']);
  await expect(page.getByRole('button', { name: 'Retry' })).toBeVisible();
  await expect(composer(page)).toBeEnabled();
  // The model manager says so too, and nothing hangs.
  await openModels(page);
  await tiny(page)
    .getByRole('button', { name: /^Load / })
    .click();
  await expect(tiny(page).getByRole('alert')).toContainText(`Loading ${TINY_ID} failed`);
});

/** Records two GPU device losses of `id` where the engine worker keeps them (its IndexedDB). */
async function markFailing(page: Page, id: string): Promise<void> {
  await expect
    .poll(() =>
      page.evaluate(
        async ({ id }) => {
          // Opened only once the worker has made it: opening it first would make it without stores.
          const made = await indexedDB.databases();
          if (!made.some((d) => d.name === 'hearth-engine' && d.version === 2)) return false;
          const db = await new Promise<IDBDatabase>((resolve, reject) => {
            const open = indexedDB.open('hearth-engine');
            open.onsuccess = () => resolve(open.result);
            open.onerror = () => reject(open.error);
          });
          try {
            if (!db.objectStoreNames.contains('device-losses')) return false;
            const tx = db.transaction('device-losses', 'readwrite');
            tx.objectStore('device-losses').put({
              model: id,
              losses: 2,
              at: Date.now(),
              detail: 'test',
            });
            await new Promise((resolve) => (tx.oncomplete = resolve));
            return true;
          } finally {
            db.close();
          }
        },
        { id },
      ),
    )
    .toBe(true);
}

test('a model marked failing is refused to chats, and the Models view tries it again', async ({
  page,
}) => {
  await openChat(page);
  await markFailing(page, TINY_ID);
  await openModels(page);
  // The download's end makes the host read the device losses again.
  await downloadTiny(page);
  await expect(tiny(page)).toContainText('marked as failing');
  const refused = await page.evaluate(
    async ({ KEY, id }) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ model: id, messages: [{ role: 'user', content: 'hi' }] }),
      });
      return {
        status: response.status,
        retry: response.headers.get('x-should-retry'),
        code: ((await response.json()) as { error: { code: string } }).error.code,
      };
    },
    { KEY, id: TINY_ID },
  );
  expect(refused).toEqual({ status: 503, retry: 'false', code: 'webgpu_unavailable' });
  await expect(tiny(page).getByRole('button', { name: /^Load / })).toHaveCount(0);
  await tiny(page).getByRole('button', { name: 'Try again' }).click();
  // It was tried for real (and fails as this model does: its library is not WebAssembly).
  await expect(tiny(page).getByRole('alert')).toContainText(`Loading ${TINY_ID} failed`, {
    timeout: 30_000,
  });
  await expect(tiny(page)).not.toContainText('marked as failing');
  await expect(tiny(page).getByRole('button', { name: 'Try again' })).toHaveCount(0);
  await expect(tiny(page).getByRole('button', { name: /^Load / })).toBeVisible();
});

test('a conversation that outgrows the context window offers a way on', async ({ page }) => {
  await openChat(page);
  await openModels(page);
  await downloadTiny(page);
  // A long conversation with the tiny model (its window is 256 tokens; about 4 characters a token).
  const long = (n: number) => `${n} ${'word '.repeat(100).trim()}`;
  const file = {
    format: 'hearth.conversations',
    version: 1,
    exported: new Date().toISOString(),
    conversations: [
      {
        title: 'too long',
        created: Date.now(),
        updated: Date.now(),
        model: TINY_ID,
        settings: { temperature: 0.7, max_tokens: null },
        messages: [
          { role: 'user', content: long(1) },
          { role: 'assistant', content: long(2) },
          { role: 'user', content: long(3) },
          { role: 'assistant', content: long(4) },
          { role: 'user', content: long(5) },
        ],
      },
    ],
  };
  await page.getByLabel('Import').setInputFiles({
    name: 'long.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(file)),
  });
  await page
    .getByRole('list', { name: 'Conversations' })
    .getByRole('button', { name: 'too long', exact: true })
    .click();
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue(TINY_ID);
  const warning = page
    .getByRole('alert')
    .filter({ hasText: "longer than the model's context window" });
  await expect(warning).toContainText('of 256 tokens');

  // One way on: a new conversation, with the same model and settings, from the last message.
  await page.getByRole('button', { name: 'New conversation from the last message' }).click();
  await expect(composer(page)).toHaveValue(long(5));
  await expect(userMessages(page)).toHaveCount(0);
  await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue(TINY_ID);

  // The other: drop the oldest messages until the conversation fits.
  await page
    .getByRole('list', { name: 'Conversations' })
    .getByRole('button', { name: 'too long', exact: true })
    .click();
  await page.getByRole('button', { name: 'Drop the oldest messages' }).click();
  await expect(warning).toHaveCount(0);
  await expect(userMessages(page)).toHaveText([long(5)]);
  await expect(page.getByText(/^\d+ of 256 tokens$/)).toBeVisible();
});

test("each Download button is named after its model and variant, so that a list of buttons (a screen reader's) tells them apart", async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  const downloads = models(page).getByRole('button', { name: /^Download\b/ });
  await expect(downloads.first()).toBeVisible();
  const names = await downloads.evaluateAll((buttons) =>
    buttons.map((b) => b.getAttribute('aria-label') ?? b.textContent?.trim() ?? ''),
  );
  expect(names.length).toBeGreaterThan(1);
  expect(new Set(names).size, names.join(' | ')).toBe(names.length);
  await expect(tiny(page).getByRole('button', { name: /^Download Tiny\b/ })).toBeVisible();
});
