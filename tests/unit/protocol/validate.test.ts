/**
 * `parseChatRequest` against docs/api.md (Request fields, Errors): the request field table
 * (validated, accepted-and-ignored, unsupported), the error table's codes and `param` paths, the
 * rules across fields, and message normalisation.
 */
import { describe, expect, it } from 'vitest';
import { OpenAIError, type ErrorCode } from '../../../src/protocol/errors';
import type { ChatRequest } from '../../../src/protocol/types';
import { PART_SEPARATOR, SYSTEM_SEPARATOR, parseChatRequest } from '../../../src/protocol/validate';

type Body = Record<string, unknown>;

const MODEL = 'hearth/echo';
const USER = { role: 'user', content: 'hi' };
const TOOL_CALL = {
  id: 'call_1',
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Oslo"}' },
};
const TOOL = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
};

/** The smallest valid body, with `extra` fields on top. */
const body = (extra: Body = {}): Body => ({ model: MODEL, messages: [USER], ...extra });

/** The smallest valid body with these messages instead. */
const chat = (...messages: unknown[]): Body => body({ messages });

/** Parses the smallest valid body with `extra` fields on top. */
const ok = (extra: Body = {}): ChatRequest => parseChatRequest(body(extra));

/** What the smallest valid body normalises to. */
const DEFAULT_REQUEST: ChatRequest = {
  model: MODEL,
  messages: [{ role: 'user', content: 'hi' }],
  stream: false,
  include_usage: false,
  n: 1,
};

/** The error `parseChatRequest` throws for `input`; fails the test when it accepts it. */
function errorOf(input: unknown): OpenAIError {
  let accepted: ChatRequest;
  try {
    accepted = parseChatRequest(input);
  } catch (err) {
    expect(err).toBeInstanceOf(OpenAIError);
    return err as OpenAIError;
  }
  throw new Error(`expected a 400, but the body was accepted as ${JSON.stringify(accepted)}`);
}

/** Asserts a 400 with this code and param, and a message that names the param. */
function rejects(input: unknown, code: ErrorCode, param: string | null): OpenAIError {
  const err = errorOf(input);
  expect({ status: err.status, code: err.code, param: err.param }).toEqual({
    status: 400,
    code,
    param,
  });
  expect(err.type).toBe('invalid_request_error');
  expect(err.message).not.toBe('');
  if (param !== null) expect(err.message).toContain(param);
  return err;
}

describe('parseChatRequest: the smallest request', () => {
  it('normalises a model and one user message to the defaults', () => {
    expect(ok()).toEqual(DEFAULT_REQUEST);
  });

  it('rejects a body without model as missing_field naming model', () => {
    rejects({ messages: [USER] }, 'missing_field', 'model');
  });

  it('rejects a body without messages as missing_field naming messages', () => {
    rejects({ model: MODEL }, 'missing_field', 'messages');
  });

  it('rejects a body that is not an object as invalid_type without a param', () => {
    rejects(null, 'invalid_type', null);
    rejects('hello', 'invalid_type', null);
  });
});

