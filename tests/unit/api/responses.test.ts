/**
 * The Responses API over the echo stack (API, bridge, queue, echo engine), as the service worker
 * wires it: the translation onto the chat pipeline, the response object and its events, the
 * conversation kept on the device, and the errors in OpenAI's shape naming Responses fields.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ECHO_MODEL, staticModelDirectory } from '../../../src/models/models';
import { createApi } from '../../../src/api/router';
import { decodeSse } from '../../../src/protocol/sse';
import { memoryResponseStore, overLimits } from '../../../src/api/responses/store';
import { dropOldestTurn } from '../../../src/api/responses/conversation';
import {
  chatRequest,
  echoStack,
  eventually,
  getRequest,
  scriptedBackend,
  URL_BASE,
} from '../helpers';

let stack: ReturnType<typeof echoStack>;
beforeEach(() => {
  stack = echoStack();
});
afterEach(() => stack.close());

const PATH = '/v1/openai/responses';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function create(body: Json, api = stack.api): Promise<{ status: number; body: Json }> {
  const response = await api.fetch(chatRequest({ model: 'hearth/echo', ...body }, { path: PATH }));
  return { status: response.status, body: (await response.json()) as Json };
}

async function events(body: Json): Promise<{ event: string; data: Json }[]> {
  const response = await stack.api.fetch(
    chatRequest({ model: 'hearth/echo', stream: true, ...body }, { path: PATH }),
  );
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const out: { event: string; data: Json }[] = [];
  for await (const message of decodeSse(response.body!)) {
    out.push({ event: message.event ?? '', data: JSON.parse(message.data) as Json });
  }
  return out;
}

const textOf = (response: Json) =>
  (response.output as Json[])
    .filter((item) => item.type === 'message')
    .flatMap((item) => (item.content as Json[]).map((part) => part.text as string))
    .join('');

const WEATHER = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
};

describe('POST /v1/openai/responses', () => {
  it('answers a string input with the echo, as a response object with usage', async () => {
    const { status, body } = await create({ input: 'Hello from the test' });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'hearth/echo',
      error: null,
      incomplete_details: null,
      store: true,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello from the test', annotations: [] }],
        },
      ],
      usage: {
        input_tokens: 4,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 4,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 8,
        estimated_cost: 0,
      },
    });
    expect(body.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(body.output[0].id).toMatch(/^msg_/);
  });

  it('answers at the /v1/responses alias too', async () => {
    const response = await stack.api.fetch(
      chatRequest({ model: 'hearth/echo', input: 'alias works' }, { path: '/v1/responses' }),
    );
    expect(textOf((await response.json()) as Json)).toBe('alias works');
  });

  it('puts instructions and developer messages before the conversation, as a system message', async () => {
    const { body } = await create({
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: [{ type: 'input_text', text: 'Speak plainly.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi there' }] },
      ],
    });
    expect(textOf(body)).toBe('[Be brief. Speak plainly.] Hi there');
    expect(body.instructions).toBe('Be brief.');
  });

  it('streams the events in order, numbered from 0, one text delta per echo token', async () => {
    const list = await events({ input: 'one two three' });
    expect(list.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list.map((e) => e.data.sequence_number)).toEqual(list.map((_, i) => i));
    for (const { event, data } of list) expect(data.type).toBe(event);
    const deltas = list.filter((e) => e.event === 'response.output_text.delta');
    expect(deltas.map((e) => e.data.delta)).toEqual(['one ', 'two ', 'three']);
    const itemId = list[2]!.data.item.id as string;
    for (const delta of deltas)
      expect(delta.data).toMatchObject({ item_id: itemId, output_index: 0 });
    expect(list[0]!.data.response).toMatchObject({ status: 'in_progress', output: [] });
    const done = list.at(-1)!.data.response as Json;
    expect(textOf(done)).toBe('one two three');
    expect(done.usage).toMatchObject({ input_tokens: 3, output_tokens: 3 });
  });

  it('stops at max_output_tokens as incomplete, saying why', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' ');
    const { body } = await create({ input: words, max_output_tokens: 16 });
    expect(body).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 16,
      output: [{ type: 'message', status: 'incomplete' }],
      usage: { output_tokens: 16 },
    });
    const list = await events({ input: words, max_output_tokens: 16 });
    expect(list.at(-1)?.event).toBe('response.incomplete');
  });
});

describe('errors in OpenAI’s shape, naming the Responses field', () => {
  it.each([
    [{ input: 'x', max_output_tokens: 15 }, 400, 'invalid_value', 'max_output_tokens'],
    [{ input: [] }, 400, 'invalid_value', 'input'],
    [{}, 400, 'missing_field', 'input'],
    [
      {
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'read this' },
              { type: 'input_file', file_id: 'file-1' },
            ],
          },
        ],
      },
      400,
      'unsupported_parameter',
      'input[0].content[1].type',
    ],
    [
      { input: [{ role: 'assistant', content: [{ type: 'input_image', image_url: 'x' }] }] },
      400,
      'unsupported_parameter',
      'input[0].content[0].type',
    ],
    [
      { input: 'x', text: { format: { type: 'json_object' } } },
      400,
      'unsupported_parameter',
      'text.format',
    ],
    [
      // An input_image's `image_url` is the URL itself: the param names it, not chat's `.url`.
      {
        input: [
          {
            role: 'user',
            content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }],
          },
        ],
      },
      400,
      'invalid_value',
      'input[0].content[0].image_url',
    ],
    [{ input: 'x', background: true }, 400, 'unsupported_parameter', 'background'],
    [
      { input: 'x', previous_response_id: 'resp_nope' },
      404,
      'response_not_found',
      'previous_response_id',
    ],
    [
      { input: 'x', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } },
      400,
      'unsupported_parameter',
      'tool_choice',
    ],
    [{ input: 'x', model: 'acme/none' }, 404, 'model_not_found', 'model'],
  ])('%j → %i %s (%s)', async (body, status, code, param) => {
    const response = await create(body);
    expect(response.status).toBe(status);
    expect(response.body.error).toMatchObject({ code, param });
    // A 400 says which field is at fault in its words too.
    if (status === 400 || code === 'response_not_found') {
      expect(response.body.error.message).toContain(`'${param}'`);
    }
  });

  it('answers when the response cannot be kept: an item too deep to serialise costs the record, not the answer', async () => {
    // An unknown field of an item is accepted and kept with the item; 50,000 levels of it
    // overflow JSON.stringify's stack (written as text: the test's own JSON.stringify would too).
    const deep = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const body = `{"model":"hearth/echo","input":[{"role":"user","content":"deep","x":${deep}}]}`;
    const response = await stack.api.fetch(chatRequest(body, { path: PATH }));
    expect(response.status).toBe(200);
    const json = (await response.json()) as Json;
    expect(json).toMatchObject({ status: 'completed', store: true });
    expect(textOf(json)).toBe('deep');
  });

  it('still answers the next request after a refused one', async () => {
    expect((await create({ input: [] })).status).toBe(400);
    expect(textOf((await create({ input: 'still here' })).body)).toBe('still here');
  });
});

describe('the conversation kept on the device', () => {
  it('continues through previous_response_id, counting the earlier turns as input', async () => {
    const first = (await create({ input: 'My name is Ada' })).body;
    const second = (await create({ input: 'What is it', previous_response_id: first.id })).body;
    expect(textOf(second)).toBe('What is it');
    expect(second.previous_response_id).toBe(first.id);
    // Earlier input (4) and output (4) words, then this input (3).
    expect(second.usage.input_tokens).toBe(11);
  });

  it('retrieves, lists the input items of, and deletes a stored response', async () => {
    const first = (await create({ input: 'first turn' })).body;
    const second = (await create({ input: 'second turn', previous_response_id: first.id })).body;
    const got = await stack.api.fetch(getRequest(`${PATH}/${second.id}`));
    expect(await got.json()).toEqual(second);
    const items = (await (
      await stack.api.fetch(getRequest(`${PATH}/${second.id}/input_items?order=asc`))
    ).json()) as Json;
    expect(items.object).toBe('list');
    expect(items.data.map((i: Json) => i.type)).toEqual(['message', 'message', 'message']);
    expect(items.data.map((i: Json) => i.role)).toEqual(['user', 'assistant', 'user']);
    const page = (await (
      await stack.api.fetch(
        getRequest(`${PATH}/${second.id}/input_items?limit=1&after=${items.data[0].id}&order=asc`),
      )
    ).json()) as Json;
    expect(page).toMatchObject({ has_more: true, first_id: items.data[1].id });
    const deleted = await stack.api.fetch(
      new Request(`${URL_BASE}${PATH}/${second.id}`, {
        method: 'DELETE',
        headers: { authorization: 'Bearer k' },
      }),
    );
    expect(await deleted.json()).toEqual({ id: second.id, object: 'response', deleted: true });
    const gone = await stack.api.fetch(getRequest(`${PATH}/${second.id}`));
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as Json).error.code).toBe('response_not_found');
    // The turn before it is kept on its own.
    expect((await stack.api.fetch(getRequest(`${PATH}/${first.id}`))).status).toBe(200);
  });

  it('takes one trailing slash after the id, and reads a second as another, unknown path', async () => {
    const { body } = await create({ input: 'kept' });
    expect((await stack.api.fetch(getRequest(`${PATH}/${body.id}/`))).status).toBe(200);
    const twice = await stack.api.fetch(getRequest(`${PATH}/${body.id}//`));
    expect(twice.status).toBe(404);
    expect(((await twice.json()) as Json).error.code).toBe('unknown_url');
    const deleted = await stack.api.fetch(
      new Request(`${URL_BASE}${PATH}/${body.id}//`, {
        method: 'DELETE',
        headers: { authorization: 'Bearer k' },
      }),
    );
    expect(deleted.status).toBe(404);
    // Still kept: the DELETE named no response.
    expect((await stack.api.fetch(getRequest(`${PATH}/${body.id}`))).status).toBe(200);
  });

  it('keeps nothing with store: false', async () => {
    const { body } = await create({ input: 'not kept', store: false });
    expect(body.store).toBe(false);
    expect((await stack.api.fetch(getRequest(`${PATH}/${body.id}`))).status).toBe(404);
  });

  it('resolves an item_reference to an item of a kept response', async () => {
    const first = (await create({ input: 'remember this' })).body;
    const { body } = await create({
      input: [
        { type: 'item_reference', id: first.output[0].id },
        { role: 'user', content: 'again' },
      ],
    });
    expect(body.usage.input_tokens).toBe(3);
    const missing = await create({ input: [{ type: 'item_reference', id: 'msg_nope' }] });
    expect(missing.status).toBe(404);
    expect(missing.body.error.param).toBe('input[0].id');
  });

  it('lists and clears what is kept at /v1/hearth/responses', async () => {
    await create({ input: 'one' });
    await create({ input: 'two' });
    const listed = (await (
      await stack.api.fetch(getRequest('/v1/hearth/responses'))
    ).json()) as Json;
    expect(listed.data).toHaveLength(2);
    const cleared = await stack.api.fetch(
      new Request(`${URL_BASE}/v1/hearth/responses`, {
        method: 'DELETE',
        headers: { authorization: 'Bearer k' },
      }),
    );
    expect(((await cleared.json()) as Json).deleted).toBe(2);
    const after = (await (
      await stack.api.fetch(getRequest('/v1/hearth/responses'))
    ).json()) as Json;
    expect(after.data).toEqual([]);
  });

  it('drops the oldest turns under truncation auto, and refuses without it', async () => {
    // Two turns of 600,000 words each pass the echo model's 1,048,576-token window together.
    const big = 'w '.repeat(600_000);
    const first = (await create({ input: big, max_output_tokens: 16 })).body;
    const refused = await create({
      input: big,
      previous_response_id: first.id,
      max_output_tokens: 16,
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'context_length_exceeded', param: 'input' });
    const { body } = await create({
      input: big,
      previous_response_id: first.id,
      max_output_tokens: 16,
      truncation: 'auto',
    });
    expect(body).toMatchObject({ status: 'incomplete', truncation: 'auto' });
    expect(body.usage.input_tokens).toBe(600_000);
  }, 60_000);
});

describe('tools', () => {
  it('runs a tool loop with the echo engine: a /call, the output, the answer', async () => {
    const call = (await create({ input: '/call get_weather {"city":"Paris"}', tools: [WEATHER] }))
      .body;
    expect(call.output).toEqual([
      {
        type: 'function_call',
        id: expect.stringMatching(/^fc_/),
        call_id: 'call_echo_0',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ]);
    const answer = (
      await create({
        previous_response_id: call.id,
        tools: [WEATHER],
        input: [{ type: 'function_call_output', call_id: 'call_echo_0', output: 'Sunny in Paris' }],
      })
    ).body;
    expect(textOf(answer)).toBe('Sunny in Paris');
  });

  it('streams a call as function-call argument events', async () => {
    const list = await events({ input: '/call get_weather {"city":"Oslo"}', tools: [WEATHER] });
    expect(list.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(list[4]!.data).toMatchObject({ name: 'get_weather', arguments: '{"city":"Oslo"}' });
  });

  it('answers in text under tool_choice none, and leaves hosted tools out under auto', async () => {
    const none = await create({
      input: '/call get_weather {}',
      tools: [WEATHER],
      tool_choice: 'none',
    });
    expect(textOf(none.body)).toBe('/call get_weather {}');
    const hosted = await create({
      input: '/call get_weather {}',
      tools: [{ type: 'web_search' }, WEATHER, { type: 'code_interpreter', container: 'x' }],
    });
    expect(hosted.body.output[0]).toMatchObject({ type: 'function_call', name: 'get_weather' });
  });

  it('offers a namespace’s functions, and names the namespace in the call', async () => {
    const { body } = await create({
      input: '/call crm__lookup {"id":7}',
      tools: [
        {
          type: 'namespace',
          name: 'crm',
          description: 'CRM',
          tools: [{ ...WEATHER, name: 'lookup' }],
        },
      ],
    });
    expect(body.output[0]).toMatchObject({
      type: 'function_call',
      name: 'lookup',
      namespace: 'crm',
      arguments: '{"id":7}',
    });
  });
});

describe('a stream that fails once under way', () => {
  it('ends with response.failed, carrying the error', async () => {
    const api = createApi({
      backend: scriptedBackend(async function* () {
        yield { type: 'tokens', tokens: ['partial '] };
        throw new Error('the engine broke');
      }),
      models: staticModelDirectory([ECHO_MODEL]),
    });
    const response = await api.fetch(
      chatRequest({ model: 'hearth/echo', input: 'x', stream: true }, { path: PATH }),
    );
    const list: Json[] = [];
    for await (const m of decodeSse(response.body!)) list.push(JSON.parse(m.data) as Json);
    expect(list.at(-1)).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'server_error' } },
    });
  });
});

describe('the store’s bounds', () => {
  it('drops the oldest past the count, the age or the bytes', () => {
    const now = 1_000_000;
    const list = [
      { id: 'a', created_at: now - 100, bytes: 10 },
      { id: 'b', created_at: now - 50, bytes: 10 },
      { id: 'c', created_at: now, bytes: 10 },
    ];
    expect(overLimits(list, now, { count: 2, ageSeconds: 1000, bytes: 1000 })).toEqual(['a']);
    expect(overLimits(list, now, { count: 5, ageSeconds: 60, bytes: 1000 })).toEqual(['a']);
    expect(overLimits(list, now, { count: 5, ageSeconds: 1000, bytes: 15 })).toEqual(['a', 'b']);
    expect(overLimits(list, now, { count: 5, ageSeconds: 1000, bytes: 1000 })).toEqual([]);
  });

  it('keeps a copy: what a caller changes afterwards is not what is kept', async () => {
    const store = memoryResponseStore();
    const record = {
      id: 'r',
      created_at: 1,
      response: { output: [] },
      input: [],
      context: [],
      bytes: 1,
    };
    await store.put(record as never);
    record.id = 'changed';
    expect((await store.get('r'))?.id).toBe('r');
  });

  it('drops the oldest turn, never the last user message', () => {
    const item = (role: string, id: string) => ({ item: { id, type: 'message', role }, param: id });
    const turns = [
      item('system', 's'),
      item('user', 'u1'),
      item('assistant', 'a1'),
      item('user', 'u2'),
    ];
    expect(dropOldestTurn(turns)?.map((p) => p.param)).toEqual(['s', 'u2']);
    expect(dropOldestTurn([item('user', 'u')])).toBeNull();
  });
});

describe('what a model on the device sends back', () => {
  /** An API over a scripted engine that answers as `hearth/echo` with every capability. */
  function scripted(script: Parameters<typeof scriptedBackend>[0]) {
    const model = {
      ...ECHO_MODEL,
      capabilities: { ...ECHO_MODEL.capabilities, logprobs: true },
    };
    const backend = scriptedBackend(script);
    return { api: createApi({ backend, models: staticModelDirectory([model]) }), backend };
  }

  it('gives the thinking as a reasoning item before the message, counting its tokens', async () => {
    const { api } = scripted(async function* () {
      yield {
        type: 'tokens',
        tokens: [
          { text: 'Hmm, ', reasoning: true },
          { text: 'yes.', reasoning: true },
        ],
      };
      yield { type: 'tokens', tokens: ['Answer.'] };
      yield {
        type: 'end',
        finish_reason: 'stop',
        usage: { prompt_tokens: 5, completion_tokens: 3 },
      };
    });
    const { body } = await create({ input: 'think', reasoning: { effort: 'high' } }, api);
    expect(body.output).toMatchObject([
      { type: 'reasoning', content: [{ type: 'reasoning_text', text: 'Hmm, yes.' }] },
      { type: 'message', content: [{ type: 'output_text', text: 'Answer.' }] },
    ]);
    expect(body.usage.output_tokens_details.reasoning_tokens).toBe(2);
    expect(body.reasoning).toEqual({ effort: 'high', summary: null });
  });

  it('turns reasoning.effort none into enable_thinking false for the engine', async () => {
    const seen: unknown[] = [];
    const { api } = scripted(async function* () {
      yield {
        type: 'end',
        finish_reason: 'stop',
        usage: { prompt_tokens: 1, completion_tokens: 0 },
      };
    });
    const spy = createApi({
      backend: {
        chat(request, options) {
          seen.push(request.enable_thinking);
          return scriptedBackend(async function* () {
            yield {
              type: 'end',
              finish_reason: 'stop',
              usage: { prompt_tokens: 1, completion_tokens: 0 },
            };
          }).chat(request, options);
        },
      },
      models: staticModelDirectory([ECHO_MODEL]),
    });
    await create({ input: 'x', reasoning: { effort: 'none' } }, spy);
    await create({ input: 'x', reasoning: { effort: 'low' } }, spy);
    await create({ input: 'x' }, spy);
    expect(seen).toEqual([false, true, undefined]);
    // An empty answer is still a message, with empty text.
    expect((await create({ input: 'x' }, api)).body.output).toMatchObject([
      { type: 'message', content: [{ type: 'output_text', text: '' }] },
    ]);
  });

  it('carries logprobs on the text when include asks for them', async () => {
    const logprob = { token: 'Hi', logprob: -0.5, bytes: [72, 105], top_logprobs: [] };
    const { api } = scripted(async function* () {
      yield { type: 'tokens', tokens: [{ text: 'Hi', logprobs: [logprob] }] };
      yield {
        type: 'end',
        finish_reason: 'stop',
        usage: { prompt_tokens: 1, completion_tokens: 1 },
      };
    });
    const { body } = await create(
      { input: 'x', include: ['message.output_text.logprobs'], top_logprobs: 2 },
      api,
    );
    expect(body.output[0].content[0].logprobs).toEqual([logprob]);
    expect(body.top_logprobs).toBe(2);
  });

  it('refuses logprobs on the echo engine, naming include', async () => {
    const { status, body } = await create({
      input: 'x',
      include: ['message.output_text.logprobs'],
    });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'unsupported_parameter', param: 'include' });
  });
});

describe('a client that goes away', () => {
  it('frees the engine for the next request', async () => {
    const response = await stack.api.fetch(
      chatRequest(
        { model: 'hearth/echo', input: 'a b c d e f g h', stream: true, echo_delay_ms: 1000 },
        { path: PATH },
      ),
    );
    const reader = response.body!.getReader();
    await reader.read();
    expect(stack.queue.counts.running).toBe(1);
    await reader.cancel();
    // The engine stops at once (its 7 tokens left would take 7 s), and takes the next request.
    await eventually(() => stack.queue.counts.running === 0);
    expect(textOf((await create({ input: 'next one' })).body)).toBe('next one');
  });

  it('keeps metadata with the response, and does not carry instructions over', async () => {
    const first = (await create({ input: 'one', instructions: 'Be terse.', metadata: { k: 'v' } }))
      .body;
    expect(first.metadata).toEqual({ k: 'v' });
    const got = (await (await stack.api.fetch(getRequest(`${PATH}/${first.id}`))).json()) as Json;
    expect(got.metadata).toEqual({ k: 'v' });
    const next = (await create({ input: 'two', previous_response_id: first.id })).body;
    expect(textOf(next)).toBe('two');
    expect(next.instructions).toBeNull();
  });
});
