/**
 * @module
 * Between the API and llama.cpp's llama-server (in wllama 3.13), both ways, as pure functions: a
 * `ChatRequest` becomes llama-server's chat request (DESIGN §3's field table; what llama.cpp
 * cannot honour was refused in src/api before this), its stream chunks become engine outputs
 * (content and reasoning deltas, tool-call deltas assembled by index, logprobs, usage and speed),
 * and its errors become API errors. Facts measured: ../../../shared/notes/wllama-3.13.md.
 */
import type { SpeedFigures } from '../../protocol/host/backend';
import { OpenAIError } from '../../protocol/errors';
import type {
  ChatMessage,
  ChatRequest,
  FinishReason,
  TokenLogprob,
  TopLogprob,
  ToolCall,
} from '../../protocol/types';
import type { EngineOutput } from '../engine';
import { PROGRESS_EVERY_MS } from '../engine-outputs';

/** A message as llama-server takes it: OpenAI's shape, tool calls and results included. */
export interface LlamaMessage {
  role: ChatMessage['role'];
  /** Null for an assistant turn that only called tools, as OpenAI sends it. */
  content: string | null;
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

/** A logprob entry as llama-server writes it (with token ids OpenAI has not). */
interface LlamaLogprob {
  id?: number;
  token: string;
  logprob: number;
  bytes: number[] | null;
  top_logprobs?: Omit<LlamaLogprob, 'top_logprobs'>[];
}

/** A tool-call delta: the first of a call carries its id and name, later ones its arguments. */
interface LlamaToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

/** llama-server's timings, on the last chunks of a reply. */
export interface LlamaTimings {
  prompt_n?: number;
  prompt_ms?: number;
  prompt_per_second?: number;
  predicted_n?: number;
  predicted_ms?: number;
  predicted_per_second?: number;
}

/** One chunk of llama-server's stream. */
export interface LlamaChunk {
  choices: {
    index: number;
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: LlamaToolCallDelta[];
    };
    finish_reason: string | null;
    logprobs?: { content: LlamaLogprob[] | null } | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
  timings?: LlamaTimings;
  /** With `return_progress`: how far the prefill is (llama-server sends one per batch). */
  prompt_progress?: { total: number; cache: number; processed: number; time_ms: number };
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

function toLlamaMessage(message: ChatMessage): LlamaMessage {
  const calls = message.tool_calls?.length ? message.tool_calls : undefined;
  const out: LlamaMessage = {
    role: message.role,
    content: calls && message.content === '' ? null : message.content,
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

/** A llama-server logprob entry as OpenAI's, with `top` alternatives. */
function toLogprob(entry: LlamaLogprob, top: number): TokenLogprob {
  const plain = (e: Omit<LlamaLogprob, 'top_logprobs'>): TopLogprob => ({
    token: e.token,
    logprob: e.logprob,
    bytes: e.bytes,
  });
  return { ...plain(entry), top_logprobs: (entry.top_logprobs ?? []).slice(0, top).map(plain) };
}

/** llama-server's finish reason as OpenAI's (`content_filter` never comes from llama.cpp). */
export function llamaFinishReason(reason: string | null | undefined): FinishReason {
  return reason === 'length' || reason === 'tool_calls' ? reason : 'stop';
}

/** llama.cpp's timings as speed figures, or nothing when it gave none. */
export function speedOf(timings: LlamaTimings | undefined): SpeedFigures | undefined {
  if (!timings) return undefined;
  const finite = (x: number | undefined) => (typeof x === 'number' && Number.isFinite(x) ? x : 0);
  return {
    prefill_tokens_per_s: finite(timings.prompt_per_second),
    decode_tokens_per_s: finite(timings.predicted_per_second),
    time_to_first_token_s: finite(timings.prompt_ms) / 1000,
  };
}

/** Whether a call's arguments are complete: JSON, or nothing at all. */
function isWholeJson(text: string): boolean {
  if (text.trim() === '') return true;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A fresh tool-call id, for a call llama-server gave none. */
function callId(): string {
  return `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

/**
 * Reads one llama-server stream into engine outputs: each content or reasoning delta is a token
 * (with the logprob entries of the same chunk), tool-call deltas are put together by index and
 * come out whole before the end, and the end carries llama.cpp's own token counts and timings.
 */
export class LlamaChunkReader {
  readonly #top: number | undefined;
  readonly #calls: { id: string; name: string; arguments: string }[] = [];
  #finish: string | null = null;
  #usage: { prompt_tokens: number; completion_tokens: number } | undefined;
  #timings: LlamaTimings | undefined;
  #tokens = 0;
  #lastSign = Date.now();

  /** `topLogprobs`: the alternatives the caller asked for, when it asked for logprobs. */
  constructor(options: { topLogprobs?: number } = {}) {
    this.#top = options.topLogprobs;
  }

  /** The outputs one chunk makes. */
  read(chunk: LlamaChunk): EngineOutput[] {
    if (chunk.usage) this.#usage = chunk.usage;
    if (chunk.timings) this.#timings = chunk.timings;
    const choice = chunk.choices[0];
    if (!choice) return chunk.prompt_progress ? this.#sign() : [];
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    const { delta } = choice;
    for (const call of delta.tool_calls ?? []) this.#toolCall(call);
    const entries = this.#top === undefined ? undefined : choice.logprobs?.content;
    const logprobs = entries?.length ? entries.map((e) => toLogprob(e, this.#top ?? 0)) : undefined;
    const outputs: EngineOutput[] = [];
    const reasoning = delta.reasoning_content ?? '';
    const content = delta.content ?? '';
    if (reasoning !== '') outputs.push({ type: 'token', text: reasoning, reasoning: true });
    if (content !== '' || (logprobs && outputs.length === 0)) {
      outputs.push({ type: 'token', text: content });
    }
    // Logprobs belong to the chunk's token: they ride with its first output.
    const first = outputs[0];
    if (logprobs && first?.type === 'token') first.logprobs = logprobs;
    this.#tokens += outputs.length;
    if (outputs.length > 0) this.#lastSign = Date.now();
    // A call goes out only whole: while one is written, the work itself is the sign of life.
    else if (chunk.prompt_progress || delta.tool_calls?.length) return this.#sign();
    return outputs;
  }

  /**
   * `progress` when the last sign of life is a second old, so that the first-token and stall
   * limits (src/api/chat-run.ts) go by llama.cpp's work (a long prefill, a long tool call),
   * not by the text it has released.
   */
  #sign(): EngineOutput[] {
    if (Date.now() - this.#lastSign < PROGRESS_EVERY_MS) return [];
    this.#lastSign = Date.now();
    return [{ type: 'progress' }];
  }

  #toolCall(delta: LlamaToolCallDelta): void {
    const call = (this.#calls[delta.index] ??= { id: '', name: '', arguments: '' });
    if (delta.id) call.id = delta.id;
    if (delta.function?.name) call.name += delta.function.name;
    if (delta.function?.arguments) call.arguments += delta.function.arguments;
  }

  /** The tool calls made so far, whole. */
  get toolCalls(): ToolCall[] {
    return this.#calls
      .filter((c) => c !== undefined)
      .map((c) => ({
        id: c.id || callId(),
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      }));
  }

  /** Whether llama-server sent its last chunk (a finish reason). */
  get finished(): boolean {
    return this.#finish !== null;
  }

  /**
   * Why the reply ended. `tool_calls` only for calls made whole: a call cut short by `max_tokens`
   * keeps llama.cpp's `length`, and one a stop string cut inside its arguments (llama.cpp 3.13
   * still says `tool_calls`) is `stop`. Arguments are whole when they are JSON, or empty (a
   * function without parameters).
   */
  #finishReason(calls: ToolCall[]): FinishReason {
    const reason = llamaFinishReason(this.#finish);
    if (calls.length === 0 || reason === 'length') return reason;
    return calls.every((c) => isWholeJson(c.function.arguments)) ? 'tool_calls' : 'stop';
  }

  /** The outputs that close the reply: the tool calls, then the end with usage and speed. */
  finish(): EngineOutput[] {
    const outputs: EngineOutput[] = [];
    const calls = this.toolCalls;
    if (calls.length > 0) outputs.push({ type: 'tool_calls', calls });
    const speed = speedOf(this.#timings);
    outputs.push({
      type: 'end',
      finish_reason: this.#finishReason(calls),
      usage: {
        prompt_tokens: this.#usage?.prompt_tokens ?? 0,
        // llama.cpp counts the end-of-generation token too; without usage, the tokens seen.
        completion_tokens: this.#usage?.completion_tokens ?? this.#tokens,
        ...(speed && { speed }),
      },
    });
    return outputs;
  }
}

/** What an error from wllama looks like: its name, message and, for a `WllamaError`, its type. */
export function errorParts(err: unknown): { name: string; message: string; type?: string } {
  if (err instanceof Error) {
    const type = (err as { type?: unknown }).type;
    return {
      name: err.name,
      message: err.message,
      ...(typeof type === 'string' && { type }),
    };
  }
  return { name: 'Error', message: String(err) };
}

/** "request (N tokens) exceeds the available context size (M tokens)". */
const CONTEXT_EXCEEDED =
  /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/;
/** The sampler could not take the grammar llama.cpp made for `response_format` or `tools`. */
const SAMPLER_FAILED = /^Failed to (?:initialize samplers|parse grammar)/;
/**
 * wllama 3.13 answers any request llama-server refuses while reading it (a schema it cannot turn
 * into a grammar, for one) with this, from a glue message it misreads; the model stays usable.
 */
const GLUE_MISREAD = /^Invalid typed array length/;

/** What the mapping needs to know of the request that failed. */
export interface FailedRequest {
  model: string;
  /** A chat request; absent for embeddings. */
  request?: ChatRequest;
}

/** A failure of llama.cpp's (through wllama), as the API's. */
export function fromLlamaError(err: unknown, { model, request }: FailedRequest): OpenAIError {
  if (err instanceof OpenAIError) return err;
  const { name, message, type } = errorParts(err);
  const context = CONTEXT_EXCEEDED.exec(message);
  if (context) {
    return new OpenAIError(
      'context_length_exceeded',
      `This model's context is ${context[2]} tokens, and the messages take ${context[1]}; shorten the conversation.`,
      { param: 'messages' },
    );
  }
  if (type === 'kv_cache_full') {
    return new OpenAIError(
      'context_length_exceeded',
      `The messages and the reply do not fit ${model}'s context: ${message}`,
      { param: 'messages' },
    );
  }
  if (request && SAMPLER_FAILED.test(message)) {
    const param = request.response_format ? 'response_format' : request.tools ? 'tools' : null;
    const what = param === 'tools' ? 'tool calls' : 'JSON';
    return new OpenAIError(
      'unsupported_parameter',
      `llama.cpp cannot constrain ${model}'s reply to ${what}: the grammar it made was refused (${message}). Models with a SentencePiece tokenizer meet this most.`,
      { param },
    );
  }
  if (request && name === 'RuntimeError' && GLUE_MISREAD.test(message)) {
    const schema = request.response_format?.type === 'json_schema';
    return schema
      ? new OpenAIError(
          'invalid_value',
          'llama.cpp could not turn this JSON schema into a grammar; simplify it (llama.cpp supports most of JSON Schema, not all).',
          { param: 'response_format.json_schema.schema' },
        )
      : new OpenAIError(
          'engine_error',
          `llama.cpp refused the request while reading it (${message}).`,
        );
  }
  return new OpenAIError('engine_error', `llama.cpp failed: ${type ?? name}: ${message}`);
}

/** Whether a failure leaves the wasm instance unusable, so the model must load again. */
export function isFatal(err: unknown): boolean {
  const { name, message } = errorParts(err);
  return name === 'RuntimeError' && !GLUE_MISREAD.test(message);
}

/** Token ids of `logit_bias` that are not in the model's vocabulary (llama.cpp drops them). */
export function unknownBiasTokens(request: ChatRequest, vocabSize: number): string[] {
  return Object.keys(request.logit_bias ?? {}).filter((id) => Number(id) >= vocabSize);
}
