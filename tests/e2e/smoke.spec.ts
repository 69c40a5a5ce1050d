import { expect, test } from '@playwright/test';
import { openApp } from './sdk';

test('smoke', async ({ page }) => {
  page.on('console', (m) => console.log('PAGE', m.type(), m.text()));
  await openApp(page);
  const reply = await page.evaluate(async () => {
    const client = new OpenAI({
      baseURL: `${location.origin}/v1/openai`,
      apiKey: 'k',
      dangerouslyAllowBrowser: true,
    });
    const c = await client.chat.completions.create({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'hello there world' }],
    });
    const s = await client.chat.completions.create({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'hello there world' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const ch of s) chunks.push(ch);
    return { c, chunks };
  });
  console.log(JSON.stringify(reply, null, 1));
  expect(reply.c.choices[0]?.message.content).toBe('hello there world');
});
