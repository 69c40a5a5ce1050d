/**
 * One engine for every tab: the election, a host tab closing mid-request (on the echo engine, and
 * on the fixture GGUF through llama.cpp), service-worker restarts, builds that do not match, and
 * many aborted requests.
 */
import { expect, type Page } from '@playwright/test';
import { test } from './warm-context';
import { E2E_BUILD } from '../../playwright.config';
import {
  askFixture,
  downloadFixture,
  FIXTURE_ID,
  FIXTURE_PATH,
  FIXTURE_SENTENCE,
  SENTENCE_TOKENS,
  streamFixture,
} from './fixture-model';
import {
  chromiumOnly,
  hostStatus,
  KEY,
  lastEvent,
  openApp,
  streamInPage,
  streamed,
  words,
} from './helpers';
import { ModelServer } from './model-server';

test('two tabs: exactly one hosts, and requests from both are served first in, first out', async ({
  context,
}) => {
  const a = await context.newPage();
  const b = await context.newPage();
  await openApp(a);
  await openApp(b);
  await expect(a.locator('api-status')).toContainText('This tab hosts the engine.');
  await expect(b.locator('api-status')).toContainText('Another tab hosts the engine.');
  const locks = await b.evaluate(() => navigator.locks.query());
  expect(locks.held?.filter((l) => l.name === 'hearth:engine-host')).toHaveLength(1);
  expect(locks.pending?.filter((l) => l.name === 'hearth:engine-host')).toHaveLength(1);

  const send = (page: Page, content: string) =>
    page.evaluate(
      async ({ content, KEY }) => {
        const response = await fetch('v1/openai/chat/completions', {
          method: 'POST',
          headers: KEY,
          body: JSON.stringify({
            model: 'hearth/echo',
            messages: [{ role: 'user', content }],
            echo_delay_ms: 150,
          }),
        });
        const body = (await response.json()) as { choices: { message: { content: string } }[] };
        return { content: body.choices[0]?.message.content, at: Date.now() };
      },
      { content, KEY },
    );
  const order = ['a1 x y', 'b1 x y', 'a2 x y', 'b2 x y'];
  const replies: Promise<{ content: string | undefined; at: number }>[] = [];
  for (const content of order) {
    replies.push(send(content.startsWith('a') ? a : b, content));
    await a.waitForTimeout(30);
  }
  // Both tabs' requests wait together, and every tab shows it.
  await expect(b.locator('api-status .queue')).toContainText(/1 running, [12] waiting/);
  const done = await Promise.all(replies);
  expect(done.map((r) => r.content)).toEqual(order);
  const finished = [...done].sort((x, y) => x.at - y.at).map((r) => r.content);
  expect(finished).toEqual(order);

  const status = await hostStatus(b);
  expect(status).toMatchObject({
    host: { build: E2E_BUILD },
    models: ['hearth/echo'],
    queue: { running: 0, waiting: 0 },
  });
  await expect(b.locator('api-status')).toContainText(status.host.id.slice(0, 8));
  await expect(b.locator('api-status .queue')).toHaveText('0 running, 0 waiting');
});

test.describe('the host tab closes', () => {
  test('a running stream ends with an error event within a second, and the other tab takes over', async ({
    context,
  }) => {
    const host = await context.newPage();
    const other = await context.newPage();
    await openApp(host);
    await openApp(other);
    const stream = streamInPage(other, words(100), 100);
    await expect.poll(() => streamed(other)).toBeGreaterThan(2);
    const closedAt = Date.now();
    await host.close();
    const { events } = await stream;
    const last = events.at(-1)!;
    expect(JSON.parse(last.data)).toMatchObject({ error: { code: 'engine_unavailable' } });
    expect(last.at - closedAt).toBeLessThan(1000);
    expect(events.map((e) => e.data)).not.toContain('[DONE]');

    await expect(other.locator('api-status')).toContainText('This tab hosts the engine.');
    const status = await hostStatus(other);
    expect(status.queue).toEqual({ running: 0, waiting: 0 });
  });

  test('a running non-streamed reply completes on the new host, and a queued one is served or refused', async ({
    context,
  }) => {
    const host = await context.newPage();
    const other = await context.newPage();
    await openApp(host);
    await openApp(other);
    await other.evaluate(
      ({ KEY, running }) => {
        const post = (content: string, echo_delay_ms: number) =>
          fetch('v1/openai/chat/completions', {
            method: 'POST',
            headers: KEY,
            body: JSON.stringify({
              model: 'hearth/echo',
              messages: [{ role: 'user', content }],
              echo_delay_ms,
            }),
          });
        const g = globalThis as Record<string, unknown>;
        // The status line of a non-streamed reply comes with its first token.
        g.running = post(running, 100);
        g.queued = post('queued reply', 0);
      },
      { KEY, running: words(20, 'r') },
    );
    await other.evaluate(() => (globalThis as unknown as { running: Promise<Response> }).running);
    await host.close();
    const result = await other.evaluate(async () => {
      const g = globalThis as unknown as { running: Promise<Response>; queued: Promise<Response> };
      const settle = async (p: Promise<Response>) => {
        try {
          const r = await p;
          try {
            return { status: r.status, body: await r.json() };
          } catch (e) {
            return { status: r.status, body: 'BODY ' + String(e) };
          }
        } catch (e) {
          return { status: 0, body: 'FETCH ' + String(e) };
        }
      };
      return { running: await settle(g.running), queued: await settle(g.queued) };
    });
    expect(result.running.status).toBe(200);
    expect(result.running.body.choices[0].message.content).toBe(words(20, 'r'));
    if (result.queued.status === 200) {
      expect(result.queued.body.choices[0].message.content).toBe('queued reply');
    } else {
      expect(result.queued.status).toBe(503);
      expect(result.queued.body.error.code).toMatch(/^engine_/);
    }
    await expect
      .poll(async () => (await hostStatus(other)).queue)
      .toEqual({ running: 0, waiting: 0 });
  });
});

