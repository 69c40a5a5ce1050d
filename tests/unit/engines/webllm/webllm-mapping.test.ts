/**
 * The mapping between the API and WebLLM 0.2.86, against requests, chunks, usage and errors
 * shaped as that version produces them (notes/webllm-0.2.86.md §3–§4).
 */
import { describe, expect, it } from 'vitest';
import type { EngineOutput } from '../../../../src/engines/engine';
import { webllmSeed } from '../../../../src/engines/seeds';
import { ChunkReader, type WebLLMChunk } from '../../../../src/engines/webllm/webllm-chunks';
import { errorParts, fromWebLLMError } from '../../../../src/engines/webllm/webllm-errors';
import { toWebLLMRequest } from '../../../../src/engines/webllm/webllm-mapping';
import { startsThinking, ThinkSplitter } from '../../../../src/engines/webllm/webllm-thinking';
import { parseChatRequest } from '../../../../src/protocol/validate';
import { readImages } from '../../../../src/api/images';
import { dataUrl, imageMessage, solidPng } from '../../../test-images';

/** A whole reply split into its thinking and its answer. */
function splitThinking(text: string, startsThinking: boolean) {
  const splitter = new ThinkSplitter({ startsThinking });
  const pieces = [...splitter.push(text), ...splitter.flush()];
  const join = (reasoning: boolean) =>
    pieces
      .filter((p) => p.reasoning === reasoning)
      .map((p) => p.text)
      .join('');
  return { reasoning: join(true), content: join(false) };
}

const MODEL = { webllmId: 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC', reasoning: false };
const request = (extra: Record<string, unknown> = {}) =>
  parseChatRequest({
    model: MODEL.webllmId,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: 'Be brief.' },
    ],
    ...extra,
  });

/** A delta chunk as WebLLM streams it: every one carries the role (§3.4). */
const delta = (
  content: string,
  extra: Partial<WebLLMChunk['choices'][number]> = {},
): WebLLMChunk => ({
  choices: [
    {
      index: 0,
      delta: { content, role: 'assistant' },
      finish_reason: null,
      logprobs: null,
      ...extra,
    },
  ],
});
const final = (finish_reason: 'stop' | 'length' | 'abort' | 'tool_calls'): WebLLMChunk => ({
  choices: [{ index: 0, delta: {}, finish_reason }],
});
const usageChunk: WebLLMChunk = {
  choices: [],
  usage: {
    prompt_tokens: 7,
    completion_tokens: 3,
    total_tokens: 10,
    // prefill_tokens_per_s is prompt_tokens / prefill_time: Infinity when nothing was prefilled.
    extra: {
      e2e_latency_s: 0.5,
      prefill_tokens_per_s: Infinity,
      decode_tokens_per_s: 42.5,
      time_to_first_token_s: 0.1,
      time_per_output_token_s: 0.02,
    } as never,
  },
};

function run(reader: ChunkReader, chunks: WebLLMChunk[], promptTokens?: number): EngineOutput[] {
  return [...chunks.flatMap((c) => reader.read(c)), ...reader.finish(promptTokens).outputs];
}

