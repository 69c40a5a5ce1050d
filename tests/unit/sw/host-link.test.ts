import { describe, expect, it } from 'vitest';
import { hostLockName, PROTOCOL_VERSION, type SwToPage } from '../../../src/bridge/messages';
import { OpenAIError } from '../../../src/protocol/errors';
import { HostLink, type HostLinkOptions } from '../../../sw/host-link';

/** Window clients that record what the service worker posts to them. */
function fakeClients(count = 1) {
  const inbox: SwToPage[] = [];
  const windows = Array.from({ length: count }, () => ({
    postMessage: (message: SwToPage) => void inbox.push(message),
  }));
  return { inbox, clients: { matchAll: async () => windows } };
}

/** Web Locks where the test decides when a host's lock is granted (the host died). */
function fakeLocks() {
  const requests = new Map<string, () => unknown>();
  return {
    requests,
    locks: {
      request: async (name: string, callback: () => unknown) => void requests.set(name, callback),
    },
    /** The host holding `name` is gone: grant the pending request. */
    grant(name: string) {
      requests.get(name)?.();
      requests.delete(name);
    },
  };
}

function setup(overrides: Partial<HostLinkOptions> = {}) {
  const { clients, inbox } = fakeClients();
  const locks = fakeLocks();
  const lost: MessagePort[] = [];
  const link = new HostLink({
    build: 'b1',
    clients,
    locks: locks.locks,
    appUrl: 'http://app/',
    onLost: (port) => void lost.push(port),
    ...overrides,
  });
  return { link, inbox, locks, lost };
}

function attach(link: HostLink, overrides: Record<string, unknown> = {}) {
  const { port1, port2 } = new MessageChannel();
  const replies: SwToPage[] = [];
  link.onMessage(
    {
      type: 'host/attach',
      protocol: PROTOCOL_VERSION,
      build: 'b1',
      hostId: 'h1',
      port: port2,
      ...overrides,
    },
    (m) => replies.push(m),
  );
  return { replies, port1, port2, close: () => (port1.close(), port2.close()) };
}

describe('HostLink', () => {
  it('accepts a host of its own protocol and build and hands out its port', async () => {
    const { link } = setup();
    const host = attach(link);
    expect(host.replies).toEqual([{ type: 'host/accepted', hostId: 'h1' }]);
    expect(await link.port()).toBe(host.port2);
    expect(link.hostId).toBe('h1');
    host.close();
  });

  it('accepts a host of another build that speaks its protocol (tabs left open across an update)', async () => {
    const { link } = setup();
    const host = attach(link, { build: 'b0' });
    expect(host.replies).toEqual([{ type: 'host/accepted', hostId: 'h1' }]);
    expect(await link.port()).toBe(host.port2);
    host.close();
  });

  it.each([
    ['another protocol', { protocol: PROTOCOL_VERSION + 1 }],
    ['another protocol and build', { protocol: PROTOCOL_VERSION + 1, build: 'b0' }],
  ])('refuses a host of %s, telling it why', async (_what, overrides) => {
    const { link, locks } = setup({ waitMs: 20 });
    const host = attach(link, overrides);
    expect(host.replies[0]?.type).toBe('host/refused');
    expect(link.hostId).toBeUndefined();
    expect(locks.requests.size).toBe(0);
    await expect(link.port()).rejects.toBeInstanceOf(OpenAIError);
    host.close();
  });

  it('ignores messages that are not a host hand-over', () => {
    const { link } = setup();
    const replies: SwToPage[] = [];
    for (const data of [null, 'x', { type: 'host/attach' }, { type: 'other' }]) {
      link.onMessage(data, (m) => replies.push(m));
    }
    expect(replies).toEqual([]);
  });

  it('asks every window for a host when it has none, and waits for one to attach', async () => {
    const { clients, inbox } = fakeClients(2);
    const { link } = setup({ clients });
    const waiting = link.port();
    const alsoWaiting = link.port();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(inbox).toEqual([{ type: 'host/wanted' }, { type: 'host/wanted' }]);
    const host = attach(link);
    expect(await waiting).toBe(host.port2);
    expect(await alsoWaiting).toBe(host.port2);
    host.close();
  });

  it('answers 503 engine_unavailable, naming the app, when no host attaches in time', async () => {
    const { link } = setup({ clients: fakeClients(0).clients, waitMs: 20 });
    const error = (await link.port().catch((e: unknown) => e)) as OpenAIError;
    expect(error.status).toBe(503);
    expect(error.code).toBe('engine_unavailable');
    expect(error.message).toContain('http://app/');
    expect(error.responseHeaders()['retry-after']).toBe('1');
  });

  it('watches the host through its Web Lock and reports every port it handed over when it dies', async () => {
    const { link, locks, lost } = setup({ waitMs: 20 });
    const first = attach(link);
    const again = attach(link); // e.g. after a controller change: same host, new port
    expect([...locks.requests.keys()]).toEqual([hostLockName('h1')]);
    locks.grant(hostLockName('h1'));
    expect(lost).toEqual([first.port2, again.port2]);
    expect(link.hostId).toBeUndefined();
    await expect(link.port()).rejects.toMatchObject({ code: 'engine_unavailable' });
    first.close();
    again.close();
  });

  it('keeps the new host when the old one’s death is noticed after the hand-over', async () => {
    const { link, locks, lost } = setup();
    const old = attach(link, { hostId: 'old' });
    const next = attach(link, { hostId: 'new' });
    locks.grant(hostLockName('old'));
    expect(lost).toEqual([old.port2]);
    expect(link.hostId).toBe('new');
    expect(await link.port()).toBe(next.port2);
    old.close();
    next.close();
  });

  it('ignores a late hand-over from a host it knows is gone', async () => {
    const { link, locks } = setup({ waitMs: 20 });
    const first = attach(link);
    locks.grant(hostLockName('h1'));
    const late = attach(link);
    expect(late.replies).toEqual([]);
    expect(locks.requests.size).toBe(0);
    await expect(link.port()).rejects.toMatchObject({ code: 'engine_unavailable' });
    first.close();
    late.close();
  });

  it('asks for the host’s lock again in a restarted service worker', () => {
    const { locks } = setup();
    const before = fakeLocks();
    // A restarted service worker is a new HostLink; its pending lock request died with the old one.
    const restarted = new HostLink({
      build: 'b1',
      clients: fakeClients().clients,
      locks: before.locks,
      appUrl: 'http://app/',
      onLost: () => undefined,
    });
    const host = attach(restarted);
    expect([...before.requests.keys()]).toEqual([hostLockName('h1')]);
    expect(locks.requests.size).toBe(0);
    host.close();
  });
});