test.describe('the host tab closes mid-generation on the fixture model, through llama.cpp', () => {
  const server = new ModelServer();
  test.beforeAll(() => server.start());
  test.afterAll(() => server.stop());
  test.beforeEach(() => server.reset());

  /** The GGUF requests the model server saw for the fixture model's file. */
  const fixtureRequests = () => server.ggufRequests.filter((r) => r.includes(FIXTURE_PATH));

  test('a running stream ends with an error event, and the next host loads the model from the device and answers the sentence', async ({
    context,
  }) => {
    const host = await context.newPage();
    const other = await context.newPage();
    await openApp(host);
    await openApp(other);
    await downloadFixture(other);
    const downloaded = fixtureRequests().length;
    // Round the sentence until the host goes: far longer than the test.
    const stream = streamFixture(other, { ignore_eos: true, max_tokens: 100_000 });
    await expect.poll(() => streamed(other)).toBeGreaterThan(2);
    expect((await hostStatus(other)).loaded_model).toBe(FIXTURE_ID);
    await host.close();
    const { events } = await stream;
    expect(lastEvent(events)).toMatchObject({ error: { code: 'engine_unavailable' } });
    expect(events.map((e) => e.data)).not.toContain('[DONE]');

    await expect(other.locator('api-status')).toContainText('This tab hosts the engine.');
    const reply = await askFixture(other, { max_tokens: 32 });
    expect(reply).toMatchObject({ status: 200, content: FIXTURE_SENTENCE, finish_reason: 'stop' });
    const status = await hostStatus(other);
    expect(status.loaded_model).toBe(FIXTURE_ID);
    expect(status.queue).toEqual({ running: 0, waiting: 0 });
    // Every byte of the model came from the device: the model server saw nothing new.
    expect(fixtureRequests()).toHaveLength(downloaded);
  });

  test('a running non-streamed reply is run again on the next host, and the client gets the whole sentence', async ({
    context,
    browserName,
  }) => {
    chromiumOnly(
      browserName,
      'worker.evaluate: Playwright cannot evaluate in a dedicated worker over BiDi',
    );
    const host = await context.newPage();
    const other = await context.newPage();
    await openApp(host);
    await openApp(other);
    await downloadFixture(other);
    const hostId = (await hostStatus(other)).host.id;
    // The host's engine worker sends the first token and holds the rest, however fast llama.cpp
    // writes them: the status line is out and the body is not when the tab closes.
    const engine = host.workers().find((w) => w.url().includes('/hearth/worker.js'));
    await engine!.evaluate(() => {
      const post = MessagePort.prototype.postMessage;
      const held = new WeakSet<MessagePort>();
      MessagePort.prototype.postMessage = function (
        this: MessagePort,
        ...args: Parameters<typeof post>
      ) {
        if (held.has(this)) return;
        post.apply(this, args);
        if ((args[0] as { type?: string } | null)?.type === 'chat/tokens') held.add(this);
      } as typeof post;
    });
    await other.evaluate(
      ({ KEY, model }) => {
        (globalThis as Record<string, unknown>).running = fetch('v1/openai/chat/completions', {
          method: 'POST',
          headers: KEY,
          body: JSON.stringify({
            model,
            messages: [{ role: 'user', content: 'Tell me something.' }],
          }),
        });
      },
      { KEY, model: FIXTURE_ID },
    );
    // The status line of a non-streamed reply comes with its first token.
    await other.evaluate(() => (globalThis as unknown as { running: Promise<Response> }).running);
    await host.close();
    const reply = await other.evaluate(async () => {
      const response = await (globalThis as unknown as { running: Promise<Response> }).running;
      const body = (await response.json()) as {
        choices: { message: { content: string }; finish_reason: string }[];
        usage: { completion_tokens: number };
      };
      return {
        status: response.status,
        content: body.choices[0]?.message.content,
        finish_reason: body.choices[0]?.finish_reason,
        completion_tokens: body.usage.completion_tokens,
      };
    });
    expect(reply).toEqual({
      status: 200,
      content: FIXTURE_SENTENCE,
      finish_reason: 'stop',
      completion_tokens: SENTENCE_TOKENS,
    });
    // It ran on the new host, which loaded the model for it.
    const status = await hostStatus(other);
    expect(status.host.id).not.toBe(hostId);
    expect(status.loaded_model).toBe(FIXTURE_ID);
  });
});

