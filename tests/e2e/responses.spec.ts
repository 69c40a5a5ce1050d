/**
 * The Responses API (`{base}v1/openai/responses`) through the stock `openai` SDK in a page of the
 * app: `responses.create`, `.stream`, `.retrieve`, `.inputItems.list` and `.delete` against the
 * echo engine, whose replies and token counts are known exactly (docs/api.md, "The echo engine"),
 * including its deterministic tool calls (`/call <name> <JSON>`); the conversation kept on the
 * device through `previous_response_id`; `store: false`; `max_output_tokens`; errors in OpenAI's
 * shape; the `/v1/responses` alias; and real models through llama.cpp: the fixture GGUF and the
 * vision fixture, whose replies are known too. One boot of the app serves the file.
 */
import { expect } from '@playwright/test';
import type * as Responses from 'openai/resources/responses/responses';
import { VISION_REPLIES } from '../../scripts/fixture-vision.mjs';
import { dataUrl, solidPng } from '../test-images';
import { KEY, makeClient, words } from './helpers';
import {
  downloadFixture,
  FIXTURE_ID,
  FIXTURE_PIECES,
  FIXTURE_SENTENCE,
  SENTENCE_TOKENS,
} from './fixture-model';
import { ModelServer, VISION_GGUF_URL, VISION_MMPROJ_URL } from './model-server';
import { sharedAppTest } from './warm-context';

// Every test here calls the API through the SDK: one page of the app serves them all.
const test = sharedAppTest();

const server = new ModelServer();
test.beforeAll(() => server.start());
test.afterAll(() => server.stop());

test.beforeEach(async ({ page }) => {
  await makeClient(page);
});

/** The event types of a text reply of `deltas` tokens, in the order OpenAI sends them. */
function textEvents(deltas: number): string[] {
  return [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.content_part.added',
    ...Array<string>(deltas).fill('response.output_text.delta'),
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.completed',
  ];
}

/** The usage of an echo reply: `input` and `output` tokens. */
function echoUsage(input: number, output: number) {
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
    estimated_cost: 0,
  };
}

/** An SDK error as the tests compare it (`failure` in the page). */
interface Described {
  name: string;
  status: number | undefined;
  type: string | undefined;
  code: string | null | undefined;
  param: string | null | undefined;
  message: string;
}

declare global {
  /** What `call` threw, described; `null` where it did not throw (set by `beforeEach`). */
  var failure: (call: Promise<unknown>) => Promise<Described | null>;
}

test.beforeEach(async ({ page }) => {
  await page.evaluate(() => {
    globalThis.failure = (call) =>
      call.then(
        () => null,
        (e: InstanceType<typeof OpenAI.APIError>) => ({
          name: e.constructor.name,
          status: e.status,
          type: e.type,
          code: e.code,
          param: e.param,
          message: e.message,
        }),
      );
  });
});

test('responses.create answers the echo of the input with the response object OpenAI sends, and exact usage', async ({
  page,
}) => {
  const response = await page.evaluate(async () => {
    const r = await client.responses.create({
      model: 'hearth/echo',
      input: 'Hello from the Responses API',
    });
    return { ...r, request_id: r._request_id, output_text: r.output_text };
  });
  expect(response).toMatchObject({
    object: 'response',
    status: 'completed',
    model: 'hearth/echo',
    output_text: 'Hello from the Responses API',
    output: [
      {
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Hello from the Responses API', annotations: [] }],
      },
    ],
    usage: echoUsage(5, 5),
  });
  expect(response.id).toMatch(/^resp_/);
  expect(response.output).toHaveLength(1);
  expect(response.output[0]!.id).toMatch(/^msg_/);
  expect(response.created_at).toBeGreaterThan(Date.now() / 1000 - 600);
  expect(response.request_id).toMatch(/^req_/);
});

test('instructions come first in brackets in the echo, and count as input tokens', async ({
  page,
}) => {
  const response = await page.evaluate(async () => {
    const r = await client.responses.create({
      model: 'hearth/echo',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use English.' },
        { role: 'user', content: 'hello there' },
      ],
    });
    return { text: r.output_text, usage: r.usage, instructions: r.instructions };
  });
  // `[Be brief. Use English.] hello there`: six tokens; the input is 2 + 2 + 2 words.
  expect(response.text).toBe('[Be brief. Use English.] hello there');
  expect(response.usage).toEqual(echoUsage(6, 6));
  expect(response.instructions).toBe('Be brief.');
});

