/**
 * Conversations in the chat app leave and come back: exported as a versioned JSON file in the
 * OpenAI message format and imported again (merged, never duplicated, earlier versions kept), a
 * file that is not an export refused, and one conversation exported as Markdown.
 */
import { readFileSync } from 'node:fs';
import { expect, type Locator } from '@playwright/test';
import { test } from './warm-context';
import {
  composer,
  conversationList as list,
  conversationRow as conversation,
  exportFile,
  fromConversationMenu as fromMenu,
  openChat,
  openSettings,
  replaceNumber,
  replies,
  send,
  userMessages,
} from './ui';

test('export then import brings every conversation back, in the OpenAI message format', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await openSettings(page);
  await page.getByLabel('System prompt').fill('Be kind.');
  await page.getByLabel('System prompt').blur();
  await replaceNumber(page.getByLabel('Temperature'), 0.3);
  await send(page, 'export me');
  await expect(replies(page)).toHaveText(['[Be kind.] export me']);

  const { name, path } = await exportFile(page, browserName);
  expect(name).toMatch(/^hearth-conversations-\d{4}-\d{2}-\d{2}\.json$/);
  const exported = JSON.parse(readFileSync(path, 'utf8'));
  expect(exported).toMatchObject({
    format: 'hearth.conversations',
    version: 1,
    conversations: [
      {
        title: 'export me',
        model: 'hearth/echo',
        settings: { temperature: 0.3, max_tokens: null },
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'export me' },
          {
            role: 'assistant',
            content: '[Be kind.] export me',
            model: 'hearth/echo',
            finish_reason: 'stop',
            usage: { prompt_tokens: expect.any(Number), completion_tokens: 4 },
          },
        ],
      },
    ],
  });

  await fromMenu(page, 'export me', 'Delete');
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(conversation(page, 'export me')).toHaveCount(0);

  await page.getByLabel('Import').setInputFiles(path);
  // (A new, empty conversation took the deleted one's place: its first-run card has a status too.)
  const imported = page.getByRole('status').filter({ hasText: 'Imported 1 conversation.' });
  await expect(imported).toBeVisible();
  await conversation(page, 'export me').click();
  await expect(userMessages(page)).toHaveText(['export me']);
  await expect(replies(page)).toHaveText(['[Be kind.] export me']);
  await openSettings(page);
  await expect(page.getByLabel('System prompt')).toHaveValue('Be kind.');
  await expect(page.getByLabel('Temperature')).toHaveValue('0.3');
  // A notice that something went right closes by itself (it floats, and never moves the composer).
  await expect(imported).toBeHidden({ timeout: 10_000 });
});

test('an import that is not a Hearth export says so and changes nothing', async ({ page }) => {
  await openChat(page);
  await send(page, 'still here');
  await page.getByLabel('Import').setInputFiles({
    name: 'other.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ format: 'something-else', version: 1 })),
  });
  await expect(page.getByRole('alert')).toContainText(
    'Nothing was imported: This is not a Hearth export of version 1.',
  );
  await page.getByLabel('Import').setInputFiles({
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from('{"format": "hearth.conv'),
  });
  await expect(page.getByRole('alert')).toContainText('This file is not JSON.');
  await expect(list(page).getByRole('button', { name: 'still here', exact: true })).toHaveCount(1);
});

test('importing the same file twice adds nothing the second time, and says what it did', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await send(page, 'one');
  await page.getByRole('button', { name: 'New chat' }).click();
  await send(page, 'two');
  await expect(replies(page)).toHaveText(['two']);
  const { path } = await exportFile(page, browserName);
  await page.getByLabel('Import').setInputFiles(path);
  await expect(page.getByRole('status').filter({ hasText: 'Imported' })).toHaveText(
    /Imported 0 conversations\. 2 already here were skipped \(the same or older in the file\)\./,
  );
  await page.getByLabel('Import').setInputFiles(path);
  await expect(list(page).getByRole('button', { name: /^Options for / })).toHaveCount(2);
  await expect(conversation(page, 'one')).toHaveCount(1);
  await expect(conversation(page, 'two')).toHaveCount(1);
});

