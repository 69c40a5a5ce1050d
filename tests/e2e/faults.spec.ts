/**
 * Faults and abuse through the real service worker: a generated corpus of bad requests, an engine
 * worker killed mid-stream, a frozen host tab, a client that never reads, and a service worker
 * stopped between two requests of the fixture GGUF through llama.cpp.
 */
import { expect, type Browser, type Page } from '@playwright/test';
import { test } from './warm-context';
import { attachToWorkers } from '../../scripts/cdp-workers.mjs';
import { abusiveCorpus, faultIn, type AbusiveRequest, type Answer } from '../abuse-corpus';
import { askFixture, downloadFixture, FIXTURE_ID, FIXTURE_SENTENCE } from './fixture-model';
import {
  ask,
  chromiumOnly,
  hostStatus,
  KEY,
  lastEvent,
  openApp,
  streamInPage,
  streamed,
  words,
} from './helpers';
import { STALL_MS } from '../../playwright.config';
import { ModelServer } from './model-server';

/** Sends requests from the page, each followed by a normal one; returns what came back. */
function sendAll(page: Page, requests: AbusiveRequest[]) {
  return page.evaluate(
    async ({ requests, KEY }) => {
      const results: { answer: Answer; nextStatus: number }[] = [];
      const normal = JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'ok' }],
      });
      for (const r of requests) {
        // A hang fails the test: every answer must come well within this.
        const signal = AbortSignal.timeout(15_000);
        const response = await fetch(r.path, {
          method: r.method,
          headers: r.headers,
          signal,
          ...(r.body && { body: new Uint8Array(r.body) }),
        });
        const answer = {
          status: response.status,
          contentType: response.headers.get('content-type'),
          requestId: response.headers.get('x-request-id'),
          text: await response.text(),
        };
        const next = await fetch('v1/openai/chat/completions', {
          method: 'POST',
          headers: KEY,
          body: normal,
          signal,
        });
        await next.text();
        results.push({ answer, nextStatus: next.status });
      }
      return results;
    },
    { requests, KEY },
  );
}

test('a generated corpus of bad requests gets OpenAI-shaped 4xx or whole replies, never a hang or a 500', async ({
  page,
}) => {
  test.setTimeout(180_000);
  await openApp(page);
  const corpus = abusiveCorpus(250);
  const results = await sendAll(page, corpus);
  const faults = results.flatMap(({ answer, nextStatus }, i) => {
    const fault =
      faultIn(answer, corpus[i]!.reply) ??
      (nextStatus === 200 ? null : `the next request got ${nextStatus}`);
    return fault ? [`${fault} — for ${JSON.stringify(corpus[i]).slice(0, 300)}`] : [];
  });
  expect(faults).toEqual([]);
  // The corpus reaches past validation, into the engine, not only into 400s.
  const statuses = new Set(results.map((r) => r.answer.status));
  // And valid requests with hostile text were checked against their exact echo reply.
  expect(corpus.filter((r) => r.reply).length).toBeGreaterThan(20);
  for (const status of [200, 400, 401, 415]) expect(statuses).toContain(status);
});

