/**
 * What each engine can honour, decided in the API (src/models/models.ts) before any engine sees the request: a field
 * an engine cannot honour is 400 unsupported_parameter, never dropped.
 */
import { describe, expect, it } from 'vitest';
import {
  catalogEntry,
  catalogModelInfo,
  ggufEntry,
  LLAMA_MAX_CONTEXT,
} from '../../../src/models/catalog';
import { OpenAIError } from '../../../src/protocol/errors';
import { assertCapabilities, ECHO_MODEL, type ModelInfo } from '../../../src/models/models';
import { parseChatRequest } from '../../../src/protocol/validate';

const GGUF = catalogModelInfo(
  ggufEntry(
    { id: 'acme/tools-GGUF:Q4_K_M', files: ['https://m.example/t.gguf'], tools: true },
    'curated',
  ),
);
const WEBLLM = catalogModelInfo(
  catalogEntry(
    {
      model: 'https://m.example/w',
      model_id: 'w-q4f32_1-MLC',
      model_lib: 'https://m.example/w.wasm',
    },
    { owner: 'mlc-ai', source: 'prebuilt', tools: true },
  ),
);
const TOOLS = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];

/** The error `assertCapabilities` throws for `extra` on `model`, or null. */
function refusal(model: ModelInfo, extra: Record<string, unknown>) {
  const request = parseChatRequest({
    model: model.id,
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });
  try {
    assertCapabilities(request, model);
    return null;
  } catch (err) {
    return (err as OpenAIError).toBody().error;
  }
}

describe('capabilities per engine', () => {
  it('refuses tool_choice "required" on both engines: neither forces a call', () => {
    for (const model of [GGUF, WEBLLM]) {
      expect(refusal(model, { tools: TOOLS, tool_choice: 'required' })).toMatchObject({
        code: 'unsupported_parameter',
        param: 'tool_choice',
      });
      expect(refusal(model, { tools: TOOLS, tool_choice: 'none' })).toBeNull();
    }
  });

  it('refuses a tool_choice naming a function on both engines', () => {
    const named = { type: 'function', function: { name: 'f' } };
    for (const model of [GGUF, WEBLLM]) {
      expect(refusal(model, { tools: TOOLS, tool_choice: named })).toMatchObject({
        code: 'unsupported_parameter',
        param: 'tool_choice',
      });
    }
  });

  it('refuses logprobs together with tools on llama.cpp, and takes each alone', () => {
    expect(refusal(GGUF, { tools: TOOLS, logprobs: true })).toMatchObject({
      code: 'unsupported_parameter',
      param: 'logprobs',
    });
    expect(refusal(GGUF, { tools: TOOLS })).toBeNull();
    expect(refusal(GGUF, { logprobs: true, top_logprobs: 2 })).toBeNull();
  });

  it('gives both engines n up to 8 without stream, and every response format', () => {
    for (const model of [GGUF, WEBLLM]) {
      expect(refusal(model, { n: 8 })).toBeNull();
      expect(refusal(model, { n: 9 })).toMatchObject({ param: 'n' });
      expect(refusal(model, { n: 2, stream: true })).toMatchObject({ param: 'n' });
      expect(refusal(model, { response_format: { type: 'json_object' } })).toBeNull();
    }
  });

  it('keeps the echo engine to what it honours', () => {
    expect(refusal(ECHO_MODEL, { logprobs: true })).toMatchObject({ param: 'logprobs' });
    // It takes tools under `auto` and `none` (it calls them when a `/call` message asks).
    expect(refusal(ECHO_MODEL, { tools: TOOLS })).toBeNull();
    expect(refusal(ECHO_MODEL, { tools: TOOLS, tool_choice: 'required' })).toMatchObject({
      param: 'tool_choice',
    });
  });

  it('says a GGUF’s context is what llama.cpp is loaded with, at most the cap', () => {
    const big = ggufEntry(
      { id: 'acme/big-GGUF:Q4_K_M', files: ['https://m.example/b.gguf'], context_window: 131_072 },
      'curated',
    );
    expect(catalogModelInfo(big).context_window).toBe(LLAMA_MAX_CONTEXT);
    expect(GGUF.context_window).toBe(4096);
  });
});
