/**
 * The warm context's reset (warm-context.ts) keeps the test's page for the next test and undoes
 * what the test changed in it: the next test finds the page as a fresh one is. A test of another
 * viewport borrows the same context and page, at its size.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';

test.describe.configure({ mode: 'serial' });

/** The page the first test had. */
let changed: Page | undefined;

declare global {
  var leftOver: boolean | undefined;
}

/** The headers a navigation of `page` sends (answered by a route that echoes them). */
async function navigationHeaders(page: Page): Promise<Record<string, string>> {
  await page.route('http://headers.test/', (route) =>
    route.fulfill({
      contentType: 'application/json',
      body: JSON.stringify(route.request().headers()),
    }),
  );
  await page.goto('http://headers.test/');
  return JSON.parse((await page.locator('body').textContent()) ?? '{}') as Record<string, string>;
}

/**
 * The app's icon on another origin (the same server by another name), which the app's service
 * worker does not control: a route sees what the page asks there.
 */
const elsewhere = (baseURL: string | undefined) =>
  `http://localhost:${new URL(baseURL ?? '').port}/favicon.svg`;

test('a test changes its page: an init script, a route, dark media, a phone viewport, headers', async ({
  page,
  baseURL,
}) => {
  await page.addInitScript(() => (globalThis.leftOver = true));
  await page.route(elsewhere(baseURL), (route) => route.fulfill({ body: 'routed' }));
  await page.emulateMedia({ colorScheme: 'dark', reducedMotion: 'reduce' });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.setExtraHTTPHeaders({ 'x-left-over': 'yes' });
  expect(await (await page.goto(elsewhere(baseURL)))?.text()).toBe('routed');
  expect(await page.evaluate(() => globalThis.leftOver)).toBe(true);
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(true);
  expect((await navigationHeaders(page))['x-left-over']).toBe('yes');
  changed = page;
});

test('the next test gets the same page with none of it', async ({ page, baseURL }) => {
  expect(page).toBe(changed);
  expect(page.viewportSize()).toEqual({ width: 1280, height: 720 });
  expect(await navigationHeaders(page)).not.toHaveProperty('x-left-over');
  expect(await page.evaluate(() => globalThis.leftOver)).toBeUndefined();
  expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(false);
  expect(await page.evaluate(() => matchMedia('(prefers-reduced-motion: reduce)').matches)).toBe(
    false,
  );
  expect(await (await page.goto(elsewhere(baseURL)))?.text()).toContain('<svg');
});

const PHONE = { width: 390, height: 844 };

test.describe('a test with a viewport of its own', () => {
  test.use({ viewport: PHONE });

  test('gets the same page at its size, and so does a page it opens', async ({ page, context }) => {
    expect(page).toBe(changed);
    expect(page.viewportSize()).toEqual(PHONE);
    expect((await context.newPage()).viewportSize()).toEqual(PHONE);
  });
});

test('the test after it gets the page back at the size of the rest', async ({ page, context }) => {
  expect(page).toBe(changed);
  expect(page.viewportSize()).toEqual({ width: 1280, height: 720 });
  expect((await context.newPage()).viewportSize()).toEqual({ width: 1280, height: 720 });
});
