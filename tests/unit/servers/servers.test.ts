import { describe, expect, it } from 'vitest';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import {
  memoryServerStore,
  normalizeBaseUrl,
  serverView,
  Servers,
  upstreamMessage,
  type FetchLike,
  type ServerRecord,
} from '../../../src/servers/servers';
import { getRequest, scriptedBackend, URL_BASE } from '../helpers';

/** One request the fake server was sent. */
interface Sent {
  url: string;
  init: RequestInit | undefined;
}

/** A fetch that records what it was sent and answers with `answer`. */
function fakeFetch(answer: (url: string, init: RequestInit | undefined) => Promise<Response>) {
  const sent: Sent[] = [];
  const fetch: FetchLike = (url, init) => {
    sent.push({ url, init });
    return answer(url, init);
  };
  return { sent, fetch };
}

/** A `/models` answer listing `ids`. */
const modelsReply = (ids: string[]) =>
  Response.json({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) });

/** A registry whose servers all list `ids`, under a catalogue of `mlc-ai` and `acme`. */
function registry(
  ids: string[] = ['llama-3', 'qwen'],
  options: { initial?: ServerRecord[]; onChange?: () => void } = {},
) {
  const fake = fakeFetch(async () => modelsReply(ids));
  const servers = new Servers(memoryServerStore(options.initial), {
    fetch: fake.fetch,
    organisations: async () => new Set(['hearth', 'mlc-ai', 'acme']),
    origin: 'https://app.example',
    ...(options.onChange && { onChange: options.onChange }),
  });
  return { servers, ...fake };
}

/** A registry whose fetch answers `answer`. */
function registryAnswering(
  answer: (url: string, init: RequestInit | undefined) => Promise<Response>,
  timeoutMs?: number,
) {
  const fake = fakeFetch(answer);
  const servers = new Servers(memoryServerStore(), {
    fetch: fake.fetch,
    organisations: async () => new Set(['mlc-ai']),
    origin: 'https://app.example',
    ...(timeoutMs !== undefined && { timeoutMs }),
  });
  return { servers, ...fake };
}

const headersOf = (init: RequestInit | undefined) => new Headers(init?.headers);

describe('normalizeBaseUrl', () => {
  it('drops trailing slashes, the query and the fragment', () => {
    expect(normalizeBaseUrl('http://gpu-box:8000/v1/')).toBe('http://gpu-box:8000/v1');
    expect(normalizeBaseUrl('http://gpu-box:8000/v1///')).toBe('http://gpu-box:8000/v1');
    expect(normalizeBaseUrl('  https://api.example/v1?x=1#top  ')).toBe('https://api.example/v1');
    expect(normalizeBaseUrl('http://localhost:11434')).toBe('http://localhost:11434');
  });

  it.each([
    ['ftp://gpu-box/v1', /only http and https/],
    ['file:///etc/passwd', /only http and https/],
    ['http://user:secret@gpu-box/v1', /api_key/],
    ['http://user@gpu-box/v1', /api_key/],
    ['gpu-box:8000/v1', /no http:\/\/ or https:\/\/ in front/],
    ['ftp://gpu-box/v1', /only http and https/],
    ['not a url', /not an absolute URL/],
    ['/v1', /not an absolute URL/],
  ])('refuses %s as a 400 naming base_url', (text, message) => {
    let caught: unknown;
    try {
      normalizeBaseUrl(text);
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'base_url',
      message: expect.stringMatching(message),
    });
  });
});