describe('toWebLLMRequest', () => {
  it('streams with usage, merges system messages first, and copies the sampling fields', () => {
    const out = toWebLLMRequest(
      request({
        temperature: 0.2,
        top_p: 0.9,
        seed: 7,
        max_completion_tokens: 5,
        stop: 'x',
        logit_bias: { '50': -100 },
        logprobs: true,
        top_logprobs: 2,
        frequency_penalty: 1,
        presence_penalty: -1,
      }),
      MODEL,
    );
    expect(out).toEqual({
      model: MODEL.webllmId,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 5,
      stop: ['x'],
      temperature: 0.2,
      top_p: 0.9,
      seed: webllmSeed(7),
      frequency_penalty: 1,
      presence_penalty: -1,
      logit_bias: { '50': -100 },
      logprobs: true,
      top_logprobs: 2,
    });
  });

  it('gives a vision model the text as one part, then each image as a data URL of its file, without detail', async () => {
    const red = solidPng(4, 2, [255, 0, 0]);
    const sent = imageMessage('What is', dataUrl(red));
    const jpeg = {
      type: 'image_url',
      image_url: { url: dataUrl(red, 'image/jpeg'), detail: 'low' },
    };
    const parsed = parseChatRequest({
      model: 'mlc-ai/Phi-3.5-vision-instruct-q4f32_1-MLC',
      messages: [{ ...sent, content: [...sent.content, { type: 'text', text: 'this?' }, jpeg] }],
    });
    await readImages(parsed, { origin: 'https://app.example' });
    const { messages } = toWebLLMRequest(parsed, MODEL);
    // WebLLM refuses a second text part and any `detail`; the type is the file's, as read.
    expect(messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: parsed.messages[0]!.content },
          { type: 'image_url', image_url: { url: dataUrl(red) } },
          { type: 'image_url', image_url: { url: dataUrl(red) } },
        ],
      },
    ]);
    expect(parsed.messages[0]!.content).toContain('this?');
  });

  it('always asks for a stream, one choice at a time', () => {
    expect(toWebLLMRequest(request({ n: 3 }), MODEL)).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    });
    expect('n' in toWebLLMRequest(request({ n: 3 }), MODEL)).toBe(false);
  });

  it('turns json_schema into WebLLM’s schema string, and json_object into an object schema', () => {
    const schema = { type: 'object', properties: { a: { type: 'number' } } };
    expect(
      toWebLLMRequest(
        request({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }),
        MODEL,
      ).response_format,
    ).toEqual({
      type: 'json_object',
      schema: JSON.stringify(schema),
    });
    // A bare json_object with no schema makes WebLLM 0.2.86 throw.
    expect(
      toWebLLMRequest(request({ response_format: { type: 'json_object' } }), MODEL).response_format,
    ).toEqual({
      type: 'json_object',
      schema: '{"type":"object"}',
    });
    expect(
      toWebLLMRequest(request({ response_format: { type: 'text' } }), MODEL).response_format,
    ).toBeUndefined();
  });

  it('offers tools unless tool_choice is none, which WebLLM would ignore', () => {
    const tools = [
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
    ];
    const body = {
      model: MODEL.webllmId,
      messages: [
        { role: 'user', content: 'time?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_time', arguments: '{}' } },
          ],
        },
        { role: 'tool', content: '12:00', tool_call_id: 'call_1' },
      ],
      tools,
    };
    const auto = toWebLLMRequest(parseChatRequest({ ...body, tool_choice: 'auto' }), MODEL);
    expect(auto.tools).toEqual([
      { type: 'function', function: { name: 'get_time', parameters: { type: 'object' } } },
    ]);
    // WebLLM reads only `content`: the earlier calls are written there as the model emits them.
    expect(auto.messages[1]).toEqual({
      role: 'assistant',
      content: '[{"name":"get_time","arguments":{}}]',
    });
    expect(auto.messages[2]).toEqual({ role: 'tool', content: '12:00', tool_call_id: 'call_1' });
    expect(
      toWebLLMRequest(parseChatRequest({ ...body, tool_choice: 'none' }), MODEL).tools,
    ).toBeUndefined();
  });
});

