/**
 * The app built for a sub-path (HEARTH_BASE=/hearth/), as on a GitHub Pages project site: the
 * API lives under the sub-path and nowhere else.
 */
import { expect, test } from '@playwright/test';
import { openApp } from './helpers';

test.beforeEach(async ({ page }) => {
  await openApp(page);
});

test('serves the SDK base URL under the sub-path, streamed and not', async ({ page }) => {
  const result = await page.evaluate(async () => {
    const baseURL = new URL('v1/openai', location.href).href;
    const client = new OpenAI({ baseURL, apiKey: 'k', dangerouslyAllowBrowser: true });
    const whole = await client.chat.completions.create({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'under a sub-path' }],
    });
    const stream = await client.chat.completions.create({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'streamed too' }],
      stream: true,
    });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.delta.content ?? '';
    return { baseURL, whole: whole.choices[0]?.message.content, streamed };
  });
  expect(result.baseURL).toMatch(/\/hearth\/v1\/openai$/);
  expect(result).toMatchObject({ whole: 'under a sub-path', streamed: 'streamed too' });
});

test('shows the sub-path SDK base URL in the page', async ({ page }) => {
  await expect(page.locator('api-status')).toContainText('/hearth/v1/openai');
});

test('leaves /v1/ outside its scope alone', async ({ page }) => {
  const outside = await page.evaluate(async () => {
    const response = await fetch('/v1/openai/models', { headers: { authorization: 'Bearer k' } });
    return response.headers.get('x-request-id');
  });
  expect(outside).toBeNull();
});
