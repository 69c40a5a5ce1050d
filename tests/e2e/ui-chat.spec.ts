/**
 * The chat, used as a person would: by role and label, with the keyboard, with an input method,
 * and against hostile model output. The echo engine answers (it repeats the last message), but
 * for the chats with the fixture GGUF through llama.cpp: its sentence, and a reply cut off at a
 * maximum length that Continue completes.
 */
import { expect, type BrowserContext, type Page } from '@playwright/test';
import { axe, violations } from './axe';
import { test } from './warm-context';
import {
  composer,
  cspViolations,
  openChat,
  openSettings,
  replaceNumber,
  replies,
  send,
  setEchoDelay,
  userMessages,
  watchLeaks,
} from './ui';
import {
  downloadFixture,
  EMBEDDING_FIXTURE_ID,
  FIXTURE_ID,
  FIXTURE_PIECES,
  FIXTURE_SENTENCE,
  SENTENCE_TOKENS,
} from './fixture-model';
import { chromiumOnly } from './helpers';
import { MODEL_PORT, ModelServer } from './model-server';

test('a message sent with Enter gets a reply rendered as Markdown, with its tokens and no speed or cost for the test engine', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'Hello **world**, see `code`');
  const reply = replies(page).last();
  await expect(reply.locator('strong')).toHaveText('world');
  await expect(reply.locator('code')).toHaveText('code');
  await expect(userMessages(page)).toHaveText('Hello **world**, see `code`');
  // The echo engine answers at once (its speed says nothing) and costs nothing: no "$0".
  await expect(page.locator('chat-message .stats')).toHaveText(/^\d+ tokens$/);
  await expect(composer(page)).toHaveValue('');
  // The conversation is named after its first message, as plain text (its Markdown dropped).
  await expect(
    page
      .getByRole('list', { name: 'Conversations' })
      .getByRole('button', { name: 'Hello world, see code', exact: true }),
  ).toBeVisible();
});

test.describe('the fixture model through llama.cpp', () => {
  const server = new ModelServer();
  test.beforeAll(() => server.start());
  test.afterAll(() => server.stop());

  test('chosen by its label, it answers a message with its sentence, with the tokens llama.cpp counted', async ({
    page,
  }) => {
    await openChat(page);
    await downloadFixture(page);
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(FIXTURE_ID);
    await send(page, 'Tell me something.');
    await expect(replies(page)).toHaveText([FIXTURE_SENTENCE], { timeout: 30_000 });
    await expect(replies(page).last()).toHaveAttribute('aria-busy', 'false');
    // The speed shows only when the reply took 20 ms or more, which a fast machine may beat on
    // this tiny model; a model without a price shows no cost.
    await expect(page.locator('chat-message .stats')).toHaveText(
      new RegExp(`^${SENTENCE_TOKENS} tokens( · [\\d.]+ tokens/s)?$`),
    );
    await expect(page.getByRole('combobox', { name: 'Model', exact: true })).toHaveValue(
      FIXTURE_ID,
    );
  });

  test('a reply the maximum length cut off says so, and Continue goes on with it in the same reply, counting the tokens of both', async ({
    page,
  }) => {
    await openChat(page);
    await downloadFixture(page);
    await page.getByRole('combobox', { name: 'Model', exact: true }).selectOption(FIXTURE_ID);
    await openSettings(page);
    const maxLength = page.getByLabel('Maximum length (tokens)');
    await replaceNumber(maxLength, 3);
    await send(page, 'Tell me something.');
    // llama.cpp stops after three of the sentence's pieces: "The quick brown".
    const cut = FIXTURE_PIECES.slice(0, 3).join('');
    await expect(replies(page)).toHaveText([`${cut} Cut off at the maximum length.`], {
      timeout: 30_000,
    });
    await expect(page.locator('chat-message .stats')).toHaveText(/^3 tokens( · |$)/);

    // With the limit lifted, Continue asks the model to go on; the fixture spells its whole
    // sentence to any prompt, and it lands after what the reply already had.
    await maxLength.fill('');
    await maxLength.blur();
    await page.getByRole('button', { name: /^Continue reply 1/ }).click();
    await expect(replies(page)).toHaveCount(1);
    await expect(replies(page)).toHaveText([`${cut}${FIXTURE_SENTENCE}`], { timeout: 30_000 });
    await expect(page.locator('chat-message .stats')).toHaveText(
      new RegExp(`^${3 + SENTENCE_TOKENS} tokens( · |$)`),
    );
    await expect(userMessages(page)).toHaveCount(1);
  });

  test('an embedding model on the device is not offered for chat, and the Models view marks it', async ({
    page,
  }) => {
    await openChat(page);
    await downloadFixture(page);
    await downloadFixture(page, 'k', EMBEDDING_FIXTURE_ID);
    const picker = page.getByRole('combobox', { name: 'Model', exact: true });
    // Both are on the device: the chat model is offered once the catalogue has them both.
    await expect(picker.locator(`option[value="${FIXTURE_ID}"]`)).toHaveCount(1);
    await page.goto('./#/models');
    const badge = page
      .getByRole('listitem', { name: EMBEDDING_FIXTURE_ID, exact: true })
      .getByText('embeddings · 128 dims', { exact: true });
    await expect(badge).toBeVisible();
    await page.goto('./');
    await expect(picker.locator(`option[value="${FIXTURE_ID}"]`)).toHaveCount(1);
    await expect(picker.locator(`option[value="${EMBEDDING_FIXTURE_ID}"]`)).toHaveCount(0);
  });
});

