import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import {
  memoryServerStore,
  serverView,
  Servers,
  type FetchLike,
  type ServerRecord,
  type ServerStore,
} from '../../../src/servers/servers';
import { UpstreamBackend } from '../../../src/servers/upstream';
import { parseChatRequest } from '../../../src/protocol/validate';

const KEY = 'sk-session-only-9876';

/** A store that keeps every record it was given, as IndexedDB would hold it. */
function recordingStore() {
  const inner = memoryServerStore();
  const written: ServerRecord[] = [];
  const store: ServerStore = {
    list: () => inner.list(),
    put: (record) => (written.push(structuredClone(record)), inner.put(record)),
    delete: (name) => inner.delete(name),
  };
  return { store, written };
}

/** A server that lists `m` and answers chats, recording the authorization it was sent. */
function server() {
  const authorizations: (string | null)[] = [];
  const fetch: FetchLike = async (url, init) => {
    authorizations.push(new Headers(init?.headers).get('authorization'));
    if (url.endsWith('/models')) return Response.json({ data: [{ id: 'm' }] });
    return Response.json({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] });
  };
  return { fetch, authorizations };
}

/** One service worker: the registry and its upstream backend over `store`. */
function worker(store: ServerStore, fetch: FetchLike) {
  const servers = new Servers(store, { fetch, organisations: async () => new Set() });
  const upstream = new UpstreamBackend({ resolve: (id) => servers.resolve(id), fetch });
  return { servers, upstream };
}

async function chat(upstream: UpstreamBackend): Promise<ChatEvent[]> {
  const body = { model: 'box/m', messages: [{ role: 'user', content: 'hi' }] };
  const out: ChatEvent[] = [];
  for await (const e of upstream.chat(parseChatRequest(body), {
    signal: new AbortController().signal,
    body,
  })) {
    out.push(e);
  }
  return out;
}

describe('a server key kept for the session only (keep_key: "session")', () => {
  it('is never written to the store, not when added and not when its models are chosen', async () => {
    const { store, written } = recordingStore();
    const { fetch } = server();
    const { servers } = worker(store, fetch);
    await servers.add({
      name: 'box',
      base_url: 'http://box/v1',
      api_key: KEY,
      keep_key: 'session',
    });
    await servers.offer('box', { offered: ['m'] });
    expect(written).toHaveLength(2);
    expect(JSON.stringify(written)).not.toContain(KEY);
    expect(JSON.stringify(await store.list())).not.toContain(KEY);
    expect(written[0]).toMatchObject({ name: 'box', key_kept: 'session' });
  });

  it("is sent with the server's requests while the worker lives, and shown as a hint", async () => {
    const { store } = recordingStore();
    const { fetch, authorizations } = server();
    const { servers, upstream } = worker(store, fetch);
    await servers.add({
      name: 'box',
      base_url: 'http://box/v1',
      api_key: KEY,
      keep_key: 'session',
    });
    const events = await chat(upstream);
    expect(events.find((e) => e.type === 'tokens')).toMatchObject({ tokens: ['ok'] });
    expect(authorizations).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    const [record] = await servers.list();
    expect(serverView(record!)).toMatchObject({
      key_hint: '…9876',
      key_kept: 'session',
      key_needed: false,
    });
  });

  it('is gone in the next worker: its requests are a 503 saying to add the key again, and nothing is sent', async () => {
    const { store } = recordingStore();
    const first = server();
    await worker(store, first.fetch).servers.add({
      name: 'box',
      base_url: 'http://box/v1',
      api_key: KEY,
      keep_key: 'session',
    });
    const next = server();
    const { servers, upstream } = worker(store, next.fetch);
    await expect(chat(upstream)).rejects.toMatchObject({
      status: 503,
      code: 'upstream_unavailable',
      message: expect.stringMatching(/key.*session only.*add.*again/i),
    });
    expect(next.authorizations).toEqual([]);
    const [record] = await servers.list();
    expect(serverView(record!)).toMatchObject({
      key_hint: null,
      key_kept: 'session',
      key_needed: true,
    });
  });

  it('is taken again with PATCH {api_key}: checked on the server, kept for the session only again', async () => {
    const { store, written } = recordingStore();
    await worker(store, server().fetch).servers.add({
      name: 'box',
      base_url: 'http://box/v1',
      api_key: KEY,
      keep_key: 'session',
    });
    const next = server();
    const { servers, upstream } = worker(store, next.fetch);
    const again = await servers.offer('box', { api_key: KEY });
    expect(serverView(again)).toMatchObject({ key_kept: 'session', key_needed: false });
    expect(next.authorizations).toEqual([`Bearer ${KEY}`]);
    expect(await chat(upstream)).toContainEqual(expect.objectContaining({ type: 'end' }));
    expect(next.authorizations).toEqual([`Bearer ${KEY}`, `Bearer ${KEY}`]);
    expect(JSON.stringify(written)).not.toContain(KEY);
  });

  it('refuses a key given again that the server refuses, with 400 naming api_key, changing nothing', async () => {
    const { store } = recordingStore();
    const fetch: FetchLike = async (_url, init) =>
      new Headers(init?.headers).get('authorization') === `Bearer ${KEY}`
        ? Response.json({ data: [{ id: 'm' }] })
        : new Response('bad key', { status: 401 });
    const { servers } = worker(store, fetch);
    await servers.add({
      name: 'box',
      base_url: 'http://box/v1',
      api_key: KEY,
      keep_key: 'session',
    });
    await expect(servers.offer('box', { api_key: 'sk-wrong-key-0000' })).rejects.toMatchObject({
      status: 400,
      param: 'api_key',
    });
    expect(serverView((await servers.list())[0]!).key_hint).toBe('…9876');
  });

  it('a key kept as before is stored, and says so', async () => {
    const { store, written } = recordingStore();
    const { servers } = worker(store, server().fetch);
    await servers.add({ name: 'box', base_url: 'http://box/v1', api_key: KEY });
    expect(written[0]).toMatchObject({ api_key: KEY });
    expect(serverView((await servers.list())[0]!)).toMatchObject({
      key_kept: 'stored',
      key_needed: false,
    });
  });

  it('refuses another keep_key with 400 naming keep_key', async () => {
    const { servers } = worker(recordingStore().store, server().fetch);
    await expect(
      servers.add({ name: 'box', base_url: 'http://box/v1', api_key: KEY, keep_key: 'forever' }),
    ).rejects.toMatchObject({ status: 400, param: 'keep_key' });
  });
});
