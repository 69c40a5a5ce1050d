/**
 * Plain `fetch` from a page of the app: the exact bytes, headers and JSON shapes on the wire.
 */
import { expect, type Page } from '@playwright/test';
import { sharedAppTest } from './warm-context';
import { MODEL_PORT, ModelServer } from './model-server';

interface WireResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** A fetch made by the page (so through its service worker); headers and the whole body. */
function pageFetch(
  page: Page,
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
) {
  return page.evaluate(
    async ({ path, init }) => {
      const response = await fetch(path, init);
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers),
        text: await response.text(),
      } as WireResponse;
    },
    { path, init },
  );
}

const KEY = { authorization: 'Bearer sk-local' };
const JSON_KEY = { ...KEY, 'content-type': 'application/json' };
const chat = (body: unknown) => ({ method: 'POST', headers: JSON_KEY, body: JSON.stringify(body) });

// Every test here sends requests and reads the answers: one page of the app serves them all.
const test = sharedAppTest();

test('streams exactly the bytes of docs/api.md (Responses), event by event', async ({ page }) => {
  const response = await pageFetch(
    page,
    'v1/openai/chat/completions',
    chat({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'Hi there' }],
      stream: true,
      stream_options: { include_usage: true },
    }),
  );
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
  expect(response.headers['cache-control']).toBe('no-cache');
  expect(response.headers['x-request-id']).toMatch(/^req_[0-9a-f]{32}$/);
  const id = /"id":"(chatcmpl-[0-9a-f]{32})"/.exec(response.text)?.[1];
  const created = /"created":(\d+)/.exec(response.text)?.[1];
  expect(id).toBeDefined();
  const head = `{"id":"${id}","object":"chat.completion.chunk","created":${created},"model":"hearth/echo","choices":`;
  expect(response.text).toBe(
    `data: ${head}[{"index":0,"delta":{"role":"assistant","content":"Hi "},"logprobs":null,"finish_reason":null}],"usage":null}\n\n` +
      `data: ${head}[{"index":0,"delta":{"content":"there"},"logprobs":null,"finish_reason":null}],"usage":null}\n\n` +
      `data: ${head}[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}\n\n` +
      `data: ${head}[],"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4,"estimated_cost":0}}\n\n` +
      'data: [DONE]\n\n',
  );
});

test('streams without usage fields when include_usage is not set', async ({ page }) => {
  const response = await pageFetch(
    page,
    'v1/chat/completions',
    chat({ model: 'hearth/echo', messages: [{ role: 'user', content: 'x' }], stream: true }),
  );
  const events = response.text.split('\n\n').filter(Boolean);
  expect(events).toHaveLength(3);
  expect(events.at(-1)).toBe('data: [DONE]');
  expect(response.text).not.toContain('usage');
});

test('streams an empty reply as the role chunk, the final chunk and [DONE]', async ({ page }) => {
  const response = await pageFetch(
    page,
    'v1/openai/chat/completions',
    chat({ model: 'hearth/echo', messages: [{ role: 'user', content: '' }], stream: true }),
  );
  const events = response.text.split('\n\n').filter(Boolean);
  expect(events.map((e) => (e === 'data: [DONE]' ? e : JSON.parse(e.slice(6)).choices[0]))).toEqual(
    [
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
      'data: [DONE]',
    ],
  );
});

test('escapes U+2028, U+2029 and U+0085 inside SSE events', async ({ page }) => {
  const response = await pageFetch(
    page,
    'v1/openai/chat/completions',
    chat({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'a\u2028b\u2029c\u0085d' }],
      stream: true,
    }),
  );
  // U+2028 and U+2029 are whitespace to the echo tokenizer, so they end tokens.
  expect(response.text).toContain('"content":"a\\u2028"');
  expect(response.text).toContain('"content":"b\\u2029"');
  expect(response.text).toContain('"content":"c\\u0085d"');
  expect(response.text).not.toMatch(/[\u2028\u2029\u0085]/);
});

test('answers a non-streamed request with the JSON shape of docs/api.md (Responses)', async ({
  page,
}) => {
  const response = await pageFetch(
    page,
    'v1/openai/chat/completions',
    chat({
      model: 'hearth/echo',
      messages: [
        { role: 'developer', content: 'D' },
        { role: 'user', content: 'lone \ud800 surrogate' },
      ],
    }),
  );
  expect(response.status).toBe(200);
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers['x-request-id']).toMatch(/^req_/);
  const body = JSON.parse(response.text);
  expect(Object.keys(body)).toEqual(['id', 'object', 'created', 'model', 'choices', 'usage']);
  expect(body).toEqual({
    id: expect.stringMatching(/^chatcmpl-/),
    object: 'chat.completion',
    created: expect.any(Number),
    model: 'hearth/echo',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: '[D] lone \uFFFD surrogate', refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8, estimated_cost: 0 },
  });
  expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(600);
});

