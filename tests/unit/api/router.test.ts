import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { OpenAIError } from '../../../src/protocol/errors';
import { ECHO_MODEL, staticModelDirectory, type ModelDirectory } from '../../../src/models/models';
import { parseModelPath } from '../../../src/api/manage';
import { createApi } from '../../../src/api/router';
import {
  chatRequest,
  echoBody,
  echoStack,
  getRequest,
  scriptedBackend,
  sleep,
  sseData,
  URL_BASE,
} from '../helpers';

let stack: ReturnType<typeof echoStack>;
beforeEach(() => {
  stack = echoStack();
});
afterEach(() => stack.close());

async function errorOf(response: Response) {
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = (await response.json()) as {
    error: { code: string; type: string; param: string | null; message: string };
  };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return { status: response.status, ...body.error };
}

const end = (prompt = 1, completion = 1): ChatEvent => ({
  type: 'end',
  finish_reason: 'stop',
  usage: { prompt_tokens: prompt, completion_tokens: completion },
});

describe('routes', () => {
  it.each([
    ['POST', '/v1/openai/chat/completions'],
    ['POST', '/v1/chat/completions'],
  ])('answers %s %s with a completion', async (_method, path) => {
    const response = await stack.api.fetch(chatRequest(echoBody('hi there'), { path }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    expect(body.choices[0]?.message.content).toBe('hi there');
  });

  it.each(['/v1/openai/models', '/v1/models'])('lists the echo model at %s', async (path) => {
    const response = await stack.api.fetch(getRequest(path));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      object: 'list',
      data: [
        {
          id: 'hearth/echo',
          object: 'model',
          created: ECHO_MODEL.created,
          owned_by: 'hearth',
          context_window: ECHO_MODEL.context_window,
          vision: true,
        },
      ],
    });
  });

  it.each([
    '/v1/openai/models/hearth/echo',
    '/v1/openai/models/hearth%2Fecho',
    '/v1/models/hearth%2Fecho',
  ])('retrieves one model at %s, the slash raw or encoded', async (path) => {
    const response = await stack.api.fetch(getRequest(path));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string }).id).toBe('hearth/echo');
  });

  it('answers an unknown model id with 404 model_not_found naming the catalogue route', async () => {
    const response = await stack.api.fetch(getRequest('/v1/openai/models/acme%2Fnope'));
    const error = await errorOf(response);
    expect(error).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(error.message).toContain(
      'the whole catalogue is at GET /v1/hearth/catalog, in a page of the site.',
    );
  });

  it('answers a model the list leaves out with 404 model_not_found, as the list does not show it', async () => {
    const hidden = { ...ECHO_MODEL, id: 'acme/hidden' };
    const api = createApi({
      backend: scriptedBackend(async function* () {}),
      models: { ...staticModelDirectory([ECHO_MODEL, hidden]), list: async () => [ECHO_MODEL] },
    });
    const error = await errorOf(await api.fetch(getRequest('/v1/openai/models/acme%2Fhidden')));
    expect(error).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect(error.message).toContain(
      "The model 'acme/hidden' is known to Hearth but cannot answer here",
    );
  });

  it.each(['/v1/nope', '/v1/openai/completions', '/v1/openai/chat/completions/x', '/v1/'])(
    'answers an unknown path %s with 404 unknown_url',
    async (path) => {
      const response = await stack.api.fetch(getRequest(path));
      expect(await errorOf(response)).toMatchObject({
        status: 404,
        code: 'unknown_url',
        type: 'not_found_error',
      });
    },
  );

  it('answers a wrong method with 405 and an allow header', async () => {
    const response = await stack.api.fetch(getRequest('/v1/openai/chat/completions'));
    expect(response.headers.get('allow')).toBe('POST');
    expect(await errorOf(response)).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });

  it('answers HEAD as GET, with the same status and headers and no body', async () => {
    const get = await stack.api.fetch(getRequest('/v1/openai/models'));
    const head = await stack.api.fetch(
      new Request(getRequest('/v1/openai/models'), { method: 'HEAD' }),
    );
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
    expect(head.body).toBeNull();
  });

  it('lists HEAD beside GET in the allow header of a 405', async () => {
    const response = await stack.api.fetch(
      new Request(getRequest('/v1/openai/models'), { method: 'DELETE' }),
    );
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect(await errorOf(response)).toMatchObject({ status: 405, code: 'method_not_allowed' });
  });

  it('serves the API under a base path and owns only that', async () => {
    const api = createApi({ ...stackOptions(), base: '/repo/' });
    expect(api.owns(new URL(`${URL_BASE}/repo/v1/openai/models`))).toBe(true);
    expect(api.owns(new URL(`${URL_BASE}/v1/openai/models`))).toBe(false);
    expect(api.owns(new URL(`${URL_BASE}/repo/index.html`))).toBe(false);
    const response = await api.fetch(getRequest('/repo/v1/openai/models'));
    expect(response.status).toBe(200);
  });

  it('reports the host status at /v1/hearth/status', async () => {
    const response = await stack.api.fetch(getRequest('/v1/hearth/status'));
    expect(await response.json()).toEqual({
      host: { id: 'test-host', build: 'test' },
      models: ['hearth/echo'],
      loaded_model: null,
      loading: null,
      load_error: null,
      failing_models: {},
      downloads: [],
      evicted_models: {},
      last_speed: null,
      queue: { running: 0, waiting: 0 },
      open_ports: 0,
      device: null,
    });
  });
});

