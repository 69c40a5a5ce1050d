/**
 * Who may call the relay, decided from the address it is bound to (what `server.address()` says
 * once it listens), never from how `--host` was spelled: `0`, `::0` and `0000:0000::` listen on
 * every interface as `0.0.0.0` and `::` do, and must refuse the network's callers as they do.
 */
import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { listenScope, peerAllowed } from '../../../relay/address.js';
import type { Relay } from '../../../relay/relay.js';
import { relay, send } from './harness';

const EVERYWHERE = [
  '0',
  '0.0.0.0',
  '::',
  '::0',
  '0:0:0:0:0:0:0:0',
  '0000:0000::',
  '::ffff:0.0.0.0',
];
const THIS_MACHINE = [
  '127.0.0.1',
  '127.1',
  '127.0.0.2',
  '::1',
  '0:0:0:0:0:0:0:1',
  '::ffff:127.0.0.1',
];
const NETWORK = ['192.168.1.5', '10.0.0.1', '::ffff:192.168.1.5', 'fd00::2', 'fe80::1'];

describe('what the address the relay listens on exposes', () => {
  it.each(EVERYWHERE)('counts %s as every interface', (address) => {
    expect(listenScope(address)).toBe('everywhere');
  });

  it.each(THIS_MACHINE)('counts %s as this machine only', (address) => {
    expect(listenScope(address)).toBe('loopback');
  });

  it.each(NETWORK)('counts %s as an address on the network', (address) => {
    expect(listenScope(address)).toBe('network');
  });

  it('refuses callers from the network on every interface and on loopback, and lets them call on a network address', () => {
    for (const peer of ['192.0.2.2', '::ffff:192.0.2.2', 'fd00::2']) {
      expect(peerAllowed('everywhere', peer), peer).toBe(false);
      expect(peerAllowed('loopback', peer), peer).toBe(false);
      expect(peerAllowed('network', peer), peer).toBe(true);
    }
    for (const peer of ['127.0.0.1', '::ffff:127.0.0.1', '::1']) {
      expect(peerAllowed('everywhere', peer), peer).toBe(true);
    }
  });
});

const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i?.family === 'IPv4' && !i.internal)?.address;

/** A relay listening on `host`, as `--host <host>` starts it. */
async function relayOn(host: string): Promise<Relay> {
  return (await relay({ host })).relay;
}

describe('the relay on every interface, however --host spells it', () => {
  it.each(['0', '::0', '0:0:0:0:0:0:0:0', '0000:0000::', '0.0.0.0', '::'])(
    'says %s serves this machine only, and prints 127.0.0.1',
    async (host) => {
      const r = await relayOn(host);
      expect(r.exposure).toMatch(/^Callers: this machine only\. .*--host/);
      expect(r.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // From this machine: answered (503: no tab is paired yet).
      expect((await send(r, '/v1/openai/models')).status).toBe(503);
    },
  );

  it.skipIf(lanAddress === undefined).each(['0', '::0', '0:0:0:0:0:0:0:0', '0000:0000::'])(
    'refuses a caller on the network when listening on %s, whatever Host it claims',
    async (host) => {
      const r = await relayOn(host);
      const port = new URL(r.origin).port;
      const fromNetwork = await send(
        { origin: `http://${lanAddress}:${port}` } as Relay,
        '/v1/openai/models',
        { headers: { host: `localhost:${port}` } },
      );
      expect(fromNetwork.status).toBe(403);
      expect(JSON.parse(fromNetwork.body).error.code).toBe('forbidden_peer');
    },
  );
});
