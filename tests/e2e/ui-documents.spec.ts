/**
 * Documents in the chat app (issue 47, item 5), as a person uses them, on one page of the app for
 * the file: a Markdown file attached with no embedding model on the device waits, and the app
 * offers the recommended embedding model with one button (its host is out of the tests' reach);
 * once an embedding model is on the device (the e2e catalogue's fixture embedding GGUF, from the
 * tests' model server) the document is indexed, with its state on its chip. A PDF made at test time is indexed too; a question is answered by the echo engine,
 * whose reply repeats the numbered passages the device gave it, so its `[n]` markers become
 * citations that open the passage, with the PDF's page. A reload keeps the conversation's
 * documents; the Documents view lists the files and the store, and deletes after a confirmation.
 * A long document's chip shows how many of its parts are embedded as it is indexed. An export
 * names the documents (not the files) and keeps the passages cited; imported again, the
 * conversation says which documents to attach again, and its citations still open their passages.
 * The chips and the passage's dialog pass axe. In Chromium and Firefox.
 */
import { readFileSync } from 'node:fs';
import { expect, type Page } from '@playwright/test';
import { axe, violations } from './axe';
import { downloadFixture, EMBEDDING_FIXTURE_ID } from './fixture-model';
import { ModelServer } from './model-server';
import { makePdf } from '../test-pdfs';
import {
  composer,
  conversationRow,
  exportFile,
  fromConversationMenu,
  openChat,
  pickModel,
  ECHO_MODEL_ID,
  replies,
  send,
} from './ui';
import { endSuite, lendToSuite, test } from './warm-context';

const server = new ModelServer();

const NOTES =
  '# Birds\n\nThe heron nests by the old mill.\n\n# Fish\n\nThe pike waits in the reeds.\n';
const PDF = makePdf([
  ['Chapter one', 'Nothing of note happens here.'],
  ['Chapter two', 'The quokka sleeps under the saltbush.'],
]);

/**
 * A document long enough that its indexing is seen: sections of a line each (a chunk each), so
 * thirty batches of 16 for the embedding model, each reported as the file's progress (about two
 * seconds of it, where the app reads the progress every half second).
 */
const PARTS = 480;
const LONG = Array.from(
  { length: PARTS },
  (_, i) => `# Part ${i + 1}\n\nThe note of part ${i + 1}.\n`,
).join('\n');

/**
 * Records in the page every state the composer's document bars take (their names, values and
 * maxima), from before a document is attached: whether the app shows a count does not hang on
 * when a test looks.
 */
