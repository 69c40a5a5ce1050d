/**
 * Hostile and clumsy requests, generated with fast-check, shared by the unit fuzz test (the API
 * in Node) and the browser one (the real service worker).
 */
import fc from 'fast-check';
import { faultOf, echoExpectation, type Reply } from './fuzz/oracle';
import type { FuzzCase } from './fuzz/generate';

/** A request as the fuzzers send it. */
export interface AbusiveRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  /** The body's bytes, or null for none. */
  body: number[] | null;
  /**
   * For a valid request sent as a well-behaved client sends it: the echo reply it must get,
   * exactly (tests/fuzz/oracle.ts), hostile text and all.
   */
  reply?: Reply;
}

const encoder = new TextEncoder();

/** Characters that break things: lone surrogates, line breakers, NUL, quotes, emoji. */
const nastyChar = fc.oneof(
  fc.constantFrom(
    '\uD800',
    '\uDFFF',
    '\u2028',
    '\u2029',
    '\u0085',
    '\u0000',
    '"',
    '\\',
    '\n',
    '😀',
    ' ',
  ),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom('a', 'b', 'hello', 'world'),
);
const nastyString = fc.string({ unit: nastyChar, maxLength: 40 });

/** Anything JSON can hold, bent towards the shapes the API reads. */
const jsonish: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    nastyString,
    fc.integer(),
    fc.double({ noNaN: true }),
    fc.constantFrom(1e308, -0, 2 ** 53 + 1, 0.5, -1),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const part = fc.oneof(
  fc.record({ type: fc.constant('text'), text: fc.oneof(nastyString, jsonish) }),
  fc.record({
    type: fc.constantFrom('image_url', 'input_audio', 'file', 'refusal', 'wat'),
    x: jsonish,
  }),
  jsonish,
);

const message = fc.record(
  {
    role: fc.oneof(
      fc.constantFrom(
        'user',
        'user',
        'system',
        'developer',
        'assistant',
        'tool',
        'function',
        'bogus',
      ),
      jsonish,
    ),
    content: fc.oneof(nastyString, nastyString, fc.array(part, { maxLength: 3 }), jsonish),
    name: fc.oneof(nastyString, jsonish),
    tool_call_id: fc.oneof(nastyString, jsonish),
    tool_calls: jsonish,
  },
  { requiredKeys: ['role', 'content'] },
);

/** A body that looks like a chat request, with any field possibly wrong. */
const chatBody = fc.record(
  {
    model: fc.oneof(fc.constant('hearth/echo'), fc.constant('hearth/echo'), nastyString, jsonish),
    messages: fc.oneof(fc.array(message, { minLength: 1, maxLength: 5 }), jsonish),
    stream: fc.oneof(fc.boolean(), jsonish),
    stream_options: fc.oneof(fc.record({ include_usage: fc.boolean() }), jsonish),
    max_tokens: fc.oneof(fc.integer({ min: -2, max: 10 }), jsonish),
    max_completion_tokens: fc.oneof(fc.integer({ min: -2, max: 10 }), jsonish),
    stop: fc.oneof(nastyString, fc.array(nastyString, { maxLength: 6 }), jsonish),
    temperature: fc.oneof(fc.double({ min: -1, max: 3, noNaN: true }), jsonish),
    top_p: jsonish,
    n: fc.oneof(fc.integer({ min: 0, max: 3 }), jsonish),
    seed: jsonish,
    logit_bias: jsonish,
    logprobs: jsonish,
    top_logprobs: jsonish,
    response_format: fc.oneof(
      fc.record({ type: fc.constantFrom('text', 'json_object', 'json_schema', 'x') }),
      jsonish,
    ),
    tools: jsonish,
    tool_choice: jsonish,
    modalities: jsonish,
    audio: jsonish,
    metadata: jsonish,
    echo_delay_ms: fc.oneof(fc.integer({ min: -1, max: 3 }), jsonish),
  },
  { requiredKeys: [] },
);

/**
 * A valid request with hostile text where the echo engine returns it (the last user message and
 * the system messages, which it echoes in brackets): it must reach the engine and come back whole.
 */
const validBody = fc.record(
  {
    model: fc.constant('hearth/echo'),
    messages: fc
      .tuple(
        fc.array(
          fc.record({
            role: fc.constantFrom('user', 'assistant', 'system', 'developer'),
            content: nastyString,
          }),
          { maxLength: 4 },
        ),
        nastyString,
        fc.option(
          fc.record({ role: fc.constantFrom('system', 'developer'), content: nastyString }),
          { nil: undefined },
        ),
      )
      .map(([history, last, after]) => [
        ...history,
        { role: 'user', content: last },
        ...(after ? [after] : []),
      ]),
    stream: fc.boolean(),
    max_tokens: fc.integer({ min: 1, max: 5 }),
    stop: fc.array(
      nastyString.filter((s) => s.length > 0),
      { maxLength: 4 },
    ),
    temperature: fc.double({ min: 0, max: 2, noNaN: true }),
  },
  { requiredKeys: ['model', 'messages'] },
);

/** A body's bytes, and the reply it must get when it is a valid one. */
interface Body {
  bytes: number[] | null;
  reply?: Reply;
}
const bytesOf = (value: unknown): number[] => [...encoder.encode(JSON.stringify(value))];

