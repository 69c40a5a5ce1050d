/**
 * @module
 * Hostile and clumsy bodies for the Responses API, each with what docs/api.md says it gets: wrong
 * types and nulls (`null` counts as absent), items and parts Hearth does not take, bounds, what
 * cannot be done on the device, a `previous_response_id` or `item_reference` that names nothing
 * kept; the rest (deep, huge, prototype keys, the envelope, the order of checks) in
 * responses-envelope.ts.
 */
import type { Rng } from './generate';
import type { RouteCase } from './routes';
import {
  asCase,
  bad,
  err,
  field,
  HOSTED,
  itemsOf,
  message,
  mutate,
  nested,
  valid,
  validBody,
  WEATHER,
  withItem,
  type Json,
  type Mutation,
} from './responses';
import { envelopeMutations } from './responses-envelope';

const NOT_DOWNLOADED = 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC';
const CANNOT_RUN = 'mlc-ai/SmolLM2-360M-Instruct-q4f16_1-MLC';

/** Wrong types for a field of type `kind`. */
function wrongTypes(kind: 'number' | 'string' | 'boolean' | 'object' | 'array'): Json[] {
  const all: Record<string, Json[]> = {
    number: [1, 0.5],
    string: ['1'],
    boolean: [true],
    object: [{ a: 1 }],
    array: [[1]],
  };
  return Object.entries(all).flatMap(([k, v]) => (k === kind ? [] : v));
}

