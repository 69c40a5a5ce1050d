/**
 * What the relay's tests share: a relay of their own (its key file in a folder removed after the
 * test), a tab paired through the real link (src/relay-tab/relay-link.ts) or one of the test's own
 * making, and callers that speak HTTP as curl does, raw TCP where no HTTP client would, or a
 * WebSocket handshake. What a test makes is undone after it, in `cleanups`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import { PROTOCOL_VERSION } from '../../../relay/protocol.js';
import { startRelay, type Relay, type RelayOptions } from '../../../relay/relay.js';
import { RelayLink, type RelayLinkOptions, type Replay } from '../../../src/relay-tab/relay-link';
import { cleanups } from '../cleanups';
import { echoBody, echoStack, eventually } from '../helpers';

export const APP = 'http://127.0.0.1:4173/';
export const API_BASE = 'http://127.0.0.1:4173/v1/';

/** What a test makes, undone after it (tests/unit/setup.ts). */
export { cleanups };

/** A folder of the test's own, removed after it. */
export async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hearth-relay-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Where a relay of the test's keeps its key: a file not made yet, in a folder removed after. */
export async function configFile(): Promise<string> {
  return join(await tempDir(), 'relay.json');
}

/** A relay of the test's own, on a free port, its log lines in `log`; closed after the test. */
export async function relay(
  options: Partial<RelayOptions> = {},
): Promise<{ relay: Relay; log: string[] }> {
  const log: string[] = [];
  const started = await startRelay({
    port: 0,
    app: APP,
    configFile: await configFile(),
    log: (line) => log.push(line),
    ...options,
  });
  cleanups.push(() => started.close());
  return { relay: started, log };
}

/** A WebSocket as a browser tab of `origin` opens it; each one made is pushed to `made`. */
export function socketOf(origin: string, made: NodeWebSocket[] = [], autoPong = true) {
  return class extends NodeWebSocket {
    constructor(url: string) {
      super(url, { origin, autoPong });
      made.push(this);
    }
  } as unknown as typeof WebSocket;
}

/**
 * The status a WebSocket handshake to `url` gets (101 when let in, 0 when it failed without one);
 * the socket is closed after.
 */
export function handshake(
  url: string,
  origin: string,
  headers: Record<string, string> = {},
): Promise<number> {
  const ws = new NodeWebSocket(url, { origin, headers });
  cleanups.push(() => ws.terminate());
  return new Promise<number>((resolve) => {
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => resolve(101));
    ws.on('error', () => resolve(0));
  }).finally(() => ws.terminate());
}

export const codeOf = (r: Relay) => new URL(r.pairingLink).searchParams.get('pair') ?? '';

/**
 * The tab's end of the link (src/relay-tab/relay-link.ts) to the relay at `url`, opened as a tab of
 * the app opens it (Node's WebSocket, the app's origin) unless `options` say otherwise; ended after
 * the test.
 */
export function tabLink(
  url: string,
  options: Pick<RelayLinkOptions, 'credential'> & Partial<RelayLinkOptions>,
): RelayLink {
  const link = new RelayLink({
    url,
    apiBase: API_BASE,
    onHello: async () => undefined,
    WebSocket: socketOf(new URL(APP).origin),
    ...options,
  });
  cleanups.push(() => link.state !== 'closed' && link.end());
  return link;
}

/** Pairs a tab whose API is `replay` (the echo stack's by default). */
export async function pair(r: Relay, replay?: Replay, credential?: { session: string }) {
  const stack = echoStack();
  cleanups.push(() => stack.close());
  const sockets: NodeWebSocket[] = [];
  const link = tabLink(r.wsUrl, {
    credential: credential ?? { code: codeOf(r) },
    WebSocket: socketOf(new URL(APP).origin, sockets),
    replay: replay ?? ((url, init) => stack.api.fetch(new Request(url, init))),
  });
  await eventually(() => link.state !== 'connecting');
  expect(link.state).toBe('paired');
  await eventually(() => r.paired);
  /** Closes the tab: its socket goes, with no goodbye. */
  const closeTab = () => sockets[0]?.terminate();
  return { link, stack, closeTab };
}

export interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** An HTTP request to the relay, as curl would make it. */
export function send(
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

export const chat = (content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify(echoBody(content, extra));

/** A request as the relay hands it to its tab, its body (sent as a binary message) joined to it. */
export interface Forwarded {
  id: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

/** Bytes of request `id`'s body as the protocol frames them: a binary message, the id first. */
export function bodyFrame(id: number, bytes: Buffer | string): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(id);
  return Buffer.concat([header, Buffer.from(bytes)]);
}

/**
 * A tab's socket of the test's own making, let in with the relay's code: it answers the relay's
 * hello with ready, and hands every other message to `onMessage` (with itself, to answer on).
 * Resolves once the relay counts it paired; terminated after the test.
 */
export async function rawTab(
  r: Relay,
  onMessage: (data: Buffer, isBinary: boolean, tab: NodeWebSocket) => void = () => undefined,
): Promise<NodeWebSocket> {
  const tab = new NodeWebSocket(`${r.wsUrl}?code=${codeOf(r)}`, { origin: new URL(APP).origin });
  cleanups.push(() => tab.terminate());
  tab.on('message', (data: Buffer, isBinary) => {
    if (!isBinary && JSON.parse(String(data)).type === 'hello') {
      tab.send(JSON.stringify({ type: 'ready', version: PROTOCOL_VERSION }));
      return;
    }
    onMessage(data, isBinary, tab);
  });
  await eventually(() => r.paired);
  return tab;
}

/**
 * A tab of the test's own making (a {@link rawTab}): it records each request it is handed (once
 * its body came), and answers only as `onRequest` (or the test, through `tell` and `chunk`) makes
 * it.
 */
export async function fakeTab(
  r: Relay,
  onRequest: (
    request: Forwarded,
    tell: (message: object) => void,
    chunk: (id: number, bytes: Buffer | string) => void,
  ) => void = () => undefined,
) {
  /** Requests whose body has not come yet. */
  const awaiting = new Map<number, Forwarded>();
  const requests: Forwarded[] = [];
  const tab = await rawTab(r, (data, isBinary) => {
    if (isBinary) {
      const request = awaiting.get(data.readUInt32BE(0));
      if (request === undefined) return;
      awaiting.delete(request.id);
      handed({ ...request, body: data.subarray(4) });
      return;
    }
    const message = JSON.parse(String(data));
    if (message.type !== 'request') return;
    if (typeof message.body === 'number' && message.body > 0) awaiting.set(message.id, message);
    else handed({ ...message, body: message.body === null ? null : Buffer.alloc(0) });
  });
  const tell = (message: object) => tab.send(JSON.stringify(message));
  const chunk = (id: number, bytes: Buffer | string) => tab.send(bodyFrame(id, bytes));
  function handed(request: Forwarded) {
    requests.push(request);
    onRequest(request, tell, chunk);
  }
  return { tab, requests, tell, chunk };
}

/** A plain TCP connection to the relay, for requests no HTTP client would send (half-sent ones). */
export function rawConnection(r: Relay) {
  const socket = connect(Number(new URL(r.origin).port), '127.0.0.1');
  let text = '';
  let closed = false;
  socket.on('data', (part: Buffer) => (text += part.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  cleanups.push(() => socket.destroy());
  return { socket, received: () => text, closed: () => closed };
}

/** The status and the JSON body of a raw HTTP/1.1 answer (the relay's errors have a length). */
export function rawAnswer(text: string): { status: number; reason: string; body: unknown } {
  const [, status = '0', reason = ''] = /^HTTP\/1\.1 (\d{3}) ([^\r]*)/.exec(text) ?? [];
  const split = text.indexOf('\r\n\r\n');
  const body = split === -1 ? '' : text.slice(split + 4);
  return { status: Number(status), reason, body: body === '' ? null : JSON.parse(body) };
}
