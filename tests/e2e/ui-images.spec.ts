/**
 * Images in the chat app, as a person attaches them: with the attach button, by paste and by
 * drop; thumbnails in the composer, removable before sending; the echo engine names each image it
 * got with its exact size, so the test sees what was sent. The images stay with the conversation
 * across a reload and through export and import. A model that does not see images says so before
 * anything is sent: Send waits until the images attached go, and the earlier ones are left out
 * of what it is sent. The composer with thumbnails passes axe and fits a phone. In Chromium
 * and Firefox.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';
import { axe, violations } from './axe';
import { test } from './warm-context';
import { dataUrl, solidPng } from '../test-images';
import { downloadFixture, FIXTURE_ID, FIXTURE_SENTENCE } from './fixture-model';
import { ModelServer } from './model-server';
import { composer, exportFile, openChat, pickModel, replies, send, userMessages } from './ui';

const RED = solidPng(32, 16, [255, 0, 0]);
const BLUE = solidPng(8, 8, [0, 0, 255]);
const GREEN = solidPng(4, 4, [0, 255, 0]);
const GREY = solidPng(2, 2, [128, 128, 128]);
const png = (name: string, bytes: Uint8Array) => ({
  name,
  mimeType: 'image/png',
  buffer: Buffer.from(bytes),
});
/** What the echo engine says of a PNG it got. */
const named = (bytes: Uint8Array, w: number, h: number) =>
  `[image: image/png ${w}×${h}, ${bytes.length} bytes]`;

const attached = (page: Page) =>
  page.getByRole('list', { name: 'Attached images' }).getByRole('img');
const attach = (page: Page) => page.getByLabel('Attach images');

/**
 * Hands the chat `file` as the browser hands over a paste into the composer (`paste`), or a drag
 * over the messages (`drag`: it enters them, and stays) and a drop there (`drop`): a
 * DataTransfer holding the file.
 */
async function transfer(
  page: Page,
  how: 'paste' | 'drag' | 'drop',
  name: string,
  bytes: Uint8Array,
) {
  await composer(page).evaluate(
    (box, { how, name, bytes }) => {
      const data = new DataTransfer();
      const file = new File([Uint8Array.from(atob(bytes), (c) => c.charCodeAt(0))], name, {
        type: 'image/png',
      });
      data.items.add(file);
      const init = { bubbles: true, cancelable: true, composed: true };
      if (how === 'paste') {
        // Firefox leaves a constructed event's clipboardData empty: the one a real paste has is
        // put in its place, as the handler reads it.
        const paste = new ClipboardEvent('paste', init);
        Object.defineProperty(paste, 'clipboardData', { value: data });
        box.dispatchEvent(paste);
      } else {
        const log = (box.getRootNode() as ShadowRoot).querySelector('.log')!;
        const drag = (type: string) =>
          log.dispatchEvent(new DragEvent(type, { ...init, dataTransfer: data }));
        if (how === 'drag') drag('dragenter');
        drag('dragover');
        if (how === 'drop') drag('drop');
      }
    },
    { how, name, bytes: Buffer.from(bytes).toString('base64') },
  );
}

test('images attached by button, paste and drop are sent, less one removed, and the echo engine names each by its exact size', async ({
  page,
}) => {
  await openChat(page);
  await attach(page).setInputFiles([png('red.png', RED), png('blue.png', BLUE)]);
  await expect(attached(page)).toHaveCount(2);
  await transfer(page, 'paste', 'green.png', GREEN);
  await expect(attached(page)).toHaveCount(3);
  // Dragged over the messages, the composer says where the image goes; dropped there, it goes.
  await transfer(page, 'drag', 'grey.png', GREY);
  await expect(page.getByText('Drop images or documents to attach them.')).toBeVisible();
  await transfer(page, 'drop', 'grey.png', GREY);
  await expect(attached(page)).toHaveCount(4);
  await expect(page.getByText('Drop images or documents to attach them.')).toHaveCount(0);
  // A file that is neither an image the API takes nor a document is refused by its name, and
  // nothing else changes.
  await attach(page).setInputFiles({
    name: 'notes.zip',
    mimeType: 'application/zip',
    buffer: Buffer.from('hi'),
  });
  await expect(page.getByRole('alert')).toHaveText(
    'notes.zip is not a PNG, JPEG, WebP or GIF image, nor a PDF, Markdown, text or HTML document.',
  );
  await expect(attached(page)).toHaveCount(4);

  // The composer with its thumbnails and the refusal passes axe, and fits a phone's width.
  expect(violations(await axe(page).analyze())).toEqual([]);
  await page.setViewportSize({ width: 390, height: 844 });
  await expect(attached(page).nth(3)).toBeInViewport();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

  await page.getByRole('button', { name: 'Remove image 2' }).click();
  await expect(attached(page)).toHaveCount(3);
  // The focus moves to the next thumbnail's Remove, where the removed one was.
  await expect(page.getByRole('button', { name: 'Remove image 2' })).toBeFocused();

  await send(page, 'What are these?');
  await expect(replies(page)).toHaveText([
    ['What are these?', named(RED, 32, 16), named(GREEN, 4, 4), named(GREY, 2, 2)].join(' '),
  ]);
  await expect(userMessages(page).getByRole('img')).toHaveCount(3);
  await expect(attached(page)).toHaveCount(0);
});