describe('ChunkReader', () => {
  it('turns WebLLM’s chunks into tokens, skipping empty ones, and its usage chunk into the end', () => {
    const reader = new ChunkReader({ model: MODEL, tools: false });
    expect(run(reader, [delta('Hel'), delta(''), delta('lo'), final('stop'), usageChunk])).toEqual([
      { type: 'token', text: 'Hel' },
      { type: 'token', text: 'lo' },
      {
        type: 'end',
        finish_reason: 'stop',
        usage: {
          prompt_tokens: 7,
          completion_tokens: 3,
          speed: { prefill_tokens_per_s: 0, decode_tokens_per_s: 42.5, time_to_first_token_s: 0.1 },
        },
      },
    ]);
  });

  it('counts every prompt token when told how many there were (WebLLM leaves out a reused prefix)', () => {
    const reader = new ChunkReader({ model: MODEL, tools: false });
    const end = run(reader, [delta('a'), final('length'), usageChunk], 130).at(-1);
    expect(end).toMatchObject({
      type: 'end',
      finish_reason: 'length',
      usage: { prompt_tokens: 130, completion_tokens: 3 },
    });
  });

  it('never reports WebLLM’s abort as a finish reason, and says it was aborted', () => {
    const reader = new ChunkReader({ model: MODEL, tools: false });
    const outputs = run(reader, [delta('a'), final('abort'), usageChunk]);
    expect(reader.aborted).toBe(true);
    expect(outputs.at(-1)).toMatchObject({ finish_reason: 'stop' });
  });

  it('takes every token’s logprobs from the pipeline, trimmed to top_logprobs', () => {
    const entry = (token: string) => ({
      token,
      logprob: -0.1,
      bytes: [...new TextEncoder().encode(token)],
      top_logprobs: [
        { token, logprob: -0.1, bytes: [] },
        { token: 'z', logprob: -3, bytes: [122] },
      ],
    });
    const reader = new ChunkReader({ model: MODEL, tools: false, topLogprobs: 1 });
    // WebLLM's chunk carries only its last token's entry; the pipeline has them all.
    const first = reader.read(delta('a'), { message: 'a', logprobs: [entry('a')] });
    const second = reader.read(delta('bc', { logprobs: { content: [entry('c')] } }), {
      message: 'abc',
      logprobs: [entry('a'), entry('b'), entry('c')],
    });
    const tokens = [...first, ...second].flatMap((o) => (o.type === 'token' ? [o] : []));
    expect(tokens.map((t) => t.logprobs?.map((e) => e.token))).toEqual([['a'], ['b', 'c']]);
    expect(tokens[0]?.logprobs?.[0]?.top_logprobs).toHaveLength(1);
  });

  it('holds back the raw JSON WebLLM streams for tool calls and sends the calls instead, with ids of their own', () => {
    const reader = new ChunkReader({ model: MODEL, tools: true });
    const outputs = run(reader, [
      delta('[{"name": "get_time", '),
      delta('"arguments": {}}]'),
      {
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                { index: 0, function: { name: 'get_time', arguments: '{}' }, type: 'function' },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      },
      usageChunk,
    ]);
    expect(outputs.map((o) => o.type)).toEqual(['tool_calls', 'end']);
    const calls = (outputs[0] as Extract<EngineOutput, { type: 'tool_calls' }>).calls;
    expect(calls).toEqual([
      {
        id: expect.stringMatching(/^call_[0-9a-f]{24}$/),
        type: 'function',
        function: { name: 'get_time', arguments: '{}' },
      },
    ]);
    expect(outputs[1]).toMatchObject({ finish_reason: 'tool_calls' });
  });

  it('ends a reply to tools that calls none with a plain stop and no text', () => {
    const reader = new ChunkReader({ model: MODEL, tools: true });
    const outputs = run(reader, [delta('['), delta(']'), final('tool_calls'), usageChunk]);
    expect(outputs).toHaveLength(1);
    expect(outputs[0]).toMatchObject({ type: 'end', finish_reason: 'stop' });
  });

  it('separates a reasoning model’s thinking from its answer, tags split across chunks', () => {
    const reader = new ChunkReader({
      model: { webllmId: 'mlc-ai/Qwen3-0.6B-q4f32_1-MLC', reasoning: true },
      tools: false,
    });
    const outputs = run(reader, [
      delta('<th'),
      delta('ink>\nLet me'),
      delta(' think.\n</th'),
      delta('ink>\n\nThe answer'),
      delta(' is 4.'),
      final('stop'),
      usageChunk,
    ]);
    const text = (reasoning: boolean) =>
      outputs
        .flatMap((o) =>
          o.type === 'token' && (o.reasoning ?? false) === reasoning ? [o.text] : [],
        )
        .join('');
    expect(text(true)).toBe('Let me think.');
    expect(text(false)).toBe('The answer is 4.');
  });
});

describe('thinking text', () => {
  it('takes DeepSeek-R1’s output, which starts thinking without the tag, as thinking until </think>', () => {
    expect(
      splitThinking(
        'First, 2+2.\n</think>\n\n4',
        startsThinking('mlc-ai/DeepSeek-R1-Distill-Qwen-7B-q4f32_1-MLC'),
      ),
    ).toEqual({
      reasoning: 'First, 2+2.',
      content: '4',
    });
  });

  it('leaves a reply without thinking alone', () => {
    expect(
      splitThinking('Just the answer.', startsThinking('mlc-ai/Qwen3-0.6B-q4f32_1-MLC')),
    ).toEqual({
      reasoning: '',
      content: 'Just the answer.',
    });
  });

  it('gives thinking cut short by the token limit as thinking', () => {
    const splitter = new ThinkSplitter();
    const pieces = [...splitter.push('<think>still going'), ...splitter.flush()];
    expect(pieces).toEqual([{ text: 'still going', reasoning: true }]);
  });

  it('does not take a lone "<" for the start of a tag forever', () => {
    const splitter = new ThinkSplitter();
    expect(splitter.push('<')).toEqual([]);
    expect(splitter.push('3 is less')).toEqual([{ text: '<3 is less', reasoning: false }]);
  });
});