test('a reply streams in, and Stop (or Esc) keeps what came', async ({ page }) => {
  await openChat(page);
  await setEchoDelay(page, 100);
  const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
  await send(page, words);
  const reply = replies(page).last();
  await expect(reply).toHaveAttribute('aria-busy', 'true');
  await expect(reply).toContainText('w3');
  const partial = await reply.textContent();
  await expect(reply).toContainText('w14');
  expect((await reply.textContent())!.length).toBeGreaterThan(partial!.length);
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByText('Stopped.')).toBeVisible();
  await expect(reply).toHaveAttribute('aria-busy', 'false');
  expect(await reply.textContent()).not.toContain('w39');
  // Esc stops too.
  await send(page, words);
  await expect(replies(page).last()).toContainText('w2');
  await page.keyboard.press('Escape');
  await expect(page.getByText('Stopped.')).toHaveCount(2);
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
});

test('a reply stopped before anything came offers Regenerate, not Continue: there is nothing to continue', async ({
  page,
}) => {
  await openChat(page);
  // The echo engine waits this long before its first token: Stop comes first.
  await setEchoDelay(page, 5000);
  await send(page, 'one two three');
  await expect(replies(page).last()).toHaveAttribute('aria-busy', 'true');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(page.getByText('Stopped before anything was written.')).toBeVisible();
  await expect(page.getByRole('button', { name: /^Regenerate reply 1/ })).toBeVisible();
  await expect(page.getByRole('button', { name: /^Continue/ })).toHaveCount(0);
});

test('a stopped reply counts the tokens that came, and after Continue the count covers the whole reply', async ({
  page,
}) => {
  await openChat(page);
  await setEchoDelay(page, 100);
  const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
  await send(page, words);
  const reply = replies(page).last();
  await expect(reply).toContainText('w4');
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(reply).toHaveAttribute('aria-busy', 'false');
  // The echo engine writes one word a token: what came is what is counted.
  const came = ((await reply.textContent()) ?? '').match(/\bw\d+\b/g)?.length ?? 0;
  expect(came).toBeGreaterThanOrEqual(5);
  const stats = page.locator('chat-message .stats');
  // Counted as they came (a stopped reply has no count from the model): "about".
  await expect(stats).toHaveText(`about ${came} tokens`);
  await setEchoDelay(page, 0);
  await page.getByRole('button', { name: /^Continue reply 1/ }).click();
  // The echo engine repeats the request to go on: its 11 words are the reply's next part.
  await expect(reply).toContainText('without repeating anything.');
  await expect(reply).toHaveAttribute('aria-busy', 'false');
  await expect(stats).toHaveText(`about ${came + 11} tokens`);
});

test('a system prompt applies to the next reply, and Regenerate writes the last one again', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'hi');
  await expect(replies(page)).toHaveText(['hi']);
  await openSettings(page);
  await page.getByLabel('System prompt').fill('Be brief.');
  await page.getByLabel('System prompt').blur();
  await page.getByRole('button', { name: 'Regenerate' }).click();
  // The echo engine shows the system prompt in brackets: the new reply saw it.
  await expect(replies(page)).toHaveText(['[Be brief.] hi']);
  await expect(userMessages(page)).toHaveCount(1);
});

