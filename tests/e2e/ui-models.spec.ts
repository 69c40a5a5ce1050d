/**
 * Models in the chat app: the catalogue with what each model needs, and the model on this
 * device (the tests' self-hosted tiny model, served by their own server): download with
 * progress, cancel and resume, a download started in another tab, load (which fails: its library
 * is not WebAssembly), delete; the default model; an error shown where it happened; a model
 * marked failing, tried again.
 */
import { expect, test, type Page } from '@playwright/test';
import { KEY } from './helpers';
import { ModelServer, TINY_ID } from './model-server';
import { composer, openChat, send, userMessages } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

const models = (page: Page) => page.getByRole('list', { name: 'Models' });
const tiny = (page: Page) => models(page).getByRole('listitem', { name: TINY_ID });

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
  await expect(smol).toContainText(
    /Download about \d+\.\d MB · GPU memory [\d.]+ MB · context 4,096 tokens/,
  );
  await expect(models(page).getByRole('listitem', { name: 'hearth/echo' })).toContainText(
    'test engine',
  );
  // Models this GPU cannot run (f16, without shader-f16) are hidden until asked for, with why.
  const f16 = models(page).getByRole('listitem', {
    name: 'mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC',
  });
  await expect(f16).toHaveCount(0);
  await page.getByLabel(/Show the \d+ models this device cannot run/).check();
  await expect(f16).toContainText('cannot run here');
  await expect(f16).toContainText('shader-f16');
  await expect(f16.getByRole('button', { name: 'Download' })).toHaveCount(0);
  // Nothing real on the device yet: a small model is suggested.
  await expect(page.getByText('No language model is on this device yet.')).toBeVisible();
  await page.getByLabel('Search models').fill('e2e/tiny');
  await expect(models(page).getByRole('listitem')).toHaveCount(1);
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
  await expect(tiny(page).getByRole('button', { name: 'Download' })).toBeVisible();
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
  await openChat(page);
  // Nothing real on the device: the echo engine, labelled as a test engine.
  await expect(page.getByLabel('Model')).toHaveValue('hearth/echo');
  await expect(page.getByText('The echo engine repeats your message')).toBeVisible();
  await openModels(page);
  await downloadTiny(page);
  await page.getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(composer(page)).toBeFocused();
  await expect(page.getByLabel('Model')).toHaveValue(TINY_ID);
  await expect(page.getByText('The echo engine repeats your message')).toHaveCount(0);
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
  await tiny(page).getByRole('button', { name: 'Load' }).click();
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
  await expect(tiny(page).getByRole('button', { name: 'Load' })).toHaveCount(0);
  await tiny(page).getByRole('button', { name: 'Try again' }).click();
  // It was tried for real (and fails as this model does: its library is not WebAssembly).
  await expect(tiny(page).getByRole('alert')).toContainText(`Loading ${TINY_ID} failed`, {
    timeout: 30_000,
  });
  await expect(tiny(page)).not.toContainText('marked as failing');
  await expect(tiny(page).getByRole('button', { name: 'Try again' })).toHaveCount(0);
  await expect(tiny(page).getByRole('button', { name: 'Load' })).toBeVisible();
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
  await expect(page.getByLabel('Model')).toHaveValue(TINY_ID);
  const warning = page
    .getByRole('alert')
    .filter({ hasText: "longer than the model's context window" });
  await expect(warning).toContainText('of 256 tokens');

  // One way on: a new conversation, with the same model and settings, from the last message.
  await page.getByRole('button', { name: 'New conversation from the last message' }).click();
  await expect(composer(page)).toHaveValue(long(5));
  await expect(userMessages(page)).toHaveCount(0);
  await expect(page.getByLabel('Model')).toHaveValue(TINY_ID);

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
