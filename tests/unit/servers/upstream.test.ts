import { describe, expect, it } from 'vitest';
import type { ChatEvent } from '../../../src/protocol/host/backend';
import { parseEmbeddingRequest } from '../../../src/api/embeddings';
import { ECHO_MODEL, remoteModelInfo, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import {
  memoryServerStore,
  Servers,
  type FetchLike,
  type ServerRecord,
} from '../../../src/servers/servers';
import { UpstreamBackend } from '../../../src/servers/upstream';
import { parseChatRequest } from '../../../src/protocol/validate';
import { chatRequest, forwardTo, scriptedBackend, sseData } from '../helpers';

const BOX: ServerRecord = {
  name: 'box',
  base_url: 'http://box:8000/v1',
  api_key: 'sk-box-key',
  models: ['meta-llama/Llama-3-8B', 'embedder'],
  hidden: [],
  added_at: 1,
};
const OPEN: ServerRecord = {
  name: 'open',
  base_url: 'http://open:11434/v1',
  models: ['qwen'],
  hidden: [],
  added_at: 2,
};

interface Sent {
  url: string;
  init: RequestInit | undefined;
}

/** A backend over the two servers whose fetch answers `answer`, recording what it sent. */
function upstream(
  answer: (url: string, init: RequestInit | undefined) => Response | Promise<Response>,
  headersTimeoutMs?: number,
) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    sent.push({ url, init });
    return answer(url, init);
  };
  const servers = new Servers(memoryServerStore([BOX, OPEN]), {
    fetch,
    organisations: async () => new Set(),
  });
  const backend = new UpstreamBackend({
    resolve: (id) => servers.resolve(id),
    fetch,
    origin: 'https://app.example',
    ...(headersTimeoutMs !== undefined && { headersTimeoutMs }),
  });
  return { backend, servers, sent, fetch };
}

/** Bytes of `text` cut into pieces of `size` bytes (1: every byte apart, mid-character too). */
function piecesOf(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

/** A response body that hands out `pieces` one per read, and records whether it was cancelled. */
function bodyOf(pieces: Uint8Array[], { endless = false } = {}) {
  let i = 0;
  const state = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(pieces[i++]!);
      else if (!endless) controller.close();
      else return new Promise<void>(() => undefined);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

const sseResponse = (stream: ReadableStream<Uint8Array>) =>
  new Response(stream, { headers: { 'content-type': 'text/event-stream' } });

/** An SSE text of `chunks` (JSON-encoded), `[DONE]` unless told, with `eol` line ends. */
function sse(chunks: unknown[], { done = true, eol = '\n' } = {}): string {
  const events = chunks.map((c) => (typeof c === 'string' ? c : JSON.stringify(c)));
  if (done) events.push('[DONE]');
  return events.map((e) => `data: ${e}${eol}${eol}`).join('');
}

const chunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  usage?: Record<string, number> | null,
) => ({
  id: 'upstream-id',
  object: 'chat.completion.chunk',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...(usage !== undefined && { usage }),
});

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'box/meta-llama/Llama-3-8B',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

/** Every event of one chat, or what it threw. */
async function chatEvents(
  backend: UpstreamBackend,
  body: Record<string, unknown>,
  signal = new AbortController().signal,
): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of backend.chat(parseChatRequest(body), { signal, body })) {
    events.push(event);
  }
  return events;
}

/** The text of the tokens events (reasoning marked with «»). */
function textOf(events: ChatEvent[]): string {
  return events
    .flatMap((e) => (e.type === 'tokens' ? e.tokens : []))
    .map((t) => (typeof t === 'string' ? t : t.reasoning ? `«${t.text}»` : t.text))
    .join('');
}

const endOf = (events: ChatEvent[]) => events.find((e) => e.type === 'end');

