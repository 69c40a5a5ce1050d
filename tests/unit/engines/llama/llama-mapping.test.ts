/**
 * The mapping between the API and llama-server in wllama 3.13, against chunks and errors shaped
 * as that build produced them for the fixture GGUF in Chromium (notes/wllama-3.13.md).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EngineOutput } from '../../../../src/engines/engine';
import {
  LlamaChunkReader,
  speedOf,
  type LlamaChunk,
} from '../../../../src/engines/llama/llama-chunks';
import { fromLlamaError, isFatal } from '../../../../src/engines/llama/llama-errors';
import {
  llamaSeed,
  toLlamaRequest,
  unknownBiasTokens,
} from '../../../../src/engines/llama/llama-mapping';
import { OpenAIError } from '../../../../src/protocol/errors';
import { parseChatRequest } from '../../../../src/protocol/validate';
import { readImages } from '../../../../src/api/images';
import { dataUrl, imageMessage, solidPng } from '../../../test-images';

const MODEL = 'e2e/fixture-GGUF:F32';
const request = (extra: Record<string, unknown> = {}) =>
  parseChatRequest({
    model: MODEL,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'developer', content: 'Be brief.' },
    ],
    ...extra,
  });

/** A chunk as llama-server streams it. */
const chunk = (
  delta: LlamaChunk['choices'][number]['delta'],
  extra: Partial<LlamaChunk['choices'][number]> = {},
): LlamaChunk => ({ choices: [{ index: 0, delta, finish_reason: null, ...extra }] });
const ROLE = chunk({ role: 'assistant', content: null });
const TIMINGS = {
  prompt_n: 36,
  prompt_ms: 60,
  prompt_per_second: 596,
  predicted_n: 3,
  predicted_ms: 43.8,
  predicted_per_second: 45.6,
};
const END = (reason: string): LlamaChunk => chunk({}, { finish_reason: reason });
const USAGE: LlamaChunk = {
  choices: [],
  usage: { prompt_tokens: 36, completion_tokens: 3 },
  timings: TIMINGS,
};

function readAll(chunks: LlamaChunk[], options: { topLogprobs?: number } = {}): EngineOutput[] {
  const reader = new LlamaChunkReader(options);
  return [...chunks.flatMap((c) => reader.read(c)), ...reader.finish()];
}