test('the import notice covers neither the Model label nor the composer', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await send(page, 'notice me');
  await expect(replies(page)).toHaveText(['notice me']);
  const { path } = await exportFile(page, browserName);
  const notice = page.getByRole('status').filter({ hasText: 'Imported' });
  const apart = async (other: Locator) => {
    const a = (await notice.boundingBox())!;
    const b = (await other.boundingBox())!;
    return (
      a.x >= b.x + b.width || b.x >= a.x + a.width || a.y >= b.y + b.height || b.y >= a.y + a.height
    );
  };
  // On a wide screen, a laptop's and a tablet's, just above the phone layout, and on a phone
  // (where the chat's own bar, with the model, is at the top).
  for (const size of [
    { width: 1280, height: 720 },
    { width: 1024, height: 768 },
    { width: 800, height: 600 },
    { width: 740, height: 900 },
    { width: 390, height: 700 },
  ]) {
    await page.setViewportSize(size);
    await page.getByLabel('Import').setInputFiles(path);
    await expect(notice).toBeVisible();
    expect(await apart(page.getByText('Model', { exact: true }))).toBe(true);
    expect(await apart(composer(page))).toBe(true);
    await notice.getByRole('button').click();
    await expect(notice).toBeHidden();
  }
});

test('an exported conversation, imported again, keeps the earlier versions of edited and regenerated messages', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await send(page, 'first question');
  // The composer takes the next message once the reply is done (a loaded machine can be slower
  // than a person).
  await expect(replies(page)).toHaveText(['first question']);
  await send(page, 'second question');
  await expect(replies(page)).toHaveText(['first question', 'second question']);
  await page.getByRole('button', { name: 'Edit message 2' }).click();
  await page.getByLabel('Edit your message').fill('a better question');
  await page.getByLabel('Edit your message').press('Enter');
  await expect(replies(page)).toHaveText(['first question', 'a better question']);
  await page.getByRole('button', { name: 'Regenerate reply 2' }).click();
  await expect(page.getByRole('group', { name: 'Versions of reply 2' })).toContainText(
    'Version 2 of 2',
  );

  const { path } = await exportFile(page, browserName);
  await fromMenu(page, 'first question', 'Delete');
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(conversation(page, 'first question')).toHaveCount(0);
  await page.getByLabel('Import').setInputFiles(path);
  await expect(
    page.getByRole('status').filter({ hasText: 'Imported 1 conversation.' }),
  ).toBeVisible();
  await conversation(page, 'first question').click();

  const rewrites = page.getByRole('group', { name: 'Versions of reply 2' });
  await expect(rewrites).toContainText('Version 2 of 2');
  await rewrites.getByRole('button', { name: 'Previous version' }).click();
  await expect(rewrites).toContainText('Version 1 of 2');
  const edits = page.getByRole('group', { name: 'Versions of message 2' });
  await expect(edits).toContainText('Version 2 of 2');
  await edits.getByRole('button', { name: 'Previous version' }).click();
  await expect(userMessages(page)).toHaveText(['first question', 'second question']);
  await expect(replies(page)).toHaveText(['first question', 'second question']);
});

test('Export as Markdown in the ⋯ menu downloads <title>.md with who said what', async ({
  page,
  browserName,
}) => {
  await openChat(page);
  await send(page, 'Soup: how?');
  await expect(replies(page)).toHaveText(['Soup: how?']);
  const { name, path } = await exportFile(page, browserName, () =>
    fromMenu(page, 'Soup: how?', 'Export as Markdown'),
  );
  expect(name).toBe('Soup how.md');
  expect(readFileSync(path, 'utf8')).toBe(
    '# Soup: how?\n\n**You:**\n\nSoup: how?\n\n**Assistant (hearth/echo):**\n\nSoup: how?\n',
  );
});
