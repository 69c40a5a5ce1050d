/**
 * The relay with a tab's end of the link (src/ui/relay-link.ts) running in Node: Node's WebSocket
 * in the browser's place, and the API's own router with the echo engine in the service worker's.
 * The browser, with the real service worker, is tests/e2e/relay.spec.ts.
 */
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import { loadConfig } from '../../../relay/config.js';
import { RELAY_PATH, WINDOW_BYTES } from '../../../relay/protocol.js';
import { printable, RateLimitedLog, startRelay, type Relay } from '../../../relay/relay.js';
import { RelayLink, type Replay } from '../../../src/ui/relay-link';
import { echoBody, echoStack, eventually, sleep } from '../helpers';

const APP = 'http://127.0.0.1:4173/';
const API_BASE = 'http://127.0.0.1:4173/v1/';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function relay(heartbeatMs?: number): Promise<{ relay: Relay; log: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-'));
  const log: string[] = [];
  const started = await startRelay({
    port: 0,
    app: APP,
    configFile: join(dir, 'relay.json'),
    log: (line) => log.push(line),
    ...(heartbeatMs !== undefined && { heartbeatMs }),
  });
  cleanups.push(() => started.close());
  return { relay: started, log };
}

/** A WebSocket as a browser tab of `origin` opens it; each one made is pushed to `made`. */
function socketOf(origin: string, made: NodeWebSocket[] = [], autoPong = true) {
  return class extends NodeWebSocket {
    constructor(url: string) {
      super(url, { origin, autoPong });
      made.push(this);
    }
  } as unknown as typeof WebSocket;
}

const codeOf = (r: Relay) => new URL(r.pairingLink).searchParams.get('pair') ?? '';

/** Pairs a tab whose API is `replay` (the echo stack's by default). */
async function pair(r: Relay, replay?: Replay, credential?: { session: string }) {
  const stack = echoStack();
  cleanups.push(() => stack.close());
  const sockets: NodeWebSocket[] = [];
  const link = new RelayLink({
    url: r.wsUrl,
    credential: credential ?? { code: codeOf(r) },
    apiBase: API_BASE,
    onHello: async () => undefined,
    WebSocket: socketOf(new URL(APP).origin, sockets),
    replay: replay ?? ((url, init) => stack.api.fetch(new Request(url, init))),
  });
  cleanups.push(() => link.state !== 'closed' && link.end());
  await eventually(() => link.state !== 'connecting');
  expect(link.state).toBe('paired');
  await eventually(() => r.paired);
  /** Closes the tab: its socket goes, with no goodbye. */
  const closeTab = () => sockets[0]?.terminate();
  return { link, stack, closeTab };
}

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** An HTTP request to the relay, as curl would make it. */
function send(
  r: Relay,
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${r.origin}${path}`, {
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      headers: {
        authorization: 'Bearer sk-test',
        ...(options.body !== undefined && { 'content-type': 'application/json' }),
        ...options.headers,
      },
    });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(parts).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const chat = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify(echoBody(content, extra));

describe('the relay forwards to the paired tab', () => {
  it('answers a chat completion as the tab’s own API does', async () => {
    const { relay: r, log } = await relay();
    const { stack } = await pair(r);
    expect(log.join('\n')).toContain('Paired with a tab of http://127.0.0.1:4173');
    const relayed = await send(r, '/v1/openai/chat/completions', { body: chat('hello there') });
    const direct = await stack.api.fetch(
      new Request(`${API_BASE}openai/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
        body: chat('hello there'),
      }),
    );
    expect(relayed.status).toBe(200);
    expect(relayed.headers['content-type']).toBe(direct.headers.get('content-type'));
    expect(relayed.headers['x-request-id']).toMatch(/^req_/);
    const normalize = (body: Record<string, unknown>) => ({ ...body, id: 'x', created: 0 });
    expect(normalize(JSON.parse(relayed.body))).toEqual(normalize(await direct.json()));
  });

  it('serves the /v1 aliases and the models, the encoded slash included', async () => {
    const { relay: r } = await relay();
    await pair(r);
    const alias = await send(r, '/v1/chat/completions', { body: chat('via alias') });
    expect(JSON.parse(alias.body).choices[0].message.content).toBe('via alias');
    const models = JSON.parse((await send(r, '/v1/models')).body);
    expect(models.data.map((m: { id: string }) => m.id)).toContain('hearth/echo');
    const one = await send(r, '/v1/openai/models/hearth%2Fecho');
    expect(JSON.parse(one.body).id).toBe('hearth/echo');
  });

  it('streams events as the engine makes them, not at the end', async () => {
    const { relay: r } = await relay();
    await pair(r);
    const arrivals: number[] = [];
    const started = Date.now();
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${r.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
        let text = '';
        res.on('data', (part: Buffer) => {
          arrivals.push(Date.now() - started);
          text += part.toString();
        });
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end(chat('one two three four five', { stream: true, echo_delay_ms: 80 }));
    });
    const events = body.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const words = events
      .slice(0, -1)
      .map((e) => JSON.parse(e.slice('data: '.length)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(words).toBe('one two three four five');
    // Five tokens 80 ms apart: the first arrived long before the last.
    expect(arrivals.length).toBeGreaterThan(2);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(200);
  });

  it('answers many callers at once, each with its own reply', async () => {
    const { relay: r } = await relay();
    await pair(r);
    const contents = Array.from({ length: 12 }, (_, i) => `caller ${i} says ${'word '.repeat(i)}`);
    const answers = await Promise.all(
      contents.map((content, i) =>
        send(r, '/v1/openai/chat/completions', {
          body: chat(content, { stream: i % 2 === 0, echo_delay_ms: 5 }),
        }),
      ),
    );
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(200);
      const text =
        i % 2 === 0
          ? answer.body
              .split('\n\n')
              .filter((e) => e.startsWith('data: {'))
              .map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? '')
              .join('')
          : JSON.parse(answer.body).choices[0].message.content;
      expect(text).toBe(contents[i]);
    });
  });

  it('keeps the API’s own answers: a wrong body, a missing key, a body over the limit', async () => {
    const { relay: r } = await relay();
    await pair(r);
    const notJson = await send(r, '/v1/openai/chat/completions', {
      body: 'model=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(notJson.status).toBe(415);
    expect(JSON.parse(notJson.body).error.code).toBe('unsupported_media_type');
    const noKey = await send(r, '/v1/openai/models', { headers: { authorization: '' } });
    expect(noKey.status).toBe(401);
    const huge = await send(r, '/v1/openai/chat/completions', {
      body: Buffer.alloc(5 * 1024 * 1024, 'a'),
    });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body).error.code).toBe('request_too_large');
    // And the relay still works.
    expect((await send(r, '/v1/openai/models')).status).toBe(200);
  });
});