test('a queued request whose page closed is dropped when it reaches the front', async ({
  context,
}) => {
  const host = await context.newPage();
  const leaving = await context.newPage();
  await openApp(host);
  await openApp(leaving);
  const running = host.evaluate(async (KEY) => {
    const response = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'a b c d e' }],
        echo_delay_ms: 100,
      }),
    });
    return response.status;
  }, KEY);
  // 10 s before its first token: had it reached the engine, the queue would stay busy that long.
  await leaving.evaluate(
    ({ KEY, content }) =>
      void fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({
          model: 'hearth/echo',
          messages: [{ role: 'user', content }],
          echo_delay_ms: 10_000,
        }),
      }),
    { KEY, content: words(100) },
  );
  await expect.poll(async () => (await hostStatus(host)).queue.waiting).toBe(1);
  await leaving.close();
  expect(await running).toBe(200);
  await expect
    .poll(async () => (await hostStatus(host)).queue, { timeout: 5000 })
    .toEqual({ running: 0, waiting: 0 });
  expect((await hostStatus(host)).open_ports).toBe(0);
});

test('after the service worker is stopped the next request succeeds, and a host that closes later is noticed at once', async ({
  context,
  browserName,
}) => {
  chromiumOnly(browserName, 'CDP ServiceWorker.stopAllWorkers');
  const host = await context.newPage();
  const other = await context.newPage();
  await openApp(host);
  await openApp(other);
  const cdp = await context.newCDPSession(other);
  await cdp.send('ServiceWorker.enable');
  await cdp.send('ServiceWorker.stopAllWorkers');

  const reply = await other.evaluate(async (KEY) => {
    const response = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'after restart' }],
      }),
    });
    return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0]
      ?.message.content;
  }, KEY);
  expect(reply).toBe('after restart');

  // The restarted service worker asked for the host's lock again: a closing host is noticed at once.
  const stream = streamInPage(other, words(100), 100);
  await expect.poll(() => streamed(other)).toBeGreaterThan(1);
  const closedAt = Date.now();
  await host.close();
  const { events } = await stream;
  expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ error: { code: 'engine_unavailable' } });
  expect(events.at(-1)!.at - closedAt).toBeLessThan(1000);
});