test('editing a message replaces what followed it with a new reply', async ({ page }) => {
  await openChat(page);
  await send(page, 'first question');
  await expect(replies(page)).toHaveText(['first question']);
  await send(page, 'second question');
  await expect(replies(page)).toHaveText(['first question', 'second question']);
  await page.getByRole('button', { name: 'Edit' }).first().click();
  await page.getByLabel('Edit your message').fill('a better question');
  await page.getByRole('button', { name: 'Save and send' }).click();
  await expect(userMessages(page)).toHaveText(['a better question']);
  await expect(replies(page)).toHaveText(['a better question']);
});

test('Copy puts a reply and a code block on the clipboard', async ({
  page,
  context,
  browserName,
}) => {
  // Firefox has no such permissions to grant (and lets the page read what it wrote).
  if (browserName === 'chromium')
    await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openChat(page);
  await send(page, 'Run:\n\n```sh\nnpm start\n```');
  await expect(replies(page).last().locator('pre')).toHaveText('npm start');
  await replies(page).last().getByRole('button', { name: 'Copy sh code' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('npm start\n');
  await page.getByRole('button', { name: 'Copy reply 1' }).click();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
    'Run:\n\n```sh\nnpm start\n```',
  );
});

test('Shift+Enter makes a new line, and an Enter the browser marks as composing does not send', async ({
  page,
}) => {
  await openChat(page);
  const box = composer(page);
  await box.click();
  await page.keyboard.type('line one');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type('line two');
  await expect(box).toHaveValue('line one\nline two');
  // An input method's Enter as every browser reports it: `isComposing`, or key code 229.
  for (const init of [{ isComposing: true }, { keyCode: 229 }]) {
    await box.evaluate(
      (el, init) =>
        el.dispatchEvent(
          new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, composed: true, ...init }),
        ),
      init,
    );
  }
  await expect(userMessages(page)).toHaveCount(0);
  await page.keyboard.press('Enter');
  await expect(userMessages(page)).toHaveCount(1);
  await expect(replies(page).last()).toContainText('line two');
});

test('Enter while an input method composes picks the candidate and does not send', async ({
  page,
  browserName,
}) => {
  chromiumOnly(browserName, 'CDP Input.imeSetComposition drives a real input method');
  await openChat(page);
  const box = composer(page);
  await box.click();
  // An input method composing (here through the DevTools protocol, as a Japanese IME would):
  // Enter picks the candidate, it must not send.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Input.imeSetComposition', {
    text: 'にほんご',
    selectionStart: 4,
    selectionEnd: 4,
  });
  await page.keyboard.press('Enter');
  await expect(userMessages(page)).toHaveCount(0);
  await cdp.send('Input.insertText', { text: '日本語' });
  await expect(userMessages(page)).toHaveCount(0);
  await expect(box).toHaveValue(/^日本語\s*$/);
  await page.keyboard.press('Enter');
  await expect(userMessages(page)).toHaveCount(1);
  await expect(replies(page).last()).toContainText('日本語');
});

test('the chat works from the keyboard alone', async ({ page }) => {
  await openChat(page);
  // From the top of the page, Tab reaches the composer, past the views and the conversations.
  await page.locator('body').click({ position: { x: 1, y: 1 } });
  let reached = false;
  for (let i = 0; i < 30 && !reached; i += 1) {
    await page.keyboard.press('Tab');
    reached = await composer(page).evaluate((el) => el.matches(':focus'));
  }
  expect(reached).toBe(true);
  await page.keyboard.type('typed without a mouse');
  await page.keyboard.press('Enter');
  await expect(replies(page)).toHaveText(['typed without a mouse']);
  // Shift+Tab goes back to the reply's actions; Enter on Regenerate works.
  const regenerate = page.getByRole('button', { name: 'Regenerate' });
  for (let i = 0; i < 10 && !(await regenerate.evaluate((el) => el.matches(':focus'))); i += 1) {
    await page.keyboard.press('Shift+Tab');
  }
  await expect(regenerate).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(replies(page)).toHaveText(['typed without a mouse']);
  // Every control of the chat has a name a screen reader can say.
  for (const control of await page.locator('chat-view').getByRole('button').all()) {
    expect(
      (await control.getAttribute('aria-label')) ?? (await control.textContent())?.trim(),
    ).toBeTruthy();
  }
  await expect(page.getByRole('log', { name: 'Messages' })).toBeVisible();
});

/** A host that collects what leaks to it: every request to it is answered with a page. */
const ELSEWHERE = 'https://elsewhere.example';

