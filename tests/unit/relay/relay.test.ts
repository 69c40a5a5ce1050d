/**
 * The relay with a tab's end of the link (src/relay-tab/relay-link.ts) running in Node: Node's
 * WebSocket in the browser's place, and the API's own router with the echo engine in the service
 * worker's.
 * The browser, with the real service worker, is tests/e2e/relay.spec.ts.
 */
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import { loadConfig, newKey } from '../../../relay/config.js';
import { PROTOCOL_VERSION, RELAY_PATH, WINDOW_BYTES } from '../../../relay/protocol.js';
import { printable, RateLimitedLog, type Relay } from '../../../relay/relay.js';
import type { Replay } from '../../../src/relay-tab/relay-link';
import { keyFingerprint } from '../../../src/relay-tab/relay-keys';
import { dataUrl, imageMessage, solidPng } from '../../test-images';
import { echoBody, echoStack, eventually, sleep } from '../helpers';
import {
  API_BASE,
  APP,
  type Answer,
  bodyFrame,
  chat,
  cleanups,
  codeOf,
  fakeTab,
  handshake,
  pair,
  rawAnswer,
  rawConnection,
  rawTab,
  relay,
  send,
  socketOf,
  tabLink,
  tempDir,
} from './harness';

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

  it('passes a chat with a photo-sized image (a 10 MB data URL) to the tab, the part untouched', async () => {
    const { relay: r } = await relay();
    await pair(r);
    // A PNG with 7.5 MB after its end: about a phone photo, 10 MB as base64.
    const photo = new Uint8Array(7_500_000);
    photo.set(solidPng(6, 4, [200, 100, 0]));
    const body = JSON.stringify({
      model: 'hearth/echo',
      messages: [imageMessage('what is in it?', dataUrl(photo))],
    });
    expect(body.length).toBeGreaterThan(10_000_000);
    const answer = await send(r, '/v1/openai/chat/completions', { body });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).choices[0].message.content).toBe(
      `what is in it?\n[image: image/png 6×4, ${photo.byteLength} bytes]`,
    );
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
      const { relay: r } = await relay({ host: lanAddress });
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
      const { relay: r } = await relay({ host: '0.0.0.0' });
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
      const status = await handshake(
        `ws://${lanAddress}:${port}${RELAY_PATH}`,
        new URL(APP).origin,
        { host: `localhost:${port}` },
      );
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
    const refused = (origin: string, query: string) => handshake(`${r.wsUrl}?${query}`, origin);
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

describe('the relay paired with a page of a site', () => {
  const PAGE = 'http://127.0.0.1:4173/repo/docs/';

  it('prints a link that opens the page given, its path kept, with the relay, the code and the key’s fingerprint as its query', async () => {
    const { relay: r } = await relay({ app: PAGE });
    expect(r.pairingLink).toBe(
      `${PAGE}?relay=${r.wsUrl}&pair=${codeOf(r)}&fingerprint=${r.fingerprint}`,
    );
  });

  it('keeps the page’s own query and hash in the link, and replaces a pairing query it had', async () => {
    const { relay: r } = await relay({
      app: `${PAGE}?lang=en&relay=old&pair=old&fingerprint=old#intro`,
    });
    expect(r.pairingLink).toBe(
      `${PAGE}?lang=en&relay=${r.wsUrl}&pair=${codeOf(r)}&fingerprint=${r.fingerprint}#intro`,
    );
  });

  it('names its key in the link by a fingerprint the tab computes the same, never by the key', async () => {
    const { relay: r } = await relay({ app: PAGE });
    expect(r.fingerprint).toMatch(/^[0-9a-f]{4}(?:-[0-9a-f]{4}){3}$/);
    expect(r.fingerprint).toBe(await keyFingerprint(r.key));
    expect(r.pairingLink).not.toContain(r.key);
    expect(r.pairingLink).not.toContain('hk-');
    // Another key, another fingerprint.
    expect(await keyFingerprint(newKey())).not.toBe(r.fingerprint);
  });

  it('lets a tab of the page’s origin pair, and answers through it', async () => {
    const { relay: r, log } = await relay({ app: PAGE });
    await pair(r);
    const answer = await send(r, '/v1/chat/completions', { body: chat('from a site') });
    expect(JSON.parse(answer.body).choices[0].message.content).toBe('from a site');
    expect(log.join('\n')).toContain('Paired with a tab of http://127.0.0.1:4173.');
  });
});

