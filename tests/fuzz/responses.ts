/**
 * @module
 * Fuzz cases for the Responses API (`POST v1/openai/responses` and `v1/responses`): valid
 * requests with the echo engine's exact response (responses-oracle.ts), `/call` messages and the
 * tool loop, and hostile or clumsy bodies, each with the status, code and param that docs/api.md's
 * "The Responses API" and its order of checks give. Every mutation is applied to a valid request,
 * so that the contract decides the answer.
 */
import type { BodySpec, Expectation, Rng } from './generate';
import type { RouteCase } from './routes';
import { responseExpectation } from './responses-oracle';
import { text } from './text';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Body = Record<string, Json>;
type Item = Record<string, Json>;

const ECHO = 'hearth/echo';
export const PATHS = ['v1/openai/responses', 'v1/responses'];
export const KEYED = { authorization: 'Bearer k', 'content-type': 'application/json' };
/** The echo engine's context window (docs/api.md, The echo engine). */
export const ECHO_CONTEXT = 1_048_576;

export const err = (status: number, code: string, param: string | null = null): Expectation => ({
  status,
  error: { code, param },
});
export const bad = (code: string, param: string | null) => err(400, code, param);

export const WEATHER = { type: 'function', name: 'get_weather', parameters: { type: 'object' } };
const LOOKUP = { type: 'function', name: 'lookup' };
const CRM = { type: 'namespace', name: 'crm', tools: [{ type: 'function', name: 'find' }] };
/** Tools that run on OpenAI's side (not `file_search`, which the documents work runs here). */
export const HOSTED = ['web_search', 'code_interpreter', 'image_generation', 'mcp', 'local_shell'];

/** Message content: a string, or text parts (`output_text` for the assistant). */
function content(rng: Rng, role: string, words = 6): Json {
  if (rng.chance(0.6)) return text(rng, words);
  const type = role === 'assistant' ? 'output_text' : 'input_text';
  return Array.from({ length: rng.int(0, 3) }, () => ({ type, text: text(rng, 3) }));
}

/** A message item, with its `type` or without (the SDK's `EasyInputMessage`). */
export function message(rng: Rng, role: string, body: Json = content(rng, role)): Item {
  return { ...(rng.chance(0.5) && { type: 'message' }), role, content: body };
}

/** A call and its output, as a client sends an earlier turn back. */
function callPair(rng: Rng, id: string): Item[] {
  const output = rng.chance(0.7)
    ? text(rng, 3)
    : [
        { type: 'input_text', text: text(rng, 2) },
        { type: 'input_text', text: 'b' },
      ];
  return [
    { type: 'function_call', call_id: id, name: 'lookup', arguments: '{}' },
    { type: 'function_call_output', call_id: id, output },
  ];
}

/** Valid values of the fields the echo engine honours or ignores. */
const FIELDS: Record<string, (rng: Rng) => Json> = {
  temperature: (rng) => rng.pick([0, 2, 0.7, null]),
  top_p: (rng) => rng.pick([0, 1, 0.5, null]),
  parallel_tool_calls: (rng) => rng.pick([true, false, null]),
  reasoning: (rng) => rng.pick<Json>([{ effort: 'high', summary: 'auto' }, { effort: 'none' }]),
  truncation: (rng) => rng.pick(['auto', 'disabled', null]),
  metadata: (rng) => rng.pick<Json>([{ k: 'v' }, {}, null]),
  text: (rng) => rng.pick<Json>([{ format: { type: 'text' } }, { verbosity: 'low' }]),
  top_logprobs: (rng) => rng.pick([0, 20, null]),
  include: () => ['reasoning.encrypted_content'],
  max_tool_calls: () => 3,
  background: () => false,
  user: () => 'u',
  safety_identifier: () => 'sid',
  prompt_cache_key: () => 'pck',
  service_tier: () => 'auto',
  client_metadata: (rng) => rng.pick<Json>([{ a: [1] }, 'x', 5]),
  stream_options: () => ({ include_obfuscation: false }),
  seed: () => 42,
  echo_delay_ms: () => 0,
  x_unknown_field: (rng) => rng.pick<Json>([1, 'a', null, [[[]]]]),
};

