import { describe, expect, it } from 'vitest';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { memorySettingsStore, Settings, type SettingsStore } from '../../../src/api/settings';
import { chatRequest, echoBody, echoStack, URL_BASE } from '../helpers';

function setup(store: SettingsStore = memorySettingsStore()) {
  const settings = new Settings(store);
  const stack = echoStack({ settings });
  const call = (method: string, path: string, body?: unknown, key = 'k') =>
    stack.api.fetch(
      new Request(`${URL_BASE}/v1/hearth/${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      }),
    );
  const chat = (key: string) =>
    stack.api.fetch(chatRequest(echoBody('hi'), { headers: { authorization: `Bearer ${key}` } }));
  return { settings, stack, call, chat, store };
}

describe('issued keys', () => {
  it('accepts any non-empty key until issued keys are switched on, then only those', async () => {
    const t = setup();
    expect((await t.chat('anything')).status).toBe(200);
    const issued = await t.call('POST', 'keys', { name: 'gateway' });
    expect(issued.status).toBe(201);
    const key = await issued.json();
    expect(key).toMatchObject({ object: 'hearth.key', name: 'gateway', key: expect.any(String) });
    expect(key.key).toMatch(/^hk-[\w-]{32}$/);
    expect(key.hint).toBe(key.key.slice(-4));
    const on = await t.call('PATCH', 'settings', { auth: 'issued' });
    expect(await on.json()).toEqual({
      object: 'hearth.settings',
      auth: 'issued',
      prices: {},
      embedding_model: null,
    });
    const refused = await t.chat('anything');
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe('invalid_api_key');
    expect((await t.chat(key.key)).status).toBe(200);
    t.stack.close();
  });

  it('shows a key once: the list holds names and hints, never the keys', async () => {
    const t = setup();
    const { key, id } = await (await t.call('POST', 'keys', {})).json();
    const list = await (await t.call('GET', 'keys')).json();
    expect(list).toEqual({
      object: 'list',
      data: [
        { id, object: 'hearth.key', name: 'Key', created: expect.any(Number), hint: key.slice(-4) },
      ],
    });
    expect(JSON.stringify(await t.store.read())).not.toContain(key);
    t.stack.close();
  });

  it('revokes a key: it no longer opens the API', async () => {
    const t = setup();
    const a = await (await t.call('POST', 'keys', { name: 'a' })).json();
    const b = await (await t.call('POST', 'keys', { name: 'b' })).json();
    await t.call('PATCH', 'settings', { auth: 'issued' }, a.key);
    const revoked = await t.call('DELETE', `keys/${b.id}`, undefined, a.key);
    expect(await revoked.json()).toEqual({ id: b.id, object: 'hearth.key', deleted: true });
    expect((await t.chat(b.key)).status).toBe(401);
    expect((await t.chat(a.key)).status).toBe(200);
    t.stack.close();
  });

  it('refuses what would lock every caller out', async () => {
    const t = setup();
    const none = await t.call('PATCH', 'settings', { auth: 'issued' });
    expect(none.status).toBe(400);
    expect((await none.json()).error).toMatchObject({ code: 'invalid_value', param: 'auth' });
    const only = await (await t.call('POST', 'keys', {})).json();
    await t.call('PATCH', 'settings', { auth: 'issued' });
    const last = await t.call('DELETE', `keys/${only.id}`, undefined, only.key);
    expect(last.status).toBe(400);
    expect((await t.chat(only.key)).status).toBe(200);
    t.stack.close();
  });

  it("registers a key made elsewhere, such as the relay's, once however often it is sent", async () => {
    const t = setup();
    const relayKey = `hk-${'r'.repeat(32)}`;
    const first = await t.call('POST', 'keys', { name: 'Relay', key: relayKey });
    expect(first.status).toBe(201);
    const record = await first.json();
    expect(record).toMatchObject({ name: 'Relay', key: relayKey, hint: 'rrrr' });
    const again = await t.call('POST', 'keys', { name: 'Relay again', key: relayKey });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(record);
    expect((await (await t.call('GET', 'keys')).json()).data).toHaveLength(1);
    await t.call('PATCH', 'settings', { auth: 'issued' });
    expect((await t.chat(relayKey)).status).toBe(200);
    expect((await t.chat(`hk-${'x'.repeat(32)}`)).status).toBe(401);
    t.stack.close();
  });

  it('keeps its settings in the store, for the next service worker', async () => {
    const store = memorySettingsStore();
    const first = setup(store);
    const { key } = await (await first.call('POST', 'keys', {})).json();
    await first.call('PATCH', 'settings', { auth: 'issued' });
    first.stack.close();
    const next = setup(store);
    expect((await next.chat('anything')).status).toBe(401);
    expect((await next.chat(key)).status).toBe(200);
    next.stack.close();
  });

  it('refuses calls with 503 settings_unavailable while the store cannot be read, and reads it again on the next call', async () => {
    const stored = memorySettingsStore();
    let broken = true;
    const t = setup({
      read: () => (broken ? Promise.reject(new Error('IndexedDB is gone')) : stored.read()),
      write: (data) => stored.write(data),
    });
    const refused = await t.chat('anything');
    expect(refused.status).toBe(503);
    expect((await refused.json()).error).toMatchObject({
      code: 'settings_unavailable',
      type: 'unavailable_error',
      message: expect.stringMatching(/settings could not be read/),
    });
    expect(refused.headers.get('retry-after')).not.toBeNull();
    broken = false;
    expect((await t.chat('anything')).status).toBe(200);
    t.stack.close();
  });

  it('never writes over settings it could not read: issued keys and issued-only auth survive', async () => {
    const relayKey = `hk-${'r'.repeat(32)}`;
    const sha = Array.from(
      new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(relayKey))),
      (b) => b.toString(16).padStart(2, '0'),
    ).join('');
    const stored = memorySettingsStore({
      auth: 'issued',
      keys: [{ id: 'key_relay', name: 'Relay', created: 1, hint: 'rrrr', sha256: sha }],
      prices: {},
    });
    let broken = false;
    const writes: unknown[] = [];
    const t = setup({
      read: () => (broken ? Promise.reject(new Error('IndexedDB is gone')) : stored.read()),
      write: (data) => (writes.push(data), stored.write(data)),
    });
    // The worker read the settings once; then the store fails.
    expect((await t.chat(relayKey)).status).toBe(200);
    broken = true;
    const change = await t.call('PATCH', 'settings', { auth: 'any' }, relayKey);
    expect(change.status).toBe(503);
    expect((await change.json()).error.code).toBe('settings_unavailable');
    expect((await t.call('POST', 'keys', {}, relayKey)).status).toBe(503);
    expect(writes).toEqual([]);
    broken = false;
    expect(await stored.read()).toMatchObject({ auth: 'issued', keys: [{ id: 'key_relay' }] });
    expect((await t.chat('anything')).status).toBe(401);
    t.stack.close();
    // A worker that never read them changes nothing either (it would write the defaults).
    broken = true;
    const fresh = new Settings({
      read: () => Promise.reject(new Error('gone')),
      write: (data) => (writes.push(data), stored.write(data)),
    });
    const patch = new Request(`${URL_BASE}/v1/hearth/settings`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prices: { 'a/b': { prompt: 1, completion: 1 } } }),
    });
    await expect(fresh.patch(patch, 'req')).rejects.toMatchObject({ code: 'settings_unavailable' });
    expect(writes).toEqual([]);
    expect((await stored.read())?.keys).toHaveLength(1);
  });

  it.each([
    ['an unknown auth mode', 'PATCH', 'settings', { auth: 'none' }, 400, 'invalid_value'],
    ['an unknown field', 'PATCH', 'settings', { theme: 'dark' }, 400, 'invalid_value'],
    [
      'a negative price',
      'PATCH',
      'settings',
      { prices: { 'a/b': { prompt: -1, completion: 0 } } },
      400,
      'invalid_value',
    ],
    [
      'a price for no model id',
      'PATCH',
      'settings',
      { prices: { nope: { prompt: 1, completion: 1 } } },
      400,
      'invalid_value',
    ],
    ['a key name that is empty', 'POST', 'keys', { name: '  ' }, 400, 'invalid_value'],
    ['a key of another form', 'POST', 'keys', { key: 'sk-short' }, 400, 'invalid_value'],
    ['an unknown key', 'DELETE', 'keys/key_nope', undefined, 404, 'unknown_url'],
    ['PUT on the settings', 'PUT', 'settings', {}, 405, 'method_not_allowed'],
  ])('refuses %s', async (_what, method, path, body, status, code) => {
    const t = setup();
    const response = await t.call(method, path, body);
    expect(response.status).toBe(status);
    expect((await response.json()).error.code).toBe(code);
    expect((await t.call('GET', 'settings')).status).toBe(200);
    t.stack.close();
  });
});

describe('prices', () => {
  it('are kept per model in dollars per million tokens, and removed with null', async () => {
    const t = setup();
    const set = await t.call('PATCH', 'settings', {
      prices: { 'hearth/echo': { prompt: 2, completion: 8 } },
    });
    expect((await set.json()).prices).toEqual({ 'hearth/echo': { prompt: 2, completion: 8 } });
    expect(await t.settings.price('hearth/echo')).toEqual({ prompt: 2e-6, completion: 8e-6 });
    await t.call('PATCH', 'settings', { prices: { 'hearth/echo': null } });
    expect(await t.settings.price('hearth/echo')).toBeUndefined();
    t.stack.close();
  });

  it('make usage.estimated_cost of the model they price', async () => {
    const settings = new Settings(memorySettingsStore());
    const priced = {
      ...staticModelDirectory([ECHO_MODEL]),
      resolve: async (id: string) => {
        const price = await settings.price(id);
        if (id !== ECHO_MODEL.id) return undefined;
        return { model: { ...ECHO_MODEL, ...(price && { price }) }, ready: async () => undefined };
      },
    };
    const stack = echoStack({ settings, models: priced });
    await stack.api.fetch(
      new Request(`${URL_BASE}/v1/hearth/settings`, {
        method: 'PATCH',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({
          prices: { 'hearth/echo': { prompt: 1_000_000, completion: 500_000 } },
        }),
      }),
    );
    const reply = await (await stack.api.fetch(chatRequest(echoBody('one two three')))).json();
    expect(reply.usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 3,
      total_tokens: 6,
      estimated_cost: 3 * 1 + 3 * 0.5,
    });
    stack.close();
  });
});

describe('an API without settings', () => {
  it('has no settings endpoints', async () => {
    const api = createApi({
      backend: echoStack().backend,
      models: staticModelDirectory([ECHO_MODEL]),
    });
    const response = await api.fetch(
      new Request(`${URL_BASE}/v1/hearth/settings`, { headers: { authorization: 'Bearer k' } }),
    );
    expect(response.status).toBe(404);
  });
});

/** A store whose writes take a few milliseconds, as IndexedDB's do. */
function slowStore(): SettingsStore {
  const inner = memorySettingsStore();
  return {
    read: () => inner.read(),
    write: async (data) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      await inner.write(data);
    },
  };
}

describe('concurrent changes', () => {
  it('two keys issued at once are both stored, and both open the API', async () => {
    const t = setup(slowStore());
    const [a, b] = await Promise.all([t.call('POST', 'keys', {}), t.call('POST', 'keys', {})]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const keys = [(await a.json()).key as string, (await b.json()).key as string];
    expect((await t.call('PATCH', 'settings', { auth: 'issued' })).status).toBe(200);
    for (const key of keys) expect((await t.chat(key)).status).toBe(200);
    expect((await t.store.read())?.keys).toHaveLength(2);
    t.stack.close();
  });

  it('two deletions of one key at once: one deletes it, the other finds it gone', async () => {
    const t = setup(slowStore());
    const { id } = await (await t.call('POST', 'keys', {})).json();
    await t.call('POST', 'keys', {});
    const answers = await Promise.all([
      t.call('DELETE', `keys/${id}`),
      t.call('DELETE', `keys/${id}`),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 404]);
    expect((await t.store.read())?.keys).toHaveLength(1);
    t.stack.close();
  });

  it('two different keys deleted at once are both gone from the store', async () => {
    const t = setup(slowStore());
    const one = await (await t.call('POST', 'keys', {})).json();
    const two = await (await t.call('POST', 'keys', {})).json();
    const three = await (await t.call('POST', 'keys', { name: 'kept' })).json();
    const answers = await Promise.all([
      t.call('DELETE', `keys/${one.id}`),
      t.call('DELETE', `keys/${two.id}`),
    ]);
    expect(answers.map((r) => r.status)).toEqual([200, 200]);
    expect((await t.store.read())?.keys.map((k) => k.id)).toEqual([three.id]);
    t.stack.close();
  });

  it('switching to issued keys while the only key is deleted never leaves issued keys without one', async () => {
    const t = setup(slowStore());
    const { id, key } = await (await t.call('POST', 'keys', {})).json();
    const [patch, remove] = await Promise.all([
      t.call('PATCH', 'settings', { auth: 'issued' }),
      t.call('DELETE', `keys/${id}`),
    ]);
    const stored = (await t.store.read())!;
    // Whichever came first, the other was refused, and what is stored is whole.
    expect([patch.status, remove.status].sort()).toEqual([200, 400]);
    expect(stored.auth === 'any' || stored.keys.length > 0).toBe(true);
    if (stored.auth === 'issued') expect((await t.chat(key)).status).toBe(200);
    t.stack.close();
  });
});

/**
 * Web Locks as a browser grants them to the workers of one origin: exclusive, first come first
 * served, held until the callback's promise settles.
 */
function originLocks(): Pick<LockManager, 'request'> {
  const tails = new Map<string, Promise<unknown>>();
  const request = (name: string, callback: () => Promise<unknown>) => {
    const granted = (tails.get(name) ?? Promise.resolve()).then(callback);
    tails.set(
      name,
      granted.catch(() => undefined),
    );
    return granted;
  };
  return { request } as unknown as Pick<LockManager, 'request'>;
}

/** A store whose reads and writes each take a few milliseconds, as IndexedDB's do. */
function slowReadsAndWrites(): SettingsStore {
  const inner = memorySettingsStore();
  const later = () => new Promise((resolve) => setTimeout(resolve, 3));
  return {
    read: async () => (await later(), inner.read()),
    write: async (data) => (await later(), inner.write(data)),
  };
}

/** A PATCH of the settings, or a POST of a new key, straight to one worker's `Settings`. */
const patchOf = (body: unknown) =>
  new Request(`${URL_BASE}/v1/hearth/settings`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const newKey = () =>
  new Request(`${URL_BASE}/v1/hearth/keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });

describe('two service workers at once (an update waiting beside the active one)', () => {
  it('a change in one worker keeps what the other wrote after the first had read the settings', async () => {
    const store = memorySettingsStore();
    const locks = originLocks();
    const active = new Settings(store, { locks });
    const waiting = new Settings(store, { locks });
    // The active worker has read (and keeps) the settings; the waiting one then issues a key.
    await active.get('r1');
    const issued = await waiting.issueKey(newKey(), 'r2');
    expect(issued.status).toBe(201);
    await active.patch(patchOf({ prices: { 'hearth/echo': { prompt: 1, completion: 2 } } }), 'r3');
    const stored = await store.read();
    expect(stored?.keys).toHaveLength(1);
    expect(stored?.prices).toEqual({ 'hearth/echo': { prompt: 1, completion: 2 } });
  });

  it('two workers changing different settings at the same moment lose neither change', async () => {
    const store = slowReadsAndWrites();
    const locks = originLocks();
    const one = new Settings(store, { locks });
    const two = new Settings(store, { locks });
    const answers = await Promise.all([
      one.issueKey(newKey(), 'r1'),
      two.patch(patchOf({ prices: { 'hearth/echo': { prompt: 1, completion: 2 } } }), 'r2'),
      one.patch(patchOf({ prices: { 'a/b': { prompt: 3, completion: 4 } } }), 'r3'),
      two.issueKey(newKey(), 'r4'),
    ]);
    expect(answers.map((r) => r.status)).toEqual([201, 200, 200, 201]);
    const stored = await store.read();
    expect(stored?.keys).toHaveLength(2);
    expect(Object.keys(stored?.prices ?? {}).sort()).toEqual(['a/b', 'hearth/echo']);
  });
});

describe('the embedding model for vector stores', () => {
  it('is kept as chosen, and null removes the choice', async () => {
    const settings = new Settings(memorySettingsStore());
    const patch = (body: unknown) =>
      settings.patch(
        new Request('http://hearth.test/v1/hearth/settings', {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
        'req_1',
      );
    expect(await settings.embeddingModel()).toBeUndefined();
    const set = (await (await patch({ embedding_model: 'acme/embed-GGUF:Q8_0' })).json()) as {
      embedding_model: string;
    };
    expect(set.embedding_model).toBe('acme/embed-GGUF:Q8_0');
    expect(await settings.embeddingModel()).toBe('acme/embed-GGUF:Q8_0');
    await patch({ embedding_model: null });
    expect(await settings.embeddingModel()).toBeUndefined();
    await expect(patch({ embedding_model: 'no-slash' })).rejects.toMatchObject({
      status: 400,
      param: 'embedding_model',
    });
  });
});