describe('the relay refuses', () => {
  it('every request while no tab is paired, saying how to pair', async () => {
    const { relay: r } = await relay();
    const answer = await send(r, '/v1/openai/chat/completions', { body: chat('hi') });
    expect(answer.status).toBe(503);
    expect(answer.headers['x-should-retry']).toBe('false');
    const { error } = JSON.parse(answer.body);
    expect(error).toMatchObject({
      code: 'engine_unavailable',
      type: 'unavailable_error',
      param: null,
    });
    expect(error.message).toMatch(/pairing link/);
  });

  it('a Host header that is not this machine’s (DNS rebinding)', async () => {
    const { relay: r } = await relay();
    await pair(r);
    for (const host of ['evil.example', 'evil.example:8788', '127.0.0.1.evil.example']) {
      const answer = await send(r, '/v1/openai/models', { headers: { host } });
      expect(answer.status, host).toBe(403);
      expect(JSON.parse(answer.body).error.code).toBe('forbidden_host');
    }
    for (const host of ['localhost:8788', '127.0.0.1', '[::1]:8788']) {
      expect((await send(r, '/v1/openai/models', { headers: { host } })).status, host).toBe(200);
    }
  });

  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
  it.skipIf(lanAddress === undefined)(
    'a Host other than the network address it was told to serve, when told to serve one',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-'));
      const r = await startRelay({
        port: 0,
        host: lanAddress,
        app: APP,
        configFile: join(dir, 'relay.json'),
        log: () => undefined,
      });
      cleanups.push(() => r.close());
      expect(r.origin).toBe(`http://${lanAddress}:${new URL(r.origin).port}`);
      const get = (host: string) => send(r, '/v1/openai/models', { headers: { host } });
      // Not paired: 503 is the API's answer, as against 403 for a refused Host.
      expect((await get(`${lanAddress}:${new URL(r.origin).port}`)).status).toBe(503);
      expect((await get('evil.example')).status).toBe(403);
    },
  );

  it.skipIf(lanAddress === undefined)(
    'a caller on the network, on every interface (0.0.0.0), whatever Host it claims, and its WebSocket too',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-'));
      const r = await startRelay({
        port: 0,
        host: '0.0.0.0',
        app: APP,
        configFile: join(dir, 'relay.json'),
        log: () => undefined,
      });
      cleanups.push(() => r.close());
      expect(r.exposure).toMatch(/^Callers: this machine only\. .*--host/);
      const port = new URL(r.origin).port;
      // From this machine: answered (503: no tab is paired yet).
      expect((await send(r, '/v1/openai/models', { headers: { host: 'localhost' } })).status).toBe(
        503,
      );
      // From the network, by the machine's network address, claiming to be localhost: refused.
      const fromNetwork = await send(
        { origin: `http://${lanAddress}:${port}` } as Relay,
        '/v1/openai/models',
        { headers: { host: `localhost:${port}` } },
      );
      expect(fromNetwork.status).toBe(403);
      expect(JSON.parse(fromNetwork.body).error.code).toBe('forbidden_peer');
      const socket = new NodeWebSocket(`ws://${lanAddress}:${port}${RELAY_PATH}`, {
        origin: new URL(APP).origin,
        headers: { host: `localhost:${port}` },
      });
      const status = await new Promise<number>((resolve) => {
        socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        socket.on('open', () => resolve(101));
        socket.on('error', () => resolve(0));
      });
      socket.terminate();
      expect(status).toBe(403);
    },
  );

  it('any path that is not the API’s', async () => {
    const { relay: r } = await relay();
    await pair(r);
    for (const path of [
      '/',
      '/index.html',
      '/v1/hearth/keys',
      '/v1/openai/../hearth/keys',
      '/v2/models',
    ]) {
      const answer = await send(r, path);
      expect(answer.status, path).toBe(404);
      expect(JSON.parse(answer.body).error.code).toBe('unknown_url');
    }
  });

  it('a WebSocket of another origin, with a wrong code, with a used code, or while paired', async () => {
    const { relay: r, log } = await relay();
    const refused = (origin: string, query: string) =>
      new Promise<number>((resolve) => {
        const ws = new NodeWebSocket(`${r.wsUrl}?${query}`, { origin });
        ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.on('open', () => resolve(101));
        ws.on('error', () => undefined);
      });
    const app = new URL(APP).origin;
    const code = codeOf(r);
    expect(await refused('http://evil.example', `code=${code}`)).toBe(403);
    expect(await refused('http://localhost:4173', `code=${code}`)).toBe(403);
    expect(await refused(app, 'code=wrong')).toBe(403);
    expect(await refused(app, 'session=wrong')).toBe(403);
    await pair(r);
    expect(await refused(app, `code=${code}`)).toBe(403);
    expect(await refused(app, `code=${codeOf(r)}`)).toBe(409);
    expect(log.join('\n')).toMatch(/origin 'http:\/\/evil.example' is not the app's/);
  });
});