test('responses.stream sends every event in OpenAI’s order, numbered from 0, one text delta per echo token', async ({
  page,
}) => {
  const result = await page.evaluate(async () => {
    const stream = client.responses.stream({ model: 'hearth/echo', input: 'one two three four' });
    const events: Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    return { events, final: { ...final, output_text: final.output_text } };
  });
  const { events, final } = result;
  expect(events.map((e) => e.type)).toEqual(textEvents(4));
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  const deltas = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : []));
  expect(deltas).toEqual(['one ', 'two ', 'three ', 'four']);
  const created = events[0] as Responses.ResponseCreatedEvent;
  expect(created.response).toMatchObject({ object: 'response', status: 'in_progress' });
  const added = events[2] as Responses.ResponseOutputItemAddedEvent;
  expect(added.item).toMatchObject({ type: 'message', role: 'assistant', status: 'in_progress' });
  expect(added.item.id).toMatch(/^msg_/);
  for (const e of events) {
    if ('item_id' in e) expect(e.item_id, e.type).toBe(added.item.id);
  }
  const done = events.find((e) => e.type === 'response.output_text.done');
  expect(done).toMatchObject({ text: 'one two three four' });
  const completed = events.at(-1) as Responses.ResponseCompletedEvent;
  expect(completed.response).toMatchObject({
    id: created.response.id,
    status: 'completed',
    usage: echoUsage(4, 4),
  });
  expect(final).toMatchObject({ id: created.response.id, output_text: 'one two three four' });
});

test('create with stream: true sends the same events, numbered from 0, and the streamed response is stored', async ({
  page,
}) => {
  const result = await page.evaluate(async () => {
    const stream = await client.responses.create({
      model: 'hearth/echo',
      input: 'streamed by create',
      stream: true,
    });
    const events: Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const id = (events[0] as Responses.ResponseCreatedEvent).response.id;
    const stored = await client.responses.retrieve(id);
    return { events, stored: { ...stored, output_text: stored.output_text } };
  });
  expect(result.events.map((e) => e.type)).toEqual(textEvents(3));
  expect(result.events.map((e) => e.sequence_number)).toEqual(result.events.map((_, i) => i));
  const completed = result.events.at(-1) as Responses.ResponseCompletedEvent;
  expect(result.stored).toMatchObject({
    id: completed.response.id,
    status: 'completed',
    output_text: 'streamed by create',
    usage: echoUsage(3, 3),
  });
});

test('a stream over plain fetch is text/event-stream of event: and data: lines naming the same type, with no [DONE]', async ({
  page,
}) => {
  const answer = await page.evaluate(async (KEY) => {
    const response = await fetch('v1/openai/responses', {
      method: 'POST',
      headers: KEY,
      body: JSON.stringify({ model: 'hearth/echo', input: 'raw events', stream: true }),
    });
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: await response.text(),
    };
  }, KEY);
  expect(answer.status).toBe(200);
  expect(answer.type).toMatch(/^text\/event-stream/);
  const blocks = answer.body.split('\n\n').filter((block) => block !== '');
  const parsed = blocks.map((block) => {
    const match = /^event: (\S+)\ndata: (.+)$/.exec(block);
    expect(match, block).not.toBeNull();
    const data = JSON.parse(match![2]!) as { type: string; sequence_number: number };
    expect(data.type).toBe(match![1]);
    return data;
  });
  expect(parsed.map((d) => d.type)).toEqual(textEvents(2));
  expect(parsed.map((d) => d.sequence_number)).toEqual(parsed.map((_, i) => i));
  expect(answer.body).not.toContain('[DONE]');
});

test('retrieve gives back the stored response as create answered it', async ({ page }) => {
  const result = await page.evaluate(async () => {
    const created = await client.responses.create({ model: 'hearth/echo', input: 'keep me' });
    const retrieved = await client.responses.retrieve(created.id);
    const plain = (r: Responses.Response) => JSON.parse(JSON.stringify(r)) as unknown;
    return { created: plain(created), retrieved: plain(retrieved), text: retrieved.output_text };
  });
  expect(result.retrieved).toEqual(result.created);
  expect(result.text).toBe('keep me');
});

