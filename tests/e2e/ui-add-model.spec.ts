/**
 * Adding a GGUF model in the Models view, as a person would: by its URL (the fixture GGUF on the
 * tests' own model server, another origin), from a file chosen on the computer, and from a file
 * dropped on the form; each is listed with its engine (llama.cpp, on the CPU here: SwiftShader has
 * no `shader-f16`) beside the WebLLM models, stays after a reload and offline (where a file from
 * the computer answers in the chat), and can be removed; a model added in one tab shows in the
 * others. A file that is not a GGUF, and an id that exists, are refused where they were given. A
 * model that sees images comes with its vision projector, by URL or as two files dropped together.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { FIXTURE_SENTENCE, fixtureGguf } from '../../scripts/fixture-gguf.mjs';
import { fixtureVisionGguf } from '../../scripts/fixture-vision.mjs';
import {
  FIXTURE_GGUF_URL,
  HUB_REPO,
  ModelServer,
  NOT_GGUF_URL,
  TINY_ID,
  VISION_GGUF_URL,
  VISION_MMPROJ_URL,
} from './model-server';
import { openChat, replies, send } from './ui';

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());
test.beforeEach(() => server.reset());

/** The id a `.gguf` from this computer named `fixture-F32.gguf` gets: `local/<stem>:<quant>`. */
const FILE_ID = 'local/fixture:F32';
const FILE = { name: 'fixture-F32.gguf', mimeType: '', buffer: Buffer.from(fixtureGguf()) };

const models = (page: Page) => page.getByRole('list', { name: 'Models' });
const model = (page: Page, id: string) =>
  models(page).getByRole('listitem', { name: id, exact: true });
const adding = (page: Page) => page.getByRole('region', { name: 'Add a model' });

async function openModels(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Models' }).click();
  await expect(page.getByRole('heading', { name: 'Models' })).toBeVisible();
  // "Add a model" opens from a button beside the heading, so that the list starts higher.
  const open = page.getByRole('button', { name: 'Add a model' });
  await expect(open).toHaveAttribute('aria-expanded', 'false');
  await open.click();
  await expect(open).toHaveAttribute('aria-expanded', 'true');
}

async function addByUrl(page: Page, url: string, id = ''): Promise<void> {
  await adding(page).getByLabel('URL or Hugging Face id').fill(url);
  await adding(page).getByLabel('Model id (optional)').fill(id);
  await adding(page).getByRole('button', { name: 'Add', exact: true }).click();
}

/** Drops `files` on the form, as files dragged from the desktop arrive. */
async function drop(page: Page, ...files: (typeof FILE)[]): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    (files) => {
      const transfer = new DataTransfer();
      for (const { name, bytes } of files) {
        transfer.items.add(new File([Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))], name));
      }
      return transfer;
    },
    files.map((file) => ({ name: file.name, bytes: file.buffer.toString('base64') })),
  );
  await adding(page).dispatchEvent('dragover', { dataTransfer });
  await adding(page).dispatchEvent('drop', { dataTransfer });
}

/** The URLs the app keeps in its GGUF cache. */
const storedGguf = (page: Page) =>
  page.evaluate(async () => (await (await caches.open('hearth/gguf')).keys()).map((r) => r.url));

async function remove(page: Page, id: string): Promise<void> {
  await model(page, id).getByRole('button', { name: 'Remove' }).click();
  await model(page, id).getByRole('button', { name: 'Yes, remove' }).click();
  await expect(model(page, id)).toHaveCount(0);
  await expect(page.getByRole('status').filter({ hasText: `${id}: Removed.` })).toBeVisible();
}

/**
 * Where the browser has no WebGPU (Firefox on Linux), the WebLLM models are hidden as ones this
 * device cannot run, until the user asks to see all models.
 */
async function showWebLLM(page: Page, browserName: string): Promise<void> {
  if (browserName !== 'firefox') return;
  await expect(model(page, TINY_ID)).toHaveCount(0);
  await expect(
    page.getByRole('note').filter({ hasText: "WebLLM's models cannot run" }),
  ).toContainText('GGUF models run here through llama.cpp');
  await page.getByLabel('Show', { exact: true }).selectOption('All models');
}

test('a GGUF added by its URL is listed beside the WebLLM models with its engine, downloads, and is removed', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await openModels(page);
  await showWebLLM(page, browserName);
  await expect(model(page, TINY_ID).getByText('WebLLM', { exact: true })).toBeVisible();
  await addByUrl(page, FIXTURE_GGUF_URL, 'e2e/fixture:F32');
  await expect(adding(page).getByRole('status')).toContainText('Added e2e/fixture:F32.');
  await expect(adding(page).getByLabel('URL or Hugging Face id')).toHaveValue('');
  const added = model(page, 'e2e/fixture:F32');
  for (const badge of ['llama.cpp', 'CPU', 'added']) {
    await expect(added.getByText(badge, { exact: true })).toBeVisible();
  }
  await expect(added).toContainText(/runs on the CPU/);
  // Adding it started its download.
  await expect(added.getByText('downloaded', { exact: true })).toBeVisible({ timeout: 30_000 });
  expect(server.ggufRequests.some((r) => r.startsWith('GET /gguf/fixture.gguf'))).toBe(true);

  await remove(page, 'e2e/fixture:F32');
  expect(await storedGguf(page)).toEqual([]);
  await page.reload();
  await openModels(page);
  await showWebLLM(page, browserName);
  await expect(model(page, TINY_ID)).toBeVisible();
  await expect(model(page, 'e2e/fixture:F32')).toHaveCount(0);
});