/** Answers `ELSEWHERE` for the whole context (new tabs too) and records what reaches it. */
async function watchElsewhere(context: BrowserContext): Promise<string[]> {
  const reached: string[] = [];
  context.on('request', (request) => {
    if (request.url().startsWith(ELSEWHERE)) reached.push(request.url());
  });
  await context.route(`${ELSEWHERE}/**`, (route) =>
    route.fulfill({ contentType: 'text/html', body: '<title>Elsewhere</title>' }),
  );
  return reached;
}

/** Records the requests of the context whose address contains `secret`. */
function watchSecrets(context: BrowserContext): string[] {
  const seen: string[] = [];
  context.on('request', (request) => {
    if (request.url().includes('secret')) seen.push(request.url());
  });
  return seen;
}

test('a link in a reply shows where it goes, and opens only after a confirmation that shows it in full', async ({
  page,
  context,
}) => {
  const reached = await watchElsewhere(context);
  await openChat(page);
  const destination = `${ELSEWHERE}/page?d=my%20secret%20conversation`;
  await send(page, `Read [the docs](${destination}).`);
  const reply = replies(page).last();
  const link = reply.getByRole('link', { name: 'the docs' });
  // The destination is shown beside the text, and the element cannot navigate by itself (no
  // href: neither a middle click nor "open in new tab" bypasses the confirmation).
  await expect(reply).toContainText(destination);
  await expect(reply.locator('a[href]')).toHaveCount(0);
  await link.click();
  const dialog = page.getByRole('dialog', { name: 'Open this link?' });
  await expect(dialog).toBeVisible();
  await expect(dialog).toContainText(destination);
  await expect(dialog.getByRole('button', { name: 'Cancel' })).toBeFocused();
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();
  // From the keyboard: Enter on the link asks, Esc cancels.
  await link.focus();
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await expect(link).toBeFocused();
  await page.waitForTimeout(300);
  expect(context.pages()).toHaveLength(1);
  expect(reached).toEqual([]);
  // Open opens exactly that address, in a new tab, with no referrer and no opener.
  await link.click();
  const opened = context.waitForEvent('page');
  await dialog.getByRole('button', { name: 'Open' }).click();
  const tab = await opened;
  await tab.waitForLoadState();
  expect(tab.url()).toBe(destination);
  expect(reached).toEqual([destination]);
  expect(await tab.evaluate(() => [window.opener === null, document.referrer])).toEqual([true, '']);
  await expect(dialog).toBeHidden();
});

