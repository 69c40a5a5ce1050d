/** Page boot: service-worker control, the engine host, and the status the page shows. */
import { expect, test } from '@playwright/test';
import { openApp } from './helpers';

test('a first visit gets controlled, hosts the engine and says the API is ready', async ({
  page,
}) => {
  await openApp(page);
  expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
  const status = page.locator('api-status');
  await expect(status).toContainText('This tab hosts the engine.');
  await expect(status).toContainText('hearth/echo');
  await expect(status).toContainText(new URL('v1/openai', page.url()).href);
});

test('a hard reload, which bypasses the service worker, ends controlled and ready', async ({
  page,
}) => {
  await openApp(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Page.reload', { ignoreCache: true });
  await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
  expect(await page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
});

test('a second tab uses the engine of the first', async ({ page, context }) => {
  await openApp(page);
  const second = await context.newPage();
  await openApp(second);
  await expect(second.locator('api-status')).toContainText('Another tab hosts the engine.');
  const content = await second.evaluate(async () => {
    const client = new OpenAI({
      baseURL: new URL('v1/openai', location.href).href,
      apiKey: 'k',
      dangerouslyAllowBrowser: true,
    });
    const c = await client.chat.completions.create({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'from the second tab' }],
    });
    return c.choices[0]?.message.content;
  });
  expect(content).toBe('from the second tab');
});