test('a GGUF added by its URL downloads at once, its card first in the list', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await openModels(page);
  await showWebLLM(page, browserName);
  await addByUrl(page, FIXTURE_GGUF_URL, 'e2e/fixture:F32');
  await expect(adding(page).getByRole('status')).toHaveText(
    'Added e2e/fixture:F32. Downloading it now: its card is first in the list below.',
  );
  // Its card is the first, not the sixth several screens down.
  await expect(models(page).locator(':scope > li').first()).toHaveAccessibleName('Fixture');
  // Nobody clicked Download: adding it was asking for it.
  const added = model(page, 'e2e/fixture:F32');
  await expect(added.getByText('downloaded', { exact: true })).toBeVisible({ timeout: 30_000 });
  expect(server.ggufRequests.some((r) => r.startsWith('GET /gguf/fixture.gguf'))).toBe(true);
  await expect(models(page).locator(':scope > li').first()).toHaveAccessibleName('Fixture');
});

test('a Hugging Face id, typed as user/repo:quant, is looked up on the Hub', async ({ page }) => {
  await openChat(page);
  await openModels(page);
  await addByUrl(page, `${HUB_REPO}:F32`);
  await expect(adding(page).getByRole('status')).toContainText(`Added ${HUB_REPO}:F32.`);
  await expect(
    model(page, `${HUB_REPO}:F32`).getByText('llama.cpp', { exact: true }),
  ).toBeVisible();
  expect(server.ggufRequests).toContain(`GET /hub/api/models/${HUB_REPO} `);
});

test('a model added in one tab shows in the others, and leaves them when removed', async ({
  page,
  context,
}) => {
  await openChat(page);
  const other = await context.newPage();
  await openChat(other);
  await openModels(other);
  await openModels(page);
  await addByUrl(page, FIXTURE_GGUF_URL, 'e2e/fixture:F32');
  await expect(model(other, 'e2e/fixture:F32')).toBeVisible();
  await remove(page, 'e2e/fixture:F32');
  await expect(model(other, 'e2e/fixture:F32')).toHaveCount(0);
});

test('a file that is not a GGUF, and another file under an id that exists, are refused where they were given', async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  await addByUrl(page, NOT_GGUF_URL);
  await expect(adding(page).getByRole('alert')).toContainText('is not a GGUF file');
  await expect(adding(page).getByLabel('URL or Hugging Face id')).toHaveValue(NOT_GGUF_URL);

  await addByUrl(page, FIXTURE_GGUF_URL, 'e2e/fixture:F32');
  await expect(model(page, 'e2e/fixture:F32')).toBeVisible();
  // Another file under the same id (the same file again is the same model, not a conflict).
  await addByUrl(page, VISION_GGUF_URL, 'e2e/fixture:F32');
  await expect(adding(page).getByRole('alert')).toContainText('exists already');
  await expect(model(page, 'e2e/fixture:F32')).toHaveCount(1);
  // A file of the computer that is not a GGUF is refused, and nothing of it is kept.
  await adding(page)
    .getByLabel('Choose a .gguf file')
    .setInputFiles({ name: 'notes.gguf', mimeType: '', buffer: Buffer.from('hello') });
  await expect(adding(page).getByRole('alert')).toContainText('not a GGUF file');
  expect((await storedGguf(page)).filter((url) => url.includes('/v1/hearth/files/'))).toEqual([]);
});

test('a .gguf chosen on the computer is copied into the app: on the device at once, after a reload, and answering offline', async ({
  page,
  context,
}) => {
  await openChat(page);
  await openModels(page);
  await adding(page).getByLabel('Choose a .gguf file').setInputFiles(FILE);
  await expect(adding(page).getByRole('status')).toHaveText(
    `Added ${FILE_ID}. It is on this device: its card is first in the list below.`,
  );
  const added = model(page, FILE_ID);
  for (const badge of ['llama.cpp', 'CPU', 'added', 'downloaded']) {
    await expect(added.getByText(badge, { exact: true })).toBeVisible();
  }
  await expect(added.getByRole('button', { name: 'Download' })).toHaveCount(0);
  // Its bytes are in the app's storage, under an address of the app's own.
  const stored = await storedGguf(page);
  expect(stored.some((url) => url.includes('/v1/hearth/files/'))).toBe(true);

  await page.reload();
  await openModels(page);
  await expect(model(page, FILE_ID).getByText('downloaded', { exact: true })).toBeVisible();
  await context.setOffline(true);
  try {
    await page.reload();
    await openModels(page);
    await expect(model(page, FILE_ID).getByText('downloaded', { exact: true })).toBeVisible();
    // It answers in the chat, through llama.cpp, from the copy on the device.
    await page.getByRole('link', { name: 'Chat' }).click();
    await page.getByRole('button', { name: 'New chat' }).click();
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(FILE_ID);
    await send(page, 'Who are you?');
    await expect(replies(page)).toHaveText([FIXTURE_SENTENCE], { timeout: 30_000 });
    await openModels(page);
  } finally {
    await context.setOffline(false);
  }
  await remove(page, FILE_ID);
  expect(await storedGguf(page)).toEqual([]);
});