test('inputItems.list lists a response’s input items as OpenAI’s message items (content as parts), newest first by default, with order, limit and after', async ({
  page,
}) => {
  const lists = await page.evaluate(async () => {
    const created = await client.responses.create({
      model: 'hearth/echo',
      input: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: 'two' },
        { role: 'user', content: 'three' },
      ],
    });
    // Each item's role and text, read whether its content is parts (as OpenAI's) or not.
    const textOf = (content: unknown) =>
      Array.isArray(content)
        ? content.map((part: { text?: string }) => part.text ?? '').join('')
        : String(content);
    const read = (page: { data: Responses.ResponseItem[]; has_more: boolean }) => ({
      items: page.data.map((item) =>
        item.type === 'message' ? [item.role, textOf(item.content)] : [item.type, ''],
      ),
      ids: page.data.map((item) => item.id),
      has_more: page.has_more,
    });
    const items = client.responses.inputItems;
    const raw = await items.list(created.id, { order: 'asc' });
    const ascending = read(raw);
    return {
      text: created.output_text,
      raw: raw.data,
      byDefault: read(await items.list(created.id)),
      ascending,
      firstTwo: read(await items.list(created.id, { order: 'asc', limit: 2 })),
      afterSecond: read(await items.list(created.id, { order: 'asc', after: ascending.ids[1]! })),
      descAfterFirst: read(await items.list(created.id, { after: ascending.ids[2]!, limit: 1 })),
    };
  });
  expect(lists.text).toBe('three');
  const user = ['user', 'one'];
  const assistant = ['assistant', 'two'];
  const last = ['user', 'three'];
  expect(lists.ascending).toMatchObject({ items: [user, assistant, last], has_more: false });
  expect(new Set(lists.ascending.ids).size).toBe(3);
  expect(lists.byDefault).toMatchObject({ items: [last, assistant, user], has_more: false });
  expect(lists.firstTwo).toMatchObject({ items: [user, assistant], has_more: true });
  expect(lists.afterSecond).toMatchObject({ items: [last], has_more: false });
  expect(lists.descAfterFirst).toMatchObject({ items: [assistant], has_more: true });
  // OpenAI's items: a user message's content is input_text parts, an assistant's parts too.
  expect(lists.raw[0]).toMatchObject({
    type: 'message',
    role: 'user',
    content: [{ type: 'input_text', text: 'one' }],
  });
  expect(lists.raw[0]!.id).toMatch(/^msg_/);
  expect(lists.raw[1]).toMatchObject({
    type: 'message',
    role: 'assistant',
    content: [{ text: 'two' }],
  });
});

test('delete removes a stored response: retrieve, its input items and a second delete are then 404 NotFoundError', async ({
  page,
}) => {
  const id = await page.evaluate(async () => {
    const created = await client.responses.create({ model: 'hearth/echo', input: 'forget me' });
    await client.responses.delete(created.id);
    return created.id;
  });
  const errors = await page.evaluate(
    async (id) => ({
      retrieve: await failure(client.responses.retrieve(id)),
      items: await failure(client.responses.inputItems.list(id)),
      again: await failure(client.responses.delete(id)),
    }),
    id,
  );
  for (const [name, error] of Object.entries(errors)) {
    expect(error, name).toMatchObject({
      name: 'NotFoundError',
      status: 404,
      type: 'invalid_request_error',
    });
    expect(error!.message, name).toContain(id);
  }
});

test('a conversation through previous_response_id: the echo answers the new turn, and input_tokens count the earlier turns', async ({
  page,
}) => {
  const turns = await page.evaluate(async () => {
    const first = await client.responses.create({
      model: 'hearth/echo',
      input: 'first question here',
    });
    const second = await client.responses.create({
      model: 'hearth/echo',
      input: 'second',
      previous_response_id: first.id,
    });
    const third = await client.responses.create({
      model: 'hearth/echo',
      input: [{ role: 'user', content: 'and a third' }],
      previous_response_id: second.id,
    });
    return [first, second, third].map((r) => ({
      text: r.output_text,
      usage: r.usage,
      previous: r.previous_response_id,
      id: r.id,
    }));
  });
  const [first, second, third] = turns;
  expect(first).toMatchObject({ text: 'first question here', usage: echoUsage(3, 3) });
  // The earlier turns: 3 + 3, then the new one.
  expect(second).toMatchObject({
    text: 'second',
    usage: echoUsage(3 + 3 + 1, 1),
    previous: first!.id,
  });
  expect(third).toMatchObject({
    text: 'and a third',
    usage: echoUsage(3 + 3 + 1 + 1 + 3, 3),
    previous: second!.id,
  });
});