/** A valid request: history, the last user message, then perhaps a developer item. */
export function validBody(rng: Rng, model = ECHO): Body {
  const body: Body = { model };
  let calls = 0;
  if (rng.chance(0.3)) {
    body.input = rng.chance(0.3) ? text(rng, 40) : text(rng, 8);
  } else {
    const items: Item[] = [];
    for (let n = rng.int(0, 4); n > 0; n -= 1) {
      const pick = rng.int(0, 5);
      if (pick === 0) items.push(message(rng, 'user'));
      else if (pick === 1) items.push(message(rng, 'assistant'));
      else if (pick === 2) items.push(message(rng, rng.pick(['system', 'developer'])));
      else if (pick === 3) items.push({ type: 'reasoning', id: 'rs_1', summary: [] });
      else items.push(...callPair(rng, `c_${calls++}`));
    }
    const words = rng.chance(0.3) ? 40 : 8;
    items.push(message(rng, 'user', content(rng, 'user', words)));
    if (rng.chance(0.2)) items.push(message(rng, rng.pick(['system', 'developer'])));
    body.input = items;
  }
  if (rng.chance(0.4)) body.instructions = text(rng, 4);
  if (rng.chance(0.6)) body.stream = rng.chance(0.8);
  // Kept responses cost the store: mostly not kept.
  body.store = rng.pick([false, false, true, null]);
  if (body.store === null) delete body.store;
  if (rng.chance(0.3)) body.max_output_tokens = rng.pick([16, 17, 20, 40, 1e308, null]);
  if (rng.chance(0.1)) body.stop = [rng.pick(['hello', 'Ω', ' '])];
  if (rng.chance(0.15)) {
    body.tools = rng.pick<Json>([
      [WEATHER, LOOKUP],
      [{ type: rng.pick(HOSTED) }],
      [CRM, WEATHER],
      [],
    ]);
    if (rng.chance(0.5)) body.tool_choice = rng.pick(['auto', 'none']);
  }
  for (const [name, value] of Object.entries(FIELDS)) {
    if (rng.chance(0.05)) body[name] = value(rng);
  }
  return Object.fromEntries(rng.shuffle(Object.entries(body)));
}

/** The items of a valid body's `input` (a string becomes one user message). */
export function itemsOf(body: Body): Item[] {
  if (typeof body.input === 'string') body.input = [{ role: 'user', content: body.input }];
  return body.input as Item[];
}

export interface Built {
  kind: string;
  body: Body | BodySpec;
  expect: Expectation;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
}
export type Mutation = (rng: Rng) => Built;

export const valid = (body: Body): Expectation => ({
  status: 200,
  response: responseExpectation(body),
});

/** A valid body with `change` made to it. */
export function mutate(
  rng: Rng,
  kind: string,
  change: (b: Body) => void,
  expect: Expectation,
): Built {
  const body = validBody(rng);
  change(body);
  return { kind: `responses:${kind}`, body, expect };
}

/** `name: value` on a valid body. */
export const field = (rng: Rng, kind: string, name: string, value: Json, expect: Expectation) =>
  mutate(rng, `${name}:${kind}`, (b) => void (b[name] = value), expect);

/** `item` put in a valid body's input, before its last user message; `expect` of its index. */
export function withItem(
  rng: Rng,
  kind: string,
  item: Json,
  expect: (i: number) => Expectation,
): Built {
  const body = validBody(rng);
  const items = itemsOf(body);
  const last = items.findLastIndex((m) => m.role === 'user');
  const i = rng.int(0, last);
  items.splice(i, 0, item as Item);
  return { kind: `responses:${kind}`, body, expect: expect(i) };
}

/** `depth` containers, one in the other, as generate.ts's `nested`; the outermost an object. */
export function nested(depth: number): Json {
  let value: Json = {};
  for (let i = 1; i < depth; i += 1) {
    value = i === depth - 1 || i % 3 !== 0 ? { a: value } : [value];
  }
  return value;
}