describe('parseChatRequest: validated fields', () => {
  it.each<[string, Body, Partial<ChatRequest>]>([
    ['stream true', { stream: true }, { stream: true }],
    ['stream false', { stream: false }, { stream: false }],
    ['max_tokens 1', { max_tokens: 1 }, { max_tokens: 1 }],
    ['max_completion_tokens 64 as max_tokens', { max_completion_tokens: 64 }, { max_tokens: 64 }],
    ['a stop string as a one-element list', { stop: 'END' }, { stop: ['END'] }],
    ['four stop strings', { stop: ['a', 'b', 'c', 'd'] }, { stop: ['a', 'b', 'c', 'd'] }],
    ['temperature 0', { temperature: 0 }, { temperature: 0 }],
    ['temperature 2', { temperature: 2 }, { temperature: 2 }],
    ['temperature 0.7', { temperature: 0.7 }, { temperature: 0.7 }],
    ['top_p 0', { top_p: 0 }, { top_p: 0 }],
    ['top_p 1', { top_p: 1 }, { top_p: 1 }],
    ['seed 0', { seed: 0 }, { seed: 0 }],
    ['a negative seed', { seed: -42 }, { seed: -42 }],
    ['frequency_penalty -2', { frequency_penalty: -2 }, { frequency_penalty: -2 }],
    ['frequency_penalty 2', { frequency_penalty: 2 }, { frequency_penalty: 2 }],
    ['presence_penalty -2', { presence_penalty: -2 }, { presence_penalty: -2 }],
    ['presence_penalty 0.5', { presence_penalty: 0.5 }, { presence_penalty: 0.5 }],
    [
      'logit_bias with token ids from -100 to 100',
      { logit_bias: { '50256': -100, '1': 100, '7': 0.5 } },
      { logit_bias: { '50256': -100, '1': 100, '7': 0.5 } },
    ],
    ['logprobs true', { logprobs: true }, { logprobs: true }],
    ['logprobs false', { logprobs: false }, { logprobs: false }],
    [
      'top_logprobs 0 with logprobs',
      { logprobs: true, top_logprobs: 0 },
      { logprobs: true, top_logprobs: 0 },
    ],
    [
      'top_logprobs 5 with logprobs',
      { logprobs: true, top_logprobs: 5 },
      { logprobs: true, top_logprobs: 5 },
    ],
    ['n 1', { n: 1 }, { n: 1 }],
    ['n 3', { n: 3 }, { n: 3 }],
    [
      'a text response_format',
      { response_format: { type: 'text' } },
      { response_format: { type: 'text' } },
    ],
    [
      'a json_object response_format',
      { response_format: { type: 'json_object' } },
      { response_format: { type: 'json_object' } },
    ],
    ['tool_choice auto', { tool_choice: 'auto' }, { tool_choice: 'auto' }],
    ['tool_choice none', { tool_choice: 'none' }, { tool_choice: 'none' }],
    ['tool_choice required', { tool_choice: 'required' }, { tool_choice: 'required' }],
    ['echo_delay_ms 0', { echo_delay_ms: 0 }, { echo_delay_ms: 0 }],
    ['echo_delay_ms 10000', { echo_delay_ms: 10_000 }, { echo_delay_ms: 10_000 }],
    ['repetition_penalty 1.1', { repetition_penalty: 1.1 }, { repetition_penalty: 1.1 }],
    ['ignore_eos', { ignore_eos: true }, { ignore_eos: true }],
    ['enable_thinking false', { enable_thinking: false }, { enable_thinking: false }],
  ])('accepts %s and carries it into the request', (_, extra, expected) => {
    expect(ok(extra)).toMatchObject(expected);
  });

  it('lets max_completion_tokens win over max_tokens and puts it in max_tokens', () => {
    const request = ok({ max_tokens: 10, max_completion_tokens: 20 });
    expect(request.max_tokens).toBe(20);
    expect(request).not.toHaveProperty('max_completion_tokens');
  });

  it('falls back to max_tokens when max_completion_tokens is null', () => {
    expect(ok({ max_tokens: 10, max_completion_tokens: null }).max_tokens).toBe(10);
  });

  it('defaults n to 1', () => {
    expect(ok().n).toBe(1);
  });

  it.each<[string, Body, boolean]>([
    [
      'stream with include_usage true',
      { stream: true, stream_options: { include_usage: true } },
      true,
    ],
    [
      'stream with include_usage false',
      { stream: true, stream_options: { include_usage: false } },
      false,
    ],
    [
      'stream with include_usage null',
      { stream: true, stream_options: { include_usage: null } },
      false,
    ],
    ['stream with empty stream_options', { stream: true, stream_options: {} }, false],
    ['stream without stream_options', { stream: true }, false],
    ['no stream', {}, false],
  ])('sets include_usage only for stream plus include_usage: %s gives %s', (_, extra, expected) => {
    expect(ok(extra).include_usage).toBe(expected);
  });

  it.each([
    'stream',
    'stream_options',
    'max_tokens',
    'max_completion_tokens',
    'stop',
    'temperature',
    'top_p',
    'seed',
    'frequency_penalty',
    'presence_penalty',
    'logit_bias',
    'logprobs',
    'top_logprobs',
    'n',
    'response_format',
    'tools',
    'tool_choice',
    'modalities',
    'echo_delay_ms',
  ])('treats %s: null as absent', (field) => {
    expect(ok({ [field]: null })).toEqual(DEFAULT_REQUEST);
  });

  it.each<[string, Body, ErrorCode, string]>([
    ['a numeric model', { model: 42 }, 'invalid_type', 'model'],
    ['messages that are a string', { messages: 'hi' }, 'invalid_type', 'messages'],
    ['an empty messages list', { messages: [] }, 'invalid_value', 'messages'],
    ['a stream flag given as a string', { stream: 'true' }, 'invalid_type', 'stream'],
    [
      'stream_options that are a string',
      { stream: true, stream_options: 'yes' },
      'invalid_type',
      'stream_options',
    ],
    [
      'a non-boolean include_usage',
      { stream: true, stream_options: { include_usage: 'yes' } },
      'invalid_type',
      'stream_options.include_usage',
    ],
    ['a max_tokens of 0', { max_tokens: 0 }, 'invalid_value', 'max_tokens'],
    ['a fractional max_tokens', { max_tokens: 1.5 }, 'invalid_value', 'max_tokens'],
    ['a max_tokens given as a string', { max_tokens: '10' }, 'invalid_type', 'max_tokens'],
    [
      'a max_completion_tokens of 0',
      { max_completion_tokens: 0 },
      'invalid_value',
      'max_completion_tokens',
    ],
    [
      'a negative max_completion_tokens',
      { max_completion_tokens: -1 },
      'invalid_value',
      'max_completion_tokens',
    ],
    ['a numeric stop', { stop: 5 }, 'invalid_type', 'stop'],
    ['an empty stop string', { stop: '' }, 'invalid_value', 'stop'],
    ['an empty string in the stop list', { stop: ['a', ''] }, 'invalid_value', 'stop[1]'],
    ['a number in the stop list', { stop: ['a', 1] }, 'invalid_type', 'stop[1]'],
    ['more than 4 stop strings', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'invalid_value', 'stop'],
    ['a temperature above 2', { temperature: 2.01 }, 'invalid_value', 'temperature'],
    ['a negative temperature', { temperature: -0.1 }, 'invalid_value', 'temperature'],
    ['a temperature given as a string', { temperature: '1' }, 'invalid_type', 'temperature'],
    ['a top_p above 1', { top_p: 1.1 }, 'invalid_value', 'top_p'],
    ['a negative top_p', { top_p: -0.1 }, 'invalid_value', 'top_p'],
    ['a fractional seed', { seed: 1.5 }, 'invalid_value', 'seed'],
    ['a seed given as a string', { seed: '7' }, 'invalid_type', 'seed'],
    [
      'a frequency_penalty below -2',
      { frequency_penalty: -2.1 },
      'invalid_value',
      'frequency_penalty',
    ],
    [
      'a frequency_penalty above 2',
      { frequency_penalty: 2.1 },
      'invalid_value',
      'frequency_penalty',
    ],
    ['a presence_penalty above 2', { presence_penalty: 2.1 }, 'invalid_value', 'presence_penalty'],
    [
      'a presence_penalty given as a string',
      { presence_penalty: '0' },
      'invalid_type',
      'presence_penalty',
    ],
    ['a logit_bias that is a number', { logit_bias: 5 }, 'invalid_type', 'logit_bias'],
    [
      'a logit_bias key that is not a token id',
      { logit_bias: { abc: 1 } },
      'invalid_value',
      'logit_bias.abc',
    ],
    [
      'a logit_bias value above 100',
      { logit_bias: { '50256': 101 } },
      'invalid_value',
      'logit_bias.50256',
    ],
    [
      'a logit_bias value below -100',
      { logit_bias: { '50256': -101 } },
      'invalid_value',
      'logit_bias.50256',
    ],
    [
      'a logit_bias value that is a string',
      { logit_bias: { '50256': 'x' } },
      'invalid_type',
      'logit_bias.50256',
    ],
    ['a logprobs given as a string', { logprobs: 'yes' }, 'invalid_type', 'logprobs'],
    [
      'a top_logprobs above 5',
      { logprobs: true, top_logprobs: 6 },
      'invalid_value',
      'top_logprobs',
    ],
    [
      'a negative top_logprobs',
      { logprobs: true, top_logprobs: -1 },
      'invalid_value',
      'top_logprobs',
    ],
    [
      'a fractional top_logprobs',
      { logprobs: true, top_logprobs: 2.5 },
      'invalid_value',
      'top_logprobs',
    ],
    ['an n of 0', { n: 0 }, 'invalid_value', 'n'],
    ['a fractional n', { n: 1.5 }, 'invalid_value', 'n'],
    ['an n given as a string', { n: '2' }, 'invalid_type', 'n'],
    [
      'a response_format that is a string',
      { response_format: 'json' },
      'invalid_type',
      'response_format',
    ],
    [
      'an unknown response_format type',
      { response_format: { type: 'xml' } },
      'invalid_value',
      'response_format.type',
    ],
    [
      'a json_schema response_format without json_schema',
      { response_format: { type: 'json_schema' } },
      'missing_field',
      'response_format.json_schema',
    ],
    ['tools that are an object', { tools: {} }, 'invalid_type', 'tools'],
    [
      'a tool whose function name has a space',
      { tools: [{ type: 'function', function: { name: 'get weather' } }] },
      'invalid_value',
      'tools[0].function.name',
    ],
    [
      'a tool whose function name is longer than 64 characters',
      { tools: [{ type: 'function', function: { name: 'f'.repeat(65) } }] },
      'invalid_value',
      'tools[0].function.name',
    ],
    [
      'a tool of an unknown type',
      { tools: [{ type: 'wat', function: { name: 'x' } }] },
      'invalid_value',
      'tools[0].type',
    ],
    [
      'a tool without a function',
      { tools: [{ type: 'function' }] },
      'missing_field',
      'tools[0].function',
    ],
    ['an unknown tool_choice string', { tool_choice: 'sometimes' }, 'invalid_value', 'tool_choice'],
    ['a numeric tool_choice', { tool_choice: 1 }, 'invalid_type', 'tool_choice'],
    [
      'a named tool_choice without a function name',
      { tool_choice: { type: 'function', function: {} } },
      'missing_field',
      'tool_choice.function.name',
    ],
    ['an unknown modality', { modalities: ['image'] }, 'invalid_value', 'modalities[0]'],
    ['modalities that are a string', { modalities: 'text' }, 'invalid_type', 'modalities'],
    ['an echo_delay_ms above 10000', { echo_delay_ms: 10_001 }, 'invalid_value', 'echo_delay_ms'],
    ['a negative echo_delay_ms', { echo_delay_ms: -1 }, 'invalid_value', 'echo_delay_ms'],
    ['a repetition_penalty of 0', { repetition_penalty: 0 }, 'invalid_value', 'repetition_penalty'],
    ['an ignore_eos that is a string', { ignore_eos: 'yes' }, 'invalid_type', 'ignore_eos'],
    ['an enable_thinking that is 0', { enable_thinking: 0 }, 'invalid_type', 'enable_thinking'],
  ])('rejects %s (%j) as %s naming %s', (_, extra, code, param) => {
    rejects(body(extra), code, param);
  });

  // Valibot's object and record schemas let arrays through (an array is an object to them).
  it.each<[string, unknown, string | null]>([
    ['a body', [], null],
    ['a message', chat([]), 'messages[0]'],
    ['stream_options', body({ stream: true, stream_options: [] }), 'stream_options'],
    ['logit_bias', body({ logit_bias: [1] }), 'logit_bias'],
    [
      'tool parameters',
      body({ tools: [{ type: 'function', function: { name: 'f', parameters: [1] } }] }),
      'tools[0].function.parameters',
    ],
    [
      'a json_schema schema',
      body({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema: [] } } }),
      'response_format.json_schema.schema',
    ],
  ])('rejects %s given as an array as invalid_type', (_, input, param) => {
    rejects(input, 'invalid_type', param);
  });
});