describe('toLlamaRequest', () => {
  it('always streams with usage, and passes the messages with the system prompt first', () => {
    const out = toLlamaRequest(request());
    expect(out).toEqual({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
      stream: true,
      stream_options: { include_usage: true },
      return_progress: true,
    });
  });

  it("gives a message's images to wllama as their files' bytes, in their place among the text", async () => {
    const red = solidPng(4, 2, [255, 0, 0]);
    const blue = solidPng(3, 3, [0, 0, 255]);
    const sent = imageMessage('What is this?', dataUrl(red));
    sent.content.push({ type: 'image_url', image_url: { url: dataUrl(blue) } });
    const parsed = parseChatRequest({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello.' }, sent],
    });
    await readImages(parsed, { origin: 'https://app.example' });
    const { messages } = toLlamaRequest(parsed);
    expect(messages.slice(0, 2)).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello.' },
    ]);
    const parts = messages[2]!.content as { type: string; text?: string; data?: ArrayBuffer }[];
    expect(parts.map((p) => p.type)).toEqual(['text', 'image', 'image']);
    expect(parts[0]!.text).toBe('What is this?');
    // Exactly the file: no data URL (which wllama cannot load), no bytes of a larger buffer.
    expect(new Uint8Array(parts[1]!.data!)).toEqual(new Uint8Array(red));
    expect(new Uint8Array(parts[2]!.data!)).toEqual(new Uint8Array(blue));
  });

  it('passes the sampling fields under their llama-server names', () => {
    const out = toLlamaRequest(
      request({
        max_completion_tokens: 7,
        temperature: 1.5,
        top_p: 0,
        seed: 42,
        frequency_penalty: 0.5,
        presence_penalty: -0.5,
        repetition_penalty: 1.1,
        ignore_eos: true,
        stop: 'fox',
        logit_bias: { '261': -100 },
      }),
    );
    expect(out).toMatchObject({
      max_tokens: 7,
      temperature: 1.5,
      top_p: 0,
      seed: 42,
      frequency_penalty: 0.5,
      presence_penalty: -0.5,
      repeat_penalty: 1.1,
      ignore_eos: true,
      stop: ['fox'],
      logit_bias: { '261': -100 },
    });
    expect(out).not.toHaveProperty('repetition_penalty');
  });

  it('maps seeds onto uint32 without ever sending the value that means random', () => {
    expect(llamaSeed(0)).toBe(0);
    expect(llamaSeed(42)).toBe(42);
    expect(llamaSeed(-1)).toBe(2 ** 32 - 2);
    expect(llamaSeed(2 ** 32 - 1)).toBe(2 ** 32 - 2);
    expect(llamaSeed(2 ** 32 + 5)).toBe(5);
    expect(toLlamaRequest(request({ seed: -3 })).seed).toBe(2 ** 32 - 3);
  });

  it.each([Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 60, -(2 ** 60), 1e30, -1e30])(
    'maps the seed %d, past any uint32, to a uint32 llama.cpp takes as a seed, not as "random"',
    (seed) => {
      const mapped = llamaSeed(seed);
      expect(Number.isInteger(mapped)).toBe(true);
      expect(mapped).toBeGreaterThanOrEqual(0);
      expect(mapped).toBeLessThan(2 ** 32 - 1);
    },
  );

  it('asks for at least one alternative with logprobs, since llama-server makes none for zero', () => {
    expect(toLlamaRequest(request({ logprobs: true }))).toMatchObject({
      logprobs: true,
      top_logprobs: 1,
    });
    expect(toLlamaRequest(request({ logprobs: true, top_logprobs: 3 })).top_logprobs).toBe(3);
    expect(toLlamaRequest(request({ logprobs: false }))).not.toHaveProperty('logprobs');
  });

  it('asks for a JSON object with json_object, and passes a json_schema as it came', () => {
    expect(toLlamaRequest(request({ response_format: { type: 'json_object' } }))).toMatchObject({
      response_format: { type: 'json_object', schema: { type: 'object' } },
    });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      toLlamaRequest(
        request({
          response_format: {
            type: 'json_schema',
            json_schema: { name: 'x', schema, strict: true },
          },
        }),
      ).response_format,
    ).toEqual({ type: 'json_schema', json_schema: { name: 'x', schema, strict: true } });
    expect(toLlamaRequest(request({ response_format: { type: 'text' } }))).not.toHaveProperty(
      'response_format',
    );
  });

  it('passes tools, tool_choice auto, earlier tool calls and tool results natively', () => {
    const tool = { type: 'function', function: { name: 'f', parameters: { type: 'object' } } };
    const call = { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } };
    const out = toLlamaRequest(
      parseChatRequest({
        model: MODEL,
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: null, tool_calls: [call] },
          { role: 'tool', tool_call_id: 'c1', content: '42' },
        ],
        tools: [tool],
        tool_choice: 'auto',
      }),
    );
    expect(out.messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', content: '42', tool_call_id: 'c1' },
    ]);
    expect(out.tools).toEqual([tool]);
    expect(out.tool_choice).toBe('auto');
  });

  it('honours tool_choice none by not offering the tools', () => {
    const tool = { type: 'function', function: { name: 'f' } };
    const out = toLlamaRequest(request({ tools: [tool], tool_choice: 'none' }));
    expect(out).not.toHaveProperty('tools');
    expect(out).not.toHaveProperty('tool_choice');
  });

  it('passes enable_thinking to the chat template', () => {
    expect(toLlamaRequest(request({ enable_thinking: false })).chat_template_kwargs).toEqual({
      enable_thinking: false,
    });
  });
});