/** The top-level fields: wrong types, nulls, bounds, what the device cannot do. */
function fieldMutations(): Mutation[] {
  const list: Mutation[] = [];
  const add = (m: Mutation) => list.push(m);
  const no = (kind: string, name: string, value: Json, expect: ReturnType<typeof bad>) =>
    add((rng) => field(rng, kind, name, value, expect));
  no('missing', 'model', null, bad('missing_field', 'model'));
  add((rng) => mutate(rng, 'model:absent', (b) => delete b.model, bad('missing_field', 'model')));
  for (const value of [5, ['hearth/echo'], true])
    no('wrong-type', 'model', value, bad('invalid_type', 'model'));
  for (const id of ['acme/nope', 'HEARTH/ECHO', '']) {
    no('unknown', 'model', id, err(404, 'model_not_found', 'model'));
  }
  // On a model that is not here, a body asking nothing it cannot honour: the capability checks
  // (tools, images, logprobs, formats: 400) come before whether it can run or is downloaded.
  const plainOn = (model: string) => (b: Record<string, Json>) => {
    b.model = model;
    b.input = 'hello';
    for (const key of ['tools', 'tool_choice', 'include', 'text', 'top_logprobs']) delete b[key];
  };
  const on = (kind: string, model: string, expect: ReturnType<typeof bad>) =>
    add((rng) => mutate(rng, `model:${kind}`, plainOn(model), expect));
  on('not-downloaded', NOT_DOWNLOADED, err(404, 'model_not_downloaded', 'model'));
  on('cannot-run-here', CANNOT_RUN, err(503, 'webgpu_unavailable'));
  // input
  no('null', 'input', null, bad('missing_field', 'input'));
  add((rng) => mutate(rng, 'input:absent', (b) => delete b.input, bad('missing_field', 'input')));
  for (const value of [5, true, { role: 'user', content: 'x' }]) {
    no('wrong-type', 'input', value, bad('invalid_type', 'input'));
  }
  no('empty', 'input', [], bad('invalid_value', 'input'));
  // The rule across messages: the last is the user's (or a tool result, tools in play).
  no(
    'only-developer',
    'input',
    [{ role: 'developer', content: 'x' }],
    bad('invalid_value', 'input'),
  );
  add((rng) =>
    mutate(
      rng,
      'input:assistant-last',
      (b) => void itemsOf(b).push(message(rng, 'assistant', 'x')),
      bad('invalid_value', 'input'),
    ),
  );
  add((rng) =>
    mutate(
      rng,
      'input:output-last-without-tools',
      (b) => {
        b.input = [
          { role: 'user', content: 'x' },
          { type: 'function_call_output', call_id: 'c', output: 'r' },
        ];
        delete b.tools;
      },
      bad('invalid_value', 'input'),
    ),
  );
  // Scalars: types and bounds.
  for (const [name, kind] of [
    ['instructions', 'string'],
    ['store', 'boolean'],
    ['stream', 'boolean'],
    ['parallel_tool_calls', 'boolean'],
    ['temperature', 'number'],
    ['max_output_tokens', 'number'],
  ] as const) {
    for (const value of wrongTypes(kind)) {
      if (kind === 'number' && typeof value === 'number') continue;
      no('wrong-type', name, value, bad('invalid_type', name));
    }
  }
  for (const value of [15, 0, -1, 16.5]) {
    no('out-of-range', 'max_output_tokens', value, bad('invalid_value', 'max_output_tokens'));
  }
  no('above-max', 'temperature', 2.0001, bad('invalid_value', 'temperature'));
  no('above-max', 'top_p', 1.5, bad('invalid_value', 'top_p'));
  no('above-max', 'top_logprobs', 21, bad('invalid_value', 'top_logprobs'));
  no('unknown', 'truncation', 'sometimes', bad('invalid_value', 'truncation'));
  no('unknown', 'reasoning', { effort: 'max' }, bad('invalid_value', 'reasoning.effort'));
  no(
    'too-many',
    'metadata',
    Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
    bad('invalid_value', 'metadata'),
  );
  no('value-type', 'metadata', { k: 5 }, bad('invalid_type', 'metadata.k'));
  no('value-long', 'metadata', { k: 'v'.repeat(513) }, bad('invalid_value', 'metadata.k'));
  // What cannot be done here.
  no('true', 'background', true, bad('unsupported_parameter', 'background'));
  no('present', 'conversation', 'conv_1', bad('unsupported_parameter', 'conversation'));
  no('present', 'prompt', { id: 'pmpt_1' }, bad('unsupported_parameter', 'prompt'));
  no(
    'json_object',
    'text',
    { format: { type: 'json_object' } },
    bad('unsupported_parameter', 'text.format'),
  );
  const schema = { type: 'json_schema', name: 's', schema: { type: 'object' } };
  no('json_schema', 'text', { format: schema }, bad('unsupported_parameter', 'text.format'));
  no(
    'unknown-format',
    'text',
    { format: { type: 'xml' } },
    bad('invalid_value', 'text.format.type'),
  );
  no(
    'logprobs',
    'include',
    ['message.output_text.logprobs'],
    bad('unsupported_parameter', 'include'),
  );
  // previous_response_id: none is kept under that id (the run never chains).
  for (const id of ['resp_nope', 'resp_00000000000000000000000000000000', 'x']) {
    no(
      'not-kept',
      'previous_response_id',
      id,
      err(404, 'response_not_found', 'previous_response_id'),
    );
  }
  no('empty', 'previous_response_id', '', bad('invalid_value', 'previous_response_id'));
  no('wrong-type', 'previous_response_id', 5, bad('invalid_type', 'previous_response_id'));
  // Tools.
  no(
    'bad-name',
    'tools',
    [{ type: 'function', name: 'get weather' }],
    bad('invalid_value', 'tools[0].name'),
  );
  no('no-name', 'tools', [{ type: 'function' }], bad('missing_field', 'tools[0].name'));
  no('unknown-type', 'tools', [{ type: 'bogus' }], bad('invalid_value', 'tools[0].type'));
  no('wrong-type', 'tools', { type: 'function', name: 'f' }, bad('invalid_type', 'tools'));
  no(
    'parameters-type',
    'tools',
    [{ ...WEATHER, parameters: 'x' }],
    bad('invalid_type', 'tools[0].parameters'),
  );
  no(
    'parameters-deep',
    'tools',
    [{ ...WEATHER, parameters: nested(65) }],
    bad('invalid_value', 'tools[0].parameters'),
  );
  add((rng) => {
    const body = validBody(rng);
    body.tools = [{ ...WEATHER, parameters: nested(64) }];
    return { kind: 'responses:tools:parameters-depth-64', body, expect: valid(body) };
  });
  for (const tools of [[WEATHER], [{ type: 'web_search' }], null]) {
    for (const choice of ['required', { type: 'function', name: 'get_weather' }]) {
      add((rng) =>
        mutate(
          rng,
          'tool_choice:forcing',
          (b) => {
            b.tools = tools;
            b.tool_choice = choice;
          },
          bad('unsupported_parameter', 'tool_choice'),
        ),
      );
    }
  }
  for (const type of HOSTED) {
    const tools = [WEATHER, { type }];
    add((rng) =>
      mutate(
        rng,
        'tool_choice:hosted',
        (b) => Object.assign(b, { tools, tool_choice: { type } }),
        bad('unsupported_parameter', 'tool_choice'),
      ),
    );
  }
  no('unknown', 'tool_choice', 'sometimes', bad('invalid_value', 'tool_choice'));
  no('wrong-type', 'tool_choice', 5, bad('invalid_type', 'tool_choice'));
  // Hearth's extensions, checked as chat's.
  no('5-strings', 'stop', ['a', 'b', 'c', 'd', 'e'], bad('invalid_value', 'stop'));
  no('below-min', 'echo_delay_ms', -1, bad('invalid_value', 'echo_delay_ms'));
  return list;
}