describe('parseChatRequest: accepted-and-ignored fields', () => {
  it.each<[string, unknown]>([
    ['user', 'user-1234'],
    ['store', true],
    ['metadata', { project: 'hearth' }],
    ['service_tier', 'auto'],
    ['parallel_tool_calls', false],
    ['safety_identifier', 'abc'],
    ['prompt_cache_key', 'key-1'],
    ['reasoning_effort', 'low'],
    ['verbosity', 'low'],
    ['modalities', ['text']],
    ['some_future_field', { nested: [1, 2, 3] }],
  ])('accepts %s and leaves it out of the request', (field, value) => {
    expect(ok({ [field]: value })).toEqual(DEFAULT_REQUEST);
  });

  it('accepts unknown fields on messages, parts and tools and leaves them out', () => {
    const request = ok({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache: 1 }], extra: true }],
      tools: [{ ...TOOL, extra: 1, function: { ...TOOL.function, strict: true, extra: 2 } }],
    });
    expect(request.messages).toEqual([{ role: 'user', content: 'hi' }]);
    expect(request.tools).toEqual([TOOL]);
  });
});

describe('parseChatRequest: unsupported fields', () => {
  it.each<[string, Body, string]>([
    ['audio output', { audio: { voice: 'alloy', format: 'mp3' } }, 'audio'],
    ['audio even when false', { audio: false }, 'audio'],
    ['prediction', { prediction: { type: 'content', content: 'x' } }, 'prediction'],
    ['web_search_options', { web_search_options: {} }, 'web_search_options'],
    ['functions', { functions: [{ name: 'f', parameters: {} }] }, 'functions'],
    ['function_call', { function_call: 'auto' }, 'function_call'],
    ['an audio modality', { modalities: ['text', 'audio'] }, 'modalities[1]'],
    ['audio as the only modality', { modalities: ['audio'] }, 'modalities[0]'],
    [
      'an allowed_tools tool_choice',
      { tool_choice: { type: 'allowed_tools' } },
      'tool_choice.type',
    ],
    [
      'a custom tool_choice',
      { tool_choice: { type: 'custom', custom: { name: 'x' } } },
      'tool_choice.type',
    ],
    ['a custom tool', { tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0].type'],
    [
      'an image_url part in a system message (only the user sends images)',
      {
        messages: [
          { role: 'system', content: [{ type: 'image_url', image_url: { url: 'data:,' } }] },
          { role: 'user', content: 'hi' },
        ],
      },
      'messages[0].content[0].type',
    ],
    [
      'an input_audio part in a user message',
      {
        messages: [
          {
            role: 'user',
            content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }],
          },
        ],
      },
      'messages[0].content[0].type',
    ],
    [
      'a file part in a user message',
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f1' } }] }] },
      'messages[0].content[0].type',
    ],
    [
      'a refusal part in an assistant message',
      { messages: [{ role: 'assistant', content: [{ type: 'refusal', refusal: 'no' }] }, USER] },
      'messages[0].content[0].type',
    ],
    [
      'the deprecated function role',
      { messages: [{ role: 'function', name: 'f', content: '{}' }, USER] },
      'messages[0].role',
    ],
    [
      'an assistant function_call',
      {
        messages: [
          { role: 'assistant', content: 'x', function_call: { name: 'f', arguments: '{}' } },
          USER,
        ],
      },
      'messages[0].function_call',
    ],
    [
      'assistant audio',
      { messages: [{ role: 'assistant', content: 'x', audio: { id: 'a1' } }, USER] },
      'messages[0].audio',
    ],
  ])('rejects %s as unsupported_parameter naming its path', (_, extra, param) => {
    rejects(body(extra), 'unsupported_parameter', param);
  });

  it.each(['audio', 'prediction', 'web_search_options', 'functions', 'function_call'])(
    'accepts %s: null as absent',
    (field) => {
      expect(ok({ [field]: null })).toEqual(DEFAULT_REQUEST);
    },
  );

  it('accepts null audio and function_call on an assistant message', () => {
    const request = parseChatRequest(
      chat({ role: 'assistant', content: 'x', audio: null, function_call: null }, USER),
    );
    expect(request.messages[0]).toEqual({ role: 'assistant', content: 'x' });
  });
});

