/**
 * What the site suites (site.spec.ts, site-upgrades.spec.ts) do in a page of a fixture site
 * (sites/make.mjs): open it and wait for its `startHearth()`, and ask hearth/echo through the stock
 * `openai` SDK that the page holds as `OpenAI`.
 */
import type { Page } from '@playwright/test';

/** What a page's `startHearth()` resolved with, as the tests read it. */
export type Started = { baseURL: string; version: string; crossOriginIsolated: boolean };

/**
 * Opens `path` of the site at `origin` and waits for its `startHearth()`, through the one reload
 * it may make (after a hard reload, or to become isolated).
 */
export async function openSite(page: Page, origin: string, path: string): Promise<Started> {
  await page.goto(`${origin}${path}`);
  await page.waitForFunction(() => 'hearth' in globalThis || 'hearthError' in globalThis);
  return page.evaluate(() => {
    const g = globalThis as unknown as { hearth?: Started; hearthError?: { message: string } };
    if (!g.hearth) throw new Error(`startHearth failed: ${g.hearthError?.message}`);
    const hearth = g.hearth;
    return {
      baseURL: hearth.baseURL,
      version: hearth.version,
      crossOriginIsolated: hearth.crossOriginIsolated,
    };
  });
}

/** Asks hearth/echo (or `model`) with the stock SDK, whole or streamed; returns the text. */
export function askWithSdk(page: Page, content: string, stream: boolean, model = 'hearth/echo') {
  return page.evaluate(
    async ({ content, stream, model }) => {
      const g = globalThis as unknown as {
        hearth: { baseURL: string };
        OpenAI: new (options: object) => {
          chat: { completions: { create(body: object): Promise<unknown> } };
        };
      };
      const client = new g.OpenAI({
        baseURL: g.hearth.baseURL,
        apiKey: 'sk-site',
        dangerouslyAllowBrowser: true,
      });
      const messages = [{ role: 'user', content }];
      if (!stream) {
        const reply = (await client.chat.completions.create({ model, messages })) as {
          choices: { message: { content: string } }[];
        };
        return reply.choices[0]?.message.content;
      }
      const chunks = (await client.chat.completions.create({
        model,
        messages,
        stream: true,
      })) as AsyncIterable<{ choices: { delta: { content?: string } }[] }>;
      let text = '';
      for await (const chunk of chunks) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    },
    { content, stream, model },
  );
}