/** Input items and their parts. */
function itemMutations(): Mutation[] {
  const list: Mutation[] = [];
  const item = (kind: string, value: Json, expect: (i: number) => ReturnType<typeof bad>) =>
    list.push((rng) => withItem(rng, `item:${kind}`, value, expect));
  for (const value of [5, null, 'x', [{ role: 'user', content: 'x' }]]) {
    item('wrong-type', value, (i) => bad('invalid_type', `input[${i}]`));
  }
  item('no-role', { content: 'x' }, (i) => bad('missing_field', `input[${i}].role`));
  for (const role of ['bogus', 'tool', 'User']) {
    item('unknown-role', { role, content: 'x' }, (i) => bad('invalid_value', `input[${i}].role`));
  }
  item('role-type', { role: 5, content: 'x' }, (i) => bad('invalid_type', `input[${i}].role`));
  item('no-content', { role: 'user' }, (i) => bad('missing_field', `input[${i}].content`));
  item('null-content', { role: 'user', content: null }, (i) =>
    bad('missing_field', `input[${i}].content`),
  );
  item('content-type', { role: 'system', content: 5 }, (i) =>
    bad('invalid_type', `input[${i}].content`),
  );
  item('unknown-type', { type: 'wat', role: 'user', content: 'x' }, (i) =>
    bad('invalid_value', `input[${i}].type`),
  );
  item('type-type', { type: 5, role: 'user', content: 'x' }, (i) =>
    bad('invalid_type', `input[${i}].type`),
  );
  for (const type of ['web_search_call', 'computer_call', 'mcp_call', 'local_shell_call']) {
    item(`hosted:${type}`, { type, id: 'x_1' }, (i) =>
      bad('unsupported_parameter', `input[${i}].type`),
    );
  }
  // Parts.
  const part = (kind: string, role: string, p: Json, at: (i: number) => ReturnType<typeof bad>) =>
    item(`part:${kind}:${role}`, { role, content: [{ type: 'input_text', text: 'a' }, p] }, at);
  for (const role of ['user', 'developer']) {
    part('chat-text', role, { type: 'text', text: 'x' }, (i) =>
      bad('invalid_value', `input[${i}].content[1].type`),
    );
    part('no-type', role, { text: 'x' }, (i) =>
      bad('missing_field', `input[${i}].content[1].type`),
    );
    part('text-type', role, { type: 'input_text', text: 5 }, (i) =>
      bad('invalid_type', `input[${i}].content[1].text`),
    );
    part('no-text', role, { type: 'input_text' }, (i) =>
      bad('missing_field', `input[${i}].content[1].text`),
    );
    part('not-object', role, 'x', (i) => bad('invalid_type', `input[${i}].content[1]`));
    part('input_file', role, { type: 'input_file', file_id: 'file-1' }, (i) =>
      bad('unsupported_parameter', `input[${i}].content[1].type`),
    );
    part('input_audio', role, { type: 'input_audio', input_audio: {} }, (i) =>
      bad('unsupported_parameter', `input[${i}].content[1].type`),
    );
  }
  const image = (url: string) => ({ type: 'input_image', image_url: url });
  part('image', 'assistant', image('data:image/png;base64,AA=='), (i) =>
    bad('unsupported_parameter', `input[${i}].content[1].type`),
  );
  part('image-file_id', 'user', { type: 'input_image', file_id: 'file-1', image_url: 'x' }, (i) =>
    bad('unsupported_parameter', `input[${i}].content[1].file_id`),
  );
  part('image-not-an-image', 'user', image('data:image/png;base64,AA=='), (i) =>
    bad('invalid_value', `input[${i}].content[1]`),
  );
  part('image-remote', 'user', image('https://example.com/cat.png'), (i) =>
    bad('invalid_value', `input[${i}].content[1].image_url`),
  );
  part('image-detail', 'user', { ...image('data:image/png;base64,AA=='), detail: 'max' }, (i) =>
    bad('invalid_value', `input[${i}].content[1].detail`),
  );
  // Calls and their outputs.
  const call = { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' };
  item('call-no-id', { ...call, call_id: null }, (i) =>
    bad('missing_field', `input[${i}].call_id`),
  );
  item('call-arguments', { ...call, arguments: {} }, (i) =>
    bad('invalid_type', `input[${i}].arguments`),
  );
  item('call-empty-name', { ...call, name: '' }, (i) => bad('invalid_value', `input[${i}].name`));
  const output = { type: 'function_call_output', call_id: 'c', output: 'r' };
  item('output-type', { ...output, output: 5 }, (i) => bad('invalid_type', `input[${i}].output`));
  item('output-missing', { type: 'function_call_output', call_id: 'c' }, (i) =>
    bad('missing_field', `input[${i}].output`),
  );
  item('output-file', { ...output, output: [{ type: 'input_file', file_id: 'f' }] }, (i) =>
    bad('unsupported_parameter', `input[${i}].output[0].type`),
  );
  item('reference-not-kept', { type: 'item_reference', id: 'msg_nope' }, (i) =>
    err(404, 'response_not_found', `input[${i}].id`),
  );
  return list;
}

/** The faulty cases of the Responses route, as generate.ts's mutations. */
export function responseFaultCases(): ((rng: Rng) => RouteCase)[] {
  return [...fieldMutations(), ...itemMutations(), ...envelopeMutations()].map(asCase);
}