describe('parseChatRequest: param paths inside messages', () => {
  it.each<[string, unknown[], ErrorCode, string]>([
    [
      'an unknown role',
      [USER, { role: 'assistant', content: 'x' }, { role: 'robot', content: 'x' }],
      'invalid_value',
      'messages[2].role',
    ],
    ['a message without a role', [{ content: 'hi' }], 'missing_field', 'messages[0].role'],
    ['a numeric role', [{ role: 1, content: 'hi' }], 'invalid_type', 'messages[0].role'],
    [
      'a numeric content',
      [USER, { role: 'user', content: 5 }],
      'invalid_type',
      'messages[1].content',
    ],
    [
      'a user message with null content',
      [{ role: 'user', content: null }],
      'missing_field',
      'messages[0].content',
    ],
    ['a user message without content', [{ role: 'user' }], 'missing_field', 'messages[0].content'],
    [
      'a system message with null content',
      [{ role: 'system', content: null }, USER],
      'missing_field',
      'messages[0].content',
    ],
    [
      'a text part whose text is a number',
      [{ role: 'user', content: [{ type: 'text', text: 5 }] }],
      'invalid_type',
      'messages[0].content[0].text',
    ],
    [
      'a text part without text',
      [{ role: 'user', content: [{ type: 'text' }] }],
      'missing_field',
      'messages[0].content[0].text',
    ],
    [
      'a content part of an unknown type',
      [{ role: 'user', content: [{ type: 'video' }] }],
      'invalid_value',
      'messages[0].content[0].type',
    ],
    [
      'a content part that is a string',
      [{ role: 'user', content: ['hi'] }],
      'invalid_type',
      'messages[0].content[0]',
    ],
    [
      'a tool message without tool_call_id',
      [
        { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
        { role: 'tool', content: '42' },
        USER,
      ],
      'missing_field',
      'messages[1].tool_call_id',
    ],
    ['a message that is a string', ['hi'], 'invalid_type', 'messages[0]'],
    ['a message that is null', [null], 'invalid_type', 'messages[0]'],
    [
      'a numeric name',
      [{ role: 'user', content: 'hi', name: 7 }],
      'invalid_type',
      'messages[0].name',
    ],
    [
      'tool_calls that are an object',
      [{ role: 'assistant', content: 'x', tool_calls: {} }, USER],
      'invalid_type',
      'messages[0].tool_calls',
    ],
    [
      'a tool call without an id',
      [{ role: 'assistant', content: null, tool_calls: [{ ...TOOL_CALL, id: undefined }] }, USER],
      'missing_field',
      'messages[0].tool_calls[0].id',
    ],
    [
      'a tool call with numeric arguments',
      [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ ...TOOL_CALL, function: { name: 'f', arguments: 1 } }],
        },
        USER,
      ],
      'invalid_type',
      'messages[0].tool_calls[0].function.arguments',
    ],
  ])('rejects %s (%j) as %s naming %s', (_, messages, code, param) => {
    rejects(chat(...messages), code, param);
  });
});