test('extreme requests: 10,000 messages, bodies at and over the limit, deep nesting, bad bytes and headers', async ({
  page,
}) => {
  await openApp(page);
  const results = await page.evaluate(async (KEY) => {
    const LIMIT = 4 * 1024 * 1024;
    const encoder = new TextEncoder();
    const post = async (body: string | Uint8Array, headers: Record<string, string> = KEY) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers,
        body: body as BodyInit,
        signal: AbortSignal.timeout(20_000),
      });
      const text = await response.text();
      const next = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ model: 'hearth/echo', messages: [{ role: 'user', content: 'ok' }] }),
      });
      const json =
        response.headers.get('content-type') === 'application/json' ? JSON.parse(text) : null;
      return {
        status: response.status,
        code: response.ok ? null : json?.error.code,
        next: next.status,
        content: json?.choices?.[0]?.message.content ?? null,
      };
    };
    const chat = (content: unknown, extra = '') =>
      `{"model":"hearth/echo","messages":[{"role":"user","content":${JSON.stringify(content)}}]${extra}}`;
    const padTo = (json: string, size: number) =>
      json + ' '.repeat(size - encoder.encode(json).length);
    const many = Array.from({ length: 10_000 }, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `m${i}`,
    }));
    many.push({ role: 'user', content: 'last' });
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    return {
      tenThousandMessages: await post(JSON.stringify({ model: 'hearth/echo', messages: many })),
      atTheLimit: await post(padTo(chat('at the limit'), LIMIT)),
      overTheLimit: await post(padTo(chat('over the limit'), LIMIT + 1)),
      deepInAnIgnoredField: await post(chat('x', `,"metadata":${deep(100_000)}`)),
      deepWhereItIsRead: await post(
        `{"model":"hearth/echo","messages":[{"role":"user","content":${deep(100_000)}}]}`,
      ),
      invalidUtf8: await post(
        new Uint8Array([
          ...encoder.encode('{"model":"hearth/echo","messages":[{"role":"user","content":"'),
          0xc3,
          0x28,
          ...encoder.encode('"}]}'),
        ]),
      ),
      loneSurrogates: await post(
        '{"model":"hearth/echo","messages":[{"role":"user","content":"a\\ud800b\\udfffc"}]}',
      ),
      lineSeparators: await post(chat('a\u2028b\u2029c', ',"stream":true')),
      noContentType: await post(chat('x'), { authorization: 'Bearer k' }),
      noKey: await post(chat('x'), { 'content-type': 'application/json' }),
      bareBearer: await post(chat('x'), { ...KEY, authorization: 'Bearer' }),
      hugeKey: await post(chat('x'), { ...KEY, authorization: `Bearer ${'k'.repeat(100_000)}` }),
      oddContentType: await post(chat('x'), {
        ...KEY,
        'content-type': 'application/json;;; charset="weird"',
      }),
    };
  }, KEY);
  expect(results).toMatchObject({
    tenThousandMessages: { status: 200, next: 200 },
    atTheLimit: { status: 200, next: 200 },
    overTheLimit: { status: 413, code: 'request_too_large', next: 200 },
    deepInAnIgnoredField: { status: 200, next: 200 },
    deepWhereItIsRead: { status: 400, next: 200 },
    invalidUtf8: { status: 400, code: 'invalid_json', next: 200 },
    loneSurrogates: { status: 200, next: 200 },
    lineSeparators: { status: 200, next: 200 },
    noContentType: { status: 415, next: 200 },
    noKey: { status: 401, next: 200 },
    bareBearer: { status: 401, next: 200 },
    hugeKey: { status: 200, next: 200 },
    oddContentType: { status: 200, next: 200 },
  });
  expect(results.loneSurrogates.content).toBe('a\uFFFDb\uFFFDc');
});

test.describe('the engine worker killed', () => {
  const kill = async (page: Page) => {
    const engine = page.workers().find((w) => w.url().includes('/hearth/worker.js'));
    expect(engine).toBeDefined();
    // The worker ends itself: to the page and the service worker this is a crash.
    await engine!
      .evaluate(() => (globalThis as unknown as { close(): void }).close())
      .catch(() => undefined);
  };

  test('mid-stream: the stream ends with an error event, the worker restarts, the next request works', async ({
    page,
    browserName,
  }) => {
    chromiumOnly(
      browserName,
      'worker.evaluate: Playwright cannot evaluate in a dedicated worker over BiDi',
    );
    await openApp(page);
    const before = (await hostStatus(page)).host.id;
    const stream = streamInPage(page, words(200), 50);
    await expect.poll(() => streamed(page)).toBeGreaterThan(2);
    await kill(page);
    const { events } = await stream;
    expect(lastEvent(events)).toMatchObject({ error: { code: 'engine_unavailable' } });
    expect(await ask(page, 'again')).toEqual({ status: 200, content: 'again' });
    expect((await hostStatus(page)).host.id).not.toBe(before);
  });

  test('before the first token: the request runs on the restarted worker and the client never knows', async ({
    page,
    browserName,
  }) => {
    chromiumOnly(
      browserName,
      'worker.evaluate: Playwright cannot evaluate in a dedicated worker over BiDi',
    );
    await openApp(page);
    const stream = streamInPage(page, words(3), 1500);
    await expect.poll(async () => (await hostStatus(page)).queue.running).toBe(1);
    await kill(page);
    const { status, events } = await stream;
    expect(status).toBe(200);
    expect(events.at(-1)?.data).toBe('[DONE]');
  });
});