function stackOptions() {
  return { backend: stack.backend, models: staticDirectory() };
}

function staticDirectory(ready?: () => Promise<void>): ModelDirectory {
  return staticModelDirectory([ECHO_MODEL], { ...(ready && { ready }) });
}

describe('auth', () => {
  it.each([
    ['no header', {}],
    ['an empty key', { authorization: 'Bearer ' }],
    ['another scheme', { authorization: 'Basic a2V5' }],
    ['a bare key', { authorization: 'k' }],
  ])('answers %s with 401 invalid_api_key', async (_what, headers) => {
    const request = new Request(`${URL_BASE}/v1/openai/models`, { headers });
    expect(await errorOf(await stack.api.fetch(request))).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
      type: 'authentication_error',
    });
  });

  it('accepts any non-empty key by default, the scheme in any case', async () => {
    const response = await stack.api.fetch(getRequest('/v1/models', { authorization: 'bearer x' }));
    expect(response.status).toBe(200);
  });

  it('refuses a key the authorizer does not know', async () => {
    const api = createApi({ ...stackOptions(), authorize: (key) => key === 'issued' });
    expect((await api.fetch(getRequest('/v1/models'))).status).toBe(401);
    const ok = await api.fetch(getRequest('/v1/models', { authorization: 'Bearer issued' }));
    expect(ok.status).toBe(200);
  });
});