describe('the relay refuses before it reads a body', () => {
  const FOUR_MIB = 4 * 1024 * 1024;

  /** Sends a POST's head and the first bytes of its body, never the rest; resolves on the answer. */
  async function headOnly(r: Relay, headers: string[]) {
    const c = rawConnection(r);
    c.socket.write(
      ['POST /v1/chat/completions HTTP/1.1', 'Host: 127.0.0.1', ...headers, '', ''].join('\r\n') +
        'a'.repeat(1000),
    );
    // The body is never sent whole: an answer at all is an answer given before reading it.
    await eventually(c.closed, 3000);
    return rawAnswer(c.received());
  }

  it('a keyless cross-site form post: 401 invalid_api_key, its body never forwarded to the tab', async () => {
    const { relay: r } = await relay();
    const { requests } = await fakeTab(r);
    const answer = await headOnly(r, [
      'Origin: http://evil.example',
      'Content-Type: text/plain',
      `Content-Length: ${FOUR_MIB}`,
    ]);
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({
      error: {
        message: 'You did not provide an API key: send it as `Authorization: Bearer <key>`.',
        type: 'authentication_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
    expect(requests).toHaveLength(0);
  });

  it.each([
    ['no key, not JSON, over the limit', ['Content-Type: text/plain'], 5, 401, 'invalid_api_key'],
    [
      'an empty key, not JSON, over the limit',
      ['Authorization: Bearer ', 'Content-Type: text/plain'],
      5,
      401,
      'invalid_api_key',
    ],
    [
      'a key, not JSON, over the limit',
      ['Authorization: Bearer k', 'Content-Type: application/x-www-form-urlencoded'],
      5,
      415,
      'unsupported_media_type',
    ],
    ['a key, no content type', ['Authorization: Bearer k'], 1, 415, 'unsupported_media_type'],
    [
      // A chat's body may carry images: its limit is 64 MiB (the API's IMAGE_BODY_LIMIT).
      'a key, JSON, over the limit',
      ['Authorization: Bearer k', 'Content-Type: application/json; charset=utf-8'],
      65,
      413,
      'request_too_large',
    ],
  ])(
    'refuses %s in the API’s order of checks (docs/api.md), with the API’s own error',
    async (_what, headers, mib, status, code) => {
      const { relay: r } = await relay();
      const { requests } = await fakeTab(r);
      const length = mib * 1024 * 1024;
      const answer = await headOnly(r, [...headers, `Content-Length: ${length}`]);
      expect(answer.status).toBe(status);
      // What the API itself answers to the same request, the body sent whole.
      const stack = echoStack();
      cleanups.push(() => stack.close());
      const direct = await stack.api.fetch(
        new Request(`${API_BASE}chat/completions`, {
          method: 'POST',
          headers: Object.fromEntries(
            [...headers, `Content-Length: ${length}`].map((h) => h.split(/: ?/, 2)),
          ),
          // Bytes, not text: a string body would bring a content type of its own.
          body: new Uint8Array(length).fill(97),
        }),
      );
      expect(direct.status).toBe(status);
      expect(answer.body).toEqual(await direct.json());
      expect((answer.body as { error: { code: string } }).error.code).toBe(code);
      expect(requests).toHaveLength(0);
    },
  );

  it('answers a refused `Expect: 100-continue` request without asking for its body, and asks for an accepted one’s', async () => {
    const { relay: r } = await relay();
    await pair(r);
    const head = (key: string, length: number) =>
      [
        'POST /v1/chat/completions HTTP/1.1',
        'Host: 127.0.0.1',
        ...(key ? [`Authorization: Bearer ${key}`] : []),
        'Content-Type: application/json',
        `Content-Length: ${length}`,
        'Expect: 100-continue',
        '',
        '',
      ].join('\r\n');
    const refused = rawConnection(r);
    refused.socket.write(head('', 2 * 1024 * 1024));
    await eventually(refused.closed, 3000);
    expect(refused.received()).not.toContain('100 Continue');
    expect(rawAnswer(refused.received()).status).toBe(401);
    const body = chat('after continue');
    const accepted = rawConnection(r);
    accepted.socket.write(head('k', Buffer.byteLength(body)));
    await eventually(() => accepted.received().startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
    accepted.socket.write(body);
    await eventually(() => accepted.received().includes('after continue'));
    expect(accepted.received()).toMatch(/\r\n\r\nHTTP\/1\.1 200 OK/);
  });

  it('forwards a request whose answer needs no body (a GET, a wrong method, an unknown path) without its body', async () => {
    const { relay: r } = await relay();
    const stack = echoStack();
    cleanups.push(() => stack.close());
    const bodies: unknown[] = [];
    await pair(r, (url, init) => {
      bodies.push(init.body);
      return stack.api.fetch(new Request(url, init));
    });
    for (const [method, path, status] of [
      ['POST', '/v1/openai/models', 405],
      ['POST', '/v1/openai/nowhere', 404],
      ['GET', '/v1/openai/models', 401],
    ] as const) {
      // No key: the API's route checks come before its key check, so 405 and 404 still.
      const answer = await send(r, path, {
        method,
        // Node sends a GET's body unframed unless told its length.
        headers: { authorization: '', 'content-type': 'text/plain', 'content-length': '100000' },
        body: 'a'.repeat(100_000),
      });
      expect(answer.status, `${method} ${path}`).toBe(status);
      expect(answer.headers.connection, `${method} ${path}`).toBe('close');
    }
    expect(bodies).toEqual([undefined, undefined, undefined]);
  });

  it.each([
    ['an embedding request', '/v1/embeddings', 4],
    ['a chat request (which may carry images)', '/v1/chat/completions', 64],
  ])(
    'cuts %s without Content-Length off past %i MiB as it arrives: 413, and the tab never sees it',
    async (_what, path, mib) => {
      const { relay: r } = await relay();
      const { requests } = await fakeTab(r);
      const c = rawConnection(r);
      c.socket.write(
        [
          `POST ${path} HTTP/1.1`,
          'Host: 127.0.0.1',
          'Authorization: Bearer k',
          'Content-Type: application/json',
          'Transfer-Encoding: chunked',
          '',
          '',
        ].join('\r\n'),
      );
      const piece = 'a'.repeat(64 * 1024);
      // The limit and 64 KiB, and the body never ends: an answer is the cut.
      for (let i = 0; i < mib * 16 + 1; i += 1) {
        c.socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      }
      await eventually(c.closed, 10_000);
      const answer = rawAnswer(c.received());
      expect(answer.status).toBe(413);
      expect((answer.body as { error: { message: string } }).error.message).toContain(
        String(mib * 1024 * 1024),
      );
      expect(requests).toHaveLength(0);
    },
  );

  it('answers 429 queue_full with retry-after past its cap of requests in flight, and takes them again after', async () => {
    const { relay: r } = await relay({ maxRequests: 3 });
    const { requests, tell } = await fakeTab(r);
    const held = [1, 2, 3].map(() => send(r, '/v1/openai/models'));
    await eventually(() => requests.length === 3);
    const over = await send(r, '/v1/openai/chat/completions', { body: chat('one too many') });
    expect(over.status).toBe(429);
    expect(over.headers['retry-after']).toBe('1');
    expect(JSON.parse(over.body).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'queue_full',
      param: null,
    });
    expect(requests).toHaveLength(3);
    for (const { id } of requests) {
      tell({ type: 'head', id, status: 200, headers: {} });
      tell({ type: 'end', id });
    }
    expect((await Promise.all(held)).map((a) => a.status)).toEqual([200, 200, 200]);
    const again = send(r, '/v1/openai/models');
    await eventually(() => requests.length === 4);
    tell({ type: 'head', id: requests[3]!.id, status: 204, headers: {} });
    tell({ type: 'end', id: requests[3]!.id });
    expect((await again).status).toBe(204);
  });

  it('answers 429 to a body that does not fit in what it holds of bodies at once', async () => {
    const { relay: r } = await relay({ maxBodyBytes: 1024 * 1024 });
    const { requests } = await fakeTab(r);
    // 800 KiB declared, 700 KiB of it sent: held while the rest is awaited.
    const slow = rawConnection(r);
    slow.socket.write(
      [
        'POST /v1/chat/completions HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: Bearer k',
        'Content-Type: application/json',
        `Content-Length: ${800 * 1024}`,
        '',
        '',
      ].join('\r\n') + 'a'.repeat(700 * 1024),
    );
    await sleep(200);
    const second = await send(r, '/v1/openai/chat/completions', {
      body: JSON.stringify({ ...echoBody('x'), pad: 'a'.repeat(400 * 1024) }),
    });
    expect(second.status).toBe(429);
    expect(JSON.parse(second.body).error.code).toBe('queue_full');
    expect(second.headers['retry-after']).toBe('1');
    expect(requests).toHaveLength(0);
    // The slow caller gives up: what it sent is let go, and the same body fits now.
    slow.socket.destroy();
    await sleep(100);
    const third = send(r, '/v1/openai/chat/completions', {
      body: JSON.stringify({ ...echoBody('x'), pad: 'a'.repeat(400 * 1024) }),
    });
    await eventually(() => requests.length === 1);
    expect(requests[0]!.body).not.toBeNull();
    void third.catch(() => undefined);
  });
});

describe('the relay’s connections', () => {
  it('answers a caller while 300 half-sent connections are open, closing the oldest idle ones past its cap', async () => {
    const { relay: r } = await relay({ maxConnections: 50 });
    await pair(r);
    const idle = Array.from({ length: 300 }, () => {
      const c = rawConnection(r);
      c.socket.write('GET /v1/openai/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      return c;
    });
    await eventually(() => idle.every((c) => c.closed() || c.socket.readyState === 'open'), 5000);
    const answer = await send(r, '/v1/openai/models');
    expect(answer.status).toBe(200);
    // The relay kept no more than its cap: the oldest half-sent connections were closed.
    await eventually(() => idle.filter((c) => !c.closed()).length < 50, 3000);
  });

  it('closes a new connection past its cap only when every open one carries a request', async () => {
    const { relay: r } = await relay({ maxConnections: 3 });
    const { requests, tell } = await fakeTab(r);
    // The tab's own socket is not counted: three callers, each waiting for its answer.
    const held = [1, 2, 3].map(() =>
      send(r, '/v1/openai/models', { headers: { connection: 'close' } }),
    );
    await eventually(() => requests.length === 3);
    const fourth = rawConnection(r);
    fourth.socket.write('GET /v1/openai/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await eventually(fourth.closed);
    expect(fourth.received()).toBe('');
    for (const { id } of requests) {
      tell({ type: 'head', id, status: 204, headers: {} });
      tell({ type: 'end', id });
    }
    expect((await Promise.all(held)).map((a) => a.status)).toEqual([204, 204, 204]);
  });

  it('closes a half-sent request after the header timeout, with 408', async () => {
    const { relay: r } = await relay({ headersTimeoutMs: 300 });
    const c = rawConnection(r);
    c.socket.write('GET /v1/openai/models HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const started = Date.now();
    await eventually(c.closed, 3000);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(rawAnswer(c.received()).status).toBe(408);
  });

  it('closes a request whose body never ends after the request timeout', async () => {
    const { relay: r } = await relay({ requestTimeoutMs: 400 });
    await fakeTab(r);
    const c = rawConnection(r);
    c.socket.write(
      [
        'POST /v1/chat/completions HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: Bearer k',
        'Content-Type: application/json',
        'Content-Length: 1000',
        '',
        '{"model":',
      ].join('\r\n'),
    );
    await eventually(c.closed, 3000);
    expect(rawAnswer(c.received()).status).toBe(408);
  });

  it('closes a kept-alive connection once it is idle for the keep-alive timeout', async () => {
    const { relay: r } = await relay({ keepAliveTimeoutMs: 200 });
    const c = rawConnection(r);
    c.socket.write(
      'GET /v1/openai/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer k\r\n\r\n',
    );
    await eventually(() => c.received().startsWith('HTTP/1.1 503'));
    const answered = Date.now();
    await eventually(c.closed, 3000);
    expect(Date.now() - answered).toBeLessThan(1500);
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
    await Promise.all(
      Array.from({ length: 60 }, () => handshake(r.wsUrl, 'http://evil.example\u009b')),
    );
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
    let answered = 0;
    const tab = await rawTab(r, (data, _isBinary, tab) => {
      const message = JSON.parse(String(data));
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
        tab.send(bodyFrame(id, 'fine'));
        tab.send(JSON.stringify({ type: 'end', id }));
      }
    });
    for (let i = 0; i < 2; i += 1) {
      const bad = await send(r, '/v1/openai/models');
      expect(bad.status).toBe(502);
      expect(JSON.parse(bad.body).error.message).toMatch(/cannot forward/);
    }
    const good = await send(r, '/v1/openai/models');
    expect([good.status, good.body]).toEqual([200, 'fine']);
    expect(log.join('\n')).toMatch(/cannot forward/);
    // Not a message at all: the tab is dropped, the relay stays up.
    tab.send('null');
    await eventually(() => !r.paired);
    expect((await send(r, '/v1/openai/models')).status).toBe(503);
  });
});

describe('the relay and what a tab sends', () => {
  /** A request through a tab that answers with `answer`, given up on after 2 s (a hang fails). */
  async function answeredBy(answer: (id: number) => object[]) {
    const { relay: r, log } = await relay();
    // `{ type: 'chunk', id, data }` stands for bytes of the body: a binary message.
    await fakeTab(r, ({ id }, tell, chunk) =>
      answer(id).forEach((message) =>
        'data' in message && typeof message.data === 'string'
          ? chunk(id, message.data)
          : tell(message),
      ),
    );
    const result = await new Promise<Answer & { reason: string }>((resolve, reject) => {
      const req = httpRequest(`${r.baseUrl}/models`, { headers: { authorization: 'Bearer k' } });
      req.setTimeout(2000, () => req.destroy(new Error('no answer within 2 s')));
      req.on('response', (res) => {
        let body = '';
        res.on('data', (part: Buffer) => (body += part.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            reason: res.statusMessage ?? '',
            headers: res.headers,
            body,
          }),
        );
      });
      req.on('error', reject);
      req.end();
    });
    return { result, log, r };
  }

  it.each([100, 101, 103, 199, 42, 600, 1e3, 200.5, '200', null])(
    'answers 502 Bad Gateway, saying why, when the tab sends status %s, which is no final HTTP status',
    async (status) => {
      const { result, r } = await answeredBy((id) => [
        { type: 'head', id, status, headers: { 'content-type': 'text/plain' } },
        { type: 'chunk', id, data: 'body' },
        { type: 'end', id },
      ]);
      expect([result.status, result.reason]).toEqual([502, 'Bad Gateway']);
      expect(result.headers['content-type']).toBe('application/json');
      const { error } = JSON.parse(result.body);
      expect(error).toMatchObject({ type: 'server_error', code: 'upstream_error', param: null });
      expect(error.message).toContain('200–599');
      // The relay goes on.
      expect((await send(r, '/v1/openai/models')).status).toBe(502);
    },
  );

  it('answers 502 Bad Gateway, not “503 OK”, when a header the tab sends cannot be sent', async () => {
    const { result } = await answeredBy((id) => [
      { type: 'head', id, status: 200, headers: { 'x-a': 'a\r\nb' } },
      { type: 'end', id },
    ]);
    expect([result.status, result.reason]).toEqual([502, 'Bad Gateway']);
    const { error } = JSON.parse(result.body);
    expect(error).toMatchObject({ type: 'server_error', code: 'upstream_error' });
    expect(error.message).toMatch(/header/);
  });

  it.each([{ evil: true }, 42, null, ['a'], undefined])(
    'answers 503 Service Unavailable with a message that is text when the tab’s failure message is %s',
    async (message) => {
      const { result } = await answeredBy((id) => [{ type: 'failed', id, message }]);
      expect([result.status, result.reason]).toEqual([503, 'Service Unavailable']);
      const { error } = JSON.parse(result.body);
      expect(error).toEqual({
        message: 'The tab could not answer the request, and did not say why.',
        type: 'unavailable_error',
        param: null,
        code: 'engine_unavailable',
      });
    },
  );

  it('passes a failure message that is text on, at most 1,000 characters of it', async () => {
    const { result } = await answeredBy((id) => [
      { type: 'failed', id, message: `The tab could not replay the request: ${'x'.repeat(5000)}` },
    ]);
    expect(result.status).toBe(503);
    const { message } = JSON.parse(result.body).error;
    expect(message).toMatch(/^The tab could not replay the request: x+…$/);
    expect(message.length).toBeLessThanOrEqual(1001);
  });

  it('ends a stream with an error event whose message is text, whatever the tab’s failure message', async () => {
    const { result } = await answeredBy((id) => [
      { type: 'head', id, status: 200, headers: { 'content-type': 'text/event-stream' } },
      { type: 'chunk', id, data: 'data: {}\n\n' },
      { type: 'failed', id, message: { evil: true } },
    ]);
    const last = result.body.split('\n\n').filter(Boolean).at(-1) ?? '';
    expect(JSON.parse(last.slice('data: '.length)).error.message).toBe(
      'The tab could not answer the request, and did not say why.',
    );
  });
});

describe('the relay when the tab goes during a non-streamed reply', () => {
  it('answers 503 engine_unavailable when the tab goes before the reply began', async () => {
    const { relay: r } = await relay();
    const { tab } = await fakeTab(r, () => tab.terminate());
    const answer = await send(r, '/v1/openai/chat/completions', { body: chat('hi') });
    expect(answer.status).toBe(503);
    const { error } = JSON.parse(answer.body);
    expect(error).toMatchObject({ code: 'engine_unavailable', type: 'unavailable_error' });
    expect(error.message).toMatch(/went away/);
  });

  it('cuts the connection off when the tab goes with a JSON body begun: the caller sees no complete JSON', async () => {
    const { relay: r } = await relay();
    const { tab } = await fakeTab(r, ({ id }, tell, chunk) => {
      tell({ type: 'head', id, status: 200, headers: { 'content-type': 'application/json' } });
      chunk(id, '{"id":"chatcmpl-1","cho');
      setTimeout(() => tab.terminate(), 100);
    });
    const outcome = await new Promise<{ status: number; body: string; complete: boolean }>(
      (resolve) => {
        const req = httpRequest(`${r.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (part: Buffer) => (body += part.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body, complete: true }));
          res.on('error', () => resolve({ status: res.statusCode ?? 0, body, complete: false }));
        });
        req.on('error', () => resolve({ status: 0, body: '', complete: false }));
        req.end(chat('hi'));
      },
    );
    expect(outcome).toEqual({ status: 200, body: '{"id":"chatcmpl-1","cho', complete: false });
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
    const { relay: r, log } = await relay({ heartbeatMs: 50 });
    tabLink(r.wsUrl, {
      credential: { code: codeOf(r) },
      WebSocket: socketOf(new URL(APP).origin, [], false),
    });
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
    const refused = tabLink(r.wsUrl, { credential: { session } });
    await eventually(() => refused.state === 'closed');
    expect(refused.closeReason).toMatch(/refused the pairing/);
  });

  it('lets a reloaded tab back in with its session before its old socket has closed: the new socket replaces the old', async () => {
    const { relay: r, log } = await relay();
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    // On a busy machine the reloaded page can connect before the relay hears the old one close.
    await pair(r, undefined, { session });
    await eventually(() => first.link.state === 'closed');
    expect(first.link.closeReason).toMatch(/reconnected/);
    expect(log.filter((line) => /Paired with a tab/.test(line))).toHaveLength(2);
    const answer = await send(r, '/v1/openai/chat/completions', {
      body: JSON.stringify({ model: 'hearth/echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body).choices[0].message.content).toBe('hi');
  });

  it('ends the pairing when the tab stays away past the grace window: its session pairs no more', async () => {
    const { relay: r, log } = await relay({ reconnectGraceMs: 200 });
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    first.closeTab();
    await eventually(() => !r.paired);
    await eventually(() => /pairing ended/.test(log.at(-1) ?? ''), 2000);
    expect(log.at(-1)).toMatch(/To pair a tab again, open:/);
    const refused = tabLink(r.wsUrl, { credential: { session } });
    await eventually(() => refused.state === 'closed');
    expect(refused.closeReason).toMatch(/refused the pairing/);
    expect(r.paired).toBe(false);
  });

  it('lets a tab back in with its session within the grace window, as after a reload', async () => {
    const { relay: r } = await relay({ reconnectGraceMs: 2000 });
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    first.closeTab();
    await eventually(() => !r.paired);
    await sleep(300);
    await pair(r, undefined, { session });
    expect(r.paired).toBe(true);
  });
});

/**
 * A relay of the test's own making, for the tab's end of the link: it lets the tab in, and once
 * the tab is ready hands it to `onReady`; every message the tab sends after that is in `received`.
 */
async function fakeRelay(
  onReady: (tell: (message: object | Buffer) => void) => void,
  replay: Replay,
): Promise<{ received: { id: number; type: string; message?: string; bytes?: number }[] }> {
  const { WebSocketServer } = await import('ws');
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  await new Promise((resolve) => server.once('listening', resolve));
  const received: { id: number; type: string; message?: string; bytes?: number }[] = [];
  server.on('connection', (ws) => {
    const tell = (message: object | Buffer) =>
      ws.send(Buffer.isBuffer(message) ? message : JSON.stringify(message));
    ws.on('message', (data: Buffer, isBinary) => {
      // Bytes of a response's body: recorded as how many came.
      if (isBinary) {
        received.push({ id: data.readUInt32BE(0), type: 'bytes', bytes: data.length - 4 });
        return;
      }
      const message = JSON.parse(String(data));
      if (message.type === 'ready') onReady(tell);
      else received.push(message);
    });
    tell({
      type: 'hello',
      version: PROTOCOL_VERSION,
      key: 'hk-x',
      base_url: 'http://127.0.0.1/v1',
      session: 's',
    });
  });
  cleanups.push(() => {
    for (const client of server.clients) client.terminate();
  });
  // Ended before the relay's sockets are closed (cleanups run last first).
  tabLink(`ws://127.0.0.1:${(server.address() as { port: number }).port}/relay`, {
    credential: { code: 'c' },
    replay,
  });
  return { received };
}

describe('the tab’s end of the link', () => {
  it('replays only the API’s paths, on its own API, whatever the relay asks', async () => {
    const paths = [
      '/v1/hearth/keys',
      '/v1/hearth/settings',
      '/v1/openai/../hearth/keys',
      '/v1/openai/%2e%2e/hearth/keys',
      '/index.html',
      '/',
      '/v2/models',
      // Another origin named in the path: its path only, on this page's own API.
      'http://evil.example/v1/models',
      '//evil.example/v1/models',
    ];
    const refused = paths.slice(0, -2);
    const replayed: string[] = [];
    const { received } = await fakeRelay(
      (tell) =>
        paths.forEach((path, i) => {
          const body = '{"auth":"any"}';
          tell({
            type: 'request',
            id: i + 1,
            method: 'PATCH',
            path,
            headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
            body: Buffer.byteLength(body),
          });
          tell(bodyFrame(i + 1, body));
        }),
      async (url) => {
        replayed.push(url);
        return new Response('replayed');
      },
    );
    await eventually(
      () => received.filter((m) => m.type === 'failed' || m.type === 'end').length === paths.length,
    );
    expect(replayed).toEqual([`${API_BASE}models`, `${API_BASE}models`]);
    for (const [i, path] of refused.entries()) {
      const answer = received.find((m) => m.id === i + 1);
      expect(answer?.type, path).toBe('failed');
      expect(answer?.message, path).toMatch(/is not an API path/);
    }
  });

  it('sends at most 256 KiB of a response before the relay gives credit, whatever the size of its reads', async () => {
    // Reads of 100,000 bytes: the window is no multiple of them.
    const piece = new Uint8Array(100_000).fill(120);
    let tellRelay: (message: object) => void = () => undefined;
    const { received } = await fakeRelay(
      (tell) => {
        tellRelay = tell;
        tell({
          type: 'request',
          id: 1,
          method: 'GET',
          path: '/v1/models',
          headers: {},
          body: null,
        });
      },
      async () =>
        new Response(
          new ReadableStream<Uint8Array>(
            { pull: (controller) => controller.enqueue(piece) },
            { highWaterMark: 0 },
          ),
        ),
    );
    const sent = () =>
      received.filter((m) => m.type === 'bytes').reduce((sum, m) => sum + (m.bytes ?? 0), 0);
    await eventually(() => sent() > 0);
    await sleep(300);
    expect(sent()).toBe(WINDOW_BYTES);
    tellRelay({ type: 'credit', id: 1, bytes: 50_000 });
    await sleep(300);
    expect(sent()).toBe(WINDOW_BYTES + 50_000);
  });
});

/**
 * Bytes the kernel holds on the TCP connection from `localPort` to `remotePort` on 127.0.0.1, as
 * this end's send and receive queues (Linux's /proc/net/tcp: tx_queue and rx_queue).
 */
async function kernelQueued(localPort: number, remotePort: number): Promise<number> {
  const table = await readFile('/proc/net/tcp', 'utf8');
  for (const line of table.split('\n').slice(1)) {
    const [, local = '', remote = '', , queues = ''] = line.trim().split(/\s+/);
    const port = (address: string) => parseInt(address.split(':')[1] ?? '', 16);
    if (port(local) === localPort && port(remote) === remotePort) {
      const [tx = 0, rx = 0] = queues.split(':').map((hex) => parseInt(hex, 16));
      return tx + rx;
    }
  }
  throw new Error(`no connection ${localPort} → ${remotePort} in /proc/net/tcp`);
}

/**
 * A paired tab whose response to any request is `total` bytes (endless when `total` is Infinity),
 * read only as the link pulls it; `sent` counts the body bytes the tab sent to the relay.
 */
async function pairStreaming(r: Relay, total: number) {
  const counter = { pulled: 0, sent: 0, cancelled: false };
  // Pieces of a size the window is no multiple of, as a service worker's stream reads.
  const piece = new Uint8Array(100_000).fill(120);
  const Counting = class extends NodeWebSocket {
    constructor(url: string) {
      super(url, { origin: new URL(APP).origin });
    }
    override send(data: unknown, ...rest: unknown[]) {
      // Bytes of a body: a binary message, the request's id first.
      if (data instanceof Uint8Array) counter.sent += data.byteLength - 4;
      (super.send as (...args: unknown[]) => void)(data, ...rest);
    }
  } as unknown as typeof WebSocket;
  tabLink(r.wsUrl, {
    credential: { code: codeOf(r) },
    WebSocket: Counting,
    replay: async () => {
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (counter.pulled >= total) return controller.close();
            counter.pulled += piece.byteLength;
            controller.enqueue(piece);
          },
          cancel: () => void (counter.cancelled = true),
        },
        { highWaterMark: 0 },
      );
      return new Response(body, { headers: { 'content-type': 'application/octet-stream' } });
    },
  });
  await eventually(() => r.paired);
  return counter;
}

/**
 * Waits until the response to a caller that reads nothing stops moving, then says how far the tab
 * got ahead of it: the body bytes the tab sent, less what the caller's connection holds (what the
 * caller's process read off it and what the kernel queues on both ends of it).
 */
async function aheadOfCaller(r: Relay, res: IncomingMessage, counter: { sent: number }) {
  const relayPort = Number(new URL(r.origin).port);
  const callerPort = res.socket.localPort ?? 0;
  let last = -1;
  for (;;) {
    await sleep(200);
    const held =
      res.socket.bytesRead +
      (await kernelQueued(callerPort, relayPort)) +
      (await kernelQueued(relayPort, callerPort));
    const ahead = counter.sent - held;
    if (ahead === last) {
      return { ahead, held };
    }
    last = ahead;
  }
}

describe('flow control', () => {
  it.skipIf(process.platform !== 'linux')(
    'lets the tab send at most 256 KiB beyond what a caller that reads nothing has taken, and loses nothing',
    async () => {
      const { relay: r } = await relay();
      const total = 240 * 100_000;
      const counter = await pairStreaming(r, total);
      let res: IncomingMessage | undefined;
      const req = httpRequest(`${r.baseUrl}/models`, { headers: { authorization: 'Bearer k' } });
      req.on('response', (response) => {
        res = response;
        response.pause();
      });
      req.end();
      await eventually(() => res !== undefined);
      const { ahead, held } = await aheadOfCaller(r, res!, counter);
      // A window's worth is sent ahead (the tab is not held back for less)…
      expect(ahead).toBeGreaterThan(WINDOW_BYTES / 2);
      // …and never more: the rest waits in the tab's stream, not in the relay or the tab.
      expect(ahead).toBeLessThanOrEqual(WINDOW_BYTES);
      expect(counter.sent).toBeLessThan(total);
      expect(held).toBeGreaterThan(0);
      let received = 0;
      await new Promise<void>((resolve) => {
        res!.on('data', (part: Buffer) => (received += part.length));
        res!.on('end', () => resolve());
        res!.resume();
      });
      expect(received).toBe(total);
      // 24 MiB through a socket and back: seconds on a busy two-core machine, so not vitest's 5.
    },
    30_000,
  );
});

describe('flow control, when the caller goes away', () => {
  it.skipIf(process.platform !== 'linux')(
    'stops the tab’s reading of an endless response, held at the window, when its caller goes',
    async () => {
      const { relay: r } = await relay();
      const counter = await pairStreaming(r, Infinity);
      let res: IncomingMessage | undefined;
      const req = httpRequest(`${r.baseUrl}/models`, { headers: { authorization: 'Bearer k' } });
      req.on('response', (response) => {
        res = response;
        response.pause();
      });
      req.on('error', () => undefined);
      req.end();
      await eventually(() => res !== undefined);
      const { ahead } = await aheadOfCaller(r, res!, counter);
      expect(ahead).toBeLessThanOrEqual(WINDOW_BYTES);
      const sent = counter.sent;
      req.destroy();
      await eventually(() => counter.cancelled, 3000);
      // It was waiting for credit: nothing more went out once the caller stopped reading.
      expect(counter.sent).toBe(sent);
    },
    15_000,
  );

  it('gives credit back in batches, not for every chunk', async () => {
    const { relay: r } = await relay();
    let credits = 0;
    const chunks = 2000;
    const data200 = Buffer.alloc(200, 'x');
    // The tab keeps to its window, as the real one does: 2000 chunks of 200 bytes (400 kB, as a
    // long reply streams) cannot all go out before credit comes back, so the count is not luck.
    let id = 0;
    let sent = 0;
    let unanswered = 0;
    const pump = (tab: NodeWebSocket) => {
      while (sent < chunks && unanswered + 200 <= WINDOW_BYTES) {
        tab.send(bodyFrame(id, data200));
        sent += 1;
        unanswered += 200;
      }
      if (sent === chunks) tab.send(JSON.stringify({ type: 'end', id }));
    };
    await rawTab(r, (data, _isBinary, tab) => {
      const message = JSON.parse(String(data));
      if (message.type === 'credit') {
        credits += 1;
        unanswered -= message.bytes;
        if (sent < chunks) pump(tab);
      }
      if (message.type !== 'request') return;
      id = message.id;
      tab.send(JSON.stringify({ type: 'head', id, status: 200, headers: {} }));
      pump(tab);
    });
    const answer = await send(r, '/v1/openai/models');
    expect(answer.body.length).toBe(chunks * 200);
    expect(credits).toBeGreaterThan(0);
    // One credit per chunk would be hundreds; a batch is a quarter of the window.
    expect(credits).toBeLessThan(20);
  });
});

describe('the relay’s key', () => {
  it('is made at first start, kept, and readable by the user only', async () => {
    const dir = await tempDir();
    const file = join(dir, 'nested', 'relay.json');
    const { key } = await loadConfig(file);
    expect(key).toMatch(/^hk-[\w-]{32}$/);
    expect((await loadConfig(file)).key).toBe(key);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ key });
  });

  it.skipIf(process.platform === 'win32')(
    'is made readable by the user only when the file was copied in readable by others',
    async () => {
      const dir = await tempDir();
      const file = join(dir, 'relay.json');
      const key = `hk-${'a'.repeat(32)}`;
      await writeFile(file, JSON.stringify({ key }));
      await chmod(file, 0o644);
      expect((await loadConfig(file)).key).toBe(key);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    },
  );

  it('is never replaced silently when the file is damaged', async () => {
    const dir = await tempDir();
    const file = join(dir, 'relay.json');
    await writeFile(file, '{"key": "short"}');
    await expect(loadConfig(file)).rejects.toThrow(/no valid "key"/);
    await writeFile(file, 'not json');
    await expect(loadConfig(file)).rejects.toThrow(/not JSON/);
  });
});