/** Whether the catalogue says the model takes images. */
const seesImages = (page: Page, id: string) =>
  page.evaluate(async (id) => {
    const response = await fetch('v1/hearth/catalog', { headers: { authorization: 'Bearer k' } });
    const { data } = (await response.json()) as { data: { id: string; vision: boolean }[] };
    return data.find((m) => m.id === id)?.vision;
  }, id);

test('a model that sees images is added with its projector: by URL, or both files dropped together; two models at once are refused', async ({
  page,
}) => {
  await openChat(page);
  await openModels(page);
  await adding(page).getByLabel('Vision projector URL (optional)').fill(VISION_MMPROJ_URL);
  await addByUrl(page, VISION_GGUF_URL, 'e2e/vision-url:F32');
  await expect(adding(page).getByRole('status')).toContainText('Added e2e/vision-url:F32.');
  expect(await seesImages(page, 'e2e/vision-url:F32')).toBe(true);

  const vision = fixtureVisionGguf();
  await drop(
    page,
    { name: 'mmproj-fixture-vision-F32.gguf', mimeType: '', buffer: Buffer.from(vision.mmproj) },
    { name: 'fixture-vision-F32.gguf', mimeType: '', buffer: Buffer.from(vision.model) },
  );
  await expect(adding(page).getByRole('status')).toHaveText(
    'Added local/fixture-vision:F32. It is on this device: its card is first in the list below.',
  );
  expect(await seesImages(page, 'local/fixture-vision:F32')).toBe(true);
  await expect(
    model(page, 'local/fixture-vision:F32').getByText('sees images', { exact: true }),
  ).toBeVisible();
  // A GGUF without a projector does not.
  await expect(model(page, 'e2e/fixture-GGUF:F32')).toBeVisible();
  await expect(
    model(page, 'e2e/fixture-GGUF:F32').getByText('sees images', { exact: true }),
  ).toHaveCount(0);

  await drop(page, FILE, { ...FILE, name: 'other-F32.gguf' });
  await expect(adding(page).getByRole('alert')).toContainText(
    'Add one .gguf file, or a model and its vision projector (mmproj-….gguf) together',
  );
  await remove(page, 'local/fixture-vision:F32');
  // Its projector went with it: no file of the computer is left in the app's storage.
  expect((await storedGguf(page)).filter((url) => url.includes('/v1/hearth/files/'))).toEqual([]);
});

test('a .gguf dropped on the form is added, and again under another id', async ({ page }) => {
  await openChat(page);
  await openModels(page);
  await drop(page, FILE);
  await expect(adding(page).getByRole('status')).toHaveText(
    `Added ${FILE_ID}. It is on this device: its card is first in the list below.`,
  );
  await expect(model(page, FILE_ID).getByText('downloaded', { exact: true })).toBeVisible();
  // The optional id names a second copy of the same file.
  await adding(page).getByLabel('Model id (optional)').fill('e2e/dropped:F32');
  await drop(page, FILE);
  await expect(adding(page).getByRole('status')).toHaveText(
    'Added e2e/dropped:F32. It is on this device: its card is first in the list below.',
  );
  await expect(model(page, 'e2e/dropped:F32')).toBeVisible();
});

test('the Models view with GGUF and WebLLM models at desktop and phone width (screenshots)', async ({
  page,
}, testInfo) => {
  await openChat(page);
  await openModels(page);
  await adding(page).getByLabel('Choose a .gguf file').setInputFiles(FILE);
  await expect(model(page, FILE_ID)).toBeVisible();
  await addByUrl(page, NOT_GGUF_URL);
  await expect(adding(page).getByRole('alert')).toBeVisible();
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.screenshot({ path: testInfo.outputPath('models-desktop.png'), fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(adding(page).getByLabel('URL or Hugging Face id')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('models-phone.png'), fullPage: true });
  // Nothing sticks out sideways at phone width.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  for (const name of ['models-desktop.png', 'models-phone.png']) {
    await testInfo.attach(name, { path: testInfo.outputPath(name), contentType: 'image/png' });
  }
});
