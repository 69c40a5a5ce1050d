/**
 * Conversations in the chat app: new, switch, rename, pin, archive, search, delete; kept across a
 * reload. (Export and import: ui-conversations-export.spec.ts.) Screenshots at desktop and phone
 * width go with the test results.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import {
  composer,
  conversationList as list,
  conversationRow as conversation,
  fromConversationMenu as fromMenu,
  openChat,
  openSettings,
  replies,
  send,
  setEchoDelay,
  userMessages,
} from './ui';

/** What has focus, looked for through the shadow roots: its tag and its accessible text. */
const focused = (page: Page) =>
  page.evaluate(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return {
      tag: active?.tagName.toLowerCase() ?? null,
      text: active?.getAttribute('aria-label') ?? active?.textContent?.trim() ?? '',
    };
  });

test('conversations can be started, switched, renamed, searched and deleted', async ({ page }) => {
  await openChat(page);
  await send(page, 'about apples');
  await expect(replies(page)).toHaveText(['about apples']);
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(composer(page)).toBeFocused();
  await send(page, 'about pears');
  await expect(replies(page)).toHaveText(['about pears']);
  await expect(list(page).getByRole('button', { name: /^about/ })).toHaveText([
    'about pears',
    'about apples',
  ]);
  await expect(conversation(page, 'about pears')).toHaveAttribute('aria-current', 'true');

  await conversation(page, 'about apples').click();
  await expect(userMessages(page)).toHaveText(['about apples']);
  await expect(conversation(page, 'about apples')).toHaveAttribute('aria-current', 'true');

  // Rename, Pin, Archive and Delete are in each conversation's "⋯" menu.
  await fromMenu(page, 'about apples', 'Rename');
  await page.getByLabel('New title').fill('Fruit, red');
  await page.getByLabel('New title').press('Enter');
  await expect(conversation(page, 'Fruit, red')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Options for Fruit, red' })).toBeFocused();

  // Search looks in titles and in messages.
  await page.getByLabel('Search conversations').fill('pears');
  await expect(list(page).getByRole('button', { name: /^(about|Fruit)/ })).toHaveText([
    'about pears',
  ]);
  await page.getByLabel('Search conversations').fill('');

  await fromMenu(page, 'about pears', 'Delete');
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(conversation(page, 'about pears')).toHaveCount(0);
  await expect(conversation(page, 'Fruit, red')).toBeVisible();
});

test('the ⋯ menu works by keyboard; pin moves a conversation to Pinned, archive hides it until Archived is opened, and a confirmed delete leaves focus on a row', async ({
  page,
}) => {
  await openChat(page);
  for (const text of ['first talk', 'second talk', 'third talk']) {
    if (text !== 'first talk') await page.getByRole('button', { name: 'New chat' }).click();
    await send(page, text);
    await expect(replies(page)).toHaveText([text]);
  }
  const today = list(page).getByRole('list', { name: 'Today' });
  await expect(today.getByRole('button', { name: /^\w+ talk$/ })).toHaveText([
    'third talk',
    'second talk',
    'first talk',
  ]);

  // The menu by keyboard: it opens on its first item, arrows move, Esc gives focus back.
  const options = page.getByRole('button', { name: 'Options for second talk' });
  await options.focus();
  await page.keyboard.press('Enter');
  const menu = page.getByRole('menu');
  await expect(menu.getByRole('menuitem')).toHaveText([
    'Rename',
    'Pin',
    'Archive',
    'Export as Markdown',
    'Delete',
  ]);
  await expect(menu.getByRole('menuitem', { name: 'Rename' })).toBeFocused();
  await page.keyboard.press('ArrowUp');
  await expect(menu.getByRole('menuitem', { name: 'Delete' })).toBeFocused();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await expect(menu.getByRole('menuitem', { name: 'Pin' })).toBeFocused();
  await page.keyboard.press('Escape');
  await expect(menu).toHaveCount(0);
  await expect(options).toBeFocused();
  await expect(options).toHaveAttribute('aria-expanded', 'false');
  // A click outside closes it too.
  await options.click();
  await expect(menu).toBeVisible();
  await page.getByLabel('Search conversations').click();
  await expect(menu).toHaveCount(0);

  await fromMenu(page, 'first talk', 'Pin');
  const pinned = list(page).getByRole('list', { name: 'Pinned' });
  await expect(pinned.getByRole('button', { name: /^\w+ talk$/ })).toHaveText(['first talk']);
  await expect(today.getByRole('button', { name: /^\w+ talk$/ })).toHaveText([
    'third talk',
    'second talk',
  ]);
  await expect(page.getByRole('button', { name: 'Options for first talk' })).toBeFocused();

  await fromMenu(page, 'second talk', 'Archive');
  await expect(conversation(page, 'second talk')).toHaveCount(0);
  await page.getByLabel('Search conversations').fill('second');
  await expect(list(page)).toContainText('No conversation matches.');
  await page.getByLabel('Search conversations').fill('');
  const toggle = page.getByRole('button', { name: 'Archived (1)' });
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  const archive = page.getByRole('list', { name: 'Archived conversations' });
  await expect(archive.getByRole('button', { name: 'second talk', exact: true })).toBeVisible();
  await fromMenu(page, 'second talk', 'Unarchive');
  await expect(conversation(page, 'second talk')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Archived (0)' })).toBeVisible();

  // After a confirmed delete, focus moves to the next row (here the one after, in the next
  // group), never to the page's body.
  await fromMenu(page, 'first talk', 'Delete');
  await expect(page.getByRole('button', { name: 'Keep it' })).toBeFocused();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(conversation(page, 'first talk')).toHaveCount(0);
  await expect(conversation(page, 'third talk')).toBeFocused();
  expect(await focused(page)).toEqual({ tag: 'button', text: 'third talk' });
  // The last row's next is the one before it.
  await fromMenu(page, 'second talk', 'Delete');
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(conversation(page, 'second talk')).toHaveCount(0);
  await expect(conversation(page, 'third talk')).toBeFocused();
});

test('search finds a conversation by two words of a reply in any order, and shows where they matched', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'something else entirely');
  await expect(replies(page)).toHaveCount(1);
  const story = (title: string, question: string, answer: string, updated: number) => ({
    title,
    created: updated,
    updated,
    model: 'hearth/echo',
    settings: { temperature: 0.7, max_tokens: null },
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: answer },
    ],
  });
  const file = {
    format: 'hearth.conversations',
    version: 1,
    exported: new Date().toISOString(),
    conversations: [
      story('A story', 'Tell me one.', 'The Quick brown fox jumps over the lazy dog.', Date.now()),
      story('Another', 'And a fox?', 'No <b>dog</b> here, nor a fox.', Date.now() - 1000),
    ],
  };
  await page.getByLabel('Import').setInputFiles({
    name: 'stories.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(file)),
  });
  await expect(conversation(page, 'A story')).toBeVisible();

  // Words of the reply in any order, by their beginning, case and punctuation ignored.
  const search = page.getByLabel('Search conversations');
  await search.fill('DOG, quic');
  const titles = list(page).getByRole('button', { name: /^(A story|Another|something)/ });
  await expect(titles).toHaveText(['A story']);
  await expect(conversation(page, 'A story')).toHaveAccessibleDescription(
    'The Quick brown fox jumps over the lazy dog.',
  );
  await expect(list(page).locator('mark')).toHaveText(['Quick', 'dog']);
  // Every word must match; a reply's markup is shown as text, never parsed.
  await search.fill('fox dog');
  await expect(titles).toHaveText(['A story', 'Another']);
  await expect(conversation(page, 'Another')).toHaveAccessibleDescription(
    'No <b>dog</b> here, nor a fox.',
  );
  await search.fill('fox elsewhere');
  await expect(list(page)).toContainText('No conversation matches.');
  await search.fill('');
  await expect(titles).toHaveCount(3);
});