describe('fromWebLLMError', () => {
  it.each([
    [
      'ContextWindowSizeExceededError: Prompt tokens exceed context window size: number of prompt tokens: 5000; context window size: 4096\nConsider shortening the prompt, or increase `context_window_size`, or using sliding window via `sliding_window_size`.',
      400,
      'context_length_exceeded',
      'messages',
    ],
    ['RangeError: Make sure 0 < top_p <= 1.', 400, 'invalid_value', 'top_p'],
    [
      'EmbeddingExceedContextWindowSizeError: The embedding model you are using only supports up to 512 context size.But received input size of 600.',
      400,
      'context_length_exceeded',
      'input',
    ],
    [
      'EmbeddingInputEmptyError: Embedding input cannot be empty string or empty token array.',
      400,
      'invalid_value',
      'input',
    ],
    ['NonNegativeError: Make sure temperature >= 0.', 400, 'invalid_value', 'temperature'],
    ['MinValueError: Make sure `max_tokens` > 0.', 400, 'invalid_value', 'max_tokens'],
    [
      'CustomSystemPromptError: When using Hermes-2-Pro function calling via ChatCompletionRequest.tools, cannot specify customized system prompt.',
      400,
      'unsupported_parameter',
      'messages',
    ],
    [
      'ShaderF16SupportError: This model requires WebGPU extension shader-f16, which is not enabled in this browser.',
      503,
      'webgpu_unavailable',
      null,
    ],
    [
      'ModelNotFoundError: Cannot find model record in appConfig for x.',
      404,
      'model_not_found',
      'model',
    ],
    [
      'Error: Unable to find a compatible GPU. This issue might be…',
      503,
      'webgpu_unavailable',
      null,
    ],
    [
      'Error: Cannot initialize runtime because of requested maxComputeWorkgroupStorageSize exceeds limit. requested=32768, limit=16384. ',
      503,
      'webgpu_unavailable',
      null,
    ],
    [
      'DeviceLostError: The WebGPU device was lost while loading the model.',
      503,
      'webgpu_unavailable',
      null,
    ],
    ['Error: Role is not supported: tool', 400, 'unsupported_parameter', 'messages'],
    ['Error: Failed to fetch', 500, 'engine_error', null],
  ])('maps the string WebLLM’s worker proxies send, %s', (text, status, code, param) => {
    const error = fromWebLLMError(text);
    expect({ status: error.status, code: error.code, param: error.param }).toEqual({
      status,
      code,
      param,
    });
  });

  it('takes a built-in RangeError for a failure of the engine, not of the request', () => {
    const error = fromWebLLMError(new RangeError('Invalid array length'));
    expect({ status: error.status, code: error.code }).toEqual({
      status: 500,
      code: 'engine_error',
    });
  });

  it('says not to retry when WebGPU limits or memory cannot run the model', () => {
    for (const text of [
      'Error: Cannot initialize runtime because of requested maxBufferSize exceeds limit.',
      'DeviceLostError: The WebGPU device was lost while loading the model.',
    ]) {
      expect(fromWebLLMError(text).shouldRetry).toBe(false);
    }
  });

  it('maps thrown objects by name, and says not to retry when the GPU cannot run the model', () => {
    const err = Object.assign(new Error('This model requires WebGPU extension shader-f16'), {
      name: 'ShaderF16SupportError',
    });
    const error = fromWebLLMError(err);
    expect(error.code).toBe('webgpu_unavailable');
    expect(error.responseHeaders()['x-should-retry']).toBe('false');
  });

  it('says plainly when storage is full', () => {
    const full = new DOMException('Quota exceeded', 'QuotaExceededError');
    expect(fromWebLLMError(full).message).toMatch(/storage is full/);
  });

  it('splits "Name: message" strings, and leaves other strings whole', () => {
    expect(errorParts('DeviceLostError: gone')).toEqual({
      name: 'DeviceLostError',
      message: 'gone',
    });
    expect(errorParts('something odd')).toEqual({ name: 'Error', message: 'something odd' });
  });
});