test("a reply shows images only from the app's own files: any other shows as text and is never fetched", async ({
  page,
  context,
}) => {
  const secrets = watchSecrets(context);
  await openChat(page);
  const dot =
    'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
  await send(
    page,
    [
      '![icon](icons/icon-192.png)',
      '![query](icons/icon-192.png?d=secret)',
      '![rooted](/icons/icon-512.png?secret)',
      '![fragment](icons/icon-192.png#?d=secret)',
      '![path](secret/conversation.png)',
      '![api](v1/openai/models?secret)',
      `![dot](${dot})`,
    ].join('\n\n'),
  );
  const reply = replies(page).last();
  await expect(reply.locator('img')).toHaveCount(1);
  await expect(reply.getByRole('img', { name: 'icon' })).toHaveJSProperty('complete', true);
  expect(await reply.locator('img').evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(
    192,
  );
  for (const text of [
    '[query: icons/icon-192.png?d=secret]',
    '[rooted: /icons/icon-512.png?secret]',
    '[fragment: icons/icon-192.png#?d=secret]',
    '[path: secret/conversation.png]',
    '[api: v1/openai/models?secret]',
    '[dot: data:image/png;base64,… 92 characters]',
  ]) {
    await expect(reply).toContainText(text);
  }
  await page.waitForTimeout(500);
  expect(secrets).toEqual([]);
  // The watch sees such an image when one does load (the page's own, here), in either browser.
  const probe = await page.evaluate(() => {
    const img = new Image();
    img.src = 'icons/icon-192.png?probe-secret';
    return img.src;
  });
  await expect.poll(() => secrets).toEqual([probe]);
});

test('hostile model output and a hostile imported file render inert: nothing runs, nothing is fetched, no link opens unasked', async ({
  page,
  context,
}) => {
  const foreign = await watchLeaks(page);
  const reached = await watchElsewhere(context);
  const secrets = watchSecrets(context);
  await openChat(page);
  const hostile = [
    // Raw HTML, which marked hands over as HTML (shown as text).
    '<img src=x onerror="window.pwned = 1">',
    '<script>window.pwned = 2</script>',
    '<a href="javascript:window.pwned=4">raw link</a>',
    '<iframe src="https://evil.example/"></iframe>',
    '<div style="background:url(https://evil.example/bg.png)">styled</div>',
    '<img src="https://evil.example/raw.png">',
    '<form action="https://evil.example/"><button>Send</button></form>',
    '<svg><script>window.pwned = 5</script></svg>',
    // Inline HTML in a paragraph.
    'inline <img src="icons/icon-192.png?d=secret-inline"> and <a href="https://elsewhere.example/?d=secret-a">a</a> end',
    // Markdown links and images.
    '[click me](javascript:window.pwned=3)',
    '[case](JaVaScRiPt:window.pwned=6) [entity](javascript&#58;window.pwned=7) [spaced]( javascript:window.pwned=8 )',
    '[page](data:text/html,<script>window.pwned=9</script>) [mail](mailto:a@elsewhere.example?body=secret-mail)',
    `[data link](${ELSEWHERE}/link?d=secret-1)`,
    `autolink <${ELSEWHERE}/auto?d=secret-2> and bare ${ELSEWHERE}/bare?d=secret-3 and www.elsewhere.example/www?d=secret-4`,
    '[reference][1] and ![reference image][2]',
    `[https://bank.example/](${ELSEWHERE}/phish?d=secret-5)`,
    '![tracker](https://evil.example/pixel.png)',
    '![same origin](?d=secret-6) ![titled](icons/icon-192.png?secret-7 "title")',
    `[![icon in a link](icons/icon-192.png)](${ELSEWHERE}/wrapped?d=secret-8)`,
    '',
    `[1]: ${ELSEWHERE}/ref?d=secret-9 "a title"`,
    '[2]: icons/icon-192.png?d=secret-10',
  ].join('\n\n');
  await send(page, hostile);
  const reply = replies(page).last();
  await expect(reply).toContainText('tracker: https://evil.example/pixel.png');
  // Raw HTML shows as the text it is.
  await expect(reply).toContainText('<img src=x onerror="window.pwned = 1">');
  await expect(reply).toContainText('<script>window.pwned = 2</script>');
  await expect(reply).toContainText('<a href="https://elsewhere.example/?d=secret-a">a</a>');
  await expect(reply.locator('script, iframe, form, svg, style, [style], [onerror]')).toHaveCount(
    0,
  );
  // Nothing in the reply can navigate or fetch by itself.
  await expect(
    reply.locator('a[href], [src]:not(img), img:not([src$="icons/icon-192.png"])'),
  ).toHaveCount(0);
  // Only the icon in a link is an image; the rest are their addresses as text.
  await expect(reply.locator('img')).toHaveCount(1);
  await expect(reply).toContainText('[same origin: ?d=secret-6]');
  await expect(reply).toContainText('[reference image: icons/icon-192.png?d=secret-10]');
  // http(s) links are links, each with its full destination shown; other schemes are text.
  await expect(reply.getByRole('link')).toHaveCount(7);
  for (const name of [
    'data link',
    `${ELSEWHERE}/auto?d=secret-2`,
    `${ELSEWHERE}/bare?d=secret-3`,
    'www.elsewhere.example/www?d=secret-4',
    'reference',
    'https://bank.example/',
    'icon in a link',
  ]) {
    await expect(reply.getByRole('link', { name, exact: true })).toHaveCount(1);
  }
  for (const shown of [
    `${ELSEWHERE}/link?d=secret-1`,
    'http://www.elsewhere.example/www?d=secret-4',
    `${ELSEWHERE}/ref?d=secret-9`,
    `${ELSEWHERE}/phish?d=secret-5`,
    `${ELSEWHERE}/wrapped?d=secret-8`,
  ]) {
    await expect(reply).toContainText(shown);
  }
  for (const inert of ['click me', 'case', 'entity', 'spaced', 'page', 'mail']) {
    await expect(reply.getByRole('link', { name: inert })).toHaveCount(0);
    await reply.getByText(inert, { exact: true }).click();
  }
  // A link whose text is an address asks with its real destination.
  await reply.getByRole('link', { name: 'https://bank.example/' }).click();
  const dialog = page.getByRole('dialog', { name: 'Open this link?' });
  await expect(dialog).toContainText(`${ELSEWHERE}/phish?d=secret-5`);
  await expect(dialog).not.toContainText('bank.example');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toBeHidden();
  // The user's own message shows as the text it was.
  await expect(userMessages(page).last()).toContainText('<script>window.pwned = 2</script>');

  // The same, and Markdown nested thousands deep, from an imported file (reasoning included).
  const file = {
    format: 'hearth.conversations',
    version: 1,
    exported: new Date().toISOString(),
    conversations: [
      {
        title: 'hostile file',
        created: Date.now(),
        updated: Date.now(),
        model: 'hearth/echo',
        settings: { temperature: 0.7, max_tokens: null },
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: `${hostile}\n\n${'> '.repeat(3_000)}deep end`,
            reasoning_content: `[thought link](${ELSEWHERE}/thought?d=secret-11) ![thought image](icons/icon-192.png?d=secret-12)`,
          },
        ],
      },
    ],
  };
  await page.getByLabel('Import').setInputFiles({
    name: 'hostile.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(file)),
  });
  await page
    .getByRole('list', { name: 'Conversations' })
    .getByRole('button', { name: 'hostile file', exact: true })
    .click();
  const imported = replies(page).last();
  await expect(imported).toContainText('deep end');
  await expect(imported).toContainText('[tracker: https://evil.example/pixel.png]');
  await imported.getByText('Reasoning').click();
  await expect(imported).toContainText('[thought image: icons/icon-192.png?d=secret-12]');
  await expect(
    imported.locator('a[href], [src]:not(img), img:not([src$="icons/icon-192.png"])'),
  ).toHaveCount(0);
  await imported.getByRole('link', { name: 'thought link' }).click();
  await expect(dialog).toContainText(`${ELSEWHERE}/thought?d=secret-11`);
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();

  await page.waitForTimeout(300);
  expect(await page.evaluate(() => (window as { pwned?: number }).pwned)).toBeUndefined();
  expect(context.pages()).toHaveLength(1);
  expect(reached).toEqual([]);
  expect(secrets).toEqual([]);
  expect(foreign).toEqual([]);
  expect(await cspViolations(page)).toEqual([]);
});