test('a frozen host tab: its engine worker runs on, requests end, and nothing hangs', async ({
  context,
  browserName,
}) => {
  chromiumOnly(browserName, 'CDP Page.setWebLifecycleState freezes the tab');
  const host = await context.newPage();
  const client = await context.newPage();
  await openApp(host);
  await openApp(client);
  const stream = streamInPage(client, words(30), 100);
  await expect.poll(() => streamed(client)).toBeGreaterThan(2);
  const cdp = await context.newCDPSession(host);
  await cdp.send('Page.setWebLifecycleState', { state: 'frozen' });
  const { events } = await stream;
  expect(events.at(-1)?.data).toBe('[DONE]');
  expect(await ask(client, 'while frozen')).toEqual({ status: 200, content: 'while frozen' });
  // A service-worker restart needs the host's page to hand over a port again. Chromium (156)
  // still delivers that message to a frozen page; were it not to, the answer would be a 503 in
  // seconds. Either way, no hang.
  const sw = await context.newCDPSession(client);
  await sw.send('ServiceWorker.enable');
  await sw.send('ServiceWorker.stopAllWorkers');
  expect([200, 503]).toContain((await ask(client, 'after a restart')).status);
  await cdp.send('Page.setWebLifecycleState', { state: 'active' });
  expect(await ask(client, 'thawed')).toEqual({ status: 200, content: 'thawed' });
});

test('a stalled engine: a stream that gets no token for the stall limit (60 s; 12 s in the test build) ends with engine_stalled, and the engine serves again', async ({
  page,
  browser,
  browserName,
}) => {
  chromiumOnly(browserName, 'CDP pauses the engine worker in the debugger');
  test.setTimeout(90_000);
  await openApp(page);
  const stream = streamInPage(page, words(100), 100);
  await expect.poll(() => streamed(page)).toBeGreaterThan(2);
  const { workers, close } = await attachToWorkers(browser);
  const engine = workers.find((w) => w.type === 'worker')!;
  await engine.call('Debugger.enable');
  await engine.call('Debugger.pause');
  const { events, seconds } = await stream;
  expect(lastEvent(events)).toMatchObject({
    error: { code: 'engine_stalled', type: 'server_error' },
  });
  expect(seconds).toBeGreaterThan(STALL_MS / 1000);
  expect(seconds).toBeLessThan(STALL_MS / 1000 + 30);
  await engine.call('Debugger.resume');
  await close();
  expect(await ask(page, 'resumed')).toEqual({ status: 200, content: 'resumed' });
  await expect.poll(async () => (await hostStatus(page)).open_ports).toBe(0);
});

/** Bytes used by the service worker's heap alone, after full garbage collections. */
async function serviceWorkerHeap(browser: Browser): Promise<number> {
  const { workers, close } = await attachToWorkers(browser);
  try {
    const sw = workers.find((w) => w.type === 'service_worker')!;
    await sw.call('HeapProfiler.collectGarbage');
    await sw.call('HeapProfiler.collectGarbage');
    return ((await sw.call('Runtime.getHeapUsage')) as { usedSize: number }).usedSize;
  } finally {
    await close();
  }
}