describe('UpstreamBackend.chat, streamed', () => {
  const STORY = [
    chunk({ role: 'assistant', content: '' }),
    chunk({ content: 'Grüße ' }),
    chunk({ content: 'aus 🏔️ ' }),
    chunk({ content: 'Zürich' }),
    chunk({}, 'stop'),
  ];

  it.each([
    ['every byte apart (mid-line, mid-character)', 1, '\n'],
    ['in pieces of 7 bytes', 7, '\n'],
    ['whole', 1 << 20, '\n'],
    ['every byte apart, with \\r\\n line ends', 1, '\r\n'],
    ['in pieces of 5 bytes, with \\r\\n line ends', 5, '\r\n'],
  ])('reads the tokens in order when the stream comes %s', async (_how, size, eol) => {
    const { backend } = upstream(() =>
      sseResponse(bodyOf(piecesOf(sse(STORY, { eol }), size)).stream),
    );
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(events[0]).toEqual({ type: 'state', state: 'running' });
    expect(textOf(events)).toBe('Grüße aus 🏔️ Zürich');
    expect(events.at(-1)).toEqual({ type: 'end', finish_reason: 'stop', usage: null });
    expect(events.filter((e) => e.type === 'end')).toHaveLength(1);
  });

  it('reads events whose data spans several data: lines, and skips comments and other fields', async () => {
    const text =
      ': keep-alive\n\nevent: message\nid: 1\ndata: {"choices":[{"index":0,\ndata: "delta":{"content":"a"}}]}\n\n' +
      `data:${JSON.stringify(chunk({ content: 'b' }, 'stop'))}\n\ndata: [DONE]\n\n`;
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 3)).stream));
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(textOf(events)).toBe('ab');
  });

  it('gives reasoning_content as reasoning tokens, before the content of the same chunk', async () => {
    const text = sse([
      chunk({ reasoning_content: 'think ' }),
      chunk({ reasoning_content: 'more', content: 'Answer' }),
      chunk({ content: '!' }, 'stop'),
    ]);
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 4)).stream));
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(events.filter((e) => e.type === 'tokens')).toEqual([
      { type: 'tokens', tokens: [{ text: 'think ', reasoning: true }] },
      { type: 'tokens', tokens: [{ text: 'more', reasoning: true }, 'Answer'] },
      { type: 'tokens', tokens: ['!'] },
    ]);
  });

  it('merges tool call deltas by index: two calls, their arguments in pieces', async () => {
    const call = (index: number, fields: Record<string, unknown>) =>
      chunk({ tool_calls: [{ index, ...fields }] });
    const text = sse([
      chunk({ role: 'assistant' }),
      call(0, { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }),
      call(0, { function: { arguments: '{"city":' } }),
      call(1, { id: 'call_b', type: 'function', function: { name: 'get_time' } }),
      call(0, { function: { arguments: '"Paris"}' } }),
      call(1, { function: { arguments: '{"tz":"CET"}' } }),
      chunk({}, 'tool_calls'),
    ]);
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 9)).stream));
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(events.filter((e) => e.type === 'tool_calls')).toEqual([
      {
        type: 'tool_calls',
        calls: [
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'get_time', arguments: '{"tz":"CET"}' },
          },
        ],
      },
    ]);
    expect(endOf(events)).toMatchObject({ finish_reason: 'tool_calls' });
  });

  it('takes usage from the last chunk that has it (usage on every chunk)', async () => {
    const text = sse([
      chunk({ content: 'a' }, null, { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 }),
      chunk({ content: 'b' }, null, { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 }),
      chunk({}, 'length', { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 }),
      // The usage chunk of include_usage: no choices.
      {
        id: 'x',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { prompt_tokens: 9, completion_tokens: 4 },
      },
    ]);
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 11)).stream));
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(endOf(events)).toEqual({
      type: 'end',
      finish_reason: 'length',
      usage: { prompt_tokens: 9, completion_tokens: 4 },
    });
  });

  it('keeps the last usage when later chunks carry usage: null', async () => {
    const text = sse([
      chunk({ content: 'a' }, null, { prompt_tokens: 5, completion_tokens: 1 }),
      chunk({}, 'stop', null),
    ]);
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 1 << 20)).stream));
    expect(endOf(await chatEvents(backend, chatBody({ stream: true })))).toMatchObject({
      usage: { prompt_tokens: 5, completion_tokens: 1 },
    });
  });

  it('ends with usage null when no chunk has usage', async () => {
    const { backend } = upstream(() =>
      sseResponse(bodyOf(piecesOf(sse([chunk({ content: 'a' }, 'stop')]), 2)).stream),
    );
    expect(endOf(await chatEvents(backend, chatBody({ stream: true })))).toEqual({
      type: 'end',
      finish_reason: 'stop',
      usage: null,
    });
  });

  it('ends fine without [DONE] when a chunk gave a finish_reason', async () => {
    const text = sse([chunk({ content: 'a' }), chunk({ content: 'b' }, 'stop')], { done: false });
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 3)).stream));
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(textOf(events)).toBe('ab');
    expect(endOf(events)).toMatchObject({ finish_reason: 'stop' });
  });

  it('reads a last event that has no blank line after it', async () => {
    const text = `data: ${JSON.stringify(chunk({ content: 'a' }, 'stop'))}`;
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 4)).stream));
    const events = await chatEvents(backend, chatBody({ stream: true }));
    expect(textOf(events)).toBe('a');
    expect(endOf(events)).toMatchObject({ finish_reason: 'stop' });
  });

  it('ends a stream that has [DONE] but no finish_reason with stop', async () => {
    const text = sse([chunk({ content: 'a' })]);
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 3)).stream));
    expect(endOf(await chatEvents(backend, chatBody({ stream: true })))).toMatchObject({
      finish_reason: 'stop',
    });
  });

  it('answers a stream cut before finish_reason and [DONE] with upstream_error', async () => {
    const text = sse([chunk({ content: 'a' }), chunk({ content: 'b' })], { done: false });
    const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 3)).stream));
    const events: ChatEvent[] = [];
    const body = chatBody({ stream: true });
    const err = await (async () => {
      for await (const e of backend.chat(parseChatRequest(body), {
        signal: new AbortController().signal,
        body,
      })) {
        events.push(e);
      }
    })().catch((e) => e);
    expect(textOf(events)).toBe('ab');
    expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(err.message).toMatch(/box.*ended its stream/);
  });

  it.each([
    ['OpenAI', { error: { message: 'CUDA out of memory', type: 'server_error' } }],
    ['Ollama', { error: 'CUDA out of memory' }],
  ])(
    'answers an in-band %s error event with upstream_error carrying its message',
    async (_d, e) => {
      const text = sse([chunk({ content: 'a' }), e]);
      const { backend } = upstream(() => sseResponse(bodyOf(piecesOf(text, 6)).stream));
      const err = await chatEvents(backend, chatBody({ stream: true })).catch((x) => x);
      expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
      expect(err.message).toContain('CUDA out of memory');
    },
  );

  it('answers an event that is not JSON with upstream_error', async () => {
    const text = sse([chunk({ content: 'a' }), 'this is not json']);
    const { backend, sent } = upstream(() => sseResponse(bodyOf(piecesOf(text, 6)).stream));
    const err = await chatEvents(backend, chatBody({ stream: true })).catch((x) => x);
    expect(err).toMatchObject({ code: 'upstream_error', status: 502 });
    expect(err.message).toContain('this is not json');
    expect(sent).toHaveLength(1);
  });

  it('cancels the response body when the stream fails', async () => {
    const text = sse([chunk({ content: 'a' }), 'this is not json', chunk({ content: 'b' })]);
    const body = bodyOf(piecesOf(text, 1 << 20), { endless: true });
    const { backend } = upstream(() => sseResponse(body.stream));
    await chatEvents(backend, chatBody({ stream: true })).catch(() => undefined);
    expect(body.state.cancelled).toBe(true);
  });
});