describe('parseChatRequest: rules across fields', () => {
  it.each<[string, Body]>([
    ['without stream', { stream_options: { include_usage: true } }],
    ['with stream false', { stream: false, stream_options: { include_usage: true } }],
  ])('rejects stream_options %s as invalid_value naming stream_options', (_, extra) => {
    rejects(body(extra), 'invalid_value', 'stream_options');
  });

  it('accepts stream_options: null without stream', () => {
    expect(ok({ stream_options: null })).toEqual(DEFAULT_REQUEST);
  });

  it.each<[string, Body]>([
    ['without logprobs', { top_logprobs: 2 }],
    ['with logprobs false', { logprobs: false, top_logprobs: 2 }],
  ])('rejects top_logprobs %s as invalid_value naming top_logprobs', (_, extra) => {
    rejects(body(extra), 'invalid_value', 'top_logprobs');
  });

  it('accepts top_logprobs: null without logprobs', () => {
    expect(ok({ top_logprobs: null })).toEqual(DEFAULT_REQUEST);
  });

  it.each<[string, unknown[]]>([
    ['an assistant', [USER, { role: 'assistant', content: 'hello' }]],
    ['only a system', [{ role: 'system', content: 'be brief' }]],
    [
      'an assistant and then a system',
      [USER, { role: 'assistant', content: 'a' }, { role: 'system', content: 's' }],
    ],
  ])(
    'rejects a conversation that ends with %s message as invalid_value naming messages',
    (_, messages) => {
      rejects(chat(...messages), 'invalid_value', 'messages');
    },
  );

  it.each(['system', 'developer'])(
    'accepts a %s message after the last user message, since it moves to the front',
    (role) => {
      const request = parseChatRequest(chat(USER, { role, content: 'be brief' }));
      expect(request.messages).toEqual([
        { role: 'system', content: 'be brief' },
        { role: 'user', content: USER.content },
      ]);
    },
  );

  const toolLast = [
    USER,
    { role: 'assistant', content: null, tool_calls: [TOOL_CALL] },
    { role: 'tool', content: '12°C', tool_call_id: 'call_1' },
  ];

  it('accepts a tool message last when tools are given', () => {
    const request = parseChatRequest(body({ messages: toolLast, tools: [TOOL] }));
    expect(request.messages.at(-1)).toEqual({
      role: 'tool',
      content: '12°C',
      tool_call_id: 'call_1',
    });
  });

  it('accepts a tool message last without tools after the call it answers (the final answer)', () => {
    const request = parseChatRequest(body({ messages: toolLast }));
    expect(request.messages.at(-1)?.role).toBe('tool');
  });

  const strayTool = [USER, { role: 'tool', content: '12°C', tool_call_id: 'call_1' }];
  it.each<[string, Body]>([
    ['without tools', {}],
    ['with tools: null', { tools: null }],
    ['with an empty tools list', { tools: [] }],
  ])(
    'rejects a tool message last that answers no call %s as invalid_value naming messages',
    (_, extra) => {
      rejects(body({ messages: strayTool, ...extra }), 'invalid_value', 'messages');
    },
  );

  it.each<[string, Body]>([
    ['no content and no tool_calls', { role: 'assistant' }],
    ['null content and null tool_calls', { role: 'assistant', content: null, tool_calls: null }],
    [
      'null content and an empty tool_calls list',
      { role: 'assistant', content: null, tool_calls: [] },
    ],
  ])('rejects an assistant message with %s as invalid_value naming its content', (_, assistant) => {
    rejects(
      chat(USER, { role: 'user', content: 'q' }, assistant, USER),
      'invalid_value',
      'messages[2].content',
    );
  });

  it("reports a message's own field before an assistant-last conversation", () => {
    rejects(
      chat({ role: 'user', content: 5 }, { role: 'assistant', content: 'x' }),
      'invalid_type',
      'messages[0].content',
    );
  });

  it('reports an assistant message without content before an assistant-last conversation', () => {
    rejects(chat(USER, { role: 'assistant' }), 'invalid_value', 'messages[1].content');
  });

  it('reports a bad field before stream_options without stream', () => {
    rejects(body({ temperature: 3, stream_options: {} }), 'invalid_value', 'temperature');
  });
});

