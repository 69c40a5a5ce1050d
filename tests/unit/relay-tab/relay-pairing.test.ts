/**
 * The tab's pairing with a relay (src/relay-tab/relay-pairing.ts), without a browser: the page's
 * globals in memory, a WebSocket the test drives, and the API's calls recorded.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keyFingerprint } from '../../../relay/config.js';
import { PROTOCOL_VERSION } from '../../../relay/protocol.js';
import type { RelayPairingOptions } from '../../../src/relay-tab/relay-pairing';

const RELAY = 'ws://127.0.0.1:8789';
const SAVED = 'hearth:relay';
/** The fingerprint of the relay's key, `hk-relay`, as the relay prints it and its link names it. */
const FINGERPRINT = keyFingerprint('hk-relay');

/**
 * The pairing's options, with every API call it makes recorded in `calls`; the relay's key is
 * registered as `key_1`, and `keys` are the issued keys the API lists.
 */
function recorded(
  calls: string[] = [],
  keys: { id: string; name: string }[] = [],
): RelayPairingOptions & { calls: string[] } {
  return {
    calls,
    apiBase: 'http://app.test/v1/',
    registerKey: async (name, key) => {
      calls.push(`register ${name} ${key}`);
      return 'key_1';
    },
    requireIssuedKeys: async (relayKey) => void calls.push(`issued only, as ${relayKey}`),
    listKeys: async (relayKey) => {
      calls.push(`list keys, as ${relayKey}`);
      return [{ id: 'key_1', name: 'Relay at 127.0.0.1:8789' }, ...keys];
    },
    removeKey: async (id, relayKey) => void calls.push(`remove ${id}, as ${relayKey}`),
  };
}

/**
 * Web Locks as a browser keeps them for the origin: `held` counts the shared holders of each name
 * (a tab of the test's may hold one), and a request `ifAvailable` gets none while any holds it.
 */
function fakeLocks(held = new Map<string, number>()) {
  return {
    held,
    request: async (
      name: string,
      options: { mode?: string; ifAvailable?: boolean },
      callback: (lock: object | null) => Promise<unknown>,
    ) => {
      if (options.ifAvailable && (held.get(name) ?? 0) > 0) return callback(null);
      held.set(name, (held.get(name) ?? 0) + 1);
      try {
        return await callback({ name });
      } finally {
        held.set(name, (held.get(name) ?? 1) - 1);
      }
    },
  };
}

/** The relay's hello, as it lets a tab in. */
const hello = (session: string) => ({
  data: JSON.stringify({
    type: 'hello',
    version: PROTOCOL_VERSION,
    key: 'hk-relay',
    base_url: 'http://127.0.0.1:8788/v1',
    session,
  }),
});

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
function fakePage(
  navigation = 'reload',
  address = 'http://app.test/',
  { referrer = '', locks = fakeLocks() } = {},
) {
  const storage = new Map<string, string>();
  const pageListeners: (() => void)[] = [];
  const history = {
    url: address,
    replaceState: (_: unknown, __: string, url: URL) => void (history.url = url.href),
  };
  vi.stubGlobal('sessionStorage', {
    getItem: (key: string) => storage.get(key) ?? null,
    setItem: (key: string, value: string) => void storage.set(key, value),
    removeItem: (key: string) => void storage.delete(key),
  });
  vi.stubGlobal('addEventListener', (type: string, listener: () => void) => {
    if (type === 'pagehide') pageListeners.push(listener);
  });
  vi.stubGlobal('location', new URL(address));
  vi.stubGlobal('history', { state: null, replaceState: history.replaceState });
  vi.stubGlobal('navigator', { serviceWorker: { controller: {} }, locks });
  vi.stubGlobal('document', { referrer });
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.stubGlobal('performance', {
    getEntriesByType: (type: string) => (type === 'navigation' ? [{ type: navigation }] : []),
  });
  return {
    storage,
    locks,
    pagehide: () => pageListeners.forEach((listener) => listener()),
    /** The address as the page's history now has it. */
    address: () => history.url,
  };
}