test('Markdown nested thousands deep renders as text instead of a blank reply, and after a reload too', async ({
  page,
}) => {
  await openChat(page);
  const deep = [
    `${'>'.repeat(2_000)} quoted end`,
    `${'> '.repeat(3_000)}spaced end`,
    `${'- '.repeat(3_000)}listed end`,
  ];
  for (const text of deep) {
    await send(page, text);
    await expect(replies(page).last()).toContainText(text.split(' ').at(-2)!);
    await expect(replies(page).last()).toHaveAttribute('aria-busy', 'false');
  }
  // A reply shows as ended a moment before its last text is stored: reloaded only once it is.
  await expect.poll(() => storedText(page)).toContain('listed end');
  await page.reload();
  await expect(replies(page)).toHaveCount(3);
  for (const [i, word] of ['quoted', 'spaced', 'listed'].entries()) {
    await expect(replies(page).nth(i)).toContainText(`${word} end`);
  }
});

test('the page runs under a Content Security Policy that keeps images and connections on the origin', async ({
  page,
}) => {
  await watchLeaks(page);
  await openChat(page);
  const policy = await page
    .locator('meta[http-equiv="Content-Security-Policy"]')
    .getAttribute('content');
  expect(policy).toContain("img-src 'self' data: blob:");
  expect(policy).toMatch(/connect-src 'self' https:\/\/huggingface\.co/);
  expect(policy).toContain(`http://localhost:${MODEL_PORT}`); // the e2e build's self-hosted model host
  expect(policy).toContain("script-src 'self'");
  // A script that tries anyway is stopped by the browser.
  const blocked = await page.evaluate(async () => {
    const img = new Image();
    const loaded = new Promise<string>((resolve) => {
      img.onload = () => resolve('loaded');
      img.onerror = () => resolve('blocked');
    });
    img.src = 'http://127.0.0.1:9/elsewhere.png';
    return loaded;
  });
  expect(blocked).toBe('blocked');
  expect(await cspViolations(page)).toEqual(['img-src http://127.0.0.1:9/elsewhere.png']);
});