test('a reload finds every conversation intact, the open one open, and unsent text still there', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'remember me');
  await expect(replies(page)).toHaveText(['remember me']);
  await openSettings(page);
  await page.getByLabel('System prompt').fill('You are terse.');
  await page.getByLabel('System prompt').blur();
  await page.getByRole('button', { name: 'New chat' }).click();
  await expect(composer(page)).toBeFocused();
  await send(page, 'second one');
  await expect(replies(page)).toHaveText(['second one']);
  await conversation(page, 'remember me').click();
  await composer(page).fill('half-written thought');
  await page.reload();
  await expect(composer(page)).toHaveValue('half-written thought');
  await expect(userMessages(page)).toHaveText(['remember me']);
  await expect(replies(page)).toHaveText(['remember me']);
  await openSettings(page);
  await expect(page.getByLabel('System prompt')).toHaveValue('You are terse.');
  await expect(conversation(page, 'second one')).toBeVisible();
});

test('reasoning comes folded away, and opens on demand', async ({ page }) => {
  await openChat(page);
  const file = {
    format: 'hearth.conversations',
    version: 1,
    exported: new Date().toISOString(),
    conversations: [
      {
        title: 'a thinker',
        created: Date.now(),
        updated: Date.now(),
        model: 'hearth/echo',
        settings: { temperature: 0.7, max_tokens: null },
        messages: [
          { role: 'user', content: 'why?' },
          {
            role: 'assistant',
            content: 'Because.',
            reasoning_content: 'Let me think about **why**.',
          },
        ],
      },
    ],
  };
  await page.getByLabel('Import').setInputFiles({
    name: 'thinker.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(file)),
  });
  await conversation(page, 'a thinker').click();
  const reasoning = replies(page).locator('details');
  await expect(reasoning).not.toHaveAttribute('open', '');
  await expect(reasoning.getByText('Let me think about')).toBeHidden();
  await reasoning.getByText('Reasoning').click();
  await expect(reasoning.locator('strong')).toHaveText('why');
  await expect(replies(page)).toContainText('Because.');
});