describe('order of checks', () => {
  it('checks the route before auth', async () => {
    const request = new Request(`${URL_BASE}/v1/nope`);
    expect((await stack.api.fetch(request)).status).toBe(404);
    const wrongMethod = new Request(`${URL_BASE}/v1/chat/completions`);
    expect((await stack.api.fetch(wrongMethod)).status).toBe(405);
  });

  it('checks auth before the content type', async () => {
    const request = chatRequest('x', {
      headers: { authorization: '', 'content-type': 'text/plain' },
    });
    expect((await stack.api.fetch(request)).status).toBe(401);
  });

  it.each([
    ['no content type', undefined],
    ['text/plain', 'text/plain'],
    ['form data', 'application/x-www-form-urlencoded'],
    ['a JSON look-alike', 'application/jsonp'],
  ])('answers %s with 415', async (_what, type) => {
    const request = new Request(`${URL_BASE}/v1/openai/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', ...(type && { 'content-type': type }) },
      body: JSON.stringify(echoBody('hi')),
    });
    // Node adds text/plain to a string body without a content type; remove it to test "none".
    if (type === undefined) request.headers.delete('content-type');
    expect(await errorOf(await stack.api.fetch(request))).toMatchObject({
      status: 415,
      code: 'unsupported_media_type',
    });
  });

  it('accepts application/json with parameters and in any case', async () => {
    const request = chatRequest(echoBody('hi'), {
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    });
    expect((await stack.api.fetch(request)).status).toBe(200);
  });

  it('checks the content type before the size', async () => {
    const request = chatRequest('x'.repeat(100), { headers: { 'content-type': 'text/plain' } });
    const api = createApi({ ...stackOptions(), bodyLimit: 10 });
    expect((await api.fetch(request)).status).toBe(415);
  });

  it('answers a body over the limit with 413, before parsing it', async () => {
    const api = createApi({ ...stackOptions(), bodyLimit: 64 });
    const big = chatRequest(echoBody('x'.repeat(100)));
    expect(await errorOf(await api.fetch(big))).toMatchObject({
      status: 413,
      code: 'request_too_large',
    });
    const bigInvalid = chatRequest('{'.repeat(100));
    expect((await api.fetch(bigInvalid)).status).toBe(413);
  });

  it('counts the bytes of a streamed body that declares no length', async () => {
    const api = createApi({ ...stackOptions(), bodyLimit: 64 });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 10; i += 1)
          controller.enqueue(new TextEncoder().encode('x'.repeat(10)));
        controller.close();
      },
    });
    const request = new Request(`${URL_BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect((await api.fetch(request)).status).toBe(413);
  });

  it('accepts a body of exactly the limit', async () => {
    const body = JSON.stringify(echoBody('hi'));
    const api = createApi({ ...stackOptions(), bodyLimit: new TextEncoder().encode(body).length });
    expect((await api.fetch(chatRequest(body))).status).toBe(200);
  });

  it.each([
    ['broken JSON', '{"model":'],
    ['an empty body', ''],
    ['invalid UTF-8', new Uint8Array([0x7b, 0xff, 0x7d])],
  ])('answers %s with 400 invalid_json', async (_what, body) => {
    const request = new Request(`${URL_BASE}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body,
    });
    expect(await errorOf(await stack.api.fetch(request))).toMatchObject({
      status: 400,
      code: 'invalid_json',
    });
  });

  it('validates the body before looking up the model', async () => {
    const response = await stack.api.fetch(chatRequest({ model: 'acme/nope', messages: 'hi' }));
    expect(await errorOf(response)).toMatchObject({ status: 400, param: 'messages' });
  });

  it('answers an unknown model with 404 model_not_found naming the model', async () => {
    const response = await stack.api.fetch(
      chatRequest({ ...echoBody('hi'), model: 'acme/gpt', n: 2 }),
    );
    expect(await errorOf(response)).toMatchObject({
      status: 404,
      code: 'model_not_found',
      param: 'model',
    });
  });

  it.each([
    ['n', { n: 2 }],
    ['logprobs', { logprobs: true }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['tool_choice', { tool_choice: 'required' }],
  ])(
    'answers a value the echo engine cannot honour (%s) with 400 unsupported_parameter',
    async (param, extra) => {
      const response = await stack.api.fetch(chatRequest(echoBody('hi', extra)));
      expect(await errorOf(response)).toMatchObject({
        status: 400,
        code: 'unsupported_parameter',
        param,
      });
    },
  );

  it('answers a forced tool_choice on the echo engine with 400 unsupported_parameter', async () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const response = await stack.api.fetch(
      chatRequest(echoBody('hi', { tools, tool_choice: 'required' })),
    );
    expect(await errorOf(response)).toMatchObject({
      code: 'unsupported_parameter',
      param: 'tool_choice',
    });
  });

  it('calls the tool a /call message names on the echo engine, and echoes the tool’s answer after', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather' } }];
    const call = await stack.api.fetch(
      chatRequest(echoBody('/call get_weather {"city":"Paris"}', { tools })),
    );
    const body = (await call.json()) as {
      choices: { message: { content: unknown; tool_calls: unknown }; finish_reason: string }[];
    };
    expect(body.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: null,
        tool_calls: [
          {
            id: 'call_echo_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
    });
    const answer = await stack.api.fetch(
      chatRequest({
        model: 'hearth/echo',
        tools,
        messages: [
          { role: 'user', content: '/call get_weather {"city":"Paris"}' },
          { role: 'assistant', tool_calls: body.choices[0]?.message.tool_calls },
          { role: 'tool', tool_call_id: 'call_echo_0', content: 'Sunny' },
        ],
      }),
    );
    const reply = (await answer.json()) as { choices: { message: { content: string } }[] };
    expect(reply.choices[0]?.message.content).toBe('Sunny');
  });

  it('asks the directory whether the device can run the model, after the capability checks', async () => {
    const api = createApi({
      ...stackOptions(),
      models: staticDirectory(async () => {
        throw new OpenAIError('webgpu_unavailable', 'no GPU', { shouldRetry: false });
      }),
    });
    const unsupported = await api.fetch(chatRequest(echoBody('hi', { n: 2 })));
    expect(unsupported.status).toBe(400);
    const response = await api.fetch(chatRequest(echoBody('hi')));
    expect(response.headers.get('x-should-retry')).toBe('false');
    expect(await errorOf(response)).toMatchObject({ status: 503, code: 'webgpu_unavailable' });
  });

  it('answers a full queue with 429 queue_full and retry-after', async () => {
    stack.close();
    stack = echoStack({ maxWaiting: 1 });
    const slow = echoBody('a b c d e f g h', { echo_delay_ms: 50 });
    const running = stack.api.fetch(chatRequest(slow));
    const waiting = stack.api.fetch(chatRequest(slow));
    await sleep(20);
    const response = await stack.api.fetch(chatRequest(echoBody('hi')));
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await errorOf(response)).toMatchObject({
      status: 429,
      code: 'queue_full',
      type: 'rate_limit_error',
    });
    await Promise.all([(await running).text(), (await waiting).text()]);
  });
});

describe('headers', () => {
  it('gives every response, success or error, its own x-request-id', async () => {
    const responses = await Promise.all([
      stack.api.fetch(getRequest('/v1/models')),
      stack.api.fetch(getRequest('/v1/nope')),
      stack.api.fetch(chatRequest(echoBody('hi'))),
      stack.api.fetch(chatRequest(echoBody('hi', { stream: true }))),
      stack.api.fetch(new Request(`${URL_BASE}/v1/models`)),
    ]);
    const ids = responses.map((r) => r.headers.get('x-request-id'));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sends a stream as text/event-stream, uncached', async () => {
    const response = await stack.api.fetch(chatRequest(echoBody('hi', { stream: true })));
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    await response.text();
  });
});

describe('the status line and the first token', () => {
  it('waits for the first token and then answers 200', async () => {
    const backend = scriptedBackend(async function* () {
      yield { type: 'state', state: 'queued' };
      await sleep(30);
      yield { type: 'state', state: 'running' };
      yield { type: 'tokens', tokens: ['hi'] };
      yield end();
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi')));
    expect(response.status).toBe(200);
  });

  it('answers an error before the first token with its own status', async () => {
    const backend = scriptedBackend(async function* () {
      yield { type: 'state', state: 'running' };
      throw new OpenAIError('context_length_exceeded', 'too long', { param: 'messages' });
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi', { stream: true })));
    expect(await errorOf(response)).toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
      param: 'messages',
    });
  });

  it.each([
    ['queued', 'engine_busy', '10'],
    ['running', 'engine_busy', '10'],
    ['loading', 'model_loading', '30'],
  ] as const)(
    'answers 503 when no token came in time while %s, and cancels the request',
    async (state, code, retryAfter) => {
      const backend = scriptedBackend(async function* (signal) {
        yield { type: 'state', state };
        await new Promise((resolve) => signal.addEventListener('abort', resolve));
      });
      const api = createApi({ backend, models: staticDirectory(), firstTokenTimeoutMs: 40 });
      const response = await api.fetch(chatRequest(echoBody('hi')));
      expect(response.headers.get('retry-after')).toBe(retryAfter);
      expect(await errorOf(response)).toMatchObject({ status: 503, code });
      expect(backend.signals[0]?.aborted).toBe(true);
    },
  );

  it('ends a stream that fails after its first token with one error event and no [DONE]', async () => {
    const backend = scriptedBackend(async function* () {
      yield { type: 'tokens', tokens: ['a '] };
      throw new OpenAIError('engine_error', 'GPU lost');
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi', { stream: true })));
    expect(response.status).toBe(200);
    const events = await sseData(response);
    expect(events).toHaveLength(2);
    expect(events[1]).toEqual({
      error: { message: 'GPU lost', type: 'server_error', param: null, code: 'engine_error' },
    });
  });

  it('cuts off a non-streamed body that fails after the status line', async () => {
    const backend = scriptedBackend(async function* () {
      yield { type: 'tokens', tokens: ['a '] };
      throw new OpenAIError('engine_error', 'GPU lost');
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi')));
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it('answers a programming error in the API layer with 500 server_error, not engine_error', async () => {
    const models: ModelDirectory = {
      list: async () => [],
      resolve: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'id')");
      },
    };
    const api = createApi({ ...stackOptions(), models });
    const error = await errorOf(await api.fetch(chatRequest(echoBody('hi'))));
    expect(error).toMatchObject({ status: 500, type: 'server_error', code: 'server_error' });
    expect(error.message).toMatch(/internal error/i);
    expect(error.message).toContain('TypeError');
  });

  it('treats a backend that ends without an end event as an engine error', async () => {
    const backend = scriptedBackend(async function* () {
      yield { type: 'state', state: 'running' };
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi')));
    expect(await errorOf(response)).toMatchObject({ status: 500, code: 'engine_error' });
  });

  it('aborts the request when the client cancels the stream', async () => {
    const backend = scriptedBackend(async function* (signal) {
      for (let i = 0; !signal.aborted; i += 1) {
        yield { type: 'tokens', tokens: [`${i} `] };
        await sleep(5);
      }
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi', { stream: true })));
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    expect(backend.signals[0]?.aborted).toBe(true);
  });

  it('aborts the request when the client cancels a non-streamed body', async () => {
    const backend = scriptedBackend(async function* (signal) {
      yield { type: 'tokens', tokens: ['a '] };
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
    });
    const api = createApi({ backend, models: staticDirectory() });
    const response = await api.fetch(chatRequest(echoBody('hi')));
    await response.body!.cancel();
    expect(backend.signals[0]?.aborted).toBe(true);
  });
});

describe('adding GGUF models: routes and order of checks', () => {
  const GGUF_ID = 'acme/Tiny-GGUF:Q4_0';
  /** The echo stack with the adding endpoints, over a catalogue that knows GGUF_ID. */
  function adding() {
    const added: string[] = [];
    const tiny = { ...ECHO_MODEL, id: GGUF_ID, owned_by: 'acme' };
    const api = createApi({
      ...stackOptions(),
      // The GGUF is on the device: listed, so that `GET …/models/{id}` finds it.
      models: staticModelDirectory([ECHO_MODEL, tiny]),
      adding: {
        appUrl: `${URL_BASE}/`,
        fetch: async () => new Response(new Uint8Array([0x47, 0x47, 0x55, 0x46])),
        caches: {
          open: async () => ({
            match: async () => undefined,
            put: async () => undefined,
            delete: async () => false,
          }),
        },
        catalog: {
          has: async (id) => id === GGUF_ID,
          add: async (record) => (added.push(record.id), { id: record.id }),
          modelUsing: async () => undefined,
        },
      },
    });
    return { api, added };
  }
  const post = (body: string, headers: Record<string, string> = {}) =>
    new Request(`${URL_BASE}/v1/hearth/models`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json', ...headers },
      body,
    });

  it('offers POST /v1/hearth/models only to an API given the means to add models', async () => {
    const response = await stack.api.fetch(post(JSON.stringify({ source: 'x.gguf' })));
    expect(await errorOf(response)).toMatchObject({ status: 404, code: 'unknown_url' });
    const ok = await adding().api.fetch(post(JSON.stringify({ source: 'm/x.gguf' })));
    expect(ok.status).toBe(201);
    expect(await ok.json()).toEqual({ id: 'local/x:GGUF' });
  });

  it('answers GET /v1/hearth/models with 405, allowing POST', async () => {
    const response = await adding().api.fetch(getRequest('/v1/hearth/models'));
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('checks auth, then the content type, then the size, then the body', async () => {
    const { api, added } = adding();
    const body = JSON.stringify({ source: 'm/x.gguf' });
    expect((await api.fetch(post(body, { authorization: '' }))).status).toBe(401);
    expect((await api.fetch(post(body, { 'content-type': 'text/plain' }))).status).toBe(415);
    const big = JSON.stringify({ source: 'm/x.gguf', id: 'x'.repeat(70_000) });
    expect(await errorOf(await api.fetch(post(big)))).toMatchObject({ status: 413 });
    expect(await errorOf(await api.fetch(post('{')))).toMatchObject({ code: 'invalid_json' });
    expect(added).toEqual([]);
  });

  it('refuses a taken id before it looks at the source', async () => {
    const response = await adding().api.fetch(
      post(JSON.stringify({ source: 'https://nowhere.invalid/x.gguf', id: GGUF_ID })),
    );
    expect(await errorOf(response)).toMatchObject({
      status: 409,
      code: 'model_exists',
      param: 'id',
    });
  });

  it.each([
    `/v1/openai/models/${GGUF_ID}`,
    '/v1/openai/models/acme%2FTiny-GGUF%3AQ4_0',
    '/v1/models/acme/Tiny-GGUF%3AQ4_0',
  ])('retrieves a model whose id holds a colon at %s', async (path) => {
    const response = await adding().api.fetch(getRequest(path));
    expect(response.status).toBe(200);
    expect(((await response.json()) as { id: string }).id).toBe(GGUF_ID);
  });

  it.each([
    ['acme/Tiny-GGUF:Q4_0/load', { id: GGUF_ID, action: 'load' }],
    ['acme%2FTiny-GGUF%3AQ4_0/download', { id: GGUF_ID, action: 'download' }],
    ['acme/Tiny-GGUF%3AQ4_0', { id: GGUF_ID, action: '' }],
  ])('reads the GGUF id and action of hearth/models/%s', (rest, expected) => {
    expect(parseModelPath(rest)).toEqual(expected);
  });
});