test('instructions are not carried over to the next turn by previous_response_id, as OpenAI’s are not', async ({
  page,
}) => {
  const texts = await page.evaluate(async () => {
    const first = await client.responses.create({
      model: 'hearth/echo',
      instructions: 'Be brief.',
      input: 'hi',
    });
    const second = await client.responses.create({
      model: 'hearth/echo',
      input: 'again',
      previous_response_id: first.id,
    });
    return [first.output_text, second.output_text, second.usage?.input_tokens];
  });
  // The second turn: `hi`, `[Be brief.] hi`, `again`.
  expect(texts).toEqual(['[Be brief.] hi', 'again', 1 + 3 + 1]);
});

test('store: false answers, but the response is then 404 to retrieve and to previous_response_id an error naming the field', async ({
  page,
}) => {
  const created = await page.evaluate(async () => {
    const r = await client.responses.create({
      model: 'hearth/echo',
      input: 'not kept',
      store: false,
    });
    return { id: r.id, text: r.output_text, store: (r as { store?: boolean }).store };
  });
  expect(created).toMatchObject({ text: 'not kept', store: false });
  const errors = await page.evaluate(
    async (id) => ({
      retrieve: await failure(client.responses.retrieve(id)),
      previous: await failure(
        client.responses.create({ model: 'hearth/echo', input: 'x', previous_response_id: id }),
      ),
    }),
    created.id,
  );
  expect(errors.retrieve).toMatchObject({ name: 'NotFoundError', status: 404 });
  expect(errors.retrieve!.message).toContain(created.id);
  expect(errors.previous).toMatchObject({ param: 'previous_response_id' });
  expect([400, 404]).toContain(errors.previous!.status);
});

test('max_output_tokens: 16 cuts a longer echo to 16 tokens with status incomplete and reason max_output_tokens, streamed or not', async ({
  page,
}) => {
  const input = words(20);
  const result = await page.evaluate(async (input) => {
    const whole = await client.responses.create({
      model: 'hearth/echo',
      input,
      max_output_tokens: 16,
    });
    const stream = await client.responses.create({
      model: 'hearth/echo',
      input,
      max_output_tokens: 16,
      stream: true,
    });
    const types: string[] = [];
    let last: Responses.ResponseStreamEvent | undefined;
    for await (const event of stream) {
      types.push(event.type);
      last = event;
    }
    return { whole: { ...whole, output_text: whole.output_text }, types, last };
  }, input);
  const cut = input.split(' ').slice(0, 16).join(' ') + ' ';
  expect(result.whole).toMatchObject({
    status: 'incomplete',
    incomplete_details: { reason: 'max_output_tokens' },
    max_output_tokens: 16,
    output_text: cut,
    output: [{ type: 'message', status: 'incomplete' }],
    usage: echoUsage(20, 16),
  });
  expect(result.types.filter((t) => t === 'response.output_text.delta')).toHaveLength(16);
  expect(result.types.at(-1)).toBe('response.incomplete');
  expect(result.last).toMatchObject({
    type: 'response.incomplete',
    response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
  });
});

test('errors come in OpenAI’s shape as the SDK’s classes: max_output_tokens below 16, an input_file part, a forced hosted tool, a missing response', async ({
  page,
}) => {
  const errors = await page.evaluate(async () => ({
    tooFew: await failure(
      client.responses.create({ model: 'hearth/echo', input: 'x', max_output_tokens: 15 }),
    ),
    file: await failure(
      client.responses.create({
        model: 'hearth/echo',
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'read this' },
              {
                type: 'input_file',
                file_data: 'data:application/pdf;base64,JVBERi0=',
                filename: 'a.pdf',
              },
            ],
          },
        ],
      }),
    ),
    forced: await failure(
      client.responses.create({
        model: 'hearth/echo',
        input: 'x',
        tools: [{ type: 'image_generation' }],
        tool_choice: { type: 'image_generation' },
      }),
    ),
    missing: await failure(client.responses.retrieve('resp_nothing_here')),
  }));
  expect(errors.tooFew).toMatchObject({
    name: 'BadRequestError',
    status: 400,
    type: 'invalid_request_error',
    param: 'max_output_tokens',
  });
  expect(errors.file).toMatchObject({
    name: 'BadRequestError',
    status: 400,
    type: 'invalid_request_error',
  });
  expect(errors.file!.param).toMatch(/^input\[0\]\.content\[1\]/);
  expect(errors.forced).toMatchObject({
    name: 'BadRequestError',
    status: 400,
    type: 'invalid_request_error',
  });
  expect(errors.missing).toMatchObject({
    name: 'NotFoundError',
    status: 404,
    type: 'invalid_request_error',
  });
  expect(errors.missing!.message).toContain('resp_nothing_here');
});