test('the images stay with the conversation: after a reload, and through export and import', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await attach(page).setInputFiles(png('red.png', RED));
  await send(page, 'keep this');
  await expect(replies(page)).toHaveText([`keep this ${named(RED, 32, 16)}`]);

  await page.reload();
  await expect(userMessages(page)).toHaveText(['keep this']);
  await expect(userMessages(page).getByRole('img')).toHaveAttribute('src', dataUrl(RED));

  const { path } = await exportFile(page, browserName);
  const file = JSON.parse(readFileSync(path, 'utf8'));
  expect(file.conversations[0].messages[0]).toEqual({
    role: 'user',
    content: [
      { type: 'text', text: 'keep this' },
      { type: 'image_url', image_url: { url: dataUrl(RED) } },
    ],
  });
  // The same conversation under another id and title comes back as a new one, with its image.
  Object.assign(file.conversations[0], { id: 'an-imported-copy', title: 'the copy' });
  writeFileSync(path, JSON.stringify(file));
  await page.getByLabel('Import').setInputFiles(path);
  await expect(
    page.getByRole('status').filter({ hasText: 'Imported 1 conversation.' }),
  ).toBeVisible();
  await page
    .getByRole('list', { name: 'Conversations' })
    .getByRole('button', { name: 'the copy', exact: true })
    .click();
  await expect(userMessages(page)).toHaveText(['keep this']);
  await expect(userMessages(page).getByRole('img')).toHaveAttribute('src', dataUrl(RED));
});

test.describe('a model that does not see images', () => {
  const server = new ModelServer();
  test.beforeAll(() => server.start());
  test.afterAll(() => server.stop());

  test('says so before anything is sent, Send waits until the images attached go, and the earlier ones are left out', async ({
    page,
  }) => {
    await openChat(page);
    await attach(page).setInputFiles(png('red.png', RED));
    await send(page, 'What is it?');
    await expect(replies(page)).toHaveText([`What is it? ${named(RED, 32, 16)}`]);
    await downloadFixture(page);
    await page.reload();
    await expect(composer(page)).toBeVisible();
    await pickModel(page, FIXTURE_ID);
    await expect(page.getByText('does not see images: it is sent this conversation')).toHaveText(
      "Fixture · F32 does not see images: it is sent this conversation's earlier messages without their images.",
    );
    await attach(page).setInputFiles(png('red.png', RED));
    await expect(page.getByRole('alert')).toContainText(
      'Images are attached, and Fixture · F32 does not see images: pick a model marked "sees images", or remove them.',
    );
    const sendButton = page.getByRole('button', { name: 'Send', exact: true });
    await composer(page).fill('Look');
    await expect(sendButton).toBeDisabled();
    // Enter sends nothing either.
    await composer(page).press('Enter');
    await expect(userMessages(page)).toHaveCount(1);
    await page.getByRole('button', { name: 'Remove image 1' }).click();
    await expect(page.getByRole('alert')).toHaveCount(0);
    await expect(sendButton).toBeEnabled();
    // Sent without the earlier image: an answer, not the API's 400.
    await composer(page).press('Enter');
    await expect(replies(page).nth(1)).toHaveText(FIXTURE_SENTENCE, { timeout: 30_000 });
    await expect(userMessages(page).first().getByRole('img')).toHaveCount(1);
  });
});