describe('the relay’s log', () => {
  it('shows a caller’s control bytes escaped, never as they are', () => {
    expect(printable('origin \u009b31m evil\u0007 \u001b[2J')).toBe(
      'origin \\x9b31m evil\\x07 \\x1b[2J',
    );
    expect(printable('plain words, é and 日本')).toBe('plain words, é and 日本');
  });

  it('logs refused connections at a bounded rate, and says how many it held back', async () => {
    const { relay: r, log } = await relay();
    const attempts = Array.from({ length: 60 }, async () => {
      const socket = new NodeWebSocket(r.wsUrl, { origin: 'http://evil.example\u009b' });
      await new Promise((resolve) => {
        socket.on('unexpected-response', resolve);
        socket.on('error', resolve);
      });
      socket.terminate();
    });
    await Promise.all(attempts);
    const refused = log.filter((line) => line.startsWith('Refused a connection'));
    expect(refused).toHaveLength(10);
    for (const line of refused) expect(line).not.toMatch(/[\u0080-\u009f]/);
    expect(refused[0]).toContain('\\x9b');
    await r.close();
    expect(log.at(-1)).toBe('… and 50 more like it in 10 s, not shown.');
  });

  it('starts counting again in a new window', async () => {
    const lines: string[] = [];
    const limited = new RateLimitedLog((line) => lines.push(line), 2, 20);
    for (let i = 0; i < 5; i += 1) limited.note(`line ${i}`);
    await sleep(40);
    limited.note('line 5');
    limited.close();
    expect(lines).toEqual([
      'line 0',
      'line 1',
      '… and 3 more like it in 0.02 s, not shown.',
      'line 5',
    ]);
  });
});