test('the echo calls an offered tool on /call, and the tool’s output sent back is the final answer, after the instructions', async ({
  page,
}) => {
  const tools: Responses.Tool[] = [
    {
      type: 'function',
      name: 'get_weather',
      description: 'The weather in a city.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      },
      strict: false,
    },
  ];
  const result = await page.evaluate(async (tools) => {
    const call = await client.responses.create({
      model: 'hearth/echo',
      instructions: 'Answer briefly.',
      input: '/call get_weather {"city":"Paris"}',
      tools,
    });
    const answer = await client.responses.create({
      model: 'hearth/echo',
      instructions: 'Answer briefly.',
      previous_response_id: call.id,
      input: [
        {
          type: 'function_call_output',
          call_id: (call.output[0] as Responses.ResponseFunctionToolCall).call_id,
          output: 'Sunny in Paris',
        },
      ],
      tools,
    });
    // Two calls at once, then another in the same conversation: their ids count the earlier ones.
    const two = await client.responses.create({
      model: 'hearth/echo',
      input: '/call get_weather {"city":"Oslo"}\n\n/call get_weather {"city": "Rome"}\n',
      tools,
    });
    const outputs = await client.responses.create({
      model: 'hearth/echo',
      previous_response_id: two.id,
      input: [
        { type: 'function_call_output', call_id: 'call_echo_0', output: 'Snow in Oslo' },
        { type: 'function_call_output', call_id: 'call_echo_1', output: 'Rain in Rome' },
      ],
      tools,
    });
    const third = await client.responses.create({
      model: 'hearth/echo',
      previous_response_id: outputs.id,
      input: '/call get_weather {"city":"Nice"}',
      tools,
    });
    const plain = (r: Responses.Response) => ({
      status: r.status,
      output: r.output,
      text: r.output_text,
    });
    return {
      call: plain(call),
      answer: plain(answer),
      two: plain(two),
      outputs: plain(outputs),
      third: plain(third),
    };
  }, tools);
  expect(result.call.status).toBe('completed');
  expect(result.call.output).toEqual([
    {
      type: 'function_call',
      id: expect.stringMatching(/^fc_/),
      call_id: 'call_echo_0',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    },
  ]);
  expect(result.call.text).toBe('');
  expect(result.answer).toMatchObject({
    status: 'completed',
    text: '[Answer briefly.] Sunny in Paris',
  });
  const calls = (r: { output: unknown[] }) =>
    (r.output as Responses.ResponseFunctionToolCall[]).map((item) => [
      item.type,
      item.call_id,
      item.name,
      item.arguments,
    ]);
  expect(calls(result.two)).toEqual([
    ['function_call', 'call_echo_0', 'get_weather', '{"city":"Oslo"}'],
    ['function_call', 'call_echo_1', 'get_weather', '{"city": "Rome"}'],
  ]);
  expect(result.outputs.text).toBe('Snow in Oslo\nRain in Rome');
  expect(calls(result.third)).toEqual([
    ['function_call', 'call_echo_2', 'get_weather', '{"city":"Nice"}'],
  ]);
});

test('the echo answers /call as text when the tool is not offered or tool_choice is none, and drops hosted tools under auto', async ({
  page,
}) => {
  const texts = await page.evaluate(async () => {
    const weather: Responses.FunctionTool = {
      type: 'function',
      name: 'get_weather',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
      strict: false,
    };
    const input = '/call get_time {}';
    const notOffered = await client.responses.create({
      model: 'hearth/echo',
      input,
      tools: [weather],
    });
    const none = await client.responses.create({
      model: 'hearth/echo',
      input: '/call get_weather {"city":"Paris"}',
      tools: [weather],
      tool_choice: 'none',
    });
    const hosted = await client.responses.create({
      model: 'hearth/echo',
      input: '/call get_weather {"city":"Paris"}',
      tools: [{ type: 'web_search' }, weather],
      tool_choice: 'auto',
    });
    return {
      notOffered: [notOffered.output.map((o) => o.type), notOffered.output_text],
      none: [none.output.map((o) => o.type), none.output_text],
      hosted: hosted.output.map((o) =>
        o.type === 'function_call' ? [o.type, o.name, o.arguments] : [o.type],
      ),
    };
  });
  expect(texts.notOffered).toEqual([['message'], '/call get_time {}']);
  expect(texts.none).toEqual([['message'], '/call get_weather {"city":"Paris"}']);
  expect(texts.hosted).toEqual([['function_call', 'get_weather', '{"city":"Paris"}']]);
});