/** A pairing reconnected from this tab's saved session and let in by the relay. */
async function pairedAfterReload(page: ReturnType<typeof fakePage>) {
  page.storage.set(
    SAVED,
    JSON.stringify({ relay: RELAY, session: 'session-1', fingerprint: FINGERPRINT }),
  );
  const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
  const options = recorded();
  const pairing = new RelayPairing(options);
  pairing.start();
  await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
  const socket = FakeSocket.last!;
  expect(socket.url).toContain('session=session-1');
  socket.emit('message', hello('session-2'));
  await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
  return { pairing, socket, calls: options.calls };
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
      fingerprint: FINGERPRINT,
    });
    expect(pairing.state.status).not.toBe('ended');
  });

  it('keeps the pairing, and the relay’s key, when pagehide comes before the socket closes, as in Chromium', async () => {
    const { socket, calls } = await pairedAfterReload(page);
    page.pagehide();
    socket.emit('close', { code: 1006, reason: '' });
    expect(page.storage.has(SAVED)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls.filter((call) => call.startsWith('remove'))).toEqual([]);
  });

  it('forgets the pairing, and removes the relay’s key, when the relay goes away while the page stays', async () => {
    const { pairing, socket, calls } = await pairedAfterReload(page);
    socket.emit('close', { code: 1006, reason: '' });
    expect(page.storage.has(SAVED)).toBe(false);
    expect(pairing.state).toMatchObject({ status: 'ended', error: true });
    await vi.waitFor(() => expect(calls).toContain('remove key_1, as hk-relay'));
  });

  it('refuses, after a reload, a program at the saved address whose key is not the one paired', async () => {
    page.storage.set(
      SAVED,
      JSON.stringify({ relay: RELAY, session: 'session-1', fingerprint: '0000-0000-0000-0000' }),
    );
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const options = recorded();
    const pairing = new RelayPairing(options);
    pairing.start();
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    FakeSocket.last!.emit('message', hello('session-2'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('ended'));
    expect((pairing.state as { message: string }).message).toMatch(/not the one its link named/);
    expect(options.calls).toEqual([]);
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
      page.storage.set(
        SAVED,
        JSON.stringify({ relay: RELAY, session: 'session-1', fingerprint: FINGERPRINT }),
      );
      const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
      const pairing = new RelayPairing(recorded());
      pairing.start();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(FakeSocket.last).toBeNull();
      expect(page.storage.has(SAVED)).toBe(false);
      expect(pairing.state).toMatchObject({ status: 'ended', relay: RELAY, error: false });
      expect((pairing.state as { message: string }).message).toMatch(/open the link/);
    },
  );
});