/**
 * The valid cases of the Responses route, as generate.ts's mutations: plain requests and the
 * echo engine's tools (the faults: responses-faults.ts).
 */
export function responseCases(): ((rng: Rng) => RouteCase)[] {
  const valids: Mutation[] = [
    (rng) => {
      const body = validBody(rng);
      return { kind: 'responses:valid', body, expect: valid(body) };
    },
    ...callMutations(),
    (rng) => {
      // A long answer cut at max_output_tokens: incomplete.
      const body = validBody(rng);
      const words = Array.from({ length: rng.int(10, 60) }, () => rng.pick(['a', 'bb', 'Ω', '😀']));
      itemsOf(body).push(message(rng, 'user', words.join(rng.pick([' ', '\n', ' \t']))));
      body.max_output_tokens = rng.int(16, 40);
      delete body.stop;
      return { kind: 'responses:max_output_tokens', body, expect: valid(body) };
    },
  ];
  return valids.map(asCase);
}

/** A mutation's result as a case, at one of the two paths. */
export function asCase(m: Mutation): (rng: Rng) => RouteCase {
  return (rng) => {
    const built = m(rng);
    const body = built.body;
    return {
      kind: built.kind,
      method: built.method ?? 'POST',
      path: built.path ?? rng.pick(PATHS),
      headers: built.headers ?? KEYED,
      body:
        'parts' in body || 'bytes' in body ? (body as BodySpec) : { parts: [JSON.stringify(body)] },
      expect: built.expect,
    };
  };
}

/** `/call` and the tool loop (docs/api.md, The echo engine: Tools; Responses: Tools). */
function callMutations(): Mutation[] {
  const call = (rng: Rng, names: string[]) =>
    `/call ${rng.pick(names)}${rng.pick(['', ' {}', ' {"city":"Paris"}', ' {"a":[1,{"b":null}]}'])}`;
  const asking = (rng: Rng, kind: string, names: string[], change: (b: Body) => void): Built => {
    const body = validBody(rng);
    delete body.stop;
    delete body.max_output_tokens;
    body.tools = rng.pick<Json>([
      [WEATHER, CRM],
      [{ type: 'web_search' }, WEATHER, CRM],
    ]);
    body.tool_choice = rng.pick(['auto', null]);
    const lines = Array.from({ length: rng.int(1, 3) }, () => call(rng, names));
    const items = itemsOf(body);
    const last = items.findLastIndex((m) => m.role === 'user');
    items[last] = message(rng, 'user', lines.join(rng.pick(['\n', '\r\n'])));
    change(body);
    return { kind: `responses:${kind}`, body, expect: valid(body) };
  };
  return [
    (rng) => asking(rng, 'call', ['get_weather', 'crm__find'], () => {}),
    (rng) => asking(rng, 'call-none', ['get_weather'], (b) => void (b.tool_choice = 'none')),
    (rng) => asking(rng, 'call-not-offered', ['web_search', 'find'], () => {}),
    (rng) =>
      asking(rng, 'call-hosted-only', ['get_weather'], (b) => {
        b.tools = [{ type: rng.pick(HOSTED) }];
      }),
    (rng) => {
      // The tool loop in one input: the call, the outputs, then the answer is what they said.
      const body = validBody(rng);
      const items = itemsOf(body);
      const k = items.filter((m) => m.type === 'function_call').length;
      const count = rng.int(1, 2);
      items.push(message(rng, 'user', '/call get_weather {"city":"Paris"}'));
      for (let i = 0; i < count; i += 1) {
        items.push({
          type: 'function_call',
          call_id: `call_echo_${k + i}`,
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
        });
      }
      for (let i = 0; i < count; i += 1) {
        const output = rng.chance(0.6)
          ? text(rng, 3)
          : [
              { type: 'input_text', text: text(rng, 2) },
              { type: 'input_text', text: 'Sunny' },
            ];
        items.push({ type: 'function_call_output', call_id: `call_echo_${k + i}`, output });
      }
      if (rng.chance(0.6)) body.tools = [WEATHER];
      return { kind: 'responses:after-call', body, expect: valid(body) };
    },
  ];
}
