/**
 * WebSocket handshakes the relay refuses, from callers that keep their end of the connection
 * open: each refused socket must close, and count against the relay's connections until it does,
 * or enough of them exhaust the process's descriptors and every later caller fails.
 */
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { RELAY_PATH } from '../../../relay/protocol.js';
import type { Relay } from '../../../relay/relay.js';
import { eventually, sleep } from '../helpers';
import { APP, cleanups, pair, relay, send } from './harness';

/**
 * A WebSocket handshake with a wrong code, over a connection that never closes its own end: it
 * takes the relay's refusal and its FIN, and sends nothing back.
 */
function refusedHandshake(r: Relay) {
  const socket: Socket = connect({
    port: Number(new URL(r.origin).port),
    host: '127.0.0.1',
    allowHalfOpen: true,
  });
  let text = '';
  let closed = false;
  socket.on('data', (part: Buffer) => (text += part.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  socket.write(
    [
      `GET ${RELAY_PATH}?code=wrong HTTP/1.1`,
      'Host: 127.0.0.1',
      `Origin: ${new URL(APP).origin}`,
      'Connection: Upgrade',
      'Upgrade: websocket',
      'Sec-WebSocket-Version: 13',
      'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
      '',
      '',
    ].join('\r\n'),
  );
  cleanups.push(() => socket.destroy());
  return {
    received: () => text,
    closed: () => closed,
    /**
     * Writes a byte: a socket the relay still holds takes it in silence, one it closed answers
     * with a reset, which the next write here finds and closes this end.
     */
    probe: () => {
      if (!closed && socket.writable) socket.write('x');
    },
  };
}

describe('the relay and refused WebSocket handshakes', () => {
  it('closes refused handshakes whose callers keep their end open, counts them against its cap, and still answers a GET and a pairing', async () => {
    const { relay: r, log } = await relay({ maxConnections: 20 });
    const refused = Array.from({ length: 100 }, () => refusedHandshake(r));
    // Each was refused (403), or closed to make room for a later one.
    await eventually(
      () => refused.every((c) => c.closed() || c.received().startsWith('HTTP/1.1 403')),
      5000,
    );
    expect(log.join('\n')).toMatch(/Refused a connection: no valid pairing code/);
    // Counted against the cap: at most 20 of them are still held by the relay.
    for (let i = 0; i < 3; i += 1) {
      for (const c of refused) c.probe();
      await sleep(50);
    }
    expect(refused.filter((c) => !c.closed()).length).toBeLessThanOrEqual(20);
    // And the rest close too, without their callers doing anything but waiting.
    await eventually(() => {
      for (const c of refused) c.probe();
      return refused.every((c) => c.closed());
    }, 5000);
    await pair(r);
    expect((await send(r, '/v1/openai/models')).status).toBe(200);
  });
});