describe('UpstreamBackend: the request it sends', () => {
  it("sends the client's body with model rewritten, and the key as a bearer", async () => {
    const { backend, sent } = upstream(() =>
      Response.json({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }),
    );
    const body = chatBody({
      temperature: 0.3,
      max_tokens: 12,
      stop: ['\n'],
      response_format: { type: 'json_object' },
      user: 'someone',
    });
    await chatEvents(backend, body);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url).toBe('http://box:8000/v1/chat/completions');
    expect(sent[0]!.init?.method).toBe('POST');
    const headers = new Headers(sent[0]!.init?.headers);
    expect(headers.get('authorization')).toBe('Bearer sk-box-key');
    expect(headers.get('content-type')).toBe('application/json');
    expect(JSON.parse(sent[0]!.init!.body as string)).toEqual({
      ...body,
      model: 'meta-llama/Llama-3-8B',
    });
  });

  it('sends no authorization header to a server without a key', async () => {
    const { backend, sent } = upstream(() =>
      Response.json({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }),
    );
    await chatEvents(backend, chatBody({ model: 'open/qwen' }));
    expect(sent[0]!.url).toBe('http://open:11434/v1/chat/completions');
    expect(new Headers(sent[0]!.init?.headers).has('authorization')).toBe(false);
    expect(JSON.parse(sent[0]!.init!.body as string)).toMatchObject({ model: 'qwen' });
  });

  it('answers a model that is no server model (any more) with 404 model_not_found', async () => {
    const { backend, servers, sent } = upstream(() => Response.json({}));
    await servers.offer('box', { offered: ['embedder'] });
    await expect(chatEvents(backend, chatBody())).rejects.toMatchObject({
      code: 'model_not_found',
      status: 404,
      param: 'model',
    });
    expect(sent).toHaveLength(0);
  });
});

