/**
 * @module
 * From the API to llama.cpp's llama-server (in wllama 3.13), as pure functions: a `ChatRequest`
 * becomes llama-server's chat request (docs/api.md, Request fields and What llama.cpp honours; what
 * llama.cpp cannot honour was refused in src/api before this). The way back is in ./llama-chunks.ts
 * (its stream) and ./llama-errors.ts (its failures). What llama.cpp does with each field is
 * stated in docs/api.md (What llama.cpp honours) and held by tests/unit/engines/llama.
 */
import type { ChatMessage, ChatRequest, MessagePart, ToolCall } from '../../protocol/types';

/** A part of a message with images, as wllama takes it: the image as its file's bytes. */
export type LlamaContentPart =
  { type: 'text'; text: string } | { type: 'image'; data: ArrayBuffer };

/** A message as llama-server takes it: OpenAI's shape, tool calls and results included. */
export interface LlamaMessage {
  role: ChatMessage['role'];
  /**
   * Null for an assistant turn that only called tools, as OpenAI sends it; parts for a user
   * message with images (wllama hands each image to the projector by its place among them).
   */
  content: string | LlamaContentPart[] | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

/** llama-server's chat request, the fields Hearth sets (wllama's types lack some: cast). */
export interface LlamaRequest {
  messages: LlamaMessage[];
  stream: true;
  stream_options: { include_usage: true };
  max_tokens?: number;
  stop?: string[];
  temperature?: number;
  top_p?: number;
  /** llama.cpp's seed is a uint32, and its largest value means "random". */
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  /** llama.cpp's name for `repetition_penalty`. */
  repeat_penalty?: number;
  ignore_eos?: boolean;
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  response_format?:
    | { type: 'json_object'; schema: Record<string, unknown> }
    | {
        type: 'json_schema';
        json_schema: { name: string; schema?: Record<string, unknown>; strict?: boolean };
      };
  tools?: {
    type: 'function';
    function: { name: string; description?: string; parameters?: Record<string, unknown> };
  }[];
  tool_choice?: 'auto';
  chat_template_kwargs?: { enable_thinking: boolean };
  /** Chunks with `prompt_progress` during the prefill: the request's sign of life then. */
  return_progress: true;
}

const UINT32 = 2 ** 32;
/** `LLAMA_DEFAULT_SEED`: llama.cpp draws a random seed when it is given this one. */
const RANDOM_SEED = UINT32 - 1;

/**
 * A request's seed as llama.cpp's uint32: the same seed, the same stream. Seeds outside its range
 * wrap around, and the one value that would mean "random" takes its neighbour's.
 */
export function llamaSeed(seed: number): number {
  const wrapped = ((seed % UINT32) + UINT32) % UINT32;
  return wrapped === RANDOM_SEED ? RANDOM_SEED - 1 : wrapped;
}

/**
 * A message's parts as wllama takes them. Its images were read before the queue (api/images.ts);
 * wllama wants the file's bytes, not OpenAI's data URL, which it cannot load.
 */
function toLlamaParts(parts: readonly MessagePart[]): LlamaContentPart[] {
  return parts.map((part) => {
    if (part.type === 'text') return { type: 'text', text: part.text };
    if (!('bytes' in part.source)) throw new Error(`${part.param} reached llama.cpp unread`);
    const { bytes } = part.source;
    return {
      type: 'image',
      data: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    };
  });
}

function toLlamaMessage(message: ChatMessage): LlamaMessage {
  const calls = message.tool_calls?.length ? message.tool_calls : undefined;
  const out: LlamaMessage = {
    role: message.role,
    content: message.parts
      ? toLlamaParts(message.parts)
      : calls && message.content === ''
        ? null
        : message.content,
  };
  if (calls) out.tool_calls = calls.map((c) => ({ ...c, function: { ...c.function } }));
  if (message.tool_call_id !== undefined) out.tool_call_id = message.tool_call_id;
  return out;
}

/** The request llama-server gets for `request` (one choice: several are run one by one). */
export function toLlamaRequest(request: ChatRequest): LlamaRequest {
  const out: LlamaRequest = {
    messages: request.messages.map(toLlamaMessage),
    // Always a stream with usage: tokens flow, the request can be stopped, usage is counted by
    // llama.cpp's own tokenizer.
    stream: true,
    stream_options: { include_usage: true },
    return_progress: true,
  };
  const copied = [
    'max_tokens',
    'temperature',
    'top_p',
    'frequency_penalty',
    'presence_penalty',
    'ignore_eos',
  ] as const;
  for (const key of copied) {
    if (request[key] !== undefined) (out as unknown as Record<string, unknown>)[key] = request[key];
  }
  if (request.seed !== undefined) out.seed = llamaSeed(request.seed);
  if (request.repetition_penalty !== undefined) out.repeat_penalty = request.repetition_penalty;
  if (request.stop?.length) out.stop = [...request.stop];
  if (request.logit_bias) out.logit_bias = { ...request.logit_bias };
  if (request.logprobs) {
    out.logprobs = true;
    // llama-server makes no logprob entry at all when `top_logprobs` is 0: ask for one, and
    // trim to what the caller asked for.
    out.top_logprobs = Math.max(1, request.top_logprobs ?? 0);
  }
  const format = request.response_format;
  // `json_object` without a schema would allow any JSON value; OpenAI's means an object.
  if (format?.type === 'json_object') {
    out.response_format = { type: 'json_object', schema: { type: 'object' } };
  }
  if (format?.type === 'json_schema') {
    const { name, schema, strict } = format.json_schema;
    out.response_format = {
      type: 'json_schema',
      json_schema: {
        name,
        ...(schema && { schema: structuredClone(schema) }),
        ...(strict !== undefined && { strict }),
      },
    };
  }
  // "none" is honoured by not offering the tools: llama-server would still write them into the
  // prompt, and the model could answer with a call as text. "required" and a named function were
  // refused in src/api (llama-server reads a named one as "auto").
  if (request.tools?.length && request.tool_choice !== 'none') {
    out.tools = request.tools.map((t) => ({ type: 'function', function: { ...t.function } }));
    if (request.tool_choice === 'auto') out.tool_choice = 'auto';
  }
  // Templates that know the switch (Qwen3 and the like) honour it; others never think.
  if (request.enable_thinking !== undefined) {
    out.chat_template_kwargs = { enable_thinking: request.enable_thinking };
  }
  return out;
}

/** Token ids of `logit_bias` that are not in the model's vocabulary (llama.cpp drops them). */
export function unknownBiasTokens(request: ChatRequest, vocabSize: number): string[] {
  return Object.keys(request.logit_bias ?? {}).filter((id) => Number(id) >= vocabSize);
}
