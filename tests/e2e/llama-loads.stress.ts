/**
 * Not part of `npm test` (`npm run test:stress`, docs/development.md): llama.cpp loaded again and again
 * for `HEARTH_STRESS_SECONDS` (default 300), the chat fixture and the embedding fixture in turn,
 * each load answered. It found the hang that page-workers.ts works around: in Firefox, before the
 * page started llama.cpp's workers, about one load in 60 hung the engine worker in `new Worker`
 * for good. On a hang it prints where the host stands and fails.
 */
import { expect, test } from '@playwright/test';
import { EMBEDDING_FIXTURE_ID, FIXTURE_ID, downloadFixture } from './fixture-model';
import { KEY, openApp } from './helpers';
import { ModelServer } from './model-server';

const server = new ModelServer();
const SECONDS = Number(process.env.HEARTH_STRESS_SECONDS ?? 300);
/** A load and its reply take under a second here: 15 s without an answer is a hang. */
const HANG_MS = 15_000;

test.beforeAll(() => server.start());
test.afterAll(() => server.stop());

test('llama.cpp loads again and again, and every load answers', async ({ page }) => {
  test.setTimeout((SECONDS + 120) * 1000);
  await openApp(page);
  await downloadFixture(page, 'k');
  await downloadFixture(page, 'k', EMBEDDING_FIXTURE_ID);
  const until = Date.now() + SECONDS * 1000;
  let loads = 0;
  for (let round = 0; Date.now() < until; round += 1) {
    // Unload both, load the chat fixture, then load the embedding fixture beside it.
    const kind = (['unload-and-chat', 'chat', 'embed'] as const)[round % 3]!;
    const outcome = await page.evaluate(
      async ({ kind, KEY, FIXTURE_ID, EMBEDDING_FIXTURE_ID, HANG_MS }) => {
        if (kind === 'unload-and-chat') {
          await fetch('v1/hearth/unload', { method: 'POST', headers: KEY });
        }
        const request =
          kind === 'embed'
            ? fetch('v1/openai/embeddings', {
                method: 'POST',
                headers: KEY,
                body: JSON.stringify({ model: EMBEDDING_FIXTURE_ID, input: 'a dog' }),
              })
            : fetch('v1/openai/chat/completions', {
                method: 'POST',
                headers: KEY,
                body: JSON.stringify({
                  model: FIXTURE_ID,
                  messages: [{ role: 'user', content: 'hi' }],
                  max_tokens: 4,
                }),
              });
        const answered = request.then((response) => `HTTP ${response.status}`);
        const hung = new Promise<null>((resolve) => setTimeout(() => resolve(null), HANG_MS));
        const first = await Promise.race([answered, hung]);
        if (first) return first;
        // Does the engine worker still run at all? It answers this on its own, if it does.
        const broadcast = await new Promise<string>((resolve) => {
          const channel = new BroadcastChannel('hearth:status');
          const timer = setTimeout(() => resolve('the engine worker does not answer'), 3000);
          channel.onmessage = (event: MessageEvent<{ type: string; status: unknown }>) => {
            if (event.data.type !== 'status') return;
            clearTimeout(timer);
            resolve(`the engine worker answers: ${JSON.stringify(event.data.status)}`);
          };
          channel.postMessage({ type: 'status/wanted' });
        });
        return `no answer in ${HANG_MS / 1000} s; ${broadcast}`;
      },
      { kind, KEY, FIXTURE_ID, EMBEDDING_FIXTURE_ID, HANG_MS },
    );
    expect(outcome, `round ${round} (${kind}), after ${loads} loads`).toBe('HTTP 200');
    if (kind !== 'chat') loads += 1;
  }
  console.log(`${loads} loads, every one answered`);
});