describe('parseChatRequest: message normalisation', () => {
  it('joins system parts with one space and text parts with a line break', () => {
    expect(SYSTEM_SEPARATOR).toBe(' ');
    expect(PART_SEPARATOR).toBe('\n');
  });

  it('merges system and developer messages, in order, into one system message placed first', () => {
    const request = parseChatRequest(
      chat(
        { role: 'user', content: 'u1' },
        { role: 'system', content: 'A' },
        { role: 'assistant', content: 'a1' },
        { role: 'developer', content: 'B' },
        { role: 'user', content: 'u2' },
        {
          role: 'system',
          content: [
            { type: 'text', text: 'C1' },
            { type: 'text', text: 'C2' },
          ],
        },
        { role: 'user', content: 'u3' },
      ),
    );
    expect(request.messages).toEqual([
      { role: 'system', content: `A B C1${PART_SEPARATOR}C2` },
      { role: 'user', content: 'u1' },
      { role: 'assistant', content: 'a1' },
      { role: 'user', content: 'u2' },
      { role: 'user', content: 'u3' },
    ]);
  });

  it('adds no system message when there is none', () => {
    const request = parseChatRequest(
      chat({ role: 'user', content: 'a' }, { role: 'user', content: 'b' }),
    );
    expect(request.messages.map((m) => m.role)).toEqual(['user', 'user']);
  });

  it('joins the text parts of a message with PART_SEPARATOR', () => {
    const request = parseChatRequest(
      chat({
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'three' },
        ],
      }),
    );
    expect(request.messages).toEqual([{ role: 'user', content: 'one\ntwo\nthree' }]);
  });

  it('turns empty parts into an empty content', () => {
    const request = parseChatRequest(chat({ role: 'system', content: [] }, USER));
    expect(request.messages[0]).toEqual({ role: 'system', content: '' });
  });

  it('turns null assistant content with tool_calls into "" and keeps the tool calls', () => {
    const request = parseChatRequest(
      body({
        messages: [
          USER,
          { role: 'assistant', content: null, tool_calls: [{ ...TOOL_CALL, extra: 1 }] },
          {
            role: 'tool',
            content: [
              { type: 'text', text: '12' },
              { type: 'text', text: '°C' },
            ],
            tool_call_id: 'call_1',
          },
        ],
        tools: [TOOL],
      }),
    );
    expect(request.messages.slice(1)).toEqual([
      { role: 'assistant', content: '', tool_calls: [TOOL_CALL] },
      { role: 'tool', content: '12\n°C', tool_call_id: 'call_1' },
    ]);
  });

  it('drops the name of user and assistant messages, which no template has a place for', () => {
    const request = parseChatRequest(
      chat(
        { role: 'user', content: 'q', name: 'alice' },
        { role: 'assistant', content: 'a', name: 'bot' },
        { role: 'user', content: 'hi', name: null },
      ),
    );
    expect(request.messages).toEqual([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('replaces lone surrogates in content with U+FFFD', () => {
    const request = parseChatRequest(
      chat(
        { role: 'system', content: 'sys\uDC00' },
        { role: 'assistant', content: 'x\uD800y' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a\uD83D' },
            { type: 'text', text: '\uDE00b' },
          ],
        },
      ),
    );
    expect(request.messages).toEqual([
      { role: 'system', content: 'sys\uFFFD' },
      { role: 'assistant', content: 'x\uFFFDy' },
      // A pair split across two parts is two lone surrogates once the parts are joined.
      { role: 'user', content: 'a\uFFFD\n\uFFFDb' },
    ]);
  });

  it('replaces lone surrogates in stop strings with U+FFFD', () => {
    expect(ok({ stop: '\uD800' }).stop).toEqual(['\uFFFD']);
    expect(ok({ stop: ['ok', 'a\uDFFFb'] }).stop).toEqual(['ok', 'a\uFFFDb']);
  });

  it('leaves well-formed astral characters untouched', () => {
    const request = parseChatRequest(
      body({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'hi 😀' },
              { type: 'text', text: '𝄞' },
            ],
          },
        ],
        stop: ['🛑'],
      }),
    );
    expect(request.messages).toEqual([{ role: 'user', content: 'hi 😀\n𝄞' }]);
    expect(request.stop).toEqual(['🛑']);
  });

  it('keeps a json_schema response_format with its schema', () => {
    const jsonSchema = {
      name: 'weather',
      description: 'A forecast',
      schema: { type: 'object', properties: { temp: { type: 'number' } }, required: ['temp'] },
      strict: true,
    };
    expect(
      ok({ response_format: { type: 'json_schema', json_schema: jsonSchema } }).response_format,
    ).toEqual({
      type: 'json_schema',
      json_schema: jsonSchema,
    });
  });

  it('keeps a json_schema response_format with only a name', () => {
    expect(
      ok({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: null } } })
        .response_format,
    ).toEqual({ type: 'json_schema', json_schema: { name: 'n' } });
  });

  it('keeps tools with name, description and parameters', () => {
    const tool = {
      type: 'function',
      function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object' } },
    };
    expect(ok({ tools: [tool] }).tools).toEqual([tool]);
  });

  it('keeps a named tool_choice', () => {
    const choice = { type: 'function', function: { name: 'get_weather' } };
    expect(ok({ tools: [TOOL], tool_choice: choice }).tool_choice).toEqual(choice);
  });
});