test('an input_image reaches the echo engine, which says what image it got', async ({ page }) => {
  const png = solidPng(32, 16, [200, 30, 30]);
  const text = await page.evaluate(async (url) => {
    const r = await client.responses.create({
      model: 'hearth/echo',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: url, detail: 'auto' },
          ],
        },
      ],
    });
    return r.output_text;
  }, dataUrl(png));
  expect(text).toBe(`what is this?\n[image: image/png 32×16, ${png.byteLength} bytes]`);
});

test('the /v1/responses alias answers as /v1/openai/responses does', async ({ page }) => {
  const response = await page.evaluate(async () => {
    const alias = new OpenAI({
      baseURL: new URL('v1', location.href).href,
      apiKey: 'sk-local',
      dangerouslyAllowBrowser: true,
    });
    const created = await alias.responses.create({ model: 'hearth/echo', input: 'by the alias' });
    const retrieved = await alias.responses.retrieve(created.id);
    return { text: created.output_text, usage: created.usage, again: retrieved.output_text };
  });
  expect(response).toEqual({
    text: 'by the alias',
    usage: echoUsage(3, 3),
    again: 'by the alias',
  });
});

test('the fixture GGUF answers its sentence through responses.create, whole and streamed, with its usage', async ({
  page,
}) => {
  test.setTimeout(120_000);
  await downloadFixture(page);
  const result = await page.evaluate(async (model) => {
    const whole = await client.responses.create({ model, input: 'Tell me something.' });
    const stream = client.responses.stream({ model, input: 'Tell me something.' });
    const deltas: string[] = [];
    const types: string[] = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') deltas.push(event.delta);
    }
    const final = await stream.finalResponse();
    return {
      whole: { ...whole, output_text: whole.output_text },
      deltas,
      types,
      usage: final.usage,
    };
  }, FIXTURE_ID);
  expect(result.whole).toMatchObject({
    status: 'completed',
    model: FIXTURE_ID,
    output_text: FIXTURE_SENTENCE,
    output: [{ type: 'message', role: 'assistant', status: 'completed' }],
  });
  const usage = result.whole.usage!;
  expect(usage.output_tokens).toBe(SENTENCE_TOKENS);
  expect(usage.input_tokens).toBeGreaterThan(0);
  expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
  expect(result.deltas.join('')).toBe(FIXTURE_SENTENCE);
  expect(result.deltas.filter(Boolean)).toEqual(FIXTURE_PIECES);
  expect(result.types[0]).toBe('response.created');
  expect(result.types.at(-1)).toBe('response.completed');
  expect(result.usage).toEqual(usage);
});

test('the vision fixture tells a red square from a blue one through input_image', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const model = 'e2e/fixture-vision-GGUF:F32';
  const added = await page.evaluate(
    async ({ model, source, mmproj, KEY }) => {
      const add = await fetch('v1/hearth/models', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ source, mmproj, id: model }),
      });
      const download = await fetch(`v1/hearth/models/${model}/download`, {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ stream: false }),
      });
      return { status: add.status, phase: ((await download.json()) as { phase?: string }).phase };
    },
    { model, source: VISION_GGUF_URL, mmproj: VISION_MMPROJ_URL, KEY },
  );
  expect(added).toEqual({ status: 201, phase: 'done' });
  const ask = (url: string) =>
    page.evaluate(
      async ({ model, url }) =>
        (
          await client.responses.create({
            model,
            temperature: 1,
            input: [
              {
                role: 'user',
                content: [
                  { type: 'input_text', text: 'What colour is this?' },
                  { type: 'input_image', image_url: url, detail: 'auto' },
                ],
              },
            ],
          })
        ).output_text,
      { model, url },
    );
  expect(await ask(dataUrl(solidPng(32, 32, [230, 20, 20])))).toBe(VISION_REPLIES.red);
  expect(await ask(dataUrl(solidPng(32, 32, [20, 20, 230])))).toBe(VISION_REPLIES.other);
});
