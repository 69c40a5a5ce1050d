/**
 * @module
 * From the API to WebLLM 0.2.86, as a pure function: a `ChatRequest` becomes WebLLM's request
 * (docs/api.md, Request fields and What WebLLM honours, with WebLLM's quirks worked around: no
 * `name`, tool calls only as content, no `json_schema` type, a top-p above 0). The way back is in
 * ./webllm-chunks.ts (its stream) and ./webllm-errors.ts (its errors); the quirks are held by
 * tests/unit/engines/webllm.
 */
import { base64Bytes } from '../../protocol/vectors';
import type { ChatMessage, ChatRequest, MessagePart } from '../../protocol/types';
import { webllmSeed } from '../seeds';

/** A part of a message with images, as WebLLM's vision-language models take it. */
export type WebLLMContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** A message as WebLLM takes it: no `name` (WebLLM would write it in place of the role). */
export interface WebLLMMessage {
  role: ChatMessage['role'];
  /** Parts only for a user message with images, which only a vision-language model is sent. */
  content: string | WebLLMContentPart[];
  tool_call_id?: string;
}

/** WebLLM's `ChatCompletionRequest`, the fields Hearth sets. */
export interface WebLLMRequest {
  model: string;
  /** One system message first, strings only; a fresh copy per call, as WebLLM mutates it. */
  messages: WebLLMMessage[];
  stream: true;
  stream_options: { include_usage: boolean };
  max_tokens?: number;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  repetition_penalty?: number;
  ignore_eos?: boolean;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  /** WebLLM knows no `json_schema` type: a schema string under `json_object`. */
  response_format?: { type: 'json_object'; schema: string };
  tools?: {
    type: 'function';
    function: { name: string; description?: string; parameters?: object };
  }[];
  extra_body?: { enable_thinking?: boolean };
}

/** What the mapping needs to know of the model. */
export interface MappedModel {
  /** The model id WebLLM was given (its `model_id` in the app config). */
  webllmId: string;
  /** It thinks aloud (`<think>…</think>`). */
  reasoning: boolean;
}

/** The schema `json_object` stands for: any JSON object (a bare `{}` would allow any value). */
const ANY_OBJECT = '{"type":"object"}';

/**
 * An earlier assistant turn's tool calls, written into its content as WebLLM's function-calling
 * models emit them (a JSON array of `{name, arguments}`): WebLLM reads only an assistant turn's
 * `content`, never its `tool_calls`.
 */
function callsAsContent(message: ChatMessage): string {
  const calls = (message.tool_calls ?? []).map((call) => {
    let args: unknown = call.function.arguments;
    try {
      args = JSON.parse(call.function.arguments);
    } catch {
      // Arguments that are not JSON stay the string the caller sent.
    }
    return { name: call.function.name, arguments: args };
  });
  const text = JSON.stringify(calls);
  return message.content === '' ? text : `${message.content}\n${text}`;
}

/**
 * A message's images as WebLLM takes them: its text as one part (WebLLM refuses a second), then
 * each image as a `data:` URL of the file it was sent as (WebLLM reads nothing else but `http`
 * URLs, and knows no `detail`). The images were read before the queue (api/images.ts;
 * docs/architecture.md, Invariants: an image is read before the queue).
 */
function toWebLLMParts(message: ChatMessage, parts: readonly MessagePart[]): WebLLMContentPart[] {
  const images = parts.flatMap((part): WebLLMContentPart[] => {
    if (part.type === 'text') return [];
    if (!('bytes' in part.source)) throw new Error(`${part.param} reached WebLLM unread`);
    const { type, bytes } = part.source;
    return [{ type: 'image_url', image_url: { url: `data:${type};base64,${base64Bytes(bytes)}` } }];
  });
  return message.content === '' ? images : [{ type: 'text', text: message.content }, ...images];
}

function toWebLLMMessage(message: ChatMessage): WebLLMMessage {
  if (message.parts) return { role: message.role, content: toWebLLMParts(message, message.parts) };
  const content = message.tool_calls?.length ? callsAsContent(message) : message.content;
  return message.role === 'tool' && message.tool_call_id !== undefined
    ? { role: 'tool', content, tool_call_id: message.tool_call_id }
    : { role: message.role, content };
}

/**
 * WebLLM's top-p must be above 0 (docs/api.md, What WebLLM honours); a top-p of 0 means "the most
 * likely token only", which this tiny nucleus keeps.
 */
const SMALLEST_TOP_P = 1e-6;

/** The request WebLLM gets for `request`: built anew for every call, since WebLLM mutates it. */
export function toWebLLMRequest(request: ChatRequest, model: MappedModel): WebLLMRequest {
  const out: WebLLMRequest = {
    model: model.webllmId,
    messages: request.messages.map(toWebLLMMessage),
    // Always a stream, so that tokens flow and a request can be stopped (several choices are
    // several streams, one after another).
    stream: true,
    stream_options: { include_usage: true },
  };
  const copied = [
    'max_tokens',
    'temperature',
    'frequency_penalty',
    'presence_penalty',
    'repetition_penalty',
    'ignore_eos',
  ] as const;
  for (const key of copied) {
    if (request[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = request[key];
  }
  if (request.seed !== undefined) out.seed = webllmSeed(request.seed);
  if (request.top_p !== undefined) out.top_p = Math.max(request.top_p, SMALLEST_TOP_P);
  if (request.logit_bias) out.logit_bias = { ...request.logit_bias };
  if (request.logprobs) {
    out.logprobs = true;
    // WebLLM makes no logprob entry at all unless `top_logprobs` > 0 (0.2.86,
    // `sampleFromRawLogits`): ask for one and trim to what the caller asked for.
    out.top_logprobs = Math.max(1, request.top_logprobs ?? 0);
  }
  // Only a reasoning model has thinking to turn off: WebLLM would write an empty think block
  // into any other model's reply.
  if (request.enable_thinking !== undefined && model.reasoning) {
    out.extra_body = { enable_thinking: request.enable_thinking };
  }
  const format = request.response_format;
  if (format?.type === 'json_object')
    out.response_format = { type: 'json_object', schema: ANY_OBJECT };
  if (format?.type === 'json_schema') {
    const schema = format.json_schema.schema;
    out.response_format = {
      type: 'json_object',
      schema: schema ? JSON.stringify(schema) : ANY_OBJECT,
    };
  }
  // WebLLM ignores `tool_choice`; "none" is honoured by not offering the tools at all.
  if (request.tools?.length && request.tool_choice !== 'none') {
    out.tools = request.tools.map((t) => ({ type: 'function', function: { ...t.function } }));
  }
  // With tools, WebLLM forces the whole reply to be a JSON array of calls: a stop string can
  // only cut that JSON short, which WebLLM then fails to parse (`ToolCallOutputParseError`).
  // Stop strings apply to text, and a reply to offered tools has none.
  if (request.stop && !out.tools) out.stop = [...request.stop];
  return out;
}