describe('the relay pairing asked by a link', () => {
  const LINK = `http://site.test/repo/docs/?lang=en&relay=${RELAY}&pair=code-1&fingerprint=${FINGERPRINT}#intro`;
  beforeEach(() => {
    FakeSocket.last = null;
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.resetModules();
  });

  it('asks with the relay, the code and the key’s fingerprint of the link, and takes them out of the address, the page’s own query and hash kept', async () => {
    const page = fakePage('navigate', LINK);
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(recorded());
    pairing.start();
    expect(pairing.state).toEqual({
      status: 'asking',
      relay: RELAY,
      code: 'code-1',
      fingerprint: FINGERPRINT,
      from: null,
    });
    expect(page.address()).toBe('http://site.test/repo/docs/?lang=en#intro');
    expect(FakeSocket.last).toBeNull();
  });

  it.each([
    ['another site’s page', 'http://evil.test/post/42', 'http://evil.test'],
    ['a page of the same origin', 'http://site.test/repo/', null],
    ['no page (the terminal, the address bar)', '', null],
  ])('says when %s opened the link (document.referrer %j): from %j', async (_, referrer, from) => {
    fakePage('navigate', LINK, { referrer });
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(recorded());
    pairing.start();
    expect(pairing.state).toMatchObject({ status: 'asking', from });
  });

  it.each([
    ['no fingerprint', LINK.replace(/&fingerprint=[^#]+/, '')],
    ['a fingerprint that is a key', LINK.replace(/fingerprint=[^#]+/, 'fingerprint=hk-relay')],
  ])('refuses without asking a link with %s', async (_, link) => {
    const page = fakePage('navigate', link);
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(recorded());
    pairing.start();
    expect(pairing.state).toMatchObject({ status: 'ended', error: true });
    expect((pairing.state as { message: string }).message).toMatch(/incomplete/);
    expect(page.address()).toBe('http://site.test/repo/docs/?lang=en#intro');
  });

  it('on a yes, refuses a relay whose key has not the link’s fingerprint: registers nothing, says nothing ready', async () => {
    fakePage('navigate', LINK.replace(FINGERPRINT, '0123-4567-89ab-cdef'));
    const options = recorded();
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(options);
    pairing.start();
    pairing.accept({ requireKeys: true });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    FakeSocket.last!.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('ended'));
    expect((pairing.state as { message: string }).message).toMatch(
      /The relay's key is not the one its link named \(fingerprint 0123-4567-89ab-cdef\)/,
    );
    expect(options.calls).toEqual([]);
    expect(FakeSocket.last!.sent).toEqual([]);
  });

  it('“Stop sharing” removes the relay’s key once the link closed', async () => {
    fakePage('navigate', LINK);
    const options = recorded();
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(options);
    pairing.start();
    pairing.accept({ requireKeys: true });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    const socket = FakeSocket.last!;
    socket.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
    expect(options.calls).not.toContain('remove key_1, as hk-relay');
    pairing.end();
    socket.emit('close', { code: 1000, reason: 'pairing ended' });
    expect(pairing.state).toMatchObject({ status: 'ended', message: 'The pairing was ended.' });
    await vi.waitFor(() => expect(options.calls.at(-1)).toBe('remove key_1, as hk-relay'));
  });

  it('says the relay’s key stays when it cannot be removed', async () => {
    fakePage('navigate', LINK);
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing({
      ...recorded(),
      removeKey: async () => {
        throw new Error('This is the last issued key.');
      },
    });
    pairing.start();
    pairing.accept({ requireKeys: true });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    const socket = FakeSocket.last!;
    socket.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
    pairing.end();
    socket.emit('close', { code: 1000, reason: 'pairing ended' });
    await vi.waitFor(() =>
      expect(pairing.state).toMatchObject({
        status: 'ended',
        message:
          "The pairing was ended. The relay's key stays an issued key: This is the last issued key.",
        error: true,
      }),
    );
  });

  it('on a yes, removes the relay keys no tab holds (tabs that died paired), and keeps those a tab holds and the others', async () => {
    const locks = fakeLocks();
    fakePage('navigate', LINK, { locks });
    // Another tab, paired with another relay, holds its key.
    let releaseOther = () => undefined as void;
    void locks.request(
      'hearth:relay-key:key_live',
      { mode: 'shared' },
      () => new Promise<void>((resolve) => (releaseOther = resolve)),
    );
    const options = recorded(
      [],
      [
        { id: 'key_dead', name: 'Relay at 127.0.0.1:8790' },
        { id: 'key_live', name: 'Relay at localhost:8791' },
        { id: 'key_app', name: 'This app' },
      ],
    );
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(options);
    pairing.start();
    pairing.accept({ requireKeys: false });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    FakeSocket.last!.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
    expect(options.calls).toEqual([
      'register Relay at 127.0.0.1:8789 hk-relay',
      'list keys, as hk-relay',
      'remove key_dead, as hk-relay',
    ]);
    // This tab holds its own key while paired.
    expect(locks.held.get('hearth:relay-key:key_1')).toBe(1);
    releaseOther();
  });

  it('on a yes, connects with the code, registers the relay’s key, makes issued keys the rule, and keeps the session for a reload', async () => {
    const page = fakePage('navigate', LINK);
    const options = recorded();
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(options);
    pairing.start();
    pairing.accept({ requireKeys: true });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    expect(FakeSocket.last!.url).toBe(`${RELAY}/?code=code-1`);
    FakeSocket.last!.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
    expect(options.calls).toEqual([
      'register Relay at 127.0.0.1:8789 hk-relay',
      'issued only, as hk-relay',
      'list keys, as hk-relay',
    ]);
    expect(FakeSocket.last!.sent).toEqual([{ type: 'ready', version: PROTOCOL_VERSION }]);
    expect(JSON.parse(page.storage.get(SAVED) ?? 'null')).toEqual({
      relay: RELAY,
      session: 'session-1',
      fingerprint: FINGERPRINT,
    });
  });

  it('on a yes with the box unchecked, registers the relay’s key and leaves who may call as it was', async () => {
    fakePage('navigate', LINK);
    const options = recorded();
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(options);
    pairing.start();
    pairing.accept({ requireKeys: false });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    FakeSocket.last!.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('paired'));
    expect(options.calls).toEqual([
      'register Relay at 127.0.0.1:8789 hk-relay',
      'list keys, as hk-relay',
    ]);
  });

  it('ends the pairing with the API’s reason when the relay’s key cannot be registered, and keeps no session', async () => {
    const page = fakePage('navigate', LINK);
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing({
      ...recorded(),
      registerKey: async () => {
        throw new Error('The relay’s key could not be registered: Incorrect API key provided.');
      },
    });
    pairing.start();
    pairing.accept({ requireKeys: true });
    await vi.waitFor(() => expect(FakeSocket.last).not.toBeNull());
    FakeSocket.last!.emit('message', hello('session-1'));
    await vi.waitFor(() => expect(pairing.state.status).toBe('ended'));
    expect(pairing.state).toMatchObject({
      message: 'The relay’s key could not be registered: Incorrect API key provided.',
    });
    expect(FakeSocket.last!.sent).toEqual([]);
    expect(page.storage.has(SAVED)).toBe(false);
  });

  it('on a no, connects nowhere, calls nothing and says “Not shared.”', async () => {
    fakePage('navigate', LINK);
    const options = recorded();
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(options);
    pairing.start();
    pairing.decline();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pairing.state).toEqual({
      status: 'ended',
      relay: RELAY,
      message: 'Not shared.',
      error: false,
    });
    expect(FakeSocket.last).toBeNull();
    expect(options.calls).toEqual([]);
  });

  it('refuses without asking a link to a relay that is not on this computer', async () => {
    const page = fakePage(
      'navigate',
      'http://site.test/?relay=ws://192.168.1.20:8788/relay&pair=x',
    );
    const { RelayPairing } = await import('../../../src/relay-tab/relay-pairing');
    const pairing = new RelayPairing(recorded());
    pairing.start();
    expect(pairing.state).toMatchObject({ status: 'ended', error: true });
    expect((pairing.state as { message: string }).message).toMatch(/only with a relay on this/);
    expect(page.address()).toBe('http://site.test/');
  });
});

describe('who shows a page’s relay pairing', () => {
  afterEach(() => {
    vi.resetModules();
    delete (globalThis as Record<symbol, unknown>)[Symbol.for('hearth.relay-pairing')];
  });

  it('is the first to claim it: the app, as its code loads, leaves none to the loader it starts', async () => {
    const { claimPairing } = await import('../../../src/relay-tab/relay-pairing');
    expect(claimPairing('app')).toBe(true);
    // The loader's own copy of the module (hearth/hearth.js is another bundle) sees the claim.
    vi.resetModules();
    const loader = await import('../../../src/relay-tab/relay-pairing');
    expect(loader.claimPairing('loader')).toBe(false);
  });

  it('is the loader on a site’s page, once: a second startHearth() shows nothing more', async () => {
    const { claimPairing } = await import('../../../src/relay-tab/relay-pairing');
    expect(claimPairing('loader')).toBe(true);
    expect(claimPairing('loader')).toBe(false);
  });
});