describe('Servers.add', () => {
  it('reads {base}/models with the bearer key, keeping its models in order without duplicates', async () => {
    const { servers, sent } = registry(['b-model', 'a-model', 'b-model', 'c-model']);
    const record = await servers.add({
      name: 'gpu-box',
      base_url: 'http://gpu-box:8000/v1/',
      api_key: ' sk-secret-1234 ',
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('http://gpu-box:8000/v1/models');
    expect(headersOf(sent[0]!.init).get('authorization')).toBe('Bearer sk-secret-1234');
    expect(record).toMatchObject({
      name: 'gpu-box',
      base_url: 'http://gpu-box:8000/v1',
      api_key: 'sk-secret-1234',
      models: ['b-model', 'a-model', 'c-model'],
      hidden: [],
    });
    expect((await servers.list()).map((s) => s.name)).toEqual(['gpu-box']);
  });

  it('sends no authorization header and keeps no key when none (or a blank one) is given', async () => {
    for (const api_key of [undefined, null, '   ']) {
      const { servers, sent } = registry();
      const record = await servers.add({ name: 'box', base_url: 'http://box/v1', api_key });
      expect(headersOf(sent[0]!.init).has('authorization')).toBe(false);
      expect(record).not.toHaveProperty('api_key');
    }
  });

  it('tells onChange after adding', async () => {
    let changes = 0;
    const { servers } = registry(['m'], { onChange: () => changes++ });
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    expect(changes).toBe(1);
  });

  it.each([
    ['Gpu-Box'],
    ['gpu box'],
    ['-box'],
    ['box-'],
    ['gpu_box'],
    ['box/x'],
    [''],
    ['a'.repeat(41)],
  ])('refuses the name %j with a 400 naming name, before any request', async (name) => {
    const { servers, sent } = registry();
    await expect(servers.add({ name, base_url: 'http://box/v1' })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'name',
    });
    expect(sent).toHaveLength(0);
  });

  it('takes a name of 40 characters and one of a single character', async () => {
    const { servers } = registry();
    await expect(
      servers.add({ name: 'a'.repeat(40), base_url: 'http://box/v1' }),
    ).resolves.toMatchObject({ name: 'a'.repeat(40) });
    await expect(servers.add({ name: 'b', base_url: 'http://box/v1' })).resolves.toMatchObject({
      name: 'b',
    });
  });

  it.each(['hearth', 'mlc-ai', 'local', 'self-hosted', 'acme'])(
    'refuses the reserved or catalogue name %s with 409 model_exists naming name',
    async (name) => {
      const { servers, sent } = registry();
      await expect(servers.add({ name, base_url: 'http://box/v1' })).rejects.toMatchObject({
        status: 409,
        code: 'model_exists',
        param: 'name',
        message: expect.stringMatching(/catalogue/),
      });
      expect(sent).toHaveLength(0);
    },
  );

  it('refuses a name another server took with 409 model_exists naming name', async () => {
    const { servers } = registry();
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    await expect(servers.add({ name: 'box', base_url: 'http://other/v1' })).rejects.toMatchObject({
      status: 409,
      code: 'model_exists',
      param: 'name',
      message: expect.stringMatching(/another server/),
    });
  });

  it.each([401, 403])('answers a wrong key (HTTP %i) with a 400 naming api_key', async (status) => {
    const { servers } = registryAnswering(async () =>
      Response.json({ error: { message: 'Invalid API key' } }, { status }),
    );
    await expect(
      servers.add({ name: 'box', base_url: 'http://box/v1', api_key: 'wrong' }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'api_key',
      message: expect.stringMatching(
        new RegExp(`refused the key \\(HTTP ${status}: Invalid API key`),
      ),
    });
    expect(await servers.list()).toEqual([]);
  });

  it('says a request without a key was refused when none was given', async () => {
    const { servers } = registryAnswering(async () => new Response('no', { status: 401 }));
    await expect(servers.add({ name: 'box', base_url: 'http://box/v1' })).rejects.toMatchObject({
      param: 'api_key',
      message: expect.stringMatching(/a request without a key/),
    });
  });

  it('answers another HTTP error with 502 upstream_error carrying the upstream message', async () => {
    const { servers } = registryAnswering(async () =>
      Response.json({ detail: 'Not Found' }, { status: 404 }),
    );
    const err = await servers.add({ name: 'box', base_url: 'http://box/v1' }).catch((e) => e);
    expect(err).toMatchObject({ status: 502, code: 'upstream_error', type: 'server_error' });
    expect(err.message).toContain('HTTP 404');
    expect(err.message).toContain('"Not Found"');
    expect(err.message).toContain('http://box/v1/models');
  });

  it.each([
    ['not JSON', '<html>hello</html>'],
    ['no data', '{"models":[]}'],
    ['data not an array', '{"data":{"id":"x"}}'],
    ['an id not a string', '{"data":[{"id":3}]}'],
    ['an empty id', '{"data":[{"id":""}]}'],
    ['an entry without id', '{"data":[{"name":"x"}]}'],
  ])('answers a /models that is not OpenAI-shaped (%s) with 502', async (_what, text) => {
    const { servers } = registryAnswering(async () => new Response(text));
    await expect(servers.add({ name: 'box', base_url: 'http://box/v1' })).rejects.toMatchObject({
      status: 502,
      code: 'upstream_error',
      message: expect.stringMatching(/OpenAI-compatible/),
    });
  });

  it('takes a server that lists no models', async () => {
    const { servers } = registryAnswering(async () => Response.json({ data: [] }));
    await expect(servers.add({ name: 'box', base_url: 'http://box/v1' })).resolves.toMatchObject({
      models: [],
    });
  });

  it('says CORS, and what to set, when the fetch fails but a no-cors request gets an answer', async () => {
    const { servers, sent } = registryAnswering(async (_url, init) => {
      if (init?.mode === 'no-cors') return new Response(null, { status: 200 });
      throw new TypeError('Failed to fetch');
    });
    const err = await servers.add({ name: 'box', base_url: 'http://box:8000/v1' }).catch((e) => e);
    expect(err).toMatchObject({ status: 503, code: 'upstream_unavailable' });
    expect(err.message).toMatch(/CORS/);
    expect(err.message).toContain('https://app.example');
    expect(err.message).toContain('--allowed-origins');
    expect(err.message).toContain('OLLAMA_ORIGINS');
    expect(err.retryAfter).toBeUndefined();
    expect(sent.map((s) => [s.url, s.init?.mode])).toEqual([
      ['http://box:8000/v1/models', undefined],
      ['http://box:8000/v1/models', 'no-cors'],
    ]);
  });

  it('says the server could not be reached when the no-cors request fails too', async () => {
    const { servers } = registryAnswering(async () => {
      throw new TypeError('Failed to fetch');
    });
    const err = await servers.add({ name: 'box', base_url: 'http://box:8000/v1' }).catch((e) => e);
    expect(err).toMatchObject({ status: 503, code: 'upstream_unavailable', retryAfter: 5 });
    expect(err.message).toMatch(/could not be reached/);
    expect(err.message).toContain('box:8000');
    expect(err.message).not.toMatch(/CORS/);
  });

  it('answers a server that does not answer within timeoutMs with 504 upstream_timeout', async () => {
    const { servers, sent } = registryAnswering(
      (_url, init) =>
        new Promise((_resolve, reject) => {
          const signal = init!.signal!;
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      30,
    );
    const err = await servers.add({ name: 'box', base_url: 'http://box/v1' }).catch((e) => e);
    expect(err).toMatchObject({ status: 504, code: 'upstream_timeout' });
    expect(err.message).toContain('http://box/v1/models');
    // No no-cors probe: a timeout is not a CORS question.
    expect(sent).toHaveLength(1);
    expect(await servers.list()).toEqual([]);
  });

  it.each([
    [{ base_url: 'http://box/v1' }, 'missing_field', 'name'],
    [{ name: 'box' }, 'missing_field', 'base_url'],
    [{ name: 3, base_url: 'http://box/v1' }, 'invalid_type', 'name'],
    [{ name: 'box', base_url: 'http://box/v1', api_key: 5 }, 'invalid_type', 'api_key'],
  ])('refuses the body %j with %s naming %s', async (body, code, param) => {
    const { servers } = registry();
    await expect(servers.add(body)).rejects.toMatchObject({ status: 400, code, param });
  });

  it('refuses a body with a field it does not know, naming that field', async () => {
    const { servers } = registry();
    await expect(
      servers.add({ name: 'box', base_url: 'http://box/v1', models: ['x'] }),
    ).rejects.toMatchObject({ status: 400, param: 'models' });
  });

  it('refuses an array as a body', async () => {
    const { servers } = registry();
    await expect(servers.add([{ name: 'box', base_url: 'http://box/v1' }])).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe('serverView', () => {
  it('never contains the key, only its last four characters as key_hint', async () => {
    const { servers } = registry(['m1', 'm2']);
    const key = 'sk-very-secret-key-WXYZ';
    const view = serverView(
      await servers.add({ name: 'box', base_url: 'https://box.example:8443/v1', api_key: key }),
    );
    expect(JSON.stringify(view)).not.toContain(key);
    expect(JSON.stringify(view)).not.toContain('very-secret');
    expect(view.key_hint).toMatch(/WXYZ$/);
    expect(view.key_hint!.replace(/^…/, '')).toBe('WXYZ');
    expect(view).toEqual({
      object: 'hearth.server',
      name: 'box',
      base_url: 'https://box.example:8443/v1',
      key_hint: view.key_hint,
      key_kept: 'stored',
      key_needed: false,
      models: ['m1', 'm2'],
      offered: ['m1', 'm2'],
      host: 'box.example:8443',
    });
  });

  it('shows none of a key under 12 characters in key_hint (its last four would be a third of it)', async () => {
    const { servers } = registry();
    const view = serverView(
      await servers.add({ name: 'box', base_url: 'http://box/v1', api_key: 'sk-short' }),
    );
    expect(view.key_hint).toBe('…');
    expect(JSON.stringify(view)).not.toContain('hort');
  });

  it('has a null key_hint for a server without a key', async () => {
    const { servers } = registry();
    expect(serverView(await servers.add({ name: 'box', base_url: 'http://box/v1' })).key_hint).toBe(
      null,
    );
  });
});

describe('Servers.offer, remove, resolve, models', () => {
  it('hides the models left out of offered: resolve and models no longer find them', async () => {
    const { servers } = registry(['a', 'b', 'c']);
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    expect(await servers.resolve('box/b')).toMatchObject({ id: 'box/b', upstream: 'b' });
    const updated = await servers.offer('box', { offered: ['c', 'a'] });
    expect(updated.hidden).toEqual(['b']);
    expect(serverView(updated).offered).toEqual(['a', 'c']);
    expect(await servers.resolve('box/b')).toBeUndefined();
    expect(await servers.resolve('box/a')).toMatchObject({ upstream: 'a' });
    expect((await servers.models()).map((m) => m.id)).toEqual(['box/a', 'box/c']);
    // The hidden model is still the server's: ticking it again brings it back.
    await servers.offer('box', { offered: ['a', 'b', 'c'] });
    expect(await servers.resolve('box/b')).toMatchObject({ upstream: 'b' });
  });

  it('refuses to offer a model the server does not have, naming offered', async () => {
    const { servers } = registry(['a']);
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    await expect(servers.offer('box', { offered: ['a', 'zzz'] })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_value',
      param: 'offered',
      message: expect.stringContaining('"zzz"'),
    });
  });

  it('answers offer and remove for an unknown server with 404 naming name', async () => {
    const { servers } = registry();
    await expect(servers.offer('nope', { offered: [] })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
      param: 'name',
    });
    await expect(servers.remove('nope')).rejects.toMatchObject({ status: 404, param: 'name' });
  });

  it('refuses an offered that is not an array of strings', async () => {
    const { servers } = registry(['a']);
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    await expect(servers.offer('box', { offered: 'a' })).rejects.toMatchObject({
      status: 400,
      param: 'offered',
    });
    await expect(servers.offer('box', {})).rejects.toMatchObject({
      code: 'missing_field',
      param: 'offered',
    });
  });

  it('resolves nothing of a server once it is removed', async () => {
    let changes = 0;
    const { servers } = registry(['a'], { onChange: () => changes++ });
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    await servers.remove('box');
    expect(await servers.resolve('box/a')).toBeUndefined();
    expect(await servers.list()).toEqual([]);
    expect(await servers.models()).toEqual([]);
    expect(changes).toBe(2);
  });

  it('takes everything after the first / as the upstream id', async () => {
    const { servers } = registry(['meta-llama/Llama-3-8B', 'plain']);
    await servers.add({ name: 'box', base_url: 'http://box/v1' });
    expect(await servers.resolve('box/meta-llama/Llama-3-8B')).toMatchObject({
      id: 'box/meta-llama/Llama-3-8B',
      upstream: 'meta-llama/Llama-3-8B',
      server: { name: 'box' },
    });
    expect(await servers.resolve('meta-llama/Llama-3-8B')).toBeUndefined();
    expect(await servers.resolve('box/Llama-3-8B')).toBeUndefined();
    expect(await servers.resolve('/box/plain')).toBeUndefined();
    expect(await servers.resolve('box')).toBeUndefined();
    expect(await servers.resolve('other/plain')).toBeUndefined();
    expect((await servers.models()).map((m) => m.id)).toEqual([
      'box/meta-llama/Llama-3-8B',
      'box/plain',
    ]);
  });

  it('lists servers in the order they were added, and reads what the store already has', async () => {
    const initial: ServerRecord[] = [
      { name: 'later', base_url: 'http://l/v1', models: ['x'], hidden: [], added_at: 20 },
      { name: 'first', base_url: 'http://f/v1', models: ['y'], hidden: ['y'], added_at: 10 },
    ];
    const { servers } = registry([], { initial });
    expect((await servers.list()).map((s) => s.name)).toEqual(['first', 'later']);
    expect((await servers.models()).map((m) => m.id)).toEqual(['later/x']);
  });
});

describe('upstreamMessage', () => {
  it.each([
    ['OpenAI', '{"error":{"message":"Bad key","type":"invalid_request_error"}}', 'Bad key'],
    ['Ollama', '{"error":"model \\"x\\" not found"}', 'model "x" not found'],
    [
      'vLLM',
      '{"object":"error","message":"too long","type":"BadRequestError","code":400}',
      'too long',
    ],
    ['FastAPI (string)', '{"detail":"Not Found"}', '"Not Found"'],
    ['FastAPI (list)', '{"detail":[{"loc":["body"],"msg":"field required"}]}', 'field required'],
    ['plain text', '  Internal Server Error \n', 'Internal Server Error'],
    ['an empty body', '', '(no message)'],
    ['JSON without a message', '{"ok":false}', '{"ok":false}'],
  ])('reads the message of %s', (_dialect, text, message) => {
    expect(upstreamMessage(text)).toContain(message);
  });

  it('keeps at most 1000 characters of a plain-text body', () => {
    expect(upstreamMessage('x'.repeat(5000))).toHaveLength(1000);
  });
});

describe('/v1/hearth/servers through the API', () => {
  function stack(ids: string[] = ['llama-3', 'meta-llama/Llama-3-8B']) {
    const { servers, sent } = registry(ids);
    const api = createApi({
      backend: scriptedBackend(async function* () {}),
      models: staticModelDirectory([ECHO_MODEL]),
      servers: { registry: servers },
    });
    return { api, servers, sent };
  }

  const request = (method: string, path: string, body?: unknown, type = 'application/json') =>
    new Request(`${URL_BASE}/v1/hearth/servers${path}`, {
      method,
      headers: { authorization: 'Bearer k', 'content-type': type },
      ...(body !== undefined && {
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    });

  const add = (
    body: unknown = { name: 'box', base_url: 'http://box:8000/v1/', api_key: 'sk-abcdefgh1234' },
  ) => request('POST', '', body);

  it('adds a server: 201 with its view, never the key', async () => {
    const { api, sent } = stack();
    const response = await api.fetch(add());
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const text = await response.text();
    expect(text).not.toContain('sk-abcdefgh1234');
    expect(JSON.parse(text)).toEqual({
      object: 'hearth.server',
      name: 'box',
      base_url: 'http://box:8000/v1',
      key_hint: '…1234',
      key_kept: 'stored',
      key_needed: false,
      models: ['llama-3', 'meta-llama/Llama-3-8B'],
      offered: ['llama-3', 'meta-llama/Llama-3-8B'],
      host: 'box:8000',
    });
    expect(sent.map((s) => s.url)).toEqual(['http://box:8000/v1/models']);
  });

  it('lists the servers added', async () => {
    const { api } = stack();
    expect(await (await api.fetch(getRequest('/v1/hearth/servers'))).json()).toEqual({
      object: 'list',
      data: [],
    });
    await api.fetch(add());
    const listed = await api.fetch(getRequest('/v1/hearth/servers'));
    expect(listed.status).toBe(200);
    const body = (await listed.json()) as { object: string; data: { name: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.map((s) => s.name)).toEqual(['box']);
    expect(JSON.stringify(body)).not.toContain('sk-abcdefgh1234');
  });

  it('chooses the models offered with PATCH', async () => {
    const { api, servers } = stack();
    await api.fetch(add());
    const response = await api.fetch(request('PATCH', '/box', { offered: ['llama-3'] }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      name: 'box',
      models: ['llama-3', 'meta-llama/Llama-3-8B'],
      offered: ['llama-3'],
    });
    expect(await servers.resolve('box/meta-llama/Llama-3-8B')).toBeUndefined();
  });

  it('removes a server with DELETE', async () => {
    const { api, servers } = stack();
    await api.fetch(add());
    const response = await api.fetch(request('DELETE', '/box'));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ object: 'hearth.server', name: 'box', deleted: true });
    expect(await servers.list()).toEqual([]);
  });

  it('answers PATCH and DELETE of an unknown server with 404', async () => {
    const { api } = stack();
    for (const response of [
      await api.fetch(request('PATCH', '/nope', { offered: [] })),
      await api.fetch(request('DELETE', '/nope')),
    ]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({
        error: { code: 'model_not_found', param: 'name', type: 'not_found_error' },
      });
    }
  });

  it('answers a body that is not JSON by its content type with 415', async () => {
    const { api } = stack();
    const response = await api.fetch(
      request('POST', '', { name: 'box', base_url: 'http://box/v1' }, 'text/plain'),
    );
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
    const patched = await api.fetch(request('PATCH', '/box', { offered: [] }, 'text/plain'));
    expect(patched.status).toBe(415);
  });

  it('answers a body that is not JSON with 400 invalid_json', async () => {
    const { api } = stack();
    const response = await api.fetch(request('POST', '', '{"name":'));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'invalid_json' } });
  });

  it('refuses a body with an unknown field with 400 naming it, reading nothing of the server', async () => {
    const { api, sent } = stack();
    const response = await api.fetch(
      add({ name: 'box', base_url: 'http://box/v1', organization: 'x' }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; param: string } };
    expect(body.error.param).toBe('organization');
    expect(body.error.code).toBe('unsupported_parameter');
    expect(sent).toHaveLength(0);
  });

  it('refuses a PATCH body with an unknown field with 400 unsupported_parameter naming it', async () => {
    const { api } = stack();
    await api.fetch(add());
    const response = await api.fetch(request('PATCH', '/box', { offered: [], name: 'x' }));
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { param: 'name', code: 'unsupported_parameter' },
    });
  });

  it('answers a taken name with 409 model_exists naming name', async () => {
    const { api } = stack();
    await api.fetch(add());
    const response = await api.fetch(add());
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({
      error: { code: 'model_exists', param: 'name' },
    });
  });

  it('answers two adds of one name at once with one 201 and one 409, keeping the first key', async () => {
    const { api, servers } = stack();
    const [first, second] = await Promise.all([
      api.fetch(add({ name: 'box', base_url: 'http://box:8000/v1', api_key: 'sk-first-key-1111' })),
      api.fetch(
        add({ name: 'box', base_url: 'http://evil:8000/v1', api_key: 'sk-other-key-2222' }),
      ),
    ]);
    expect([first.status, second.status]).toEqual([201, 409]);
    expect((await second.json()).error).toMatchObject({ code: 'model_exists', param: 'name' });
    const [kept] = await servers.list();
    expect(kept).toMatchObject({ base_url: 'http://box:8000/v1', api_key: 'sk-first-key-1111' });
    expect(await servers.list()).toHaveLength(1);
  });

  it('frees the name of an add that failed, for the next add', async () => {
    let refuse = true;
    const { servers } = registryAnswering(async () =>
      refuse ? new Response('down', { status: 500 }) : modelsReply(['m']),
    );
    const [failed, taken] = await Promise.allSettled([
      servers.add({ name: 'box', base_url: 'http://box/v1' }),
      servers.add({ name: 'box', base_url: 'http://box/v1' }),
    ]);
    expect(failed).toMatchObject({ status: 'rejected', reason: { code: 'upstream_error' } });
    expect(taken).toMatchObject({ status: 'rejected', reason: { code: 'model_exists' } });
    refuse = false;
    await expect(servers.add({ name: 'box', base_url: 'http://box/v1' })).resolves.toMatchObject({
      name: 'box',
    });
  });

  it('answers a method the servers path does not take with 405', async () => {
    const { api } = stack();
    const response = await api.fetch(request('PUT', '/box', {}));
    expect(response.status).toBe(405);
  });

  it('asks for a key like every endpoint', async () => {
    const { api } = stack();
    const response = await api.fetch(new Request(`${URL_BASE}/v1/hearth/servers`));
    expect(response.status).toBe(401);
  });

  it('lists the offered server models in /v1/openai/models only through the directory', async () => {
    // The router lists its directory's models: the static one here does not know servers.
    const { api } = stack();
    await api.fetch(add());
    const body = (await (await api.fetch(getRequest('/v1/openai/models'))).json()) as {
      data: { id: string }[];
    };
    expect(body.data.map((m) => m.id)).toEqual([ECHO_MODEL.id]);
  });
});
