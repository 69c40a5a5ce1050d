/**
 * The grace window after a paired tab goes away: its session lets it back in for that long, and
 * no longer, whatever sockets come with the session and leave before they say they are ready.
 * Each socket let in is handed the relay's key: a session that never expires hands it out forever.
 */
import { describe, expect, it } from 'vitest';
import { WebSocket as NodeWebSocket } from 'ws';
import type { Relay } from '../../../relay/relay.js';
import { eventually, sleep } from '../helpers';
import { APP, cleanups, codeOf, handshake, pair, relay } from './harness';

/**
 * A socket let in with `query` (`session=…` or `code=…`) that takes the relay's hello and never
 * says it is ready. Resolves with the hello and the socket; rejects when it is refused.
 */
function joinWithoutReady(r: Relay, query: string) {
  const ws = new NodeWebSocket(`${r.wsUrl}?${query}`, { origin: new URL(APP).origin });
  cleanups.push(() => ws.terminate());
  return new Promise<{ ws: NodeWebSocket; hello: { type: string; key: string } }>(
    (resolve, reject) => {
      ws.once('message', (data) => resolve({ ws, hello: JSON.parse(String(data)) }));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once('error', reject);
    },
  );
}

/** The status a handshake with `query` gets: 101 when let in. */
const handshakeWith = (r: Relay, query: string) =>
  handshake(`${r.wsUrl}?${query}`, new URL(APP).origin);

describe('the relay’s grace window', () => {
  it('ends the pairing when the window passes, even after a reconnect that left before it said ready', async () => {
    const { relay: r, log } = await relay({ reconnectGraceMs: 400 });
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    first.closeTab();
    await eventually(() => !r.paired);
    const { ws, hello } = await joinWithoutReady(r, `session=${session}`);
    expect(hello.type).toBe('hello');
    ws.close();
    await eventually(() => /The paired tab did not come back within/.test(log.join('\n')), 3000);
    expect(await handshakeWith(r, `session=${session}`)).toBe(403);
  });

  it('ends the pairing of a tab let in by its code that left before it said ready, once the window passes', async () => {
    const { relay: r, log } = await relay({ reconnectGraceMs: 400 });
    const { ws, hello } = await joinWithoutReady(r, `code=${codeOf(r)}`);
    const session = /** the session this socket was given */ (
      hello as unknown as { session: string }
    ).session;
    ws.close();
    await eventually(() => /did not come back within/.test(log.join('\n')), 3000);
    expect(await handshakeWith(r, `session=${session}`)).toBe(403);
  });

  it('closes a reconnect that has not said ready when the window passes, and its session lets nobody in after', async () => {
    const { relay: r } = await relay({ reconnectGraceMs: 400 });
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    first.closeTab();
    await eventually(() => !r.paired);
    const { ws } = await joinWithoutReady(r, `session=${session}`);
    let closed = false;
    ws.on('close', () => (closed = true));
    await eventually(() => closed, 3000);
    await sleep(50);
    expect(await handshakeWith(r, `session=${session}`)).toBe(403);
    expect(r.paired).toBe(false);
  });

  it('lets a reconnect that says ready within the window stay paired after the window', async () => {
    const { relay: r } = await relay({ reconnectGraceMs: 400 });
    const first = await pair(r);
    const session = first.link.hello?.session ?? '';
    first.closeTab();
    await eventually(() => !r.paired);
    await pair(r, undefined, { session });
    await sleep(700);
    expect(r.paired).toBe(true);
  });
});
