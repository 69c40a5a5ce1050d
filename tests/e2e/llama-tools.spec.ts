/**
 * Tool calls and reasoning from a real GGUF through the real llama.cpp engine: the fixture
 * model's two variants (scripts/fixture-gguf.mjs FIXTURE_VARIANTS), downloaded from the tests'
 * model server and asked through the service worker, with plain fetch (the wire as sent) and
 * with the official `openai` SDK. llama.cpp reads each variant's chat template to decide how to
 * parse its reply: the Hermes-style template makes `<tool_call>…</tool_call>` a tool call, the
 * Qwen3-style one makes `<think>…</think>` the reasoning. The model writes the same reply
 * whatever it is asked, so what comes back is known to the character.
 */
import { expect, type Page } from '@playwright/test';
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import { THINKING_PIECES, TOOL_CALL_PIECES } from '../../scripts/fixture-gguf.mjs';
import { THINKING_FIXTURE_ID, TOOLS_FIXTURE_ID } from './fixture-model';
import { KEY } from './helpers';
import { endSuite, openSuitePage, test } from './warm-context';
import { ModelServer } from './model-server';

const server = new ModelServer();

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city now.',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
      },
    },
  },
];
const QUESTION = [{ role: 'user', content: 'What is the weather in Paris?' }];

/** The call the tools variant writes, as its reply spells it between the tags. */
const WRITTEN = /^<tool_call>\n(.*)\n<\/tool_call>$/s.exec(TOOL_CALL_PIECES.join(''))?.[1] ?? '';
const CALL = JSON.parse(WRITTEN) as { name: string; arguments: Record<string, unknown> };
/** The arguments as the model wrote them (llama.cpp passes the text on, spaces and all). */
const ARGUMENTS = '{"city": "Paris"}';

/**
 * The thinking variant's reply is `<think>\nThe user asks about France.\n</think>\n\nIt is
 * Paris.`: llama.cpp drops the whitespace after each tag, and keeps the newline before
 * `</think>` in the reasoning.
 */
const REASONING = 'The user asks about France.\n';
const ANSWER = 'It is Paris.';

/** A request with plain fetch: its status and JSON body. */
function post(page: Page, body: Record<string, unknown>) {
  return page.evaluate(
    async ({ body, KEY }) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as ChatCompletion };
    },
    { body, KEY },
  );
}

/** A streamed request with plain fetch: its status and each event's data, parsed. */
function postStream(page: Page, body: Record<string, unknown>) {
  return page.evaluate(
    async ({ body, KEY }) => {
      const response = await fetch('v1/openai/chat/completions', {
        method: 'POST',
        headers: KEY,
        body: JSON.stringify({ ...body, stream: true }),
      });
      const text = await response.text();
      const data = text
        .split('\n\n')
        .filter((event) => event.startsWith('data: '))
        .map((event) => event.slice('data: '.length));
      return { status: response.status, data };
    },
    { body, KEY },
  );
}

/** The chunks of a stream, less its `[DONE]`, which must end it. */
function chunksOf(data: string[]): ChatCompletionChunk[] {
  expect(data.at(-1)).toBe('[DONE]');
  return data.slice(0, -1).map((d) => JSON.parse(d) as ChatCompletionChunk);
}