describe('UpstreamBackend: errors before the reply', () => {
  it.each([
    [
      400,
      'OpenAI',
      { error: { message: 'max_tokens is too large', type: 'invalid_request_error' } },
      'max_tokens is too large',
      'invalid_request_error',
    ],
    [
      404,
      'Ollama',
      { error: 'model "qwen" not found, try pulling it first' },
      'try pulling it first',
      'not_found_error',
    ],
    [
      400,
      'vLLM',
      {
        object: 'error',
        message: 'This model has a context of 8192 tokens',
        type: 'BadRequestError',
        code: 400,
      },
      'context of 8192',
      'invalid_request_error',
    ],
    [
      422,
      'FastAPI',
      { detail: [{ loc: ['body', 'messages'], msg: 'field required' }] },
      'field required',
      'invalid_request_error',
    ],
    [500, 'plain text', 'Internal Server Error', 'Internal Server Error', 'server_error'],
    [
      401,
      'OpenAI',
      { error: { message: 'Incorrect API key' } },
      'Incorrect API key',
      'authentication_error',
    ],
    [503, 'plain text', 'loading model', 'loading model', 'unavailable_error'],
  ])(
    'keeps the status %i of a %s error body, with its message inside',
    async (status, _d, body, message, type) => {
      const { backend } = upstream(() =>
        typeof body === 'string' ? new Response(body, { status }) : Response.json(body, { status }),
      );
      const err = await chatEvents(backend, chatBody({ stream: true })).catch((x) => x);
      expect(err).toMatchObject({ code: 'upstream_error', status, type });
      expect(err.message).toContain(message);
      expect(err.message).toContain(`HTTP ${status}`);
      expect(err.toBody().error).toMatchObject({ code: 'upstream_error', type });
    },
  );

  it('passes on retry-after of a 429', async () => {
    const { backend } = upstream(
      () =>
        new Response('{"error":{"message":"slow down"}}', {
          status: 429,
          headers: { 'retry-after': '7' },
        }),
    );
    const err = await chatEvents(backend, chatBody()).catch((x) => x);
    expect(err).toMatchObject({ status: 429, type: 'rate_limit_error', retryAfter: 7 });
    expect(err.responseHeaders()).toMatchObject({ 'retry-after': '7' });
  });

  it('answers a fetch that fails with 503 upstream_unavailable, saying CORS when a no-cors request answers', async () => {
    const { backend, sent } = upstream((_url, init) => {
      if (init?.mode === 'no-cors') return new Response(null);
      throw new TypeError('Failed to fetch');
    });
    const err = await chatEvents(backend, chatBody()).catch((x) => x);
    expect(err).toMatchObject({ code: 'upstream_unavailable', status: 503 });
    expect(err.message).toMatch(/CORS/);
    expect(err.message).toContain('https://app.example');
    expect(sent.map((s) => s.init?.mode)).toEqual([undefined, 'no-cors']);
  });

  it('answers a server that cannot be reached with 503 upstream_unavailable', async () => {
    const { backend } = upstream(() => {
      throw new TypeError('Failed to fetch');
    });
    const err = await chatEvents(backend, chatBody()).catch((x) => x);
    expect(err).toMatchObject({ code: 'upstream_unavailable', status: 503, retryAfter: 5 });
    expect(err.message).toMatch(/could not be reached/);
  });

  it('answers a server that sends no headers within headersTimeoutMs with 504 upstream_timeout', async () => {
    const { backend, sent } = upstream(
      (_url, init) =>
        new Promise((_resolve, reject) => {
          const signal = init!.signal!;
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
      30,
    );
    const err = await chatEvents(backend, chatBody({ stream: true })).catch((x) => x);
    expect(err).toMatchObject({ code: 'upstream_timeout', status: 504 });
    expect(sent).toHaveLength(1);
  });
});

describe('UpstreamBackend: abort', () => {
  it('aborts the fetch with the signal and cancels the reader when the consumer stops', async () => {
    const body = bodyOf(piecesOf(sse([chunk({ content: 'first' })], { done: false }), 1 << 20), {
      endless: true,
    });
    const { backend, sent } = upstream(() => sseResponse(body.stream));
    const controller = new AbortController();
    const request = chatBody({ stream: true });
    const events = backend.chat(parseChatRequest(request), {
      signal: controller.signal,
      body: request,
    });
    expect((await events.next()).value).toEqual({ type: 'state', state: 'running' });
    expect((await events.next()).value).toEqual({ type: 'tokens', tokens: ['first'] });
    const fetchSignal = sent[0]!.init!.signal!;
    expect(fetchSignal.aborted).toBe(false);
    controller.abort();
    expect(fetchSignal.aborted).toBe(true);
    expect(body.state.cancelled).toBe(false);
    await events.return(undefined);
    expect(body.state.cancelled).toBe(true);
  });

  it('throws the abort itself, not an upstream error, when aborted before the headers', async () => {
    const { backend, sent } = upstream(
      (_url, init) =>
        new Promise((_resolve, reject) => {
          const signal = init!.signal!;
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    );
    const controller = new AbortController();
    const request = chatBody({ stream: true });
    const pending = chatEvents(backend, request, controller.signal).catch((x) => x);
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const err = await pending;
    expect(err).toBeInstanceOf(DOMException);
    expect(err.name).toBe('AbortError');
    // No no-cors probe after an abort.
    expect(sent).toHaveLength(1);
  });
});

describe('UpstreamBackend.chat, not streamed', () => {
  it('gives a JSON reply (n = 1) as one tokens event, then the end with its usage', async () => {
    const { backend } = upstream(() =>
      Response.json({
        id: 'x',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hello there' },
            finish_reason: 'length',
          },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      }),
    );
    expect(await chatEvents(backend, chatBody())).toEqual([
      { type: 'state', state: 'running' },
      { type: 'tokens', tokens: ['Hello there'] },
      { type: 'end', finish_reason: 'length', usage: { prompt_tokens: 3, completion_tokens: 2 } },
    ]);
  });

  it('gives reasoning and tool calls of a JSON reply, and usage null when it has none', async () => {
    const calls = [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }];
    const { backend } = upstream(() =>
      Response.json({
        choices: [
          {
            message: { content: null, reasoning_content: 'hmm', tool_calls: calls },
            finish_reason: 'tool_calls',
          },
        ],
      }),
    );
    expect(await chatEvents(backend, chatBody())).toEqual([
      { type: 'state', state: 'running' },
      { type: 'tokens', tokens: [{ text: 'hmm', reasoning: true }, ''] },
      { type: 'tool_calls', calls },
      { type: 'end', finish_reason: 'tool_calls', usage: null },
    ]);
  });

  it('gives several choices (n = 2) as one choices event', async () => {
    const { backend } = upstream(() =>
      Response.json({
        choices: [
          { index: 0, message: { content: 'one' }, finish_reason: 'stop' },
          {
            index: 1,
            message: { content: 'two', reasoning_content: 'r' },
            finish_reason: 'length',
          },
        ],
        usage: { prompt_tokens: 4, completion_tokens: 6 },
      }),
    );
    const events = await chatEvents(backend, chatBody({ n: 2 }));
    expect(events.slice(1)).toEqual([
      {
        type: 'choices',
        choices: [
          { content: 'one', finish_reason: 'stop' },
          { content: 'two', reasoning: 'r', finish_reason: 'length' },
        ],
      },
      { type: 'end', finish_reason: 'stop', usage: { prompt_tokens: 4, completion_tokens: 6 } },
    ]);
  });

  it('reads a JSON reply when the client asked for a stream but the server sent no body', async () => {
    // Not reachable with a real server; documents that `stream` needs a body to be streamed.
    const { backend } = upstream(() => Response.json({ choices: [{ message: { content: 'x' } }] }));
    const events = await chatEvents(backend, chatBody());
    expect(textOf(events)).toBe('x');
    expect(endOf(events)).toMatchObject({ finish_reason: 'stop' });
  });
});

describe('UpstreamBackend.embed', () => {
  async function embed(backend: UpstreamBackend, body: Record<string, unknown>) {
    const events: ChatEvent[] = [];
    const call = parseEmbeddingRequest(body);
    for await (const e of backend.embed(call.request, {
      signal: new AbortController().signal,
      body,
    })) {
      events.push(e);
    }
    return events;
  }

  it.each(['base64', 'float', undefined])(
    'asks the server for floats whatever the client sent (%s), with model rewritten',
    async (encoding_format) => {
      const { backend, sent } = upstream(() =>
        Response.json({ data: [{ index: 0, embedding: [1, 2] }], usage: { prompt_tokens: 2 } }),
      );
      const body = {
        model: 'box/embedder',
        input: 'hello',
        dimensions: 2,
        ...(encoding_format && { encoding_format }),
      };
      await embed(backend, body);
      expect(sent[0]!.url).toBe('http://box:8000/v1/embeddings');
      expect(JSON.parse(sent[0]!.init!.body as string)).toEqual({
        model: 'embedder',
        input: ['hello'],
        dimensions: 2,
        encoding_format: 'float',
      });
    },
  );

  it('sorts the vectors by index, and takes prompt_tokens of usage', async () => {
    const { backend } = upstream(() =>
      Response.json({
        data: [
          { index: 2, embedding: [3, 3] },
          { index: 0, embedding: [1, 1] },
          { index: 1, embedding: [2, 2] },
        ],
        usage: { prompt_tokens: 6, total_tokens: 6 },
      }),
    );
    const events = await embed(backend, { model: 'box/embedder', input: ['a', 'b', 'c'] });
    expect(events[0]).toEqual({ type: 'state', state: 'running' });
    const last = events.at(-1) as Extract<ChatEvent, { type: 'embeddings' }>;
    expect(last.type).toBe('embeddings');
    expect(last.vectors.map((v) => [...v])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    expect(last.vectors[0]).toBeInstanceOf(Float32Array);
    expect(last.prompt_tokens).toBe(6);
  });

  it('gives prompt_tokens null when the server sends no usage', async () => {
    const { backend } = upstream(() => Response.json({ data: [{ embedding: [0.5] }] }));
    const events = await embed(backend, { model: 'box/embedder', input: 'a' });
    expect(events.at(-1)).toMatchObject({ type: 'embeddings', prompt_tokens: null });
  });

  it.each([
    ['too few vectors', { data: [{ index: 0, embedding: [1] }] }],
    ['too many vectors', { data: [0, 1, 2].map((index) => ({ index, embedding: [1] })) }],
    ['no data', {}],
    ['a vector of strings', { data: [0, 1].map((index) => ({ index, embedding: ['1'] })) }],
    ['a base64 vector', { data: [0, 1].map((index) => ({ index, embedding: 'AACAPw==' })) }],
  ])('answers %s with upstream_error', async (_what, reply) => {
    const { backend } = upstream(() => Response.json(reply));
    await expect(
      embed(backend, { model: 'box/embedder', input: ['a', 'b'] }),
    ).rejects.toMatchObject({ code: 'upstream_error', status: 502 });
  });
});

describe('server models through the API', () => {
  const MODEL = 'box/meta-llama/Llama-3-8B';

  function stack(answer: (url: string, init: RequestInit | undefined) => Response) {
    const { backend, sent } = upstream(answer);
    const api = createApi({
      backend: scriptedBackend(async function* () {}),
      models: staticModelDirectory(
        [
          ECHO_MODEL,
          remoteModelInfo(
            MODEL,
            { server: 'box', host: 'box:8000' },
            {
              prompt: 1e-6,
              completion: 2e-6,
            },
          ),
        ],
        { backend: forwardTo(backend) },
      ),
      servers: {
        registry: new Servers(memoryServerStore([BOX]), {
          fetch: async () => new Response(),
          organisations: async () => new Set(),
        }),
      },
    });
    return { api, sent };
  }

  it('forwards image parts untouched, a URL of another site too: the server reads its images itself', async () => {
    const { api, sent } = stack(() =>
      Response.json({ choices: [{ message: { content: 'a cat' }, finish_reason: 'stop' }] }),
    );
    const messages = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } },
        ],
      },
    ];
    const response = await api.fetch(chatRequest({ model: MODEL, messages }));
    expect(response.status).toBe(200);
    expect(JSON.parse(sent[0]!.init!.body as string).messages).toEqual(messages);
  });

  it("answers a streamed reply in Hearth's shape: one id, role first, final chunk, usage, [DONE]", async () => {
    const text = sse(
      [
        { id: 'up-1', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] },
        // vLLM with continuous usage: on every chunk; the role repeated; another id.
        {
          id: 'up-2',
          choices: [{ index: 0, delta: { role: 'assistant', content: 'lo' } }],
          usage: { prompt_tokens: 5, completion_tokens: 2 },
        },
        {
          id: 'up-3',
          choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 3 },
        },
      ],
      { done: false },
    );
    const { api, sent } = stack(() => sseResponse(bodyOf(piecesOf(text, 5)).stream));
    const response = await api.fetch(
      chatRequest({
        model: MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = await sseData(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as {
      id: string;
      object: string;
      model: string;
      choices: { delta: Record<string, unknown>; finish_reason: string | null }[];
      usage?: {
        prompt_tokens: number;
        completion_tokens: number;
        total_tokens: number;
        estimated_cost: number;
      } | null;
    }[];
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]!.id).not.toMatch(/^up-/);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === MODEL)).toBe(
      true,
    );
    expect(chunks[0]!.choices[0]!.delta).toMatchObject({ role: 'assistant' });
    const roles = chunks.filter((c) => c.choices[0]?.delta.role !== undefined);
    expect(roles).toHaveLength(1);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello');
    const final = chunks.at(-2)!;
    expect(final.choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' });
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(usage.usage!.estimated_cost).toBeCloseTo(5e-6 + 6e-6, 12);
    expect(JSON.parse(sent[0]!.init!.body as string)).toMatchObject({
      model: 'meta-llama/Llama-3-8B',
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('answers a JSON reply with usage null when the server sent none', async () => {
    const { api } = stack(() =>
      Response.json({
        choices: [{ message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop' }],
      }),
    );
    const response = await api.fetch(
      chatRequest({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      object: string;
      model: string;
      usage: unknown;
      choices: { message: { content: string }; finish_reason: string }[];
    };
    expect(body).toMatchObject({ object: 'chat.completion', model: MODEL, usage: null });
    expect(body.choices[0]).toMatchObject({ message: { content: 'Hi!' }, finish_reason: 'stop' });
  });

  it("answers an upstream 400 with Hearth's error body and the upstream's status", async () => {
    const { api } = stack(() =>
      Response.json({ object: 'error', message: 'too many tokens', code: 400 }, { status: 400 }),
    );
    const response = await api.fetch(
      chatRequest({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
    );
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    expect(body.error).toMatchObject({
      code: 'upstream_error',
      type: 'invalid_request_error',
      param: null,
    });
    expect(body.error.message).toContain('too many tokens');
  });

  it('answers embeddings of a server model in the encoding the client asked, usage null when none', async () => {
    const EMBEDDER = 'box/embedder';
    const { backend, sent } = upstream(() =>
      Response.json({
        data: [
          { index: 1, embedding: [0, 2] },
          { index: 0, embedding: [1, 0.5] },
        ],
      }),
    );
    const api = createApi({
      backend: scriptedBackend(async function* () {}),
      models: staticModelDirectory(
        [ECHO_MODEL, remoteModelInfo(EMBEDDER, { server: 'box', host: 'box:8000' })],
        { backend: forwardTo(backend) },
      ),
      servers: {
        registry: new Servers(memoryServerStore([BOX]), {
          fetch: async () => new Response(),
          organisations: async () => new Set(),
        }),
      },
    });
    const response = await api.fetch(
      chatRequest(
        { model: EMBEDDER, input: ['a', 'b'], encoding_format: 'base64' },
        { path: '/v1/openai/embeddings' },
      ),
    );
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      data: { index: number; embedding: string }[];
      model: string;
      usage: unknown;
    };
    expect(body).toMatchObject({ model: EMBEDDER, usage: null });
    const decoded = body.data.map((d) => [
      ...new Float32Array(Uint8Array.from(Buffer.from(d.embedding, 'base64')).buffer),
    ]);
    expect(decoded).toEqual([
      [1, 0.5],
      [0, 2],
    ]);
    expect(JSON.parse(sent[0]!.init!.body as string)).toMatchObject({
      model: 'embedder',
      encoding_format: 'float',
    });
  });

  it('ends a stream cut by the server with one in-band error event', async () => {
    const text = sse([chunk({ content: 'partial' })], { done: false });
    const { api } = stack(() => sseResponse(bodyOf(piecesOf(text, 4)).stream));
    const response = await api.fetch(
      chatRequest({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
    );
    expect(response.status).toBe(200);
    const events = await sseData(response);
    expect(events.at(-1)).toMatchObject({ error: { code: 'upstream_error' } });
    expect(events).not.toContain('[DONE]');
  });
});
