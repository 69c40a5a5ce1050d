import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type SwToPage } from '../../../src/bridge/messages';
import { OpenAIError } from '../../../src/openai/errors';
import { HostLink } from '../../../sw/host-link';

/** Window clients that record what the service worker posts to them. */
function fakeClients(count = 1) {
  const inbox: SwToPage[] = [];
  const windows = Array.from({ length: count }, () => ({
    postMessage: (message: SwToPage) => void inbox.push(message),
  }));
  return {
    inbox,
    clients: { matchAll: async () => windows },
  };
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
  return { replies, port1, port2 };
}

describe('HostLink', () => {
  it('accepts a host of its own protocol and build and hands out its port', async () => {
    const { clients } = fakeClients();
    const link = new HostLink({ build: 'b1', clients, appUrl: 'http://app/' });
    const { replies, port1, port2 } = attach(link);
    expect(replies).toEqual([{ type: 'host/accepted', hostId: 'h1' }]);
    expect(await link.port()).toBe(port2);
    expect(link.hostId).toBe('h1');
    port1.close();
  });

  it.each([
    ['another build', { build: 'b0' }],
    ['another protocol', { protocol: PROTOCOL_VERSION + 1 }],
  ])('refuses a host of %s, telling it why', async (_what, overrides) => {
    const { clients } = fakeClients();
    const link = new HostLink({ build: 'b1', clients, appUrl: 'http://app/', waitMs: 20 });
    const { replies, port1 } = attach(link, overrides);
    expect(replies[0]?.type).toBe('host/refused');
    expect(link.hostId).toBeUndefined();
    await expect(link.port()).rejects.toBeInstanceOf(OpenAIError);
    port1.close();
  });

  it('ignores messages that are not a host hand-over', () => {
    const { clients } = fakeClients();
    const link = new HostLink({ build: 'b1', clients, appUrl: 'http://app/' });
    const replies: SwToPage[] = [];
    for (const data of [null, 'x', { type: 'host/attach' }, { type: 'other' }]) {
      link.onMessage(data, (m) => replies.push(m));
    }
    expect(replies).toEqual([]);
  });

  it('asks every window for a host when it has none, and waits for one to attach', async () => {
    const { clients, inbox } = fakeClients(2);
    const link = new HostLink({ build: 'b1', clients, appUrl: 'http://app/' });
    const waiting = link.port();
    const alsoWaiting = link.port();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(inbox).toEqual([{ type: 'host/wanted' }, { type: 'host/wanted' }]);
    const { port1, port2 } = attach(link);
    expect(await waiting).toBe(port2);
    expect(await alsoWaiting).toBe(port2);
    port1.close();
  });

  it('answers 503 engine_unavailable, naming the app, when no host attaches in time', async () => {
    const { clients } = fakeClients(0);
    const link = new HostLink({ build: 'b1', clients, appUrl: 'http://app/', waitMs: 20 });
    const error = (await link.port().catch((e: unknown) => e)) as OpenAIError;
    expect(error.status).toBe(503);
    expect(error.code).toBe('engine_unavailable');
    expect(error.message).toContain('http://app/');
    expect(error.responseHeaders()['retry-after']).toBe('1');
  });

  it('replaces the host port when a host attaches again, closing the old one', async () => {
    const { clients } = fakeClients();
    const link = new HostLink({ build: 'b1', clients, appUrl: 'http://app/' });
    const first = attach(link);
    let closed = false;
    first.port1.onmessage = () => undefined;
    first.port1.addEventListener('close', () => (closed = true));
    const second = attach(link, { hostId: 'h2' });
    expect(await link.port()).toBe(second.port2);
    expect(link.hostId).toBe('h2');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(closed).toBe(true);
    first.port1.close();
    second.port1.close();
  });
});