test('New chat twice stores no empty conversations: the list grows only when a message is sent', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'the only one');
  await expect(replies(page)).toHaveText(['the only one']);
  // One row is one conversation: its ⋯ button.
  const rows = list(page).getByRole('button', { name: /^Options for / });
  await expect(rows).toHaveCount(1);
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).click();
  await page.keyboard.press('ControlOrMeta+Shift+O');
  await expect(composer(page)).toBeFocused();
  await expect(rows).toHaveCount(1);
  await page.reload();
  await expect(composer(page)).toBeVisible();
  await expect(rows).toHaveCount(1);
  await page.getByRole('button', { name: 'New chat' }).click();
  await send(page, '# A **bold** start');
  await expect(rows).toHaveCount(2);
  // The title is the first line as plain text, without its Markdown.
  await expect(conversation(page, 'A bold start')).toBeVisible();
});

test('a message sent the moment New chat is clicked goes to the new chat, even while a reply streams and the store is slow', async ({
  page,
}) => {
  await openChat(page);
  await setEchoDelay(page, 100);
  await send(page, 'one two three four five six seven eight nine ten');
  await expect(replies(page)).toContainText(['one two']);
  // A store that answers late, as a busy disk does: another transaction holds it for a while.
  await holdStore(page, 1500);
  await page.getByRole('button', { name: 'New chat' }).click();
  await send(page, 'eleven');
  await expect(userMessages(page)).toHaveText(['eleven']);
  await expect(replies(page)).toHaveText(['eleven']);
  // The first conversation was let go, not lost: its reply ends there.
  await conversation(page, 'one two three four five six seven eight nine ten').click();
  await expect(replies(page)).toHaveText(['one two three four five six seven eight nine ten']);
});

/**
 * Holds the app's conversation store with a read-write transaction for `ms`: the app's own writes
 * wait behind it, as on a busy disk. Returns once the transaction has started.
 */
function holdStore(page: Page, ms: number): Promise<void> {
  return page.evaluate(
    (ms) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open('hearth-chat');
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const db = open.result;
          const tx = db.transaction('conversations', 'readwrite');
          const store = tx.objectStore('conversations');
          const until = Date.now() + ms;
          // A transaction lives while it has requests: one after another until the time is up.
          const next = () => {
            if (Date.now() < until) store.count().onsuccess = next;
          };
          next();
          tx.oncomplete = () => db.close();
          resolve();
        };
      }),
    ms,
  );
}
