/**
 * axe-core on every view of the app — a chat with a long Markdown reply, the first-run card,
 * Models, Settings (Preferences and Developer), offline — light and dark, at desktop and phone
 * width: no violation of any impact. One app boot per width: the views are visited in turn, each
 * in both themes.
 */
import { expect, type Page } from '@playwright/test';
import { axe, violations } from './axe';
import { test } from './warm-context';
import { composer, openChat, replies, send } from './ui';

/** A reply with what Markdown can hold: headings, a wide table, code, a quote, lists, a link. */
const LONG_MARKDOWN = `# A heading in a reply

Some **bold**, some *italic*, \`inline code\` and a [link](https://example.com/docs).

## A table wider than a phone

| Model | Parameters | Quantisation | Download | Context window |
|---|---|---|---|---|
| Llama 3.2 1B Instruct | 1,235,814,400 | q4f16_1 | 879 MB | 131,072 tokens |
| Qwen2.5 0.5B Instruct | 494,032,768 | Q4_K_M | 398 MB | 32,768 tokens |

## Code

\`\`\`python
def greet(name: str) -> str:
    return f"Hello, {name}! This line is long enough to scroll sideways on a phone screen."
\`\`\`

> A quote, for good measure.

1. one
2. two
   - nested

---

The end.`;

/**
 * Runs axe on the page as it is now and fails on any violation, naming each with its nodes. In
 * the dark theme only the rules about colour can differ from the light one: `contrastOnly` runs
 * those (contrast, and links told apart from text).
 */
async function audit(page: Page, where: string, contrastOnly = false): Promise<void> {
  const builder = axe(page);
  if (contrastOnly) builder.withRules(['color-contrast', 'link-in-text-block']);
  expect(violations(await builder.analyze()), `axe on ${where}`).toEqual([]);
}

/** Audits the view in the light theme (every rule), then in the dark one (colour contrast). */
async function auditBoth(page: Page, where: string): Promise<void> {
  await page.emulateMedia({ colorScheme: 'light' });
  await audit(page, `${where}, light`);
  await page.emulateMedia({ colorScheme: 'dark' });
  await audit(page, `${where}, dark`, true);
  await page.emulateMedia({ colorScheme: 'light' });
}

test('the audit finds what breaks a rule, inside a shadow root too', async ({ page }) => {
  await page.goto('about:blank');
  await page.setContent(`<!doctype html><html lang="en"><title>Rules broken</title>
    <main><h1>A page</h1><p style="color: #ccc; background: #fff">Faint</p><div id="host"></div></main>`);
  await page.evaluate(() => {
    const root = document.getElementById('host')!.attachShadow({ mode: 'open' });
    root.innerHTML = '<button></button>';
  });
  const found = violations(await axe(page).analyze());
  expect(found).toEqual([
    expect.stringMatching(/^button-name \(critical\): .* — #host >>> button$/),
    expect.stringMatching(/^color-contrast \(serious\): .* — p$/),
  ]);
});

const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

for (const size of SIZES) {
  test(`every view passes axe with no violation, light and dark, on a ${size.name}`, async ({
    page,
    context,
  }) => {
    test.setTimeout(120_000);
    await page.setViewportSize({ width: size.width, height: size.height });
    await openChat(page);
    await auditBoth(page, 'the first-run card');

    await send(page, LONG_MARKDOWN);
    await expect(replies(page)).toHaveCount(1);
    await expect(replies(page).locator('[class*="hljs-"]').first()).toBeVisible();
    await auditBoth(page, 'a chat with a long Markdown reply');

    await page.getByRole('button', { name: 'Chat options' }).click();
    await auditBoth(page, 'the chat options');
    await page.getByRole('button', { name: 'Chat options' }).click();

    await page.goto('#/models');
    await expect(page.getByRole('heading', { name: 'Models', level: 2 })).toBeVisible();
    await auditBoth(page, 'Models');

    await page.goto('#/documents');
    await expect(page.getByRole('heading', { name: 'Documents', level: 2 })).toBeVisible();
    await expect(page.getByText('No vector stores yet.')).toBeVisible();
    await auditBoth(page, 'Documents');

    await page.goto('#/settings/preferences');
    await expect(page.getByRole('heading', { level: 2 }).first()).toBeVisible();
    await auditBoth(page, 'Settings → Preferences');

    await page.goto('#/settings/developer');
    await expect(page.getByRole('heading', { level: 2 }).first()).toBeVisible();
    await auditBoth(page, 'Settings → Developer');

    await page.goto('#/chat');
    await context.setOffline(true);
    await expect(page.getByRole('status').filter({ hasText: 'Offline.' })).toBeVisible();
    await expect(composer(page)).toBeVisible();
    await auditBoth(page, 'the chat, offline');
    await context.setOffline(false);

    if (size.name === 'phone') {
      await page.getByRole('button', { name: 'Menu', exact: true }).click();
      await expect(page.getByRole('navigation', { name: 'Views' })).toBeVisible();
      await auditBoth(page, "the phone's drawer");
    }
  });
}