async function recordBars(page: Page): Promise<void> {
  await page.evaluate(() => {
    const find = (root: Document | ShadowRoot): Element | null => {
      const here = root.querySelector('chat-view');
      if (here) return here;
      for (const el of root.querySelectorAll('*')) {
        const found = el.shadowRoot ? find(el.shadowRoot) : null;
        if (found) return found;
      }
      return null;
    };
    const root = find(document)?.shadowRoot;
    if (!root) throw new Error('no chat-view');
    const seen: string[] = [];
    (globalThis as { barsSeen?: string[] }).barsSeen = seen;
    const note = () => {
      for (const bar of root.querySelectorAll('.documents progress')) {
        const state = [
          bar.getAttribute('aria-label'),
          bar.getAttribute('value'),
          bar.getAttribute('max'),
        ].join('|');
        if (!seen.includes(state)) seen.push(state);
      }
    };
    new MutationObserver(note).observe(root, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  });
}

const barsSeen = (page: Page) =>
  page.evaluate(() => (globalThis as { barsSeen?: string[] }).barsSeen ?? []);

const documents = (page: Page) =>
  page.getByRole('list', { name: 'Documents' }).getByRole('listitem');
const doc = (page: Page, name: string) => documents(page).filter({ hasText: name });
const attach = (page: Page) => page.getByLabel('Attach images or documents');

test.describe('documents in a conversation', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    test.setTimeout(120_000);
    await server.start();
    page = await lendToSuite({ browser, warmContexts }, testInfo);
    await openChat(page);
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
    await server.stop();
  });

  test('with no embedding model yet, a document waits and the app offers one; once one is here, it is indexed', async () => {
    test.setTimeout(120_000);
    await attach(page).setInputFiles({
      name: 'notes.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(NOTES),
    });
    await expect(doc(page, 'notes.md')).toContainText('Waits for an embedding model');
    // The recommended embedding model, with one button (its host is out of the tests' reach).
    const offer = page.getByRole('button', { name: /^Download .+ \(\d+ MB\)$/ });
    await expect(offer).toBeVisible();
    expect(violations(await axe(page).analyze())).toEqual([]);
    // An embedding model arriving any other way (here the fixture, as the Models view would get
    // it) indexes the waiting document too.
    await downloadFixture(page, 'k', EMBEDDING_FIXTURE_ID);
    await page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: 'Models' })
      .click();
    await page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: 'Chat' })
      .click();
    await expect(doc(page, 'notes.md')).toContainText('Ready', { timeout: 60_000 });
    await expect(offer).toHaveCount(0);
  });

  test('a PDF is indexed with visible progress, and an answer cites it by page', async () => {
    test.setTimeout(90_000);
    await attach(page).setInputFiles({
      name: 'field-guide.pdf',
      mimeType: 'application/pdf',
      buffer: Buffer.from(PDF),
    });
    // Its progress shows while it is uploaded and indexed, then that it is done.
    await expect(doc(page, 'field-guide.pdf')).toBeVisible();
    await expect(doc(page, 'field-guide.pdf')).toContainText('Ready', { timeout: 60_000 });

    await send(page, 'Where does the quokka sleep?');
    await expect(replies(page)).toHaveCount(1);
    const citation = replies(page).getByRole('button', {
      name: /^Source \d+: field-guide\.pdf, page 2$/,
    });
    await expect(citation.first()).toBeVisible({ timeout: 30_000 });
    await citation.first().focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: /^Source \d+: field-guide\.pdf$/ });
    await expect(dialog).toBeVisible();
    await expect(dialog).toContainText('Page 2');
    await expect(dialog).toContainText('The quokka sleeps under the saltbush.');
    expect(violations(await axe(page).analyze())).toEqual([]);
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(citation.first()).toBeFocused();
  });

  test('a reload keeps the documents; the Documents view lists them and deletes after asking', async () => {
    await page.reload();
    await expect(composer(page)).toBeVisible();
    await expect(doc(page, 'notes.md')).toContainText('Ready');
    await expect(doc(page, 'field-guide.pdf')).toContainText('Ready');
    await expect(
      replies(page)
        .getByRole('button', { name: /^Source \d+: / })
        .first(),
    ).toBeVisible();

    await page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: 'Documents' })
      .click();
    await expect(page.getByRole('heading', { name: 'Documents', level: 2 })).toBeVisible();
    await expect(page.getByText(/^Conversation: /)).toBeVisible();
    await expect(
      page.getByText('2 files: 2 ready, 0 indexing, 0 failed', { exact: false }),
    ).toBeVisible();
    await expect(page.getByRole('button', { name: 'Delete file notes.md' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Delete file field-guide.pdf' })).toBeVisible();
    expect(violations(await axe(page).analyze())).toEqual([]);

    // Re-indexing a file takes it out of its store and in again: indexing, then ready.
    await page.getByRole('button', { name: /^Re-index notes\.md in / }).click();
    await expect(page.getByText('2 files: 2 ready', { exact: false })).toBeVisible({
      timeout: 30_000,
    });

    await page.getByRole('button', { name: 'Delete file notes.md' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete notes.md?' });
    await expect(confirm).toBeVisible();
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await expect(page.getByRole('button', { name: 'Delete file notes.md' })).toHaveCount(0);
    await expect(page.getByText('1 file: 1 ready', { exact: false })).toBeVisible();

    await page.goto('#/chat');
    await pickModel(page, ECHO_MODEL_ID);
    await expect(doc(page, 'notes.md')).toContainText('Failed');
    await page.getByRole('button', { name: 'Remove document notes.md' }).click();
    await expect(documents(page)).toHaveCount(1);
    // The focus goes to the next document's Remove, where the removed one was.
    await expect(
      page.getByRole('button', { name: 'Remove document field-guide.pdf' }),
    ).toBeFocused();

    // A store deleted in Documents: the conversation's next message searches nothing, and is
    // answered (it named the deleted store, which the API answers with a 404).
    await page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: 'Documents' })
      .click();
    await page.getByRole('button', { name: /^Delete store Conversation: / }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await expect(page.getByText(/^Conversation: /)).toHaveCount(0);
    await page.goto('#/chat');
    await send(page, 'after the store went');
    await expect(replies(page).last()).toContainText('after the store went');
  });
  test('a long document shows how far its indexing is: how many of its parts are embedded', async () => {
    test.setTimeout(90_000);
    await recordBars(page);
    await attach(page).setInputFiles({
      name: 'long-notes.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(LONG),
    });
    await expect(doc(page, 'long-notes.md')).toContainText('Ready', { timeout: 60_000 });
    const seen = await barsSeen(page);
    // Busy while it is uploaded and read, then counted: some parts of all of them embedded.
    const counted = seen
      .map((s) => /^Indexing long-notes\.md: (\d+) of (\d+) parts\|(\d+)\|(\d+)$/.exec(s))
      .filter((m) => m !== null);
    expect(counted.length, `the bars seen: ${seen.join(', ')}`).toBeGreaterThan(0);
    for (const [, done, total, value, max] of counted) {
      expect([Number(total), Number(max)]).toEqual([PARTS, PARTS]);
      expect(value).toBe(done);
      expect(Number(done)).toBeGreaterThan(0);
      expect(Number(done)).toBeLessThanOrEqual(PARTS);
    }
    expect(
      seen.some(
        (s) => s.startsWith('Uploading long-notes.md|') || s.startsWith('Indexing long-notes.md|'),
      ),
    ).toBe(true);
    await expect(doc(page, 'long-notes.md').getByRole('progressbar')).toHaveCount(0);
  });

  test('an export names the documents and keeps the passages cited; imported again, it says which to attach and its citations open', async ({
    browserName,
  }) => {
    const { path } = await exportFile(page, browserName);
    const exported = JSON.parse(readFileSync(path, 'utf8')) as {
      conversations: {
        title: string;
        documents?: { filename: string }[];
        documents_note?: string;
        messages: { role: string; sources?: { filename: string; page?: number; text: string }[] }[];
      }[];
    };
    const withDocs = exported.conversations.filter((c) => c.documents);
    expect(withDocs).toHaveLength(1);
    const [c] = withDocs;
    expect(c!.documents!.map((d) => d.filename)).toEqual(['field-guide.pdf', 'long-notes.md']);
    expect(c!.documents_note).toMatch(/the files and their index are not in this export/);
    const sources = c!.messages.flatMap((m) => m.sources ?? []);
    expect(sources).toContainEqual(
      expect.objectContaining({
        filename: 'field-guide.pdf',
        page: 2,
        text: expect.stringContaining('The quokka sleeps under the saltbush.'),
      }),
    );

    await fromConversationMenu(page, c!.title, 'Delete');
    await page.getByRole('button', { name: 'Yes, delete' }).click();
    await expect(conversationRow(page, c!.title)).toHaveCount(0);
    await page.getByLabel('Import').setInputFiles(path);
    await expect(
      page.getByRole('status').filter({ hasText: /Imported \d+ conversations?\./ }),
    ).toBeVisible();
    await conversationRow(page, c!.title).click();
    // Back without its files: it names them, to attach again.
    const leftOut = page.getByText('This conversation had documents');
    await expect(leftOut).toContainText('(field-guide.pdf, long-notes.md)');
    await expect(leftOut).toContainText('attach them again');
    await expect(documents(page)).toHaveCount(0);
    // The passage a reply cited travelled with it: its citation opens it, with its page.
    const citation = replies(page).getByRole('button', {
      name: /^Source \d+: field-guide\.pdf, page 2$/,
    });
    await citation.first().click();
    const dialog = page.getByRole('dialog', { name: /^Source \d+: field-guide\.pdf$/ });
    await expect(dialog).toContainText('Page 2');
    await expect(dialog).toContainText('The quokka sleeps under the saltbush.');
    expect(violations(await axe(page).analyze())).toEqual([]);
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
  });
});