describe('the relay and a tab that misbehaves', () => {
  it('fails the one request whose response it cannot forward, and goes on', async () => {
    const { relay: r, log } = await relay();
    const tab = new NodeWebSocket(`${r.wsUrl}?code=${codeOf(r)}`, { origin: new URL(APP).origin });
    cleanups.push(() => tab.terminate());
    let answered = 0;
    tab.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type === 'hello') tab.send(JSON.stringify({ type: 'ready', version: 1 }));
      if (message.type !== 'request') return;
      answered += 1;
      const { id } = message;
      // First a status no HTTP response can have, then a header value with a line break.
      if (answered === 1) tab.send(JSON.stringify({ type: 'head', id, status: 42, headers: {} }));
      else if (answered === 2) {
        tab.send(JSON.stringify({ type: 'head', id, status: 200, headers: { 'x-a': 'a\r\nb' } }));
      } else {
        tab.send(
          JSON.stringify({
            type: 'head',
            id,
            status: 200,
            headers: { 'content-type': 'text/plain' },
          }),
        );
        tab.send(
          JSON.stringify({ type: 'chunk', id, data: Buffer.from('fine').toString('base64') }),
        );
        tab.send(JSON.stringify({ type: 'end', id }));
      }
    });
    await eventually(() => r.paired);
    for (let i = 0; i < 2; i += 1) {
      const bad = await send(r, '/v1/openai/models');
      expect(bad.status).toBe(503);
      expect(JSON.parse(bad.body).error.message).toMatch(/could not forward/);
    }
    const good = await send(r, '/v1/openai/models');
    expect([good.status, good.body]).toEqual([200, 'fine']);
    expect(log.join('\n')).toMatch(/could not be used/);
    // Not a message at all: the tab is dropped, the relay stays up.
    tab.send('null');
    await eventually(() => !r.paired);
    expect((await send(r, '/v1/openai/models')).status).toBe(503);
  });
});

describe('the relay when things go away', () => {
  it('ends a stream with an error event when the tab goes away, and answers 503 after', async () => {
    const { relay: r } = await relay();
    const { closeTab } = await pair(r);
    const body = await new Promise<string>((resolve, reject) => {
      const req = httpRequest(`${r.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      });
      req.on('response', (res) => {
        let text = '';
        // The tab closes after the first event, like a tab closed mid-reply.
        res.once('data', () => closeTab());
        res.on('data', (part: Buffer) => (text += part.toString()));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.end(chat('a b c d e f g h', { stream: true, echo_delay_ms: 100 }));
    });
    const last = body.split('\n\n').filter(Boolean).at(-1) ?? '';
    expect(JSON.parse(last.slice('data: '.length)).error.code).toBe('engine_unavailable');
    await eventually(() => !r.paired);
    expect((await send(r, '/v1/openai/models')).status).toBe(503);
  });

  it('cancels the request in the tab when its caller disconnects', async () => {
    const { relay: r } = await relay();
    let signal: AbortSignal | undefined;
    const stack = echoStack();
    cleanups.push(() => stack.close());
    await pair(r, (url, init) => {
      signal = init.signal ?? undefined;
      return stack.api.fetch(new Request(url, init));
    });
    const req = httpRequest(`${r.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    });
    req.on('response', (res) => res.once('data', () => req.destroy()));
    req.on('error', () => undefined);
    req.end(chat('a b c d e f g h i j k l', { stream: true, echo_delay_ms: 100 }));
    await eventually(() => signal?.aborted === true);
    await eventually(() => stack.queue.counts.running === 0);
  });

  it('drops a tab that stops answering its pings, as a machine asleep does', async () => {
    const { relay: r, log } = await relay(50);
    const link = new RelayLink({
      url: r.wsUrl,
      credential: { code: codeOf(r) },
      apiBase: API_BASE,
      onHello: async () => undefined,
      WebSocket: socketOf(new URL(APP).origin, [], false),
    });
    cleanups.push(() => link.state !== 'closed' && link.end());
    await eventually(() => r.paired);
    await eventually(() => !r.paired, 2000);
    expect(log.join('\n')).toContain('The paired tab went away');
    expect((await send(r, '/v1/openai/models')).status).toBe(503);
  });

  it('lets the same tab back in with its session after a reload, not after the pairing ended', async () => {
    const { relay: r, log } = await relay();
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    first.closeTab();
    await eventually(() => !r.paired);
    const again = await pair(r, undefined, { session });
    again.link.end();
    await eventually(() => !r.paired);
    expect(log.at(-1)).toMatch(/The tab ended the pairing/);
    const refused = new RelayLink({
      url: r.wsUrl,
      credential: { session },
      apiBase: API_BASE,
      onHello: async () => undefined,
      WebSocket: socketOf(new URL(APP).origin),
    });
    await eventually(() => refused.state === 'closed');
    expect(refused.closeReason).toMatch(/refused the pairing/);
  });
});

describe('flow control', () => {
  it('holds the tab’s reading while the caller does not read, and loses nothing', async () => {
    const { relay: r } = await relay();
    const total = 24 * 1024 * 1024;
    const piece = new Uint8Array(64 * 1024).fill(120);
    let pulled = 0;
    await pair(r, async () => {
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (pulled >= total) return controller.close();
            pulled += piece.byteLength;
            controller.enqueue(piece);
          },
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { 'content-type': 'application/octet-stream' } });
    });
    let res: IncomingMessage | undefined;
    const req = httpRequest(`${r.baseUrl}/models`, { headers: { authorization: 'Bearer k' } });
    req.on('response', (response) => {
      res = response;
      response.pause();
    });
    req.end();
    await eventually(() => res !== undefined);
    await sleep(1000);
    // The caller read nothing: what the tab read is its window and what the sockets buffer.
    const held = pulled;
    expect(held).toBeLessThan(total / 2);
    expect(held).toBeGreaterThanOrEqual(WINDOW_BYTES);
    let received = 0;
    await new Promise<void>((resolve) => {
      res!.on('data', (part: Buffer) => (received += part.length));
      res!.on('end', () => resolve());
      res!.resume();
    });
    expect(received).toBe(total);
    // 24 MiB through a socket and back: seconds on a busy two-core machine, so not vitest's 5.
  }, 30_000);
});