test('an edit and a regeneration of any reply keep the old versions, ‹ › switches between them, and Esc in the edit box goes back to Edit', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'first question');
  await expect(replies(page)).toHaveText(['first question']);
  await send(page, 'second question');
  await expect(replies(page)).toHaveText(['first question', 'second question']);

  // The edit box spans the column, grows with its text, and Esc leaves it for its Edit button.
  const edit = page.getByRole('button', { name: 'Edit message 2' });
  await edit.click();
  const box = page.getByLabel('Edit your message');
  await expect(box).toBeFocused();
  const column = (await replies(page).first().boundingBox())!;
  const empty = (await box.boundingBox())!;
  expect(empty.width).toBeGreaterThan(column.width * 0.9);
  await box.fill(Array.from({ length: 8 }, (_, i) => `line ${i}`).join('\n'));
  expect((await box.boundingBox())!.height).toBeGreaterThan(empty.height * 1.5);
  await page.keyboard.press('Escape');
  await expect(box).toBeHidden();
  await expect(edit).toBeFocused();
  await expect(userMessages(page)).toHaveText(['first question', 'second question']);

  // Enter saves an edit, as it sends in the composer; the old question and its reply are kept.
  await page.keyboard.press('Enter');
  await box.fill('a better question');
  await box.press('Enter');
  await expect(userMessages(page)).toHaveText(['first question', 'a better question']);
  await expect(replies(page)).toHaveText(['first question', 'a better question']);
  const edits = page.getByRole('group', { name: 'Versions of message 2' });
  await expect(edits).toContainText('Version 2 of 2');
  await edits.getByRole('button', { name: 'Previous version' }).click();
  await expect(userMessages(page)).toHaveText(['first question', 'second question']);
  await expect(replies(page)).toHaveText(['first question', 'second question']);
  await expect(edits).toContainText('Version 1 of 2');
  // At the first version, focus moves from the disabled Previous to Next.
  await expect(edits.getByRole('button', { name: 'Previous version' })).toBeDisabled();
  await expect(edits.getByRole('button', { name: 'Next version' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(replies(page)).toHaveText(['first question', 'a better question']);

  // Regenerate (here with a system prompt, which the echo engine shows) makes version 2.
  await openSettings(page);
  await page.getByLabel('System prompt').fill('Be brief.');
  await page.getByLabel('System prompt').blur();
  await page.getByRole('button', { name: 'Regenerate reply 2' }).click();
  await expect(replies(page)).toHaveText(['first question', '[Be brief.] a better question']);
  const rewrites = page.getByRole('group', { name: 'Versions of reply 2' });
  await expect(rewrites).toContainText('Version 2 of 2');
  await rewrites.getByRole('button', { name: 'Previous version' }).click();
  await expect(replies(page)).toHaveText(['first question', 'a better question']);
  await expect(rewrites).toContainText('Version 1 of 2');
  // The versions are kept with the conversation.
  await page.reload();
  await expect(replies(page)).toHaveText(['first question', 'a better question']);
  await expect(page.getByRole('group', { name: 'Versions of message 2' })).toContainText(
    'Version 2 of 2',
  );

  // An earlier reply is written again too: what followed it stays with its old version.
  await page.getByRole('button', { name: 'Regenerate reply 1' }).click();
  await expect(replies(page)).toHaveText(['[Be brief.] first question']);
  await expect(userMessages(page)).toHaveText(['first question']);
  const earlier = page.getByRole('group', { name: 'Versions of reply 1' });
  await expect(earlier).toContainText('Version 2 of 2');
  await earlier.getByRole('button', { name: 'Previous version' }).click();
  await expect(userMessages(page)).toHaveText(['first question', 'a better question']);
  await expect(replies(page)).toHaveText(['first question', 'a better question']);
});

test('a long Markdown reply renders readably on a phone: headings to scale, a wide table and highlighted code that the keyboard reaches, Copy off the code', async ({
  page,
}) => {
  await watchLeaks(page);
  await page.setViewportSize({ width: 390, height: 844 });
  await openChat(page);
  const columns = ['Model', 'Size', 'Quantisation', 'Context', 'Licence', 'Downloads'];
  const row = ['Llama-3.2-1B-Instruct', '203MB', 'q4f16_1', '131072', 'Llama-3.2', '1234567'];
  const markdown = [
    '# Choosing a model',
    'Some text before the table.',
    '## The catalogue',
    [columns, columns.map(() => '---'), row].map((cells) => `| ${cells.join(' | ')} |`).join('\n'),
    '### Code',
    '```python\ndef greet(name):\n    return f"Hello, {name}"  # never under a button\n```',
    '> A quote, set apart.',
  ].join('\n\n');
  await send(page, markdown);
  const reply = replies(page).last();
  await expect(reply).toHaveAttribute('aria-busy', 'false');

  // Headings at a reply's scale, not the page title's. The reply renders once more when its code's
  // grammar has loaded (highlighted); in one Firefox CI run the paragraph then read had no computed
  // font size (NaN), likely read as it was replaced: each size is read until it is a number.
  const size = async (selector: string) => {
    let px = NaN;
    await expect
      .poll(async () => {
        px = await reply
          .locator(selector)
          .first()
          .evaluate((el) => parseFloat(getComputedStyle(el).fontSize));
        return px;
      })
      .not.toBeNaN();
    return px;
  };
  const body = await size('p');
  expect(body).toBeGreaterThan(10);
  expect(await size('h1')).toBeLessThanOrEqual(body * 1.35);
  expect(await size('h3')).toBeLessThanOrEqual(body * 1.05);

  // The table scrolls sideways in a region the keyboard reaches; no cell breaks inside a word.
  const table = reply.getByRole('region', { name: 'Table 1 in reply 1' });
  await table.focus();
  await expect(table).toBeFocused();
  expect(await table.evaluate((el) => el.scrollWidth > el.clientWidth)).toBe(true);
  await page.keyboard.press('End');
  await page.keyboard.press('ArrowRight');
  await expect.poll(() => table.evaluate((el) => el.scrollLeft)).toBeGreaterThan(0);
  const lines = await table.locator('td, th').evaluateAll((cells) =>
    cells.map((cell) => {
      const range = document.createRange();
      range.selectNodeContents(cell);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    }),
  );
  expect(lines).toEqual(lines.map(() => 1));

  // The code: its language and Copy above it, highlighted, and focusable.
  const code = reply.getByRole('region', { name: 'Code 1 in reply 1' });
  await expect(reply.getByText('python', { exact: true })).toBeVisible();
  const copy = reply.getByRole('button', { name: 'Copy python code' });
  expect((await copy.boundingBox())!.y + (await copy.boundingBox())!.height).toBeLessThanOrEqual(
    (await code.boundingBox())!.y + 0.5,
  );
  await expect(code.locator('.hljs-keyword').first()).toHaveText('def');
  await expect(code).toHaveText(/^def greet\(name\):/);
  await code.focus();
  await expect(code).toBeFocused();

  // No violation of any impact, light and dark; nothing broke the Content Security Policy.
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    const results = await axe(page)
      .include({ fromShadowDom: ['hearth-app', 'chat-view', 'chat-message'] })
      .analyze();
    expect(violations(results)).toEqual([]);
    expect(results.passes.map((p) => p.id)).toContain('scrollable-region-focusable');
  }
  expect(await cspViolations(page)).toEqual([]);
});