test('lists models in the OpenAI list shape', async ({ page }) => {
  const response = await pageFetch(page, 'v1/openai/models', { headers: KEY });
  expect(JSON.parse(response.text)).toEqual({
    object: 'list',
    data: [
      {
        id: 'hearth/echo',
        object: 'model',
        created: expect.any(Number),
        owned_by: 'hearth',
        context_window: expect.any(Number),
        vision: true,
      },
    ],
  });
});

test.describe('errors on the wire', () => {
  const cases: [
    string,
    string,
    { method?: string; headers?: Record<string, string>; body?: string },
    number,
    string,
  ][] = [
    ['no key', 'v1/openai/models', {}, 401, 'invalid_api_key'],
    [
      'an unknown path',
      'v1/openai/audio/speech',
      { method: 'POST', headers: JSON_KEY, body: '{}' },
      404,
      'unknown_url',
    ],
    ['a wrong method', 'v1/openai/chat/completions', { headers: KEY }, 405, 'method_not_allowed'],
    [
      'a text body',
      'v1/openai/chat/completions',
      { method: 'POST', headers: { ...KEY, 'content-type': 'text/plain' }, body: '{}' },
      415,
      'unsupported_media_type',
    ],
    [
      'broken JSON',
      'v1/openai/chat/completions',
      { method: 'POST', headers: JSON_KEY, body: '{"model":' },
      400,
      'invalid_json',
    ],
    [
      'an unknown model',
      'v1/openai/chat/completions',
      chat({ model: 'x/y', messages: [{ role: 'user', content: 'x' }] }),
      404,
      'model_not_found',
    ],
  ];
  for (const [what, path, init, status, code] of cases) {
    test(`answers ${what} with ${status} ${code}, as JSON with a request id`, async ({ page }) => {
      const response = await pageFetch(page, path, init);
      expect(response.status).toBe(status);
      expect(response.headers['content-type']).toBe('application/json');
      expect(response.headers['x-request-id']).toMatch(/^req_/);
      const body = JSON.parse(response.text);
      expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
      expect(body.error).toMatchObject({
        message: expect.any(String),
        type: expect.any(String),
        code,
      });
    });
  }

  test('answers a body over 4 MiB with 413 and the next request still works', async ({ page }) => {
    const big = JSON.stringify({
      model: 'hearth/echo',
      messages: [{ role: 'user', content: 'x'.repeat(4 * 1024 * 1024) }],
    });
    const response = await pageFetch(page, 'v1/openai/chat/completions', {
      method: 'POST',
      headers: JSON_KEY,
      body: big,
    });
    expect(response.status).toBe(413);
    const next = await pageFetch(
      page,
      'v1/openai/chat/completions',
      chat({ model: 'hearth/echo', messages: [{ role: 'user', content: 'ok' }] }),
    );
    expect(next.status).toBe(200);
  });

  test('answers a prompt over the context window with 400 context_length_exceeded before any byte', async ({
    page,
  }) => {
    const words = 'a '.repeat(1_048_577);
    const response = await pageFetch(
      page,
      'v1/openai/chat/completions',
      chat({ model: 'hearth/echo', messages: [{ role: 'user', content: words }], stream: true }),
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.text).error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'messages',
    });
  });
});

test.describe('requests the API does not own', () => {
  test('fall through to the static server', async ({ page }) => {
    const index = await pageFetch(page, './');
    expect(index.status).toBe(200);
    expect(index.text).toContain('<hearth-app>');
    // Not under /v1/: the service worker leaves it alone, so no API JSON comes back.
    const near = await pageFetch(page, 'v1x/openai/models', { headers: KEY });
    expect(near.headers['x-request-id']).toBeUndefined();
  });

  test('include /v1/ paths on other origins: they reach that origin, not the API', async ({
    page,
  }) => {
    // The model server is another origin the page's CSP lets it fetch (the catalogue's host), so
    // the request does reach the service worker's fetch handler: only its origin check keeps the
    // API from answering it (a 401 JSON error here, as no key is sent).
    const server = new ModelServer();
    await server.start();
    try {
      const response = await pageFetch(page, `http://localhost:${MODEL_PORT}/v1/openai/models`);
      expect(server.count('/v1/openai/models')).toBe(1);
      expect(response).toMatchObject({ status: 404, text: 'not found' });
      expect(response.headers['x-request-id']).toBeUndefined();
    } finally {
      await server.stop();
    }
  });
});