describe('flow control, when the caller goes away', () => {
  it('stops the tab’s reading while it waits for credit', async () => {
    const { relay: r } = await relay();
    let cancelled = false;
    let pulled = 0;
    await pair(r, async () => {
      const body = new ReadableStream<Uint8Array>(
        {
          pull: (controller) => {
            pulled += 64 * 1024;
            controller.enqueue(new Uint8Array(64 * 1024));
          },
          cancel: () => void (cancelled = true),
        },
        { highWaterMark: 0 },
      );
      return new Response(body);
    });
    const req = httpRequest(`${r.baseUrl}/models`, { headers: { authorization: 'Bearer k' } });
    req.on('response', (response) => {
      response.pause();
      setTimeout(() => req.destroy(), 300);
    });
    req.on('error', () => undefined);
    req.end();
    await eventually(() => cancelled, 3000);
    // It was waiting: an endless body, read only as far as the window and the sockets allow.
    expect(pulled).toBeLessThan(16 * 1024 * 1024);
  });

  it('gives credit back in batches, not for every chunk', async () => {
    const { relay: r } = await relay();
    const tab = new NodeWebSocket(`${r.wsUrl}?code=${codeOf(r)}`, { origin: new URL(APP).origin });
    cleanups.push(() => tab.terminate());
    let credits = 0;
    const chunks = 2000;
    tab.on('message', (data) => {
      const message = JSON.parse(String(data));
      if (message.type === 'hello') tab.send(JSON.stringify({ type: 'ready', version: 1 }));
      if (message.type === 'credit') credits += 1;
      if (message.type !== 'request') return;
      const { id } = message;
      tab.send(JSON.stringify({ type: 'head', id, status: 200, headers: {} }));
      // 2000 chunks of 200 bytes, as a long reply streams: 400 kB, more than a window.
      const data200 = Buffer.alloc(200, 'x').toString('base64');
      for (let i = 0; i < chunks; i += 1)
        tab.send(JSON.stringify({ type: 'chunk', id, data: data200 }));
      tab.send(JSON.stringify({ type: 'end', id }));
    });
    await eventually(() => r.paired);
    const answer = await send(r, '/v1/openai/models');
    expect(answer.body.length).toBe(chunks * 200);
    expect(credits).toBeGreaterThan(0);
    expect(credits).toBeLessThan(20);
  });
});

describe('the relay’s key', () => {
  it('is made at first start, kept, and readable by the user only', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-'));
    const file = join(dir, 'nested', 'relay.json');
    const { key } = await loadConfig(file);
    expect(key).toMatch(/^hk-[\w-]{32}$/);
    expect((await loadConfig(file)).key).toBe(key);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ key });
  });

  it('is never replaced silently when the file is damaged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-'));
    const file = join(dir, 'relay.json');
    await writeFile(file, '{"key": "short"}');
    await expect(loadConfig(file)).rejects.toThrow(/no valid "key"/);
    await writeFile(file, 'not json');
    await expect(loadConfig(file)).rejects.toThrow(/not JSON/);
  });
});