const bodyBytes: fc.Arbitrary<Body> = fc.oneof(
  { weight: 6, arbitrary: chatBody.map((b) => ({ bytes: bytesOf(b) })) },
  {
    weight: 4,
    arbitrary: validBody.map((b) => ({
      bytes: bytesOf(b),
      reply: echoExpectation(b, 'hearth/echo'),
    })),
  },
  {
    weight: 1,
    arbitrary: jsonish.map((v) => ({
      bytes: [...encoder.encode(JSON.stringify(v) ?? 'undefined')],
    })),
  },
  // Truncated JSON, and raw bytes that are not UTF-8.
  {
    weight: 1,
    arbitrary: chatBody.chain((b) => {
      const text = JSON.stringify(b);
      return fc
        .nat({ max: text.length })
        .map((cut) => ({ bytes: [...encoder.encode(text.slice(0, cut))] }));
    }),
  },
  {
    weight: 1,
    arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ bytes: [...bytes] })),
  },
  { weight: 1, arbitrary: fc.constant({ bytes: null }) },
);

const contentType = fc.option(
  fc.constantFrom(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json;;;',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    '',
  ),
  { nil: undefined },
);

const authorization = fc.option(
  fc.constantFrom('Bearer k', 'Bearer k', 'bearer   k', 'Bearer ', 'Bearer', 'Basic a2V5', 'k', ''),
  { nil: undefined },
);

const target = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ method: 'POST', path: 'v1/openai/chat/completions' }) },
  { weight: 1, arbitrary: fc.constant({ method: 'POST', path: 'v1/chat/completions' }) },
  {
    weight: 1,
    arbitrary: fc.record({
      method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'POST'),
      path: fc.constantFrom(
        'v1/openai/models',
        'v1/openai/models/hearth%2Fecho',
        'v1/nope',
        'v1/openai/chat/completions/',
      ),
    }),
  },
);

/** Headers of a well-behaved client, around a body that may not be. */
const properEnvelope = fc.record({
  target: fc.constant({ method: 'POST', path: 'v1/openai/chat/completions' }),
  contentType: fc.constant('application/json'),
  authorization: fc.constant('Bearer k'),
});
const anyEnvelope = fc.record({ target, contentType, authorization });

/** One abusive request. */
export const abusiveRequest: fc.Arbitrary<AbusiveRequest> = fc
  .record({ envelope: fc.oneof(properEnvelope, anyEnvelope), body: bodyBytes })
  .map(({ envelope, body }) => ({ ...envelope, body }))
  .map(({ target, body, contentType, authorization }): AbusiveRequest => {
    const headers: Record<string, string> = {};
    if (contentType !== undefined) headers['content-type'] = contentType;
    if (authorization !== undefined) headers.authorization = authorization;
    // GET and HEAD cannot carry a body.
    const hasBody = target.method !== 'GET' && body.bytes !== null;
    const request: AbusiveRequest = { ...target, headers, body: hasBody ? body.bytes : null };
    // A valid body sent to the chat endpoint as a client should: the contract fixes the reply.
    const proper =
      target.method === 'POST' &&
      /^v1\/(openai\/)?chat\/completions$/.test(target.path) &&
      contentType?.split(';')[0]?.trim().toLowerCase() === 'application/json' &&
      /^bearer[ \t]+\S/i.test(authorization ?? '');
    if (proper && body.reply) request.reply = body.reply;
    return request;
  });

/** A fixed corpus for the browser test: the same every run. */
export function abusiveCorpus(count: number, seed = 20261125): AbusiveRequest[] {
  return fc.sample(abusiveRequest, { numRuns: count, seed });
}

/** What came back for one request, as plain data. */
export interface Answer {
  status: number;
  contentType: string | null;
  requestId: string | null;
  text: string;
}

/**
 * Why an answer is not acceptable, or null when it is: an OpenAI-shaped 4xx, or a 200 with a
 * complete reply (a completion, a whole stream ending in `[DONE]`, or a model listing); and for a
 * request whose `reply` is known, that reply exactly.
 */
export function faultIn(answer: Answer, reply?: Reply): string | null {
  if (!answer.requestId?.startsWith('req_')) return 'no x-request-id';
  if (reply) {
    const c = { expect: { status: 200, reply } } as FuzzCase;
    return faultOf(c, { ...answer, ms: 0 });
  }
  if (answer.status >= 500) return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status >= 400) {
    if (answer.contentType !== 'application/json') return `error as ${answer.contentType}`;
    const body = JSON.parse(answer.text) as { error?: Record<string, unknown> };
    const keys = Object.keys(body.error ?? {})
      .sort()
      .join(',');
    if (keys !== 'code,message,param,type') return `error body ${answer.text.slice(0, 200)}`;
    return null;
  }
  if (answer.status !== 200) return `status ${answer.status}`;
  if (answer.contentType?.startsWith('text/event-stream')) {
    if (!answer.text.endsWith('data: [DONE]\n\n'))
      return `stream without [DONE]: ${answer.text.slice(-200)}`;
    for (const event of answer.text.split('\n\n').filter(Boolean)) {
      if (!event.startsWith('data: ')) return `stray event ${event.slice(0, 80)}`;
      if (event === 'data: [DONE]') continue;
      const chunk = JSON.parse(event.slice(6)) as { error?: unknown; object?: string };
      if (chunk.error || chunk.object !== 'chat.completion.chunk')
        return `bad chunk ${event.slice(0, 200)}`;
    }
    return null;
  }
  const body = JSON.parse(answer.text) as {
    object?: string;
    choices?: { message?: { content?: unknown } }[];
  };
  if (body.object === 'list' || body.object === 'model') return null;
  if (body.object !== 'chat.completion') return `not a completion: ${answer.text.slice(0, 200)}`;
  if (typeof body.choices?.[0]?.message?.content !== 'string') return 'completion without content';
  return null;
}