test('a client that never reads: the browser takes its reply, the service worker holds none of it, the engine moves on, the next request is served, and the reply comes whole when read', async ({
  page: kept,
  context,
  browser,
  browserName,
}) => {
  chromiumOnly(browserName, 'CDP reads the service worker’s heap');
  test.setTimeout(120_000);
  // A new page, not the one the warm context kept from the tests before (warm-context.ts): in
  // that one the service worker was seen holding 1.9 MB of the unread stream, not under 1 MiB,
  // after this file's other tests (alone it held less); why is not found yet.
  const page = await context.newPage();
  await kept.close();
  await openApp(page);
  await page.evaluate(async (KEY) => {
    await (
      await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({
          model: 'hearth/echo',
          messages: [{ role: 'user', content: 'warm up' }],
          stream: true,
        }),
      })
    ).text();
  }, KEY);
  const before = await serviceWorkerHeap(browser);
  // 200,000 tokens at full speed: some 45 MB of events.
  await page.evaluate(async (KEY) => {
    const content = Array.from({ length: 200_000 }, (_, i) => `w${i}`).join(' ');
    const g = globalThis as unknown as { unread: Response };
    g.unread = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content }],
        stream: true,
        echo_delay_ms: 0,
      }),
    });
  }, KEY);
  // The browser reads a service worker's stream without waiting for the page (Chromium and
  // Firefox alike): the generation runs to its end, and the engine is free…
  await expect.poll(async () => (await hostStatus(page)).open_ports).toBe(0);
  // …while the service worker holds none of it once the browser has taken what it had queued.
  // The engine ends when the last of its reply is in flight, not read: up to a window (1 MiB of
  // tokens, as bridge/messages.ts counts them) may still be in the service worker's stream then,
  // which a loaded machine's browser drains later (a full `npm test` saw 1.7 MB held at that
  // moment). Holding the stream itself would be some 45 MB.
  await expect
    .poll(async () => (await serviceWorkerHeap(browser)) - before)
    .toBeLessThan(1024 * 1024);
  const served = await page.evaluate(async (KEY) => {
    const started = performance.now();
    const next = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'served meanwhile' }],
      }),
    });
    const body = (await next.json()) as { choices: { message: { content: string } }[] };
    return { content: body.choices[0]?.message.content, ms: performance.now() - started };
  }, KEY);
  expect(served.content).toBe('served meanwhile');
  expect(served.ms).toBeLessThan(5_000);
  // Read at last, the reply is whole.
  const read = await page.evaluate(async () => {
    const text = await (globalThis as unknown as { unread: Response }).unread.text();
    const events = text.trimEnd().split('\n\n');
    return { events: events.length, last: events.at(-1) };
  });
  expect(read).toEqual({ events: 200_002, last: 'data: [DONE]' });
  await expect
    .poll(async () => (await serviceWorkerHeap(browser)) - before)
    .toBeLessThan(1024 * 1024);
});

test.describe('the fixture model through llama.cpp', () => {
  const server = new ModelServer();
  test.beforeAll(() => server.start());
  test.afterAll(() => server.stop());

  test('after the service worker is stopped between two requests, the next one gets the sentence', async ({
    page,
    context,
    browserName,
  }) => {
    chromiumOnly(browserName, 'CDP ServiceWorker.stopAllWorkers');
    await openApp(page);
    await downloadFixture(page);
    expect(await askFixture(page)).toMatchObject({ status: 200, content: FIXTURE_SENTENCE });
    const cdp = await context.newCDPSession(page);
    const running: string[] = [];
    cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) =>
      running.push(...versions.map((v) => v.runningStatus)),
    );
    await cdp.send('ServiceWorker.enable');
    await cdp.send('ServiceWorker.stopAllWorkers');
    // The page's own status requests may start it again at once: that it stopped is what counts.
    await expect.poll(() => running.includes('stopped')).toBe(true);
    expect(await askFixture(page)).toMatchObject({
      status: 200,
      content: FIXTURE_SENTENCE,
      finish_reason: 'stop',
    });
    expect((await hostStatus(page)).loaded_model).toBe(FIXTURE_ID);
  });
});