describe('LlamaChunkReader', () => {
  it('makes one token per content delta, then the end with llama.cpp’s usage and speed', () => {
    const outputs = readAll([
      ROLE,
      chunk({ content: 'The' }),
      chunk({ content: ' quick' }),
      END('length'),
      USAGE,
    ]);
    expect(outputs).toEqual([
      { type: 'token', text: 'The' },
      { type: 'token', text: ' quick' },
      {
        type: 'end',
        finish_reason: 'length',
        usage: {
          prompt_tokens: 36,
          completion_tokens: 3,
          speed: {
            prefill_tokens_per_s: 596,
            decode_tokens_per_s: 45.6,
            time_to_first_token_s: 0.06,
          },
        },
      },
    ]);
  });

  it('marks reasoning_content deltas as reasoning tokens', () => {
    const outputs = readAll([
      chunk({ reasoning_content: 'Let me see.' }),
      chunk({ content: 'Yes.' }),
      END('stop'),
    ]);
    expect(outputs.slice(0, 2)).toEqual([
      { type: 'token', text: 'Let me see.', reasoning: true },
      { type: 'token', text: 'Yes.' },
    ]);
  });

  it('puts tool-call deltas together by index and ends with tool_calls', () => {
    const outputs = readAll([
      chunk({ tool_calls: [{ index: 0, id: 'a1', type: 'function', function: { name: 'f' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'b2', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      END('tool_calls'),
    ]);
    expect(outputs[0]).toEqual({
      type: 'tool_calls',
      calls: [
        { id: 'a1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } },
        { id: 'b2', type: 'function', function: { name: 'g', arguments: '{}' } },
      ],
    });
    expect(outputs[1]).toMatchObject({ type: 'end', finish_reason: 'tool_calls' });
  });

  it('keeps llama.cpp’s "length" for a call cut short by max_tokens, with the arguments so far', () => {
    // As llama.cpp 3.13 sent it for the fixture's tools variant with max_tokens 4.
    const outputs = readAll([
      ROLE,
      chunk({
        tool_calls: [
          {
            index: 0,
            id: 'c1',
            type: 'function',
            function: { name: 'f', arguments: '{"city": "' },
          },
        ],
      }),
      END('length'),
    ]);
    expect(outputs[0]).toMatchObject({
      type: 'tool_calls',
      calls: [{ function: { name: 'f', arguments: '{"city": "' } }],
    });
    expect(outputs[1]).toMatchObject({ type: 'end', finish_reason: 'length' });
  });

  it('ends with "stop", not llama.cpp’s "tool_calls", when a stop string cut the arguments short', () => {
    // llama.cpp 3.13 says tool_calls for a call a stop string cut inside its arguments.
    const outputs = readAll([
      chunk({
        tool_calls: [
          {
            index: 0,
            id: 'c1',
            type: 'function',
            function: { name: 'f', arguments: '{"city": "' },
          },
        ],
      }),
      END('tool_calls'),
    ]);
    expect(outputs.at(-1)).toMatchObject({ type: 'end', finish_reason: 'stop' });
    // Whole arguments, and a call of a function without parameters, are calls made.
    for (const args of ['{"city": "Paris"}', '{}', '']) {
      const whole = readAll([
        chunk({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'f', arguments: args } }] }),
        END('tool_calls'),
      ]);
      expect(whole.at(-1), args).toMatchObject({ type: 'end', finish_reason: 'tool_calls' });
    }
  });

  it('gives a call llama-server sent without an id one of its own', () => {
    const [out] = readAll([chunk({ tool_calls: [{ index: 0, function: { name: 'f' } }] })]);
    expect(out?.type === 'tool_calls' && out.calls[0]?.id).toMatch(/^call_\w{24}$/);
  });

  it('keeps the alternatives asked for and drops llama-server’s token ids', () => {
    const entry = {
      id: 261,
      token: 'The',
      bytes: [84, 104, 101],
      logprob: 0,
      top_logprobs: [
        { id: 261, token: 'The', bytes: [84, 104, 101], logprob: 0 },
        { id: 0, token: '', bytes: [], logprob: -79.97 },
      ],
    };
    const outputs = readAll(
      [chunk({ content: 'The' }, { logprobs: { content: [entry] } }), END('stop')],
      { topLogprobs: 1 },
    );
    expect(outputs[0]).toEqual({
      type: 'token',
      text: 'The',
      logprobs: [
        {
          token: 'The',
          bytes: [84, 104, 101],
          logprob: 0,
          top_logprobs: [{ token: 'The', bytes: [84, 104, 101], logprob: 0 }],
        },
      ],
    });
  });

  it('keeps a logprob entry whose chunk has no text, as an empty token', () => {
    const entry = { token: 'x', bytes: [120], logprob: -1, top_logprobs: [] };
    const outputs = readAll([chunk({}, { logprobs: { content: [entry] } })], { topLogprobs: 0 });
    expect(outputs[0]).toMatchObject({ type: 'token', text: '', logprobs: [{ token: 'x' }] });
  });

  it('ignores logprobs nobody asked for', () => {
    const entry = { token: 'x', bytes: [120], logprob: -1, top_logprobs: [] };
    const outputs = readAll([chunk({ content: 'x' }, { logprobs: { content: [entry] } })]);
    expect(outputs[0]).toEqual({ type: 'token', text: 'x' });
  });

  it('counts the tokens it saw when llama-server sent no usage', () => {
    const outputs = readAll([chunk({ content: 'a' }), chunk({ content: 'b' }), END('stop')]);
    expect(outputs.at(-1)).toEqual({
      type: 'end',
      finish_reason: 'stop',
      usage: { prompt_tokens: 0, completion_tokens: 2 },
    });
  });
});

describe('LlamaChunkReader: signs of life while nothing is released', () => {
  afterEach(() => vi.useRealTimers());

  it('asks llama.cpp for its prompt progress, so a long prefill can say it is alive', () => {
    expect(toLlamaRequest(request()).return_progress).toBe(true);
  });

  it('says progress at most once a second while llama.cpp reports its prefill', () => {
    vi.useFakeTimers({ now: 0 });
    const reader = new LlamaChunkReader();
    const prefill = (processed: number): LlamaChunk => ({
      choices: [],
      prompt_progress: { total: 4096, cache: 0, processed, time_ms: processed },
    });
    const seen: EngineOutput[][] = [];
    for (let step = 1; step <= 8; step += 1) {
      vi.setSystemTime(step * 400);
      seen.push(reader.read(prefill(step * 512)));
    }
    // 400 ms steps: a sign at 1,200 ms and 2,400 ms (a second after the one before), no more.
    expect(seen.map((o) => o.length)).toEqual([0, 0, 1, 0, 0, 1, 0, 0]);
    expect(seen.flat()).toEqual([{ type: 'progress' }, { type: 'progress' }]);
  });

  it('says progress while a tool call is written, which goes out only whole', () => {
    vi.useFakeTimers({ now: 0 });
    const reader = new LlamaChunkReader();
    const outputs: EngineOutput[] = [];
    outputs.push(
      ...reader.read(chunk({ tool_calls: [{ index: 0, id: 'a', function: { name: 'f' } }] })),
    );
    for (let i = 1; i <= 30; i += 1) {
      vi.setSystemTime(i * 100);
      outputs.push(
        ...reader.read(chunk({ tool_calls: [{ index: 0, function: { arguments: 'x' } }] })),
      );
    }
    // Three seconds of arguments: a sign each second, and no token (the call is not out yet).
    expect(outputs).toEqual([{ type: 'progress' }, { type: 'progress' }, { type: 'progress' }]);
    expect(reader.toolCalls[0]?.function.arguments).toBe('x'.repeat(30));
  });

  it('says no progress beside the tokens it releases', () => {
    vi.useFakeTimers({ now: 0 });
    const reader = new LlamaChunkReader();
    vi.setSystemTime(5000);
    expect(reader.read(chunk({ content: 'Hi' }))).toEqual([{ type: 'token', text: 'Hi' }]);
  });
});

describe('speedOf', () => {
  it('reads prefill and decode rates and the time to the first token', () => {
    expect(speedOf(TIMINGS)).toEqual({
      prefill_tokens_per_s: 596,
      decode_tokens_per_s: 45.6,
      time_to_first_token_s: 0.06,
    });
    expect(speedOf(undefined)).toBeUndefined();
    expect(speedOf({ prompt_per_second: Number.NaN })?.prefill_tokens_per_s).toBe(0);
  });
});

/** wllama's error classes, as they arrive (name, message, type). */
function wllamaError(message: string, type = 'inference_error'): Error {
  return Object.assign(new Error(message), { type });
}
function runtimeError(message: string): Error {
  const err = new Error(message);
  err.name = 'RuntimeError';
  return err;
}

describe('fromLlamaError', () => {
  const failed = (extra: Record<string, unknown> = {}) => ({
    model: MODEL,
    request: request(extra),
  });

  it('turns a prompt longer than the context into 400 context_length_exceeded', () => {
    const error = fromLlamaError(
      wllamaError(
        'request (12022 tokens) exceeds the available context size (1024 tokens), try increasing it',
      ),
      failed(),
    );
    expect(error.toBody().error).toMatchObject({
      code: 'context_length_exceeded',
      param: 'messages',
    });
    expect(error.status).toBe(400);
    expect(error.message).toContain('1024');
    expect(error.message).toContain('12022');
  });

  it('turns a grammar the sampler refused into 400 unsupported_parameter on the field that made it', () => {
    const err = wllamaError('Failed to initialize samplers: std::exception');
    const json = fromLlamaError(err, failed({ response_format: { type: 'json_object' } }));
    expect(json.toBody().error).toMatchObject({
      code: 'unsupported_parameter',
      param: 'response_format',
    });
    const tools = fromLlamaError(
      err,
      failed({ tools: [{ type: 'function', function: { name: 'f' } }] }),
    );
    expect(tools.toBody().error).toMatchObject({ code: 'unsupported_parameter', param: 'tools' });
  });

  it('turns wllama’s misread refusal of a JSON schema into 400 invalid_value on the schema', () => {
    const err = runtimeError('Invalid typed array length: 1163217991');
    const error = fromLlamaError(
      err,
      failed({
        response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 1 } } },
      }),
    );
    expect(error.toBody().error).toMatchObject({
      code: 'invalid_value',
      param: 'response_format.json_schema.schema',
    });
    expect(fromLlamaError(err, failed()).toBody().error.code).toBe('engine_error');
    expect(isFatal(err)).toBe(false);
  });

  it('reports other failures as engine_error, and a wasm runtime error as fatal', () => {
    const crash = runtimeError('memory access out of bounds');
    expect(fromLlamaError(crash, failed()).toBody().error).toMatchObject({
      code: 'engine_error',
      type: 'server_error',
    });
    expect(isFatal(crash)).toBe(true);
    expect(isFatal(wllamaError('Model failed to start inference'))).toBe(false);
  });

  it('passes an OpenAIError through', () => {
    const error = new OpenAIError('invalid_value', 'no');
    expect(fromLlamaError(error, failed())).toBe(error);
  });
});

describe('unknownBiasTokens', () => {
  it('names the logit_bias ids the vocabulary has not', () => {
    expect(unknownBiasTokens(request({ logit_bias: { '5': 1, '300': 2, '301': 1 } }), 301)).toEqual(
      ['301'],
    );
    expect(unknownBiasTokens(request(), 301)).toEqual([]);
  });
});
