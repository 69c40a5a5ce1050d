/**
 * A first visit in a fresh profile: the page reloads once, when the new service worker takes
 * control, to become cross-origin isolated (isolation.spec.ts). Nothing a person does meanwhile
 * may be lost to that reload: until the boot knows that no reload is coming, the page says it is
 * starting and offers nothing to type into or open.
 */
import { expect, test, type Page } from '@playwright/test';
import { composer } from './ui';

/** Counts the documents the page loads (a first visit loads two: before and after the reload). */
function countLoads(page: Page): string[] {
  const loads: string[] = [];
  page.on('load', () => loads.push(page.url()));
  return loads;
}

/**
 * Waits until the app, past its reload, has its API ready. The first visit installs the service
 * worker (its precache), which takes a while on a busy machine: longer waits than expect's.
 */
async function settled(page: Page, loads: string[]): Promise<void> {
  await expect.poll(() => loads.length, { timeout: 30_000 }).toBe(2);
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready', { timeout: 30_000 });
  expect(loads).toHaveLength(2);
}

test('text typed into the composer from the moment it shows on a first visit, on through the reload, is all there once the app has settled', async ({
  page,
}) => {
  const loads = countLoads(page);
  await page.goto('./', { waitUntil: 'commit' });
  // Before the reload the page only says that it is starting.
  await expect(page.getByRole('status').filter({ hasText: 'Starting Hearth…' })).toBeVisible();
  await composer(page).click();
  // A person typing on, word after word, until the page has loaded twice (and a little more).
  let typed = '';
  for (let i = 0; (loads.length < 2 || i < 10) && i < 500; i++) {
    const word = `word${i} `;
    await page.keyboard.type(word, { delay: 10 });
    typed += word;
  }
  await settled(page, loads);
  await expect(composer(page)).toHaveValue(typed);
});

test('the "Add a model" panel opened as soon as it can be on a first visit stays open once the app has settled', async ({
  page,
}) => {
  const loads = countLoads(page);
  await page.goto('./#/models', { waitUntil: 'commit' });
  const add = page.getByRole('button', { name: 'Add a model' });
  await add.click();
  await expect(add).toHaveAttribute('aria-expanded', 'true');
  await settled(page, loads);
  await expect(add).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByRole('heading', { name: 'Models' })).toBeVisible();
});

test('a later visit shows the app at once, with no reload and no starting notice', async ({
  page,
}) => {
  const loads = countLoads(page);
  await page.goto('./');
  await settled(page, loads);
  await page.reload({ waitUntil: 'commit' });
  await composer(page).fill('no wait');
  await expect(page.getByRole('status').filter({ hasText: 'Starting Hearth…' })).toHaveCount(0);
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  await expect(composer(page)).toHaveValue('no wait');
  expect(loads).toHaveLength(3);
});