test.describe('tool calls and reasoning of GGUF models through llama.cpp', () => {
  test.describe.configure({ mode: 'serial' });
  let page: Page;

  test.beforeAll(async ({ browser, warmContexts }, testInfo) => {
    test.setTimeout(120_000);
    page = await openSuitePage({ browser, warmContexts }, testInfo, server);
    for (const model of [TOOLS_FIXTURE_ID, THINKING_FIXTURE_ID]) {
      const phase = await page.evaluate(
        async ({ model, KEY }) => {
          const response = await fetch(`v1/hearth/models/${model}/download`, {
            method: 'POST',
            headers: KEY,
            body: JSON.stringify({ stream: false }),
          });
          return ((await response.json()) as { phase?: string }).phase;
        },
        { model, KEY },
      );
      expect(phase, model).toBe('done');
    }
  });

  test.afterAll(async ({ warmContexts }) => {
    await endSuite(warmContexts);
    await server.stop();
  });

  test('a non-streamed reply that calls a tool has finish_reason "tool_calls", the call get_weather with arguments {"city": "Paris"}, and content null', async () => {
    const { status, body } = await post(page, {
      model: TOOLS_FIXTURE_ID,
      messages: QUESTION,
      tools: TOOLS,
    });
    expect(status).toBe(200);
    const choice = body.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    expect(choice?.message.content).toBeNull();
    expect(choice?.message.tool_calls).toHaveLength(1);
    const call = choice?.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    expect(call?.id).toMatch(/\S/);
    expect(call?.type === 'function' && call.function).toEqual({
      name: CALL.name,
      arguments: ARGUMENTS,
    });
    expect(JSON.parse(ARGUMENTS)).toEqual(CALL.arguments);
  });

  test('a streamed reply that calls a tool sends tool-call deltas with index 0 and an id, spelling get_weather and {"city": "Paris"}, no content, then finish_reason "tool_calls"', async () => {
    const { status, data } = await postStream(page, {
      model: TOOLS_FIXTURE_ID,
      messages: QUESTION,
      tools: TOOLS,
    });
    expect(status).toBe(200);
    const chunks = chunksOf(data);
    const deltas = chunks.flatMap((c) =>
      c.choices.flatMap((choice) => choice.delta.tool_calls ?? []),
    );
    expect(deltas.length).toBeGreaterThan(0);
    expect(deltas.every((d) => d.index === 0)).toBe(true);
    // The first delta of a call opens it: its id, type and name.
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: CALL.name } });
    expect(deltas[0]?.id).toMatch(/\S/);
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe(ARGUMENTS);
    expect(
      chunks.flatMap((c) => c.choices.map((choice) => choice.delta.content ?? '')).join(''),
    ).toBe('');
    const finishes = chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason));
    expect(finishes.filter(Boolean)).toEqual(['tool_calls']);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
  });

  test('the openai SDK reads the tool call whole from a reply and from its stream helper', async () => {
    const parsed = await page.evaluate(
      async ({ model, messages, tools }) => {
        const request = { model, messages, tools } as never;
        const reply = await client.chat.completions.create(request);
        const streamed = await client.chat.completions.stream(request).finalChatCompletion();
        const pick = (c: typeof reply) => ({
          finish_reason: c.choices[0]?.finish_reason,
          content: c.choices[0]?.message.content ?? null,
          calls: (c.choices[0]?.message.tool_calls ?? []).map((call) => ({
            id: call.id,
            type: call.type,
            function: call.type === 'function' ? call.function : null,
          })),
        });
        return { reply: pick(reply), streamed: pick(streamed as typeof reply) };
      },
      { model: TOOLS_FIXTURE_ID, messages: QUESTION, tools: TOOLS },
    );
    for (const completion of [parsed.reply, parsed.streamed]) {
      expect(completion).toMatchObject({
        finish_reason: 'tool_calls',
        content: null,
        calls: [{ type: 'function', function: { name: CALL.name, arguments: ARGUMENTS } }],
      });
      expect(completion.calls[0]?.id).toMatch(/\S/);
    }
  });

  test('a tool call cut short by max_tokens ends with finish_reason "length", not "tool_calls", streamed or not, with the arguments as far as they got', async () => {
    // Four tokens: `<tool_call>`, `\n{"name": "`, `get_weather`, `", "arguments": {"city": "`.
    const partial = '{"city": "';
    const { body } = await post(page, {
      model: TOOLS_FIXTURE_ID,
      messages: QUESTION,
      tools: TOOLS,
      max_tokens: 4,
    });
    expect(body.choices[0]?.finish_reason).toBe('length');
    const call = body.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function).toEqual({
      name: CALL.name,
      arguments: partial,
    });
    const { data } = await postStream(page, {
      model: TOOLS_FIXTURE_ID,
      messages: QUESTION,
      tools: TOOLS,
      max_tokens: 4,
    });
    const chunks = chunksOf(data);
    const finishes = chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason));
    expect(finishes.filter(Boolean)).toEqual(['length']);
    const deltas = chunks.flatMap((c) => c.choices.flatMap((ch) => ch.delta.tool_calls ?? []));
    expect(deltas.map((d) => d.function?.arguments ?? '').join('')).toBe(partial);
  });

  test('a tool call cut by a stop string inside its arguments ends with finish_reason "stop", not "tool_calls"', async () => {
    const { body } = await post(page, {
      model: TOOLS_FIXTURE_ID,
      messages: QUESTION,
      tools: TOOLS,
      stop: ['Paris'],
    });
    expect(body.choices[0]?.finish_reason).toBe('stop');
  });

  test('with tool_choice "none" the tools are withheld, and the call the model writes anyway comes back as content with finish_reason "stop"', async () => {
    const { status, body } = await post(page, {
      model: TOOLS_FIXTURE_ID,
      messages: QUESTION,
      tools: TOOLS,
      tool_choice: 'none',
    });
    expect(status).toBe(200);
    expect(body.choices[0]?.finish_reason).toBe('stop');
    expect(body.choices[0]?.message.content).toBe(TOOL_CALL_PIECES.join(''));
    expect(body.choices[0]?.message.tool_calls ?? []).toEqual([]);
  });

  test('the call and the tool’s result go back through the template, which writes them into a longer prompt', async () => {
    const first = await post(page, { model: TOOLS_FIXTURE_ID, messages: QUESTION, tools: TOOLS });
    const call = first.body.choices[0]?.message.tool_calls?.[0];
    expect(call).toBeDefined();
    const second = await post(page, {
      model: TOOLS_FIXTURE_ID,
      tools: TOOLS,
      messages: [
        ...QUESTION,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call?.id, content: '{"sky": "clear", "celsius": 21}' },
      ],
    });
    expect(second.status).toBe(200);
    // The model answers the same whatever it reads: a call again.
    expect(second.body.choices[0]?.finish_reason).toBe('tool_calls');
    // The call (as the template writes it) and the result (at least its JSON's characters).
    expect(second.body.usage?.prompt_tokens).toBeGreaterThan(
      (first.body.usage?.prompt_tokens ?? 0) + '{"sky": "clear", "celsius": 21}'.length,
    );
  });

  test('a thinking model’s non-streamed reply has reasoning_content "The user asks about France.\\n" and content "It is Paris."', async () => {
    const { status, body } = await post(page, { model: THINKING_FIXTURE_ID, messages: QUESTION });
    expect(status).toBe(200);
    const message = body.choices[0]?.message as ChatCompletion['choices'][0]['message'] & {
      reasoning_content?: string;
    };
    expect(message.reasoning_content).toBe(REASONING);
    expect(message.content).toBe(ANSWER);
    expect(body.choices[0]?.finish_reason).toBe('stop');
    // One token a piece, and the end of the turn: the tags were generated, then taken out.
    expect(body.usage?.completion_tokens).toBe(THINKING_PIECES.length + 1);
  });

  test('a thinking model’s stream sends the reasoning as reasoning_content deltas, then the answer as content deltas, each exact', async () => {
    const { status, data } = await postStream(page, {
      model: THINKING_FIXTURE_ID,
      messages: QUESTION,
    });
    expect(status).toBe(200);
    const deltas = chunksOf(data).flatMap((c) => c.choices.map((choice) => choice.delta)) as {
      content?: string | null;
      reasoning_content?: string | null;
    }[];
    const reasoning = deltas.map((d) => d.reasoning_content ?? '');
    const content = deltas.map((d) => d.content ?? '');
    expect(reasoning.join('')).toBe(REASONING);
    expect(content.join('')).toBe(ANSWER);
    // All the reasoning comes before any of the answer.
    const lastThought = reasoning.findLastIndex(Boolean);
    const firstWord = content.findIndex(Boolean);
    expect(lastThought).toBeLessThan(firstWord);
    expect(chunksOf(data).at(-1)?.choices[0]?.finish_reason).toBe('stop');
  });

  test('the openai SDK parses reasoning_content and content from a reply and from the chunks of a stream', async () => {
    const parsed = await page.evaluate(
      async ({ model, messages }) => {
        const reply = await client.chat.completions.create({ model, messages } as never);
        const message = reply.choices[0]?.message as {
          content: string | null;
          reasoning_content?: string;
        };
        // Not the stream helper (`chat.completions.stream`): it keeps only the last value of a
        // delta field it does not know, such as reasoning_content.
        const stream = await client.chat.completions.create({
          model,
          messages,
          stream: true,
        } as never);
        const streamed = { content: '', reasoning_content: '' };
        for await (const chunk of stream as unknown as AsyncIterable<ChatCompletionChunk>) {
          const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string };
          streamed.content += delta?.content ?? '';
          streamed.reasoning_content += delta?.reasoning_content ?? '';
        }
        return {
          reply: { content: message.content, reasoning_content: message.reasoning_content },
          streamed,
        };
      },
      { model: THINKING_FIXTURE_ID, messages: QUESTION },
    );
    expect(parsed.reply).toEqual({ content: ANSWER, reasoning_content: REASONING });
    expect(parsed.streamed).toEqual({ content: ANSWER, reasoning_content: REASONING });
  });

  test('with enable_thinking false the template closes the thought in the prompt, and the thought the model writes anyway is content', async () => {
    const { status, body } = await post(page, {
      model: THINKING_FIXTURE_ID,
      messages: QUESTION,
      enable_thinking: false,
    });
    expect(status).toBe(200);
    const message = body.choices[0]?.message as { content: string; reasoning_content?: string };
    expect(message.content).toBe(THINKING_PIECES.join(''));
    expect(message.reasoning_content).toBeUndefined();
  });
});
