/**
 * @module
 * The fuzz suite's generator: requests (method, path, headers, body bytes) each with what DESIGN
 * §3 and docs/api.md's contract say it must get: the status, error `code` and `param`, or for a valid
 * chat request the echo engine's exact reply and usage (oracle.ts). It is driven by a printed seed
 * (`FUZZ_SEED`), so that a failure is reproduced by running again with that seed.
 *
 * Every mutation is applied to a valid request, one at a time (two where a test is of the order of
 * checks), so that the contract decides the answer. The first cases of every run are each
 * mutation once (every branch, whatever the seed); the rest are drawn at random.
 */
import { routeCases } from './routes';
import { imageCases } from './images';
import { responseCases } from './responses';
import { responseFaultCases } from './responses-faults';
import { text } from './text';
import { echoExpectation, type Reply } from './oracle';
import type { ResponseReply } from './responses-oracle';
import { API_ROUTES } from '../../relay/protocol.js';

// ---------------------------------------------------------------------------------------------
// A small seeded PRNG (mulberry32): the same seed, the same cases.

export class Rng {
  #state: number;
  constructor(seed: number) {
    this.#state = seed >>> 0;
  }
  /** A float in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0;
    let t = this.#state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i -= 1) {
      const j = this.int(0, i);
      [items[i], items[j]] = [items[j] as T, items[i] as T];
    }
    return items;
  }
}

/** The seed of this run: `FUZZ_SEED`, or a random one (printed by the runners). */
export function fuzzSeed(): number {
  const given = process.env.FUZZ_SEED;
  if (given !== undefined && given !== '') return Number(given) >>> 0;
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Cases.

/**
 * A body as its bytes: UTF-8 of the strings, each `repeat` `count` times (a 4 MiB body travels
 * to the page as a few bytes and is built there), or raw bytes (not UTF-8).
 */
export type BodySpec =
  { parts: (string | { repeat: string; count: number })[] } | { bytes: number[] };

/** The error the contract gives, by code and param. */
export interface ErrorExpectation {
  code: string;
  param: string | null;
}

/** What a case must get. */
export type Expectation =
  /** An error: `status`, and its code and param. */
  | { status: number; error: ErrorExpectation }
  /** A chat completion from the echo engine (or the fixture model), exactly. */
  | { status: 200; reply: Reply }
  /** A response of the Responses API from the echo engine, exactly (responses-oracle.ts). */
  | { status: 200; response: ResponseReply }
  /** `GET …/models` (a list with `hearth/echo`) or `GET …/models/hearth%2Fecho`. */
  | { status: 200; listing: 'list' | 'model' }
  /** A HEAD request: `status` (GET's, or what GET would get), and no body. */
  | { status: number; head: true }
  /** A management route: one of these (a success, or an error of the contract's shape). */
  | { status: number; oneOf: number[] };

export interface FuzzCase {
  index: number;
  /** Which mutation made it, e.g. `temperature:above-max`. */
  kind: string;
  method: string;
  /** Relative to the app, e.g. `v1/openai/chat/completions`. */
  path: string;
  headers: Record<string, string>;
  body: BodySpec | null;
  expect: Expectation;
}

/** The body's bytes. */
export function bodyBytes(body: BodySpec): Uint8Array {
  if ('bytes' in body) return new Uint8Array(body.bytes);
  const text = body.parts
    .map((p) => (typeof p === 'string' ? p : p.repeat.repeat(p.count)))
    .join('');
  return new TextEncoder().encode(text);
}

/** The limits of the contract. */
export const BODY_LIMIT = 4 * 1024 * 1024;
export const ECHO_CONTEXT = 1_048_576;
/** Deepest JSON value passed on to an engine (src/protocol/normalize.ts `MAX_JSON_DEPTH`). */
export const JSON_DEPTH_CAP = 64;

export const ECHO = 'hearth/echo';
/** In the e2e build's catalogue: known, runs on SwiftShader, not downloaded. */
export const NOT_DOWNLOADED = 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC';
/** In the catalogue: needs shader-f16, which SwiftShader lacks. */
export const CANNOT_RUN = 'mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC';

const CHAT = 'v1/openai/chat/completions';
const KEYED = { authorization: 'Bearer k', 'content-type': 'application/json' };

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Body = Record<string, Json>;
interface Built {
  kind: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** A JSON body (serialised as is), a raw body, or none. */
  body?: Body | BodySpec | null;
  expect: Expectation;
}

const err = (status: number, code: string, param: string | null = null): Expectation => ({
  status,
  error: { code, param },
});
const bad = (code: string, param: string | null): Expectation => err(400, code, param);
/** `null` in a required field counts as absent, as everywhere (docs/api.md, Request fields). */
const nullRequired = (param: string) => bad('missing_field', param);
/** A wrong type, or `nullRequired` for null. */
const wrongType = (value: Json, param: string) =>
  value === null ? nullRequired(param) : bad('invalid_type', param);

// ---------------------------------------------------------------------------------------------
// Valid requests.

type Message = Record<string, Json>;

function content(rng: Rng, words = 6): Json {
  if (rng.chance(0.7)) return text(rng, words);
  return Array.from({ length: rng.int(0, 3) }, () => ({ type: 'text', text: text(rng, 3) }));
}

function historyMessage(rng: Rng): Message {
  const role = rng.pick(['user', 'assistant', 'assistant', 'system', 'developer', 'tool']);
  const message: Message = { role };
  switch (role) {
    case 'assistant':
      if (rng.chance(0.3)) {
        message.content = rng.chance(0.5) ? null : content(rng);
        message.tool_calls = [
          { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
        ];
      } else {
        message.content = content(rng);
      }
      if (rng.chance(0.1)) message.refusal = null;
      break;
    case 'tool':
      message.content = content(rng);
      message.tool_call_id = 'call_1';
      break;
    default:
      message.content = content(rng);
  }
  if (role !== 'tool' && rng.chance(0.15)) message.name = text(rng, 1);
  return message;
}

/** A valid message list: a history, the last user message, then perhaps system messages. */
function messages(rng: Rng): Message[] {
  const list: Message[] = Array.from({ length: rng.int(0, 4) }, () => historyMessage(rng));
  list.push({ role: 'user', content: content(rng, 8) });
  // System and developer messages after the last user message are moved to the front.
  if (rng.chance(0.2))
    list.push({ role: rng.pick(['system', 'developer']), content: content(rng) });
  return list;
}

/** A stop string: a piece of the reply (so that it cuts) or other text. */
function stopString(rng: Rng, reply: string): string {
  if (reply.length > 0 && rng.chance(0.6)) {
    const start = rng.int(0, reply.length - 1);
    const piece = reply.slice(start, start + rng.int(1, 4));
    if (piece.length > 0) return piece;
  }
  const word = text(rng, 1);
  return word === '' ? 'x' : word;
}

/** Valid values of every optional field (the echo engine honours or ignores each). */
const VALID_FIELDS: Record<string, (rng: Rng) => Json> = {
  temperature: (rng) => rng.pick([0, 2, 1, 0.7, 1.9999, null]),
  top_p: (rng) => rng.pick([0, 1, 0.5, null]),
  seed: (rng) => rng.pick([0, -1, 42, 2 ** 53 - 1, null]),
  frequency_penalty: (rng) => rng.pick([-2, 2, 0, 1.5, null]),
  presence_penalty: (rng) => rng.pick([-2, 2, 0, -0.5, null]),
  logit_bias: (rng) => rng.pick<Json>([{}, { '50256': -100 }, { '1': 100, '2': 0.5 }, null]),
  logprobs: (rng) => rng.pick([false, null]),
  n: (rng) => rng.pick([1, null]),
  response_format: (rng) => rng.pick([{ type: 'text' }, null]),
  tools: (rng) => rng.pick([[], null]),
  tool_choice: (rng) => rng.pick(['auto', 'none', null]),
  modalities: (rng) => rng.pick([['text'], [], null]),
  audio: () => null,
  prediction: () => null,
  web_search_options: () => null,
  functions: () => null,
  function_call: () => null,
  repetition_penalty: (rng) => rng.pick([10, 0.0001, 1.1, null]),
  ignore_eos: (rng) => rng.pick([true, false, null]),
  enable_thinking: (rng) => rng.pick([true, false, null]),
  echo_delay_ms: (rng) => rng.pick([0, null]),
  // Accepted and ignored, whatever their value.
  user: (rng) => rng.pick(['u', 5, null, { a: [1] }]),
  store: (rng) => rng.pick([true, 'yes']),
  metadata: (rng) => rng.pick([{ k: 'v' }, [], 'x']),
  service_tier: (rng) => rng.pick(['auto', 'flex', 7]),
  parallel_tool_calls: (rng) => rng.pick([true, false, 'maybe']),
  safety_identifier: () => 'sid',
  prompt_cache_key: () => 'pck',
  reasoning_effort: (rng) => rng.pick(['low', 'high', 3]),
  verbosity: () => 'low',
  x_unknown_field: (rng) => rng.pick([1, 'a', null, [[[]]]]),
};

/** A valid echo request, and its expected reply. */
function validRequest(rng: Rng, model = ECHO): { body: Body; reply: Reply } {
  const body: Body = { model, messages: messages(rng) };
  const stream = rng.chance(0.5);
  if (stream || rng.chance(0.1)) body.stream = stream;
  if (stream && rng.chance(0.6)) body.stream_options = { include_usage: rng.chance(0.6) };
  if (!stream && rng.chance(0.05)) body.stream_options = null;
  // Stops are drawn from the reply before them: draw the reply first.
  const draft = echoExpectation(body, model);
  if (rng.chance(0.4)) {
    const count = rng.int(0, 4);
    const stops = Array.from({ length: count }, () => stopString(rng, draft.content));
    body.stop = count === 1 && rng.chance(0.5) ? (stops[0] as string) : stops;
  }
  const limit = () => rng.pick([1, 2, 3, 5, 8, 1e308, null]);
  if (rng.chance(0.3)) body.max_tokens = limit();
  if (rng.chance(0.2)) body.max_completion_tokens = limit();
  for (const [field, value] of Object.entries(VALID_FIELDS)) {
    if (rng.chance(0.08)) body[field] = value(rng);
  }
  return { body: shuffleKeys(rng, body), reply: echoExpectation(body, model) };
}

function shuffleKeys(rng: Rng, body: Body): Body {
  return Object.fromEntries(rng.shuffle(Object.entries(body)));
}

// ---------------------------------------------------------------------------------------------
// Mutations: each takes a valid request and says what the contract answers.

/** A valid request with `change` made to its body. */
function mutate(rng: Rng, kind: string, change: (body: Body) => void, expect: Expected): Built {
  const { body } = validRequest(rng);
  change(body);
  return { kind, body, expect: typeof expect === 'function' ? expect(body) : expect };
}

/** An expectation, or how to make it from the body once changed. */
type Expected = Expectation | ((body: Body) => Expectation);

/** `field: value` on a valid request. */
const field = (rng: Rng, kind: string, name: string, value: Json, expect: Expected): Built =>
  mutate(rng, `${name}:${kind}`, (b) => void (b[name] = value), expect);

/** The last user message of a body made by `validRequest`. */
function lastUserIndex(body: Body): number {
  const list = body.messages as Message[];
  for (let i = list.length - 1; i >= 0; i -= 1) if (list[i]?.role === 'user') return i;
  return -1;
}

/** A message `m` put in place of the valid body's first message (history kept valid). */
function withMessage(rng: Rng, kind: string, m: Json, expect: (i: number) => Expectation): Built {
  const { body } = validRequest(rng);
  const list = body.messages as Json[];
  const i = rng.int(0, lastUserIndex(body));
  list.splice(i, 0, m);
  return { kind, body, expect: expect(i) };
}

/** `depth` containers, one in the other, arrays and objects mixed; the outermost an object. */
function nested(depth: number, leaf: Json = {}): Json {
  let value: Json = leaf;
  for (let i = 1; i < depth; i += 1)
    value = i === depth - 1 || i % 3 !== 0 ? { a: value } : [value];
  return value;
}

/** Scalar values of each wrong JSON type, for a field of type `kind`. */
function wrongTypes(kind: 'number' | 'string' | 'boolean' | 'object' | 'array'): Json[] {
  const all: Record<string, Json[]> = {
    number: [1, 0.5],
    string: ['1', ''],
    boolean: [true],
    object: [{ a: 1 }],
    array: [[1]],
  };
  return Object.entries(all).flatMap(([k, v]) => (k === kind ? [] : v));
}

/** Numeric fields of the table: name, bounds, whether integer. */
const NUMBERS: { name: string; min?: number; max?: number; integer?: boolean; gt?: number }[] = [
  { name: 'temperature', min: 0, max: 2 },
  { name: 'top_p', min: 0, max: 1 },
  { name: 'frequency_penalty', min: -2, max: 2 },
  { name: 'presence_penalty', min: -2, max: 2 },
  { name: 'max_tokens', min: 1, integer: true },
  { name: 'max_completion_tokens', min: 1, integer: true },
  { name: 'seed', integer: true },
  { name: 'repetition_penalty', gt: 0, max: 10 },
  { name: 'echo_delay_ms', min: 0, max: 10_000, integer: true },
];

const BOOLEANS = ['stream', 'logprobs', 'ignore_eos', 'enable_thinking'];
const UNSUPPORTED_FIELDS: [string, Json][] = [
  ['audio', { voice: 'alloy', format: 'mp3' }],
  ['prediction', { type: 'content', content: 'x' }],
  ['web_search_options', {}],
  ['functions', [{ name: 'f', parameters: {} }]],
  ['function_call', 'auto'],
];

type Mutation = (rng: Rng) => Built;

/** A mutation per branch of the contract. */
function mutations(): Mutation[] {
  const list: Mutation[] = [];
  const add = (m: Mutation) => list.push(m);

  // --- Valid requests (several shapes, weighted by the random part).
  add((rng) => {
    const { body, reply } = validRequest(rng);
    return { kind: 'valid', body, expect: { status: 200, reply } };
  });

  // --- Numbers: bounds on both sides, wrong types, integers.
  for (const f of NUMBERS) {
    const ok = (kind: string, value: number) =>
      add((rng) => {
        const { body } = validRequest(rng);
        body[f.name] = value;
        // `max_completion_tokens` wins over `max_tokens`: drop the other so the cut is known.
        if (f.name === 'max_tokens') delete body.max_completion_tokens;
        return { kind: `${f.name}:${kind}`, body, expect: valid(body) };
      });
    const no = (kind: string, value: Json, expect: Expected) =>
      add((rng) => field(rng, kind, f.name, value, expect));
    if (f.min !== undefined) {
      ok('min', f.min);
      no('below-min', f.integer ? f.min - 1 : f.min - 0.0001, bad('invalid_value', f.name));
    }
    if (f.max !== undefined) {
      if (f.name !== 'echo_delay_ms') ok('max', f.max);
      no('above-max', f.integer ? f.max + 1 : f.max + 0.0001, bad('invalid_value', f.name));
    }
    if (f.gt !== undefined) {
      ok('just-above-bound', f.gt + 0.0001);
      no('at-exclusive-bound', f.gt, bad('invalid_value', f.name));
    }
    if (f.integer) {
      no('not-integer', (f.min ?? 0) + 1.5, bad('invalid_value', f.name));
    }
    for (const value of wrongTypes('number')) no('wrong-type', value, bad('invalid_type', f.name));
    no('null', null, valid);
  }
  // echo_delay_ms at its maximum, with an empty reply (no token to wait before).
  add(() => {
    const body: Body = {
      model: ECHO,
      messages: [{ role: 'user', content: '' }],
      echo_delay_ms: 10_000,
    };
    return { kind: 'echo_delay_ms:max', body, expect: valid(body) };
  });
  // max_tokens and max_completion_tokens both: the latter wins.
  add((rng) => {
    const { body } = validRequest(rng);
    body.max_tokens = rng.int(1, 3);
    body.max_completion_tokens = rng.int(1, 3);
    return { kind: 'max_completion_tokens:wins', body, expect: valid(body) };
  });
  add((rng) => field(rng, 'huge', 'max_tokens', 1e308, valid));

  for (const name of BOOLEANS) {
    for (const value of wrongTypes('boolean')) {
      add((rng) => field(rng, 'wrong-type', name, value, bad('invalid_type', name)));
    }
  }

  // --- model
  add((rng) => mutate(rng, 'model:missing', (b) => delete b.model, bad('missing_field', 'model')));
  for (const value of [null, 5, ['hearth/echo'], { id: 'hearth/echo' }, true]) {
    add((rng) => field(rng, 'wrong-type', 'model', value, wrongType(value, 'model')));
  }
  for (const id of [
    '',
    'hearth/echo ',
    'HEARTH/ECHO',
    'hearth/echo2',
    'acme/nope',
    'echo',
    '😀/\ud800',
  ]) {
    add((rng) => field(rng, 'unknown', 'model', id, err(404, 'model_not_found', 'model')));
  }
  add((rng) => ({
    kind: 'model:not-downloaded',
    body: validRequest(rng, NOT_DOWNLOADED).body,
    expect: err(404, 'model_not_downloaded', 'model'),
  }));
  add((rng) => ({
    kind: 'model:cannot-run-here',
    body: validRequest(rng, CANNOT_RUN).body,
    expect: err(503, 'webgpu_unavailable', null),
  }));

  // --- messages
  add((rng) =>
    mutate(rng, 'messages:missing', (b) => delete b.messages, bad('missing_field', 'messages')),
  );
  for (const value of [null, 'hi', 5, { role: 'user', content: 'hi' }]) {
    add((rng) => field(rng, 'wrong-type', 'messages', value, wrongType(value, 'messages')));
  }
  add((rng) => field(rng, 'empty', 'messages', [], bad('invalid_value', 'messages')));
  for (const value of [null, 'hi', 5, [{ role: 'user', content: 'hi' }]]) {
    add((rng) =>
      withMessage(rng, 'message:wrong-type', value, (i) => bad('invalid_type', `messages[${i}]`)),
    );
  }
  // Roles.
  add((rng) =>
    withMessage(rng, 'role:missing', { content: 'x' }, (i) =>
      bad('missing_field', `messages[${i}].role`),
    ),
  );
  for (const role of [5, null, ['user'], { a: 1 }]) {
    add((rng) =>
      withMessage(rng, 'role:wrong-type', { role, content: 'x' }, (i) =>
        wrongType(role, `messages[${i}].role`),
      ),
    );
  }
  for (const role of ['bogus', 'User', 'model', '']) {
    add((rng) =>
      withMessage(rng, 'role:unknown', { role, content: 'x' }, (i) =>
        bad('invalid_value', `messages[${i}].role`),
      ),
    );
  }
  add((rng) =>
    withMessage(rng, 'role:function', { role: 'function', name: 'f', content: 'x' }, (i) =>
      bad('unsupported_parameter', `messages[${i}].role`),
    ),
  );
  // Content, by role.
  for (const role of ['user', 'system', 'developer', 'tool']) {
    const extra: Message = role === 'tool' ? { tool_call_id: 'call_1' } : {};
    add((rng) =>
      withMessage(rng, `content:missing:${role}`, { role, ...extra }, (i) =>
        bad('missing_field', `messages[${i}].content`),
      ),
    );
    for (const value of [null, 5, true, { type: 'text', text: 'x' }]) {
      add((rng) =>
        withMessage(rng, `content:wrong-type:${role}`, { role, content: value, ...extra }, (i) =>
          wrongType(value, `messages[${i}].content`),
        ),
      );
    }
    // Parts: not objects, no type, a wrong text, an unknown type.
    for (const part of ['x', 5, null, [{ type: 'text', text: 'x' }]]) {
      add((rng) =>
        withMessage(rng, `part:wrong-type:${role}`, { role, content: [part], ...extra }, (i) =>
          bad('invalid_type', `messages[${i}].content[0]`),
        ),
      );
    }
    add((rng) =>
      withMessage(rng, `part:no-type:${role}`, { role, content: [{ text: 'x' }], ...extra }, (i) =>
        bad('missing_field', `messages[${i}].content[0].type`),
      ),
    );
    add((rng) =>
      withMessage(
        rng,
        `part:text-missing:${role}`,
        { role, content: [{ type: 'text' }], ...extra },
        (i) => bad('missing_field', `messages[${i}].content[0].text`),
      ),
    );
    add((rng) =>
      withMessage(
        rng,
        `part:text-wrong-type:${role}`,
        { role, content: [{ type: 'text', text: 5 }], ...extra },
        (i) => bad('invalid_type', `messages[${i}].content[0].text`),
      ),
    );
    add((rng) =>
      withMessage(
        rng,
        `part:unknown-type:${role}`,
        { role, content: [{ type: 'text', text: 'a' }, { type: 'wat' }], ...extra },
        (i) => bad('invalid_value', `messages[${i}].content[1].type`),
      ),
    );
  }
  // Parts other than text and images: 400 unsupported_parameter (docs/api.md), in any role.
  for (const part of <Record<string, Json>[]>[
    { type: 'input_audio', input_audio: { data: 'AA==', format: 'wav' } },
    { type: 'file', file: { file_id: 'f' } },
  ]) {
    add((rng) =>
      withMessage(rng, `part:${part.type}:user`, { role: 'user', content: [part] }, (i) =>
        bad('unsupported_parameter', `messages[${i}].content[0].type`),
      ),
    );
    add((rng) =>
      withMessage(rng, `part:${part.type}:system`, { role: 'system', content: [part] }, (i) =>
        bad('unsupported_parameter', `messages[${i}].content[0].type`),
      ),
    );
  }
  // Images: only the user sends them, and a broken one is refused by its part (docs/api.md,
  // Images). The echo engine takes images.
  const image = (url: Json, detail?: Json): Json => ({
    type: 'image_url',
    image_url: { url, ...(detail !== undefined && { detail }) },
  });
  add((rng) =>
    withMessage(
      rng,
      'part:image_url:system',
      { role: 'system', content: [image('data:image/png;base64,AA==')] },
      (i) => bad('unsupported_parameter', `messages[${i}].content[0].type`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'part:image_url-not-an-image:user',
      { role: 'user', content: [{ type: 'text', text: 'a' }, image('data:image/png;base64,AA==')] },
      (i) => bad('invalid_value', `messages[${i}].content[1]`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'part:image_url-remote:user',
      { role: 'user', content: [image('https://example.com/cat.png')] },
      (i) => bad('invalid_value', `messages[${i}].content[0].image_url.url`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'part:image_url-no-url:user',
      { role: 'user', content: [{ type: 'image_url', image_url: {} }] },
      (i) => bad('missing_field', `messages[${i}].content[0].image_url.url`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'part:image_url-bad-detail:user',
      { role: 'user', content: [image('data:image/png;base64,AA==', 'max')] },
      (i) => bad('invalid_value', `messages[${i}].content[0].image_url.detail`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'part:refusal:assistant',
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] },
      (i) => bad('unsupported_parameter', `messages[${i}].content[0].type`),
    ),
  );
  // Assistant messages.
  add((rng) =>
    withMessage(rng, 'assistant:no-content', { role: 'assistant' }, (i) =>
      bad('invalid_value', `messages[${i}].content`),
    ),
  );
  add((rng) =>
    withMessage(rng, 'assistant:null-content', { role: 'assistant', content: null }, (i) =>
      bad('invalid_value', `messages[${i}].content`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'assistant:no-tool-calls',
      { role: 'assistant', content: null, tool_calls: [] },
      (i) => bad('invalid_value', `messages[${i}].content`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'assistant:tool_calls-wrong-type',
      { role: 'assistant', content: 'x', tool_calls: 'f' },
      (i) => bad('invalid_type', `messages[${i}].tool_calls`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'assistant:tool_call-no-id',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      (i) => bad('missing_field', `messages[${i}].tool_calls[0].id`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'assistant:tool_call-type',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'fn', function: { name: 'f', arguments: '{}' } }],
      },
      (i) => bad('invalid_value', `messages[${i}].tool_calls[0].type`),
    ),
  );
  add((rng) =>
    withMessage(
      rng,
      'assistant:tool_call-arguments',
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }],
      },
      (i) => bad('invalid_type', `messages[${i}].tool_calls[0].function.arguments`),
    ),
  );
  for (const name of ['audio', 'function_call']) {
    add((rng) =>
      withMessage(rng, `assistant:${name}`, { role: 'assistant', content: 'x', [name]: {} }, (i) =>
        bad('unsupported_parameter', `messages[${i}].${name}`),
      ),
    );
  }
  add((rng) =>
    withMessage(
      rng,
      'assistant:refusal-wrong-type',
      { role: 'assistant', content: 'x', refusal: 5 },
      (i) => bad('invalid_type', `messages[${i}].refusal`),
    ),
  );
  // Tool messages.
  add((rng) =>
    withMessage(rng, 'tool:no-id', { role: 'tool', content: 'x' }, (i) =>
      bad('missing_field', `messages[${i}].tool_call_id`),
    ),
  );
  for (const id of [1, null]) {
    add((rng) =>
      withMessage(
        rng,
        'tool:id-wrong-type',
        { role: 'tool', content: 'x', tool_call_id: id },
        (i) => wrongType(id, `messages[${i}].tool_call_id`),
      ),
    );
  }
  // name
  for (const name of [5, ['n'], {}]) {
    add((rng) =>
      withMessage(rng, 'name:wrong-type', { role: 'user', content: 'x', name }, (i) =>
        bad('invalid_type', `messages[${i}].name`),
      ),
    );
  }
  // Across messages: the last one must be the user's (after system messages move first).
  add((rng) => {
    const { body } = validRequest(rng);
    (body.messages as Message[]).push({ role: 'assistant', content: text(rng) });
    return { kind: 'last:assistant', body, expect: bad('invalid_value', 'messages') };
  });
  add((rng) => ({
    kind: 'last:only-system',
    body: { model: ECHO, messages: [{ role: rng.pick(['system', 'developer']), content: 'x' }] },
    expect: bad('invalid_value', 'messages'),
  }));
  add((rng) => {
    // A tool result last, without tools and with no call before it: refused by the schema.
    const { body } = validRequest(rng);
    for (const m of body.messages as Message[]) {
      if (m.tool_calls !== undefined) {
        delete m.tool_calls;
        m.content = 'x';
      }
    }
    (body.messages as Message[]).push({ role: 'tool', content: 'r', tool_call_id: 'c' });
    return { kind: 'last:tool-without-tools', body, expect: bad('invalid_value', 'messages') };
  });
  add((rng) => {
    // A tool result last after an assistant's call: tools are in play, and the echo engine
    // answers with what the tool said.
    const { body } = validRequest(rng);
    (body.messages as Message[]).push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', content: 'r', tool_call_id: 'c' },
    );
    return { kind: 'last:tool-after-call', body, expect: valid(body) };
  });
  // Each message's own fields come before the rule across messages.
  add((rng) => {
    const { body } = validRequest(rng);
    const list = body.messages as Message[];
    list.push({ role: 'assistant', content: 'x' });
    list[0] = { role: 'user', content: text(rng), name: 5 };
    return {
      kind: 'order:message-field-before-last-rule',
      body,
      expect: bad('invalid_type', 'messages[0].name'),
    };
  });
  // A field's own rule comes before a rule across fields.
  add((rng) => {
    const { body } = validRequest(rng);
    body.stream = false;
    body.stream_options = { include_usage: true };
    body.temperature = 3;
    return {
      kind: 'order:field-before-cross-field',
      body,
      expect: bad('invalid_value', 'temperature'),
    };
  });

  // --- stream_options
  add((rng) => {
    const { body } = validRequest(rng);
    body.stream = rng.pick([false, null]);
    if (body.stream === null) delete body.stream;
    body.stream_options = { include_usage: true };
    return {
      kind: 'stream_options:without-stream',
      body,
      expect: bad('invalid_value', 'stream_options'),
    };
  });
  for (const value of ['x', 5, [{ include_usage: true }]]) {
    add((rng) =>
      mutate(
        rng,
        'stream_options:wrong-type',
        (b) => {
          b.stream = true;
          b.stream_options = value;
        },
        bad('invalid_type', 'stream_options'),
      ),
    );
  }
  add((rng) =>
    mutate(
      rng,
      'stream_options.include_usage:wrong-type',
      (b) => {
        b.stream = true;
        b.stream_options = { include_usage: 'yes' };
      },
      bad('invalid_type', 'stream_options.include_usage'),
    ),
  );

  // --- stop: a string or at most 4, none empty.
  for (const count of [4, 5]) {
    add((rng) => {
      const { body } = validRequest(rng);
      body.stop = Array.from({ length: count }, (_, i) => `zz${i}`);
      return {
        kind: `stop:${count}-strings`,
        body,
        expect: count <= 4 ? valid(body) : bad('invalid_value', 'stop'),
      };
    });
  }
  add((rng) => field(rng, 'empty-string', 'stop', '', bad('invalid_value', 'stop')));
  add((rng) => field(rng, 'empty-array', 'stop', [], valid));
  add((rng) => field(rng, 'empty-in-array', 'stop', ['a', ''], bad('invalid_value', 'stop[1]')));
  add((rng) => field(rng, 'wrong-type-in-array', 'stop', ['a', 5], bad('invalid_type', 'stop[1]')));
  for (const value of [5, true, { a: 'b' }]) {
    add((rng) => field(rng, 'wrong-type', 'stop', value, bad('invalid_type', 'stop')));
  }
  add((rng) => {
    // A stop string at the very start: an empty reply.
    const { body } = validRequest(rng);
    const draft = echoExpectation(body, ECHO);
    if (draft.content.length > 0) body.stop = draft.content.slice(0, 1);
    return { kind: 'stop:at-start', body, expect: valid(body) };
  });

  // --- logit_bias
  add((rng) =>
    field(rng, 'bad-key', 'logit_bias', { abc: 1 }, bad('invalid_value', 'logit_bias.abc')),
  );
  add((rng) =>
    field(rng, 'above-max', 'logit_bias', { '1': 100.5 }, bad('invalid_value', 'logit_bias.1')),
  );
  add((rng) =>
    field(rng, 'below-min', 'logit_bias', { '1': -101 }, bad('invalid_value', 'logit_bias.1')),
  );
  add((rng) => field(rng, 'bounds', 'logit_bias', { '1': -100, '2': 100 }, valid));
  add((rng) =>
    field(rng, 'value-type', 'logit_bias', { '1': 'x' }, bad('invalid_type', 'logit_bias.1')),
  );
  for (const value of [[1], 'x', 5]) {
    add((rng) => field(rng, 'wrong-type', 'logit_bias', value, bad('invalid_type', 'logit_bias')));
  }

  // --- logprobs, top_logprobs (0–5, needs logprobs: true); the echo engine has no logprobs.
  add((rng) => field(rng, 'true', 'logprobs', true, bad('unsupported_parameter', 'logprobs')));
  for (const [value, expect] of [
    [5, bad('unsupported_parameter', 'logprobs')],
    [0, bad('unsupported_parameter', 'logprobs')],
    [6, bad('invalid_value', 'top_logprobs')],
    [-1, bad('invalid_value', 'top_logprobs')],
    ['1', bad('invalid_type', 'top_logprobs')],
  ] as const) {
    add((rng) =>
      mutate(
        rng,
        `top_logprobs:${String(value)}`,
        (b) => {
          b.logprobs = true;
          b.top_logprobs = value;
        },
        expect,
      ),
    );
  }
  add((rng) =>
    mutate(
      rng,
      'top_logprobs:without-logprobs',
      (b) => {
        b.logprobs = rng.pick([false, null]);
        b.top_logprobs = 2;
      },
      bad('invalid_value', 'top_logprobs'),
    ),
  );

  // --- n: the echo engine honours only 1.
  add((rng) => field(rng, '2', 'n', 2, bad('unsupported_parameter', 'n')));
  add((rng) => field(rng, '0', 'n', 0, bad('invalid_value', 'n')));
  add((rng) => field(rng, 'wrong-type', 'n', '1', bad('invalid_type', 'n')));
  add((rng) => field(rng, 'very-large', 'n', 1000, bad('invalid_value', 'n')));

  // --- response_format
  add((rng) =>
    field(
      rng,
      'json_object',
      'response_format',
      { type: 'json_object' },
      bad('unsupported_parameter', 'response_format'),
    ),
  );
  add((rng) => {
    const schema = { name: 's', schema: { type: 'object' } };
    return field(
      rng,
      'json_schema',
      'response_format',
      { type: 'json_schema', json_schema: schema },
      bad('unsupported_parameter', 'response_format'),
    );
  });
  add((rng) =>
    field(
      rng,
      'json_schema-missing',
      'response_format',
      { type: 'json_schema' },
      bad('missing_field', 'response_format.json_schema'),
    ),
  );
  add((rng) =>
    field(
      rng,
      'unknown-type',
      'response_format',
      { type: 'xml' },
      bad('invalid_value', 'response_format.type'),
    ),
  );
  add((rng) =>
    field(rng, 'no-type', 'response_format', {}, bad('missing_field', 'response_format.type')),
  );
  for (const value of ['json', [{ type: 'text' }], 1]) {
    add((rng) =>
      field(rng, 'wrong-type', 'response_format', value, bad('invalid_type', 'response_format')),
    );
  }
  // Nesting near the cap, in a JSON schema the engine would be given.
  for (const depth of [JSON_DEPTH_CAP, JSON_DEPTH_CAP + 1]) {
    add((rng) =>
      field(
        rng,
        `schema-depth-${depth}`,
        'response_format',
        { type: 'json_schema', json_schema: { name: 's', schema: nested(depth) } },
        depth <= JSON_DEPTH_CAP
          ? bad('unsupported_parameter', 'response_format')
          : bad('invalid_value', 'response_format.json_schema.schema'),
      ),
    );
  }

  // --- tools, tool_choice
  const tool = (name: Json, parameters: Json = { type: 'object' }) => ({
    type: 'function',
    function: { name, parameters },
  });
  // The echo engine takes tools under auto and none, and answers in text unless asked to call.
  add((rng) => field(rng, 'one', 'tools', [tool('get_weather')], valid));
  add((rng) =>
    field(
      rng,
      'bad-name',
      'tools',
      [tool('get weather')],
      bad('invalid_value', 'tools[0].function.name'),
    ),
  );
  add((rng) =>
    field(
      rng,
      'long-name',
      'tools',
      [tool('f'.repeat(65))],
      bad('invalid_value', 'tools[0].function.name'),
    ),
  );
  add((rng) => field(rng, 'name-64', 'tools', [tool('f'.repeat(64))], valid));
  add((rng) =>
    field(
      rng,
      'custom',
      'tools',
      [{ type: 'custom', custom: { name: 'x' } }],
      bad('unsupported_parameter', 'tools[0].type'),
    ),
  );
  add((rng) =>
    field(rng, 'unknown-type', 'tools', [{ type: 'x' }], bad('invalid_value', 'tools[0].type')),
  );
  add((rng) =>
    field(rng, 'wrong-type', 'tools', { type: 'function' }, bad('invalid_type', 'tools')),
  );
  add((rng) =>
    field(
      rng,
      'parameters-type',
      'tools',
      [tool('f', 'x')],
      bad('invalid_type', 'tools[0].function.parameters'),
    ),
  );
  for (const depth of [JSON_DEPTH_CAP, JSON_DEPTH_CAP + 1]) {
    add((rng) =>
      field(
        rng,
        `parameters-depth-${depth}`,
        'tools',
        [tool('f', nested(depth))],
        depth <= JSON_DEPTH_CAP ? valid : bad('invalid_value', 'tools[0].function.parameters'),
      ),
    );
  }
  for (const tools of [undefined, [tool('get_weather')]]) {
    const offer = (b: Body) => void (tools && (b.tools = tools));
    add((rng) =>
      mutate(
        rng,
        'tool_choice:required',
        (b) => {
          offer(b);
          b.tool_choice = 'required';
        },
        bad('unsupported_parameter', 'tool_choice'),
      ),
    );
    add((rng) =>
      mutate(
        rng,
        'tool_choice:function',
        (b) => {
          offer(b);
          b.tool_choice = { type: 'function', function: { name: 'get_weather' } };
        },
        bad('unsupported_parameter', 'tool_choice'),
      ),
    );
  }
  // `/call` messages: the echo engine calls the offered functions (docs/api.md, The echo engine).
  for (const m of callCases()) add(m);
  add((rng) =>
    field(
      rng,
      'allowed_tools',
      'tool_choice',
      { type: 'allowed_tools', allowed_tools: {} },
      bad('unsupported_parameter', 'tool_choice.type'),
    ),
  );
  add((rng) =>
    field(rng, 'unknown', 'tool_choice', 'sometimes', bad('invalid_value', 'tool_choice')),
  );
  add((rng) => field(rng, 'wrong-type', 'tool_choice', 5, bad('invalid_type', 'tool_choice')));

  // --- modalities: text only.
  add((rng) =>
    field(
      rng,
      'audio',
      'modalities',
      ['text', 'audio'],
      bad('unsupported_parameter', 'modalities[1]'),
    ),
  );
  add((rng) =>
    field(rng, 'unknown', 'modalities', ['image'], bad('invalid_value', 'modalities[0]')),
  );
  add((rng) => field(rng, 'wrong-type', 'modalities', 'text', bad('invalid_type', 'modalities')));

  // --- unsupported fields: any value but null.
  for (const [name, value] of UNSUPPORTED_FIELDS) {
    add((rng) => field(rng, 'present', name, value, bad('unsupported_parameter', name)));
  }

  // --- ignored fields, deep nesting where nothing reads it.
  add((rng) => field(rng, 'deep', 'metadata', nested(500, 1), valid));
  add((rng) => {
    const { body } = validRequest(rng);
    const deep = 50_000;
    return {
      kind: 'metadata:very-deep',
      body: {
        parts: [
          JSON.stringify(body).slice(0, -1),
          ',"metadata":',
          { repeat: '[', count: deep },
          { repeat: ']', count: deep },
          '}',
        ],
      },
      expect: valid(body),
    };
  });
  add((rng) => {
    const { body } = validRequest(rng);
    const i = lastUserIndex(body);
    const head = JSON.stringify({ model: ECHO, messages: (body.messages as Json[]).slice(0, i) });
    const deep = 50_000;
    return {
      kind: 'content:very-deep',
      body: {
        parts: [
          head.slice(0, head.length - 2),
          i > 0 ? ',' : '',
          '{"role":"user","content":',
          { repeat: '[', count: deep },
          { repeat: ']', count: deep },
          '}]}',
        ],
      },
      expect: bad('invalid_type', `messages[${i}].content[0]`),
    };
  });

  // --- keys that name Object.prototype's members: data like any other, never the prototype.
  for (const [where, key, value] of [
    ['body', '__proto__', '{"stream":true,"max_tokens":1,"n":5,"model":"acme/nope"}'],
    ['body', 'constructor', '{"prototype":{"stream":true}}'],
    ['body', 'toString', '5'],
    ['stream_options', '__proto__', '{"include_usage":true}'],
    ['message', '__proto__', '{"role":"system","content":"injected"}'],
    ['message', 'hasOwnProperty', '"x"'],
  ] as const) {
    add((rng) => {
      const { body } = validRequest(rng);
      let json = JSON.stringify(body);
      if (where === 'body') json = `${json.slice(0, -1)},"${key}":${value}}`;
      else if (where === 'stream_options') {
        body.stream = true;
        body.stream_options = { include_usage: false };
        json = JSON.stringify(body).replace(
          '"stream_options":{',
          `"stream_options":{"${key}":${value},`,
        );
      } else {
        const at = json.indexOf('"messages":[{') + '"messages":[{'.length;
        json = `${json.slice(0, at)}"${key}":${value},${json.slice(at)}`;
      }
      return { kind: `ignored:${key}-in-${where}`, body: { parts: [json] }, expect: valid(body) };
    });
  }

  // --- more faults at once: a capability before the echo engine's rule on the last message.
  add((rng) => {
    const { body } = validRequest(rng);
    (body.messages as Message[]).push(
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', content: 'r', tool_call_id: 'c' },
    );
    body.n = 2;
    return {
      kind: 'order:capabilities-before-engine-rule',
      body,
      expect: bad('unsupported_parameter', 'n'),
    };
  });
  add((rng) => {
    // The last message, a tool result without tools, has a fault of its own: that comes first.
    const { body } = validRequest(rng);
    const list = body.messages as Message[];
    list.push({ role: 'tool', content: 'r' });
    return {
      kind: 'order:last-message-field-before-last-rule',
      body,
      expect: bad('missing_field', `messages[${list.length - 1}].tool_call_id`),
    };
  });

  // --- the engine's own limit: the echo engine's context window.
  for (const tokens of [ECHO_CONTEXT, ECHO_CONTEXT + 1]) {
    add(() => {
      const body: Body = {
        model: ECHO,
        messages: [
          { role: 'user', content: '' },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: 'last' },
        ],
      };
      // The first message carries `tokens - 2` tokens, built where the request is sent.
      const json = JSON.stringify(body);
      const [before, after] = json.split('"content":""') as [string, string];
      const spec: BodySpec = {
        parts: [before, '"content":"', { repeat: 'a ', count: tokens - 2 }, '"', after],
      };
      const expect: Expectation =
        tokens <= ECHO_CONTEXT
          ? {
              status: 200,
              reply: {
                ...echoExpectation(body, ECHO),
                prompt_tokens: tokens,
              },
            }
          : bad('context_length_exceeded', 'messages');
      return { kind: `context:${tokens}-tokens`, body: spec, expect };
    });
  }

  // --- the envelope: routes, methods, auth, content type, size, JSON.
  for (const path of [
    'v1/nope',
    'v1/openai/chat',
    'v1/openai/completions',
    'v1/openai/chat/completions/x',
    'v1/OPENAI/chat/completions',
    'v1/openai/chat%2Fcompletions',
    'v1/hearth/nope',
    'v1/openai/response',
    'v1/openai/respond',
    'v1/',
    'v1/hearth',
  ]) {
    if (inRouteTable(path)) {
      throw new Error(`tests/fuzz/generate.ts lists ${path} as unknown: the route table has it.`);
    }
    add((rng) => ({
      kind: 'route:unknown',
      method: rng.pick(['GET', 'POST', 'DELETE']),
      path,
      headers: rng.pick([KEYED, {}]),
      body: validRequest(rng).body,
      expect: err(404, 'unknown_url'),
    }));
  }
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    add((rng) => ({
      kind: `method:${method}-chat`,
      method,
      path: rng.pick([CHAT, 'v1/chat/completions']),
      headers: rng.pick([KEYED, {}]),
      body: validRequest(rng).body,
      expect: err(405, 'method_not_allowed'),
    }));
  }
  for (const path of ['v1/openai/models', 'v1/models', 'v1/openai/models/hearth%2Fecho']) {
    add((rng) => ({
      kind: 'method:POST-models',
      path,
      headers: rng.pick([KEYED, {}]),
      body: validRequest(rng).body,
      expect: err(405, 'method_not_allowed'),
    }));
  }
  for (const path of ['v1/openai/models', 'v1/models']) {
    add(() => ({
      kind: 'models:list',
      method: 'GET',
      path,
      headers: { authorization: 'Bearer k' },
      body: null,
      expect: { status: 200, listing: 'list' },
    }));
  }
  for (const path of [
    'v1/openai/models/hearth%2Fecho',
    'v1/openai/models/hearth/echo',
    'v1/models/hearth%2Fecho',
  ]) {
    add(() => ({
      kind: 'models:one',
      method: 'GET',
      path,
      headers: { authorization: 'Bearer k' },
      body: null,
      expect: { status: 200, listing: 'model' },
    }));
  }
  // Hearth's own endpoints: the same route, method and key checks.
  for (const path of ['v1/hearth/status', 'v1/hearth/catalog']) {
    add((rng) => ({
      kind: 'hearth:no-key',
      method: 'GET',
      path,
      headers: rng.pick<Record<string, string>>([
        {},
        { authorization: 'Bearer ' },
        { authorization: 'Basic a2V5' },
      ]),
      body: null,
      expect: err(401, 'invalid_api_key'),
    }));
    add((rng) => ({
      kind: 'hearth:wrong-method',
      method: rng.pick(['POST', 'PUT', 'DELETE']),
      path,
      headers: rng.pick([KEYED, {}]),
      body: { parts: ['{}'] },
      expect: err(405, 'method_not_allowed'),
    }));
  }
  // A query string changes nothing.
  add((rng) => {
    const { body, reply } = validRequest(rng);
    return {
      kind: 'route:query-string',
      path: rng.pick([`${CHAT}?stream=true`, 'v1/chat/completions?x=1&model=acme%2Fnope']),
      body,
      expect: { status: 200, reply },
    };
  });
  add(() => ({
    kind: 'models:list',
    method: 'GET',
    path: 'v1/openai/models?limit=1',
    headers: { authorization: 'Bearer k' },
    body: null,
    expect: { status: 200, listing: 'list' },
  }));
  add((rng) => ({
    kind: 'models:unknown',
    method: 'GET',
    path: `v1/openai/models/${rng.pick(['acme%2Fnope', 'hearth%2Fecho2', 'x'])}`,
    headers: { authorization: 'Bearer k' },
    body: null,
    expect: err(404, 'model_not_found', 'model'),
  }));
  add((rng) => ({
    kind: 'models:no-key',
    method: 'GET',
    path: rng.pick(['v1/openai/models', 'v1/openai/models/hearth%2Fecho']),
    headers: {},
    body: null,
    expect: err(401, 'invalid_api_key'),
  }));
  /**
   * A valid request with `header` set to each of `refused` (the error `refusal`) and to each of
   * `accepted` (the echo's reply): the header's parsing, as the contract says.
   */
  const headerCases = (
    kind: string,
    header: string,
    refused: (string | undefined)[],
    refusal: Expectation,
    accepted: string[],
  ) => {
    for (const value of refused) {
      add((rng) => ({
        kind: `${kind}:refused`,
        headers: withHeader(KEYED, header, value),
        body: validRequest(rng).body,
        expect: refusal,
      }));
    }
    for (const value of accepted) {
      add((rng) => {
        const { body, reply } = validRequest(rng);
        return {
          kind: `${kind}:accepted`,
          headers: withHeader(KEYED, header, value),
          body,
          expect: { status: 200, reply },
        };
      });
    }
  };
  // Keys.
  headerCases(
    'auth',
    'authorization',
    [undefined, '', 'Bearer', 'Bearer ', 'Bearer \t ', 'Basic a2V5', 'k', 'Token k', 'Bearerk'],
    err(401, 'invalid_api_key'),
    ['bearer k', 'BEARER k', 'Bearer \tk ', `Bearer ${'k'.repeat(10_000)}`, 'Bearer a b'],
  );
  // Content types.
  headerCases(
    'content-type',
    'content-type',
    [
      undefined,
      '',
      'text/plain',
      'text/plain; charset=utf-8',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      'application/json-patch+json',
      'application/ld+json',
      'json',
      'application/*',
    ],
    err(415, 'unsupported_media_type'),
    [
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json;;;',
      'Application/Json ; x=y',
    ],
  );
  // Bad JSON and bad bytes.
  const badJson: string[] = [
    '',
    '   ',
    '{',
    '{"model":',
    "{'model':'hearth/echo'}",
    '{"model":"hearth/echo",}',
    'NaN',
    '{"a":1}{',
    'nul',
    '\u0000',
  ];
  for (const json of badJson) {
    add(() => ({
      kind: 'json:invalid',
      body: { parts: [json] },
      expect: bad('invalid_json', null),
    }));
  }
  add((rng) => {
    const json = JSON.stringify(validRequest(rng).body);
    return {
      kind: 'json:truncated',
      body: { parts: [json.slice(0, rng.int(0, json.length - 1))] },
      expect: bad('invalid_json', null),
    };
  });
  for (const bytes of [
    [0xc3, 0x28],
    [0x80],
    [0xc0, 0xaf],
    [0xed, 0xa0, 0x80],
    [0xff, 0xfe],
    [0xf4, 0x90, 0x80, 0x80],
  ]) {
    add(() => {
      const encoder = new TextEncoder();
      return {
        kind: 'json:not-utf8',
        body: {
          bytes: [
            ...encoder.encode('{"model":"hearth/echo","messages":[{"role":"user","content":"'),
            ...bytes,
            ...encoder.encode('"}]}'),
          ],
        },
        expect: bad('invalid_json', null),
      };
    });
  }
  for (const json of ['[]', '5', '"x"', 'null', 'true', '[{"model":"hearth/echo"}]']) {
    add(() => ({
      kind: 'json:not-an-object',
      body: { parts: [json] },
      expect: bad('invalid_type', null),
    }));
  }
  // Sizes at the limit.
  for (const [kind, size, expect] of [
    ['size:at-limit', BODY_LIMIT, 'valid'],
    ['size:under-limit', BODY_LIMIT - 1, 'valid'],
    ['size:over-limit', BODY_LIMIT + 1, '413'],
    ['size:far-over-limit', BODY_LIMIT * 2, '413'],
  ] as const) {
    add((rng) => {
      const { body, reply } = validRequest(rng);
      return {
        kind,
        body: padded(rng, body, size),
        expect: expect === 'valid' ? { status: 200, reply } : err(413, 'request_too_large'),
      };
    });
  }

  // --- the order of checks, two faults at once: the first in docs/api.md's Order of checks answers.
  add(() => ({
    kind: 'order:route-before-auth',
    method: 'POST',
    path: 'v1/nope',
    headers: { 'content-type': 'text/plain' },
    body: { parts: ['{'] },
    expect: err(404, 'unknown_url'),
  }));
  add(() => ({
    kind: 'order:method-before-auth',
    method: 'PUT',
    headers: { 'content-type': 'text/plain' },
    body: { parts: ['{'] },
    expect: err(405, 'method_not_allowed'),
  }));
  add((rng) => ({
    kind: 'order:auth-before-content-type',
    headers: { 'content-type': 'text/plain' },
    body: validRequest(rng).body,
    expect: err(401, 'invalid_api_key'),
  }));
  add((rng) => ({
    kind: 'order:auth-before-size',
    headers: { 'content-type': 'application/json' },
    body: padded(rng, validRequest(rng).body, BODY_LIMIT + 1),
    expect: err(401, 'invalid_api_key'),
  }));
  add((rng) => ({
    kind: 'order:content-type-before-size',
    headers: { authorization: 'Bearer k', 'content-type': 'text/plain' },
    body: padded(rng, validRequest(rng).body, BODY_LIMIT + 1),
    expect: err(415, 'unsupported_media_type'),
  }));
  add(() => ({
    kind: 'order:content-type-before-json',
    headers: { authorization: 'Bearer k', 'content-type': 'text/plain' },
    body: { parts: ['{'] },
    expect: err(415, 'unsupported_media_type'),
  }));
  add(() => ({
    kind: 'order:size-before-json',
    body: { parts: ['{', { repeat: 'x', count: BODY_LIMIT }] },
    expect: err(413, 'request_too_large'),
  }));
  add((rng) =>
    mutate(
      rng,
      'order:schema-before-model',
      (b) => {
        b.model = 'acme/nope';
        b.temperature = -1;
      },
      bad('invalid_value', 'temperature'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:last-rule-before-model',
      (b) => {
        b.model = 'acme/nope';
        (b.messages as Message[]).push({ role: 'assistant', content: 'x' });
      },
      bad('invalid_value', 'messages'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:model-before-capabilities',
      (b) => {
        b.model = 'acme/nope';
        b.n = 2;
      },
      err(404, 'model_not_found', 'model'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:schema-before-not-downloaded',
      (b) => {
        b.model = NOT_DOWNLOADED;
        b.stop = ['a', 'b', 'c', 'd', 'e'];
      },
      bad('invalid_value', 'stop'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'order:schema-before-device',
      (b) => {
        b.model = CANNOT_RUN;
        b.top_p = 1.5;
      },
      bad('invalid_value', 'top_p'),
    ),
  );
  // HEAD, slashes and the management routes' bodies (routes.ts).
  for (const m of routeCases()) add(m);
  // Images whose header and frames disagree, and a request's caps on images (images.ts).
  for (const m of imageCases()) add(m);
  // The Responses API (responses.ts, responses-faults.ts).
  for (const m of [...responseCases(), ...responseFaultCases()]) add(m);
  return list;
}

/** A `/call` line: an offered function (or `unknown_fn`), with arguments or none. */
export function callLine(rng: Rng, names: readonly string[]): string {
  const args = rng.pick([
    '',
    ' {}',
    ' {"city":"Paris"}',
    ' {"id":[1,2],"q":"a b"}',
    '\t{"x":null}',
  ]);
  return `/call ${rng.pick(names)}${args}`;
}

/** The chat cases of the echo engine's tools (docs/api.md, The echo engine: Tools). */
function callCases(): Mutation[] {
  const offered: Json = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } },
    { type: 'function', function: { name: 'lookup' } },
  ];
  /** A valid request whose last user message is `lines` (as a string or text parts). */
  const asking = (rng: Rng, kind: string, lines: string[], change: (b: Body) => void): Built => {
    const { body } = validRequest(rng);
    for (const key of ['stop', 'max_tokens', 'max_completion_tokens', 'tools', 'tool_choice']) {
      delete body[key];
    }
    body.tools = offered;
    if (rng.chance(0.5)) body.tool_choice = rng.pick(['auto', null]);
    const content: Json = rng.chance(0.7)
      ? lines.join(rng.pick(['\n', '\r\n', '\n\n']))
      : lines.map((line) => ({ type: 'text', text: line }));
    (body.messages as Message[])[lastUserIndex(body)] = { role: 'user', content };
    change(body);
    return { kind, body, expect: valid(body) };
  };
  const names = ['get_weather', 'lookup'];
  const some = (rng: Rng, list = names) =>
    Array.from({ length: rng.int(1, 3) }, () => callLine(rng, list));
  return [
    (rng) => asking(rng, 'tools:call', some(rng), () => {}),
    (rng) => asking(rng, 'tools:call-none', some(rng), (b) => void (b.tool_choice = 'none')),
    (rng) => asking(rng, 'tools:call-not-offered', some(rng, ['unknown_fn', 'lookup']), () => {}),
    (rng) =>
      asking(
        rng,
        'tools:call-and-text',
        [...some(rng), rng.pick(['hello', '/calls lookup', 'please /call lookup', '/call'])],
        () => {},
      ),
    (rng) =>
      asking(rng, 'tools:call-without-tools', some(rng), (b) => {
        if (rng.chance(0.5)) b.tools = [];
        else delete b.tools;
      }),
    (rng) => {
      // After the calls, their results: R is what the tools answered.
      const { body } = validRequest(rng);
      const list = body.messages as Message[];
      const k = list.reduce((n, m) => n + ((m.tool_calls as Json[] | undefined)?.length ?? 0), 0);
      const count = rng.int(1, 3);
      const calls = Array.from({ length: count }, (_, i) => ({
        id: `call_echo_${k + i}`,
        type: 'function',
        function: { name: 'lookup', arguments: '{}' },
      }));
      list.push(
        { role: 'user', content: calls.map(() => '/call lookup').join('\n') },
        { role: 'assistant', content: rng.pick([null, '']), tool_calls: calls },
        ...calls.map((c) => ({ role: 'tool', content: content(rng), tool_call_id: c.id })),
      );
      if (rng.chance(0.5)) body.tools = offered;
      return { kind: 'tools:after-results', body, expect: valid(body) };
    },
  ];
}

/**
 * Whether `path` (`v1/…`) is one of the route table's (relay/protocol.js `API_ROUTES`), at its
 * own path or its alias, a `*` taking one character or more: the unknown routes must not be.
 */
function inRouteTable(path: string): boolean {
  const rest = path.replace(/^v1\//, '').replace(/\/$/, '');
  return API_ROUTES.some(({ path: p }) =>
    p.endsWith('/*') ? rest.startsWith(p.slice(0, -1)) && rest.length > p.length - 1 : p === rest,
  );
}

/** `headers` with `name` set, or removed when `value` is undefined. */
function withHeader(headers: Record<string, string>, name: string, value: string | undefined) {
  const out = { ...headers };
  if (value === undefined) delete out[name];
  else out[name] = value;
  return out;
}

/** The body as JSON, padded to `size` bytes: with spaces, or inside an ignored string field. */
function padded(rng: Rng, body: Body, size: number): BodySpec {
  const json = JSON.stringify(body);
  const used = new TextEncoder().encode(json).byteLength;
  if (rng.chance(0.5)) return { parts: [json, { repeat: ' ', count: size - used }] };
  const open = json.slice(0, -1) + ',"metadata":"';
  const close = '"}';
  return {
    parts: [
      open,
      { repeat: 'p', count: size - used - (open.length - json.length + 1) - close.length + 1 },
      close,
    ],
  };
}

/** The echo reply `body` must get (a valid request, possibly changed by a mutation). */
function valid(body: Body): Expectation {
  return { status: 200, reply: echoExpectation(body, String(body.model)) };
}

// ---------------------------------------------------------------------------------------------

const MUTATIONS = mutations();

/** How many mutations there are: the first cases of every run are each of them once. */
export const MUTATION_COUNT = MUTATIONS.length;

/**
 * `count` cases from `seed`: every mutation once, then valid requests (about a third) and
 * mutations at random. Case `i` depends only on the seed and `i`.
 */
export function generate(seed: number, count: number): FuzzCase[] {
  // `FUZZ_CASE=<index>`: that case alone, as it was in the run with the same seed.
  const only = process.env.FUZZ_CASE;
  if (only !== undefined && only !== '') return [generateOne(seed, Number(only))];
  return Array.from({ length: count }, (_, index) => generateOne(seed, index));
}

/** Case `index` of the run with `seed`. */
export function generateOne(seed: number, index: number): FuzzCase {
  const rng = new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  rng.next();
  let mutation: Mutation;
  if (index < MUTATIONS.length) mutation = MUTATIONS[index] as Mutation;
  // Sizes of 4 MiB and more cost time: rarely, once every mutation has had its turn.
  else if (rng.chance(0.35)) mutation = MUTATIONS[0] as Mutation;
  else if (rng.chance(0.15)) mutation = MUTATIONS[rng.pick(OFTEN)] as Mutation;
  else mutation = rng.pick(MUTATIONS.filter((_, i) => i > 0 && !BIG.has(i)));
  const built = mutation(rng);
  const body =
    built.body === undefined || built.body === null
      ? null
      : 'parts' in built.body || 'bytes' in built.body
        ? (built.body as BodySpec)
        : { parts: [JSON.stringify(built.body)] };
  return {
    index,
    kind: built.kind,
    method: built.method ?? 'POST',
    path: built.path ?? CHAT,
    headers: built.headers ?? KEYED,
    body: ['GET', 'HEAD'].includes(built.method ?? 'POST') ? null : body,
    expect: built.expect,
  };
}

/**
 * Valid requests of the Responses API and the echo engine's tool calls (a handful of mutations
 * among hundreds), drawn more often than one mutation's share.
 */
const OFTEN = MUTATIONS.flatMap((m, i) =>
  /^(responses:(valid|call|after-call|max_output_tokens)|tools:(call|after-results))$/.test(
    m(new Rng(1)).kind,
  )
    ? [i]
    : [],
);

/** Mutations whose bodies are megabytes: only in the systematic part of a run. */
const BIG = new Set(
  MUTATIONS.flatMap((m, i) => {
    const kind = m(new Rng(1)).kind;
    return /^(size|context|order:(auth-before-size|content-type-before-size|size-before-json)|responses:(huge|context|size))/.test(
      kind,
    )
      ? [i]
      : [];
  }),
);

/** The fixture GGUF as the fuzz suite asks it: its id, sentence, pieces and tokens. */
export interface FixtureFacts {
  id: string;
  sentence: string;
  /** The sentence as its tokens, one piece each. */
  pieces: readonly string[];
  /** Tokens of the whole reply: the pieces and the end of the turn. */
  tokens: number;
}

/**
 * `count` valid requests of the fixture model, which answers its sentence whatever it is asked:
 * cut by `max_tokens` to that many pieces (`length`), or by a stop string (`stop`), streamed or
 * not. Usage is fixed only where the contract and the fixture fix it (not the prompt's tokens).
 */
export function fixtureCases(seed: number, count: number, fixture: FixtureFacts): FuzzCase[] {
  return Array.from({ length: count }, (_, index) => {
    const rng = new Rng((seed ^ Math.imul(index + 1, 0x85ebca6b)) >>> 0);
    const { body } = validRequest(rng, fixture.id);
    // Only what the fixture honours as the contract says: no sampling or extension fields.
    const kept: Body = { model: fixture.id, messages: body.messages as Json };
    const stream = rng.chance(0.5);
    if (stream) kept.stream = true;
    const include_usage = stream && rng.chance(0.5);
    if (include_usage) kept.stream_options = { include_usage: true };
    let content = fixture.sentence;
    let finish_reason: Reply['finish_reason'] = 'stop';
    let completion: number | null = fixture.tokens;
    const cut = rng.int(0, 2);
    if (cut === 1) {
      const n = rng.int(1, fixture.pieces.length - 1);
      kept[rng.pick(['max_tokens', 'max_completion_tokens'])] = n;
      content = fixture.pieces.slice(0, n).join('');
      finish_reason = 'length';
      completion = n;
    } else if (cut === 2) {
      const start = rng.int(1, fixture.sentence.length - 2);
      const stop = fixture.sentence.slice(start, start + rng.int(1, 5));
      kept.stop = rng.chance(0.5) ? stop : ['zzz', stop];
      content = fixture.sentence.slice(0, fixture.sentence.indexOf(stop));
      completion = null;
    }
    return {
      index,
      kind: `fixture:${['whole', 'max_tokens', 'stop'][cut]}`,
      method: 'POST',
      path: CHAT,
      headers: KEYED,
      body: { parts: [JSON.stringify(kept)] },
      expect: {
        status: 200,
        reply: {
          model: fixture.id,
          content,
          finish_reason,
          prompt_tokens: null,
          completion_tokens: completion,
          stream,
          include_usage,
          chunks: null,
          tool_calls: [],
        },
      },
    };
  });
}