test('an edit saved while a reply streams in is kept in its box, with the reason, and is sent once the reply ends', async ({
  page,
}) => {
  await openChat(page);
  await send(page, 'first question');
  await expect(replies(page)).toHaveText(['first question']);
  await page.getByRole('button', { name: 'Edit message 1' }).click();
  const box = page.getByLabel('Edit your message');
  await box.fill('a better first question');
  // A second message, slowly answered, starts streaming while the edit box is open.
  await setEchoDelay(page, 100);
  await page.getByRole('button', { name: 'Chat options', exact: true }).click();
  await send(page, 'one two three four five six seven eight nine ten eleven twelve');
  await expect(page.getByRole('button', { name: 'Stop' })).toBeVisible();
  await box.press('Enter');
  await expect(box).toHaveValue('a better first question');
  await expect(page.getByRole('button', { name: 'Save and send' })).toBeDisabled();
  await expect(
    page.getByText('A reply is coming in: save when it ends, or stop it.'),
  ).toBeVisible();
  // No message can be edited meanwhile.
  await expect(page.getByRole('button', { name: 'Edit message 2' })).toHaveCount(0);

  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible({ timeout: 15_000 });
  await page.getByRole('button', { name: 'Save and send' }).click();
  await expect(userMessages(page)).toHaveText(['a better first question']);
  await expect(replies(page)).toHaveText(['a better first question']);
});

/** Every conversation the app has stored, as one text (the app at the origin's root). */
function storedText(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open('hearth-chat');
      open.onsuccess = () => resolve(open.result);
      open.onerror = () => reject(open.error);
    });
    try {
      const all = db.transaction('conversations').objectStore('conversations').getAll();
      return await new Promise<string>((resolve, reject) => {
        all.onsuccess = () => resolve(JSON.stringify(all.result));
        all.onerror = () => reject(all.error);
      });
    } finally {
      db.close();
    }
  });
}
