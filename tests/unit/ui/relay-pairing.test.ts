import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PROTOCOL_VERSION } from '../../../relay/protocol.js';

vi.mock('../../../src/ui/api-client', () => ({
  apiBaseUrl: () => 'http://app.test/v1/',
  issueKey: async () => ({ id: 'key_1', key: 'hk-relay' }),
  setAuthMode: async () => ({}),
}));

const RELAY = 'ws://127.0.0.1:8789';
const SAVED = 'hearth:relay';

/** A WebSocket the test drives: it opens at once, and the test says what arrives and how it closes. */
class FakeSocket {
  static last: FakeSocket | null = null;
  readonly OPEN = 1;
  readyState = 1;
  readonly sent: unknown[] = [];
  readonly #listeners = new Map<string, ((event: unknown) => void)[]>();
  constructor(readonly url: string) {
    FakeSocket.last = this;
  }
  addEventListener(type: string, listener: (event: unknown) => void): void {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(): void {
    this.readyState = 3;
  }
  emit(type: string, event: unknown): void {
    for (const listener of this.#listeners.get(type) ?? []) listener(event);
  }
}

/**
 * The page's globals the pairing uses, in memory; `pagehide` fires when the test says. `navigation`
 * is how this page was loaded (PerformanceNavigationTiming's `type`).
 */
function fakePage(navigation = 'reload') {
  const storage = new Map<string, string>();
  const pageListeners: (() => void)[] = [];
  vi.stubGlobal('sessionStorage', {
    getItem: (key: string) => storage.get(key) ?? null,
    setItem: (key: string, value: string) => void storage.set(key, value),
    removeItem: (key: string) => void storage.delete(key),
  });
  vi.stubGlobal('addEventListener', (type: string, listener: () => void) => {
    if (type === 'pagehide') pageListeners.push(listener);
  });
  vi.stubGlobal('location', new URL('http://app.test/'));
  vi.stubGlobal('history', { state: null, replaceState: () => undefined });
  vi.stubGlobal('navigator', { serviceWorker: { controller: {} } });
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal('performance', {
    getEntriesByType: (type: string) => (type === 'navigation' ? [{ type: navigation }] : []),
  });
  return { storage, pagehide: () => pageListeners.forEach((listener) => listener()) };
}

/** A pairing reconnected from this tab's saved session and let in by the relay. */
async function pairedAfterReload(page: ReturnType<typeof fakePage>) {
  page.storage.set(SAVED, JSON.stringify({ relay: RELAY, session: 'session-1' }));
  const { RelayPairing } = await import('../../../src/ui/relay-pairing');
  const pairing = new RelayPairing();
  pairing.start();
  await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
  const socket = FakeSocket.last!;
  expect(socket.url).toContain('session=session-1');
  socket.emit('message', {
    data: JSON.stringify({
      type: 'hello',
      version: PROTOCOL_VERSION,
      key: 'hk-relay',
      base_url: 'http://127.0.0.1:8788/v1',
      session: 'session-2',
    }),
  });
  await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
  return { pairing, socket };
}

describe('the relay pairing across a reload', () => {
  let page: ReturnType<typeof fakePage>;
  beforeEach(() => {
    FakeSocket.last = null;
    page = fakePage();
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('keeps the pairing when the socket closes with 1001 (going away) before pagehide, as in Firefox', async () => {
    const { pairing, socket } = await pairedAfterReload(page);
    socket.emit('close', { code: 1001, reason: '' });
    page.pagehide();
    expect(JSON.parse(page.storage.get(SAVED) ?? 'null')).toEqual({
      relay: RELAY,
      session: 'session-2',
    });
    expect(pairing.state.status).not.toBe('ended');
  });

  it('keeps the pairing when pagehide comes before the socket closes, as in Chromium', async () => {
    const { socket } = await pairedAfterReload(page);
    page.pagehide();
    socket.emit('close', { code: 1006, reason: '' });
    expect(page.storage.has(SAVED)).toBe(true);
  });

  it('forgets the pairing when the relay goes away while the page stays', async () => {
    const { pairing, socket } = await pairedAfterReload(page);
    socket.emit('close', { code: 1006, reason: '' });
    expect(page.storage.has(SAVED)).toBe(false);
    expect(pairing.state).toMatchObject({ status: 'ended', error: true });
  });
});

describe('the relay pairing of a tab that was closed', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it.each([
    ['back_forward', 'a tab reopened or restored from history'],
    ['navigate', 'a page opened anew in the tab'],
  ])(
    'does not reconnect a saved pairing when the page loaded by %s (%s): it forgets it and says so',
    async (navigation) => {
      FakeSocket.last = null;
      const page = fakePage(navigation);
      page.storage.set(SAVED, JSON.stringify({ relay: RELAY, session: 'session-1' }));
      const { RelayPairing } = await import('../../../src/ui/relay-pairing');
      const pairing = new RelayPairing();
      pairing.start();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(FakeSocket.last).toBeNull();
      expect(page.storage.has(SAVED)).toBe(false);
      expect(pairing.state).toMatchObject({ status: 'ended', relay: RELAY, error: false });
      expect((pairing.state as { message: string }).message).toMatch(/open the link/);
    },
  );
});