test.describe('builds', () => {
  test('the service worker refuses a host of another protocol and keeps serving with its own', async ({
    page,
  }) => {
    await openApp(page);
    const reply = await page.evaluate(async () => {
      const { port1, port2 } = new MessageChannel();
      const answer = new Promise<unknown>((resolve) =>
        navigator.serviceWorker.addEventListener('message', (e) => {
          if ((e.data as { hostId?: string }).hostId === 'impostor') resolve(e.data);
        }),
      );
      navigator.serviceWorker.controller!.postMessage(
        { type: 'host/attach', protocol: 0, build: 'older-build', hostId: 'impostor', port: port2 },
        [port2],
      );
      const result = await answer;
      port1.close();
      return result;
    });
    expect(reply).toMatchObject({ type: 'host/refused', hostId: 'impostor' });
    expect((reply as { reason: string }).reason).toContain('older-build');
    expect((await hostStatus(page)).host.build).toBe(E2E_BUILD);
  });

  test.describe('on a first visit', () => {
    // The loader must come from the network, not from an installed worker's precache.
    test.use({ freshContext: true });
    test('a tab whose Hearth loader is of an older build reloads itself once, and then hosts', async ({
      page,
    }) => {
      const messages: string[] = [];
      page.on('console', (m) => messages.push(m.text()));
      // The first load gets Hearth's loader from the network: serve it as an older build. (A
      // first visit reloads for cross-origin isolation before it joins the election, and the
      // reload's loader is the service worker's: say the reload was tried, so that it stays.)
      await page.addInitScript(() => sessionStorage.setItem('hearth:reloaded-for-isolation', '1'));
      let served = 0;
      await page.route('**/hearth/hearth.js', async (route) => {
        served += 1;
        const response = await route.fetch();
        const body = (await response.text()).replaceAll(E2E_BUILD, 'e2e-older-build');
        await route.fulfill({ response, body });
      });
      await page.goto('./');
      await expect(page.locator('api-status')).toHaveAttribute('state', 'ready');
      await expect(page.locator('api-status')).toContainText('This tab hosts the engine.');
      expect(served).toBeGreaterThan(0);
      expect(
        messages.filter((m) => m.includes('e2e-older-build') && m.includes('reloading')),
      ).toHaveLength(1);
      expect((await hostStatus(page)).host.build).toBe(E2E_BUILD);
    });
  });
});

test('200 requests aborted at random points leave no open port and nothing queued', async ({
  page,
}) => {
  await openApp(page);
  // A third aborted at a random moment (most while queued), a third as their headers arrive, a
  // third (streamed) after their first event: before the reply starts and in the middle of it.
  const outcomes = await page.evaluate(async (KEY) => {
    const tally: Record<string, number> = {};
    const count = (outcome: string) => (tally[outcome] = (tally[outcome] ?? 0) + 1);
    const one = async (i: number) => {
      const abort = new AbortController();
      const point = i % 3;
      if (point === 0) setTimeout(() => abort.abort(), Math.random() * 300);
      let response: Response;
      try {
        response = await fetch('v1/openai/chat/completions', {
          method: 'POST',
          headers: KEY,
          signal: abort.signal,
          body: JSON.stringify({
            model: 'hearth/echo',
            messages: [{ role: 'user', content: 'a b c d e f g h i j' }],
            stream: point === 2 || i % 2 === 0,
            echo_delay_ms: 3,
          }),
        });
      } catch (err) {
        count(abort.signal.aborted ? 'aborted before the reply' : `failed: ${String(err)}`);
        return;
      }
      const reader = response.body!.getReader();
      if (point === 1) abort.abort();
      let text = '';
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          text += new TextDecoder().decode(value);
          if (point === 2) abort.abort();
        }
      } catch (err) {
        count(
          abort.signal.aborted
            ? `aborted in the reply (${response.status})`
            : `failed in the reply: ${String(err)}`,
        );
        return;
      }
      if (response.status === 429) {
        count(`429 ${(JSON.parse(text) as { error: { code: string } }).error.code}`);
        return;
      }
      if (response.status !== 200) {
        count(`status ${response.status}`);
        return;
      }
      const whole = response.headers.get('content-type')?.startsWith('text/event-stream')
        ? text.endsWith('data: [DONE]\n\n')
        : (JSON.parse(text) as { choices: { message: { content: string } }[] }).choices[0]?.message
            .content === 'a b c d e f g h i j';
      // Aborted too late to stop it: the whole reply, nothing less.
      count(whole ? 'whole reply' : `cut reply: ${text.slice(-100)}`);
    };
    await Promise.all(Array.from({ length: 200 }, (_, i) => one(i)));
    return tally;
  }, KEY);
  // Each ended as it should: aborted, answered whole, or refused as the queue was full.
  const allowed = [
    'aborted before the reply',
    'aborted in the reply (200)',
    'aborted in the reply (429)',
    'whole reply',
    '429 queue_full',
  ];
  expect(Object.keys(outcomes).filter((o) => !allowed.includes(o))).toEqual([]);
  expect(outcomes['aborted before the reply']).toBeGreaterThan(0);
  expect(outcomes['aborted in the reply (200)']).toBeGreaterThan(0);
  await expect
    .poll(async () => {
      const status = await hostStatus(page);
      return { queue: status.queue, open_ports: status.open_ports };
    })
    .toEqual({ queue: { running: 0, waiting: 0 }, open_ports: 0 });
  // And the engine still answers.
  const reply = await page.evaluate(async (KEY) => {
    const response = await fetch('v1/openai/chat/completions', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({
        model: 'hearth/echo',
        messages: [{ role: 'user', content: 'still here' }],
      }),
    });
    return response.status;
  }, KEY);
  expect(reply).toBe(200);
});