describe('parseChatRequest: error messages', () => {
  it.each<[string, unknown, string]>([
    ['a missing field', { messages: [USER] }, 'model'],
    ['a wrong type', body({ temperature: 'hot' }), 'temperature'],
    ['a value out of range', body({ top_p: 2 }), 'top_p'],
    ['a nested role', chat(USER, USER, { role: 'robot', content: 'x' }), 'messages[2].role'],
    [
      'an unsupported part',
      chat({ role: 'user', content: [{ type: 'file' }] }),
      'messages[0].content[0].type',
    ],
    ['a rule across fields', body({ stream_options: {} }), 'stream_options'],
  ])('names the param of %s in a 400 OpenAIError', (_, input, param) => {
    const err = errorOf(input);
    expect(err).toBeInstanceOf(OpenAIError);
    expect(err.status).toBe(400);
    expect(err.param).toBe(param);
    expect(err.message).toContain(param);
  });
});

describe('parseChatRequest: values passed through to engines', () => {
  it('replaces lone surrogates in tool calls, tool results and tool schemas', () => {
    const request = parseChatRequest(
      body({
        messages: [
          { role: 'user', content: 'x', name: 'a\uD800' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'c\uDC00',
                type: 'function',
                function: { name: 'f', arguments: '{"a":"\uD800"}' },
              },
            ],
          },
          { role: 'tool', content: 'r', tool_call_id: 'c\uDC00' },
        ],
        tools: [
          {
            type: 'function',
            function: { name: 'f', description: 'd\uD800', parameters: { p: ['\uDC00'] } },
          },
        ],
      }),
    );
    expect(JSON.stringify(request)).not.toMatch(/\\ud[89a-f]/i);
    expect(request.messages[1]?.tool_calls?.[0]?.function.arguments).toBe('{"a":"\uFFFD"}');
    expect(request.messages[2]?.tool_call_id).toBe('c\uFFFD');
    expect(request.tools?.[0]?.function).toEqual({
      name: 'f',
      description: 'd\uFFFD',
      parameters: { p: ['\uFFFD'] },
    });
  });

  it('refuses tool parameters nested deeper than the engines take, naming them', () => {
    let deep: unknown = {};
    for (let i = 0; i < 200; i += 1) deep = { a: deep };
    rejects(
      body({ tools: [{ type: 'function', function: { name: 'f', parameters: deep } }] }),
      'invalid_value',
      'tools[0].function.parameters',
    );
    rejects(
      body({ response_format: { type: 'json_schema', json_schema: { name: 'n', schema: deep } } }),
      'invalid_value',
      'response_format.json_schema.schema',
    );
  });
});
