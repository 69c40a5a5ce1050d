/**
 * The fuzz suite through the real service worker (Chromium): 10,000 generated requests, sent from
 * the page in batches with 24 in flight, each checked against the oracle (tests/fuzz/oracle.ts):
 * status, error code and param, and for valid requests the echo engine's reply and usage exactly,
 * streamed or not. Then 20 valid requests of the fixture GGUF through llama.cpp, its
 * sentence exactly. A failure names the seed and the case; `FUZZ_SEED` reproduces it.
 */
import { expect, test, type Page } from '@playwright/test';
import { fixtureCases, fuzzSeed, generate, type FuzzCase } from '../fuzz/generate';
import { failureMessage, Tally, writeReport, type Answer } from '../fuzz/oracle';
import { runCases } from '../fuzz/run';
import { FIXTURE_PIECES } from '../../scripts/fixture-gguf.mjs';
import { downloadFixture, FIXTURE_ID, FIXTURE_SENTENCE, SENTENCE_TOKENS } from './fixture-model';
import { chromiumOnly, KEY, openApp } from './helpers';
import { ModelServer } from './model-server';

/** One seed for every test of the run: `FUZZ_SEED`, or a random one (printed). */
const SEED = fuzzSeed();
const COUNT = Number(process.env.FUZZ_COUNT ?? 10_000);
/** Requests in flight: under the 32 the queue holds, so that none is answered 429. */
const CONCURRENCY = 24;
/** No answer in this long is a hang (the slowest case, a 2 MiB prompt, takes about a second). */
const TIMEOUT_MS = 20_000;
const COMMAND = 'npx playwright test --project=root tests/e2e/fuzz.spec.ts';

/** Sends `cases` from the page, `CONCURRENCY` at a time; what came back for each. */
function sendFromPage(page: Page, cases: FuzzCase[]): Promise<Answer[]> {
  const requests = cases.map(({ method, path, headers, body }) => ({
    method,
    path,
    headers,
    body,
  }));
  return page.evaluate(
    async ({ requests, concurrency, timeoutMs }) => {
      const encoder = new TextEncoder();
      const bytesOf = (body: (typeof requests)[number]['body']) => {
        if (!body) return undefined;
        if ('bytes' in body) return new Uint8Array(body.bytes);
        return encoder.encode(
          body.parts.map((p) => (typeof p === 'string' ? p : p.repeat.repeat(p.count))).join(''),
        );
      };
      const answers: Answer[] = new Array(requests.length);
      let next = 0;
      const lane = async () => {
        while (next < requests.length) {
          const i = next++;
          const r = requests[i]!;
          const started = performance.now();
          const signal = AbortSignal.timeout(timeoutMs);
          try {
            const response = await fetch(r.path, {
              method: r.method,
              headers: r.headers,
              body: bytesOf(r.body) as BodyInit | undefined,
              signal,
            });
            const text = await response.text();
            answers[i] = {
              status: response.status,
              contentType: response.headers.get('content-type'),
              requestId: response.headers.get('x-request-id'),
              retryAfter: response.headers.get('retry-after'),
              shouldRetry: response.headers.get('x-should-retry'),
              text,
              ms: performance.now() - started,
            };
          } catch (err) {
            answers[i] = {
              status: 0,
              contentType: null,
              requestId: null,
              text: '',
              ms: performance.now() - started,
              failure: signal.aborted ? `no answer in ${timeoutMs} ms` : `fetch failed: ${err}`,
              timedOut: signal.aborted,
            };
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, lane));
      return answers;
    },
    { requests, concurrency: CONCURRENCY, timeoutMs: TIMEOUT_MS },
  );
}

/** `webgpu.available` of the host's status: null until the engine worker has measured the GPU. */
function webgpuAvailable(page: Page): Promise<boolean | null> {
  return page.evaluate(async (KEY) => {
    const response = await fetch('v1/hearth/status', { headers: KEY });
    return ((await response.json()) as { webgpu: { available: boolean | null } }).webgpu.available;
  }, KEY);
}

test(`${COUNT} generated requests through the service worker get what the contract says: status, code, param, the echo reply exactly`, async ({
  page,
  browserName,
}) => {
  chromiumOnly(browserName, 'the same service worker code is fuzzed once, in Chromium');
  test.setTimeout(300_000);
  const seed = SEED;
  console.log(`fuzz (browser): seed ${seed}, ${COUNT} requests`);
  await openApp(page);
  // A model this GPU cannot run is 503 only once the engine worker has measured the GPU.
  await expect.poll(() => webgpuAvailable(page)).toBe(true);
  const started = Date.now();
  const tally = new Tally();
  await runCases(generate(seed, COUNT), (batch) => sendFromPage(page, batch), tally);
  const table = tally.table(
    'fuzz, browser (the real service worker, Chromium, echo engine)',
    seed,
    (Date.now() - started) / 1000,
  );
  console.log(table);
  writeReport('browser', table);
  // The management routes' bodies add nothing that answers (their targets are unreachable); a
  // server added all the same is removed, so that what runs next starts as this run did.
  const added = await page.evaluate(async (KEY) => {
    const list = await (await fetch('v1/hearth/servers', { headers: KEY })).json();
    const names = (list as { data: { name: string }[] }).data.map((s) => s.name);
    for (const name of names) {
      await fetch(`v1/hearth/servers/${encodeURIComponent(name)}`, {
        method: 'DELETE',
        headers: KEY,
      });
    }
    return names;
  }, KEY);
  expect(tally.failures, failureMessage(tally, seed, COMMAND)).toEqual([]);
  expect(tally.hangs).toBe(0);
  expect(tally.repeatedRequestIds).toBe(0);
  expect(tally.unexpectedServerErrors).toBe(0);
  expect(added).toEqual([]);
});

test.describe('the fixture model through llama.cpp', () => {
  const server = new ModelServer();
  test.beforeAll(() => server.start());
  test.afterAll(() => server.stop());

  test('a sample of valid requests gets the fixture’s sentence exactly, cut by max_tokens or stop', async ({
    page,
    browserName,
  }) => {
    chromiumOnly(browserName, 'the same service worker code is fuzzed once, in Chromium');
    test.setTimeout(180_000);
    const seed = SEED;
    await openApp(page);
    await downloadFixture(page);
    const cases = fixtureCases(seed, 20, {
      id: FIXTURE_ID,
      sentence: FIXTURE_SENTENCE,
      pieces: FIXTURE_PIECES,
      tokens: SENTENCE_TOKENS,
    });
    const started = Date.now();
    const tally = new Tally();
    await runCases(cases, (batch) => sendFromPage(page, batch), tally);
    const table = tally.table(
      'fuzz, browser, fixture GGUF (llama.cpp)',
      seed,
      (Date.now() - started) / 1000,
    );
    console.log(table);
    writeReport('browser, fixture model', table);
    expect(tally.failures, failureMessage(tally, seed, COMMAND)).toEqual([]);
  });
});
