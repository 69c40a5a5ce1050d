/**
 * @module
 * Between the API and WebLLM 0.2.86, both ways, as pure functions: a `ChatRequest` becomes
 * WebLLM's request (DESIGN §3's field table, with WebLLM's quirks worked around), WebLLM's chunks
 * become engine outputs whatever WebLLM emits (`abort` is no finish reason, tool calls arrive as
 * raw JSON text first, thinking is mixed into content), and its errors — objects or
 * `"Name: message"` strings — become API errors. Notes: ../../../shared/notes/webllm-0.2.86.md.
 */
import type { SpeedFigures } from '../../protocol/host/backend';
import { OpenAIError, type ErrorCode } from '../../protocol/errors';
import type {
  ChatMessage,
  ChatRequest,
  FinishReason,
  TokenLogprob,
  ToolCall,
} from '../../protocol/types';
import type { EngineOutput } from '../engine';
import { webllmSeed } from '../seeds';

/** A message as WebLLM takes it: no `name` (WebLLM would write it in place of the role). */
export interface WebLLMMessage {
  role: ChatMessage['role'];
  content: string;
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
  /** WebLLM knows no `json_schema` type: a schema string under `json_object` (notes §3.3). */
  response_format?: { type: 'json_object'; schema: string };
  tools?: {
    type: 'function';
    function: { name: string; description?: string; parameters?: object };
  }[];
  extra_body?: { enable_thinking?: boolean };
}

/** WebLLM's finish reasons; `abort` follows `interruptGenerate()`. */
export type WebLLMFinishReason = FinishReason | 'abort';

/** WebLLM's usage, with its non-OpenAI `extra`. */
export interface WebLLMUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  extra?: {
    prefill_tokens_per_s?: number | null;
    decode_tokens_per_s?: number | null;
    time_to_first_token_s?: number | null;
  };
}

/** A tool call as WebLLM emits it (its id is always "0", or absent). */
interface WebLLMToolCall {
  id?: string;
  type?: 'function';
  function: { name: string; arguments: string };
}

/** WebLLM's `ChatCompletionChunk`. */
export interface WebLLMChunk {
  choices: {
    index: number;
    delta: {
      content?: string | null;
      role?: string;
      tool_calls?: (WebLLMToolCall & { index?: number })[];
    };
    finish_reason: WebLLMFinishReason | null;
    logprobs?: { content: TokenLogprob[] | null } | null;
  }[];
  usage?: WebLLMUsage;
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
 * models emit them (a JSON array of `{name, arguments}`): WebLLM reads only `content` (notes §3.2).
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

function toWebLLMMessage(message: ChatMessage): WebLLMMessage {
  const content = message.tool_calls?.length ? callsAsContent(message) : message.content;
  return message.role === 'tool' && message.tool_call_id !== undefined
    ? { role: 'tool', content, tool_call_id: message.tool_call_id }
    : { role: message.role, content };
}

/**
 * WebLLM's top-p must be above 0 (notes §3.1); a top-p of 0 means "the most likely token only",
 * which this tiny nucleus keeps.
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

/** WebLLM's logprob entries with as many alternatives as the caller asked for. */
export function trimLogprobs(entries: readonly TokenLogprob[], top: number): TokenLogprob[] {
  return entries.map((e) => ({ ...e, top_logprobs: e.top_logprobs.slice(0, top) }));
}

/** WebLLM's finish reason as OpenAI's: a generation it was told to stop simply stopped. */
export function finishReason(reason: WebLLMFinishReason | null | undefined): FinishReason {
  return reason === 'length' || reason === 'tool_calls' ? reason : 'stop';
}

/** WebLLM's speed figures, or nothing when it gave none (`Infinity` and `NaN` become 0). */
export function speedOf(usage: WebLLMUsage | undefined): SpeedFigures | undefined {
  const extra = usage?.extra;
  if (!extra) return undefined;
  const finite = (x: number | null | undefined) =>
    typeof x === 'number' && Number.isFinite(x) ? x : 0;
  return {
    prefill_tokens_per_s: finite(extra.prefill_tokens_per_s),
    decode_tokens_per_s: finite(extra.decode_tokens_per_s),
    time_to_first_token_s: finite(extra.time_to_first_token_s),
  };
}

/** A fresh tool-call id (WebLLM numbers its calls "0", "1"… in every reply). */
function callId(): string {
  return `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

function toolCalls(calls: readonly WebLLMToolCall[]): ToolCall[] {
  return calls.map((c) => ({
    id: callId(),
    type: 'function',
    function: { name: c.function.name, arguments: c.function.arguments },
  }));
}

const OPEN = '<think>';
const CLOSE = '</think>';

/** The length of the longest suffix of `text` that is a prefix of `tag`. */
function partialTagAtEnd(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n -= 1) {
    if (tag.startsWith(text.slice(-n))) return n;
  }
  return 0;
}

/** A piece of a reasoning model's output: its thinking, or its answer. */
export interface Piece {
  text: string;
  reasoning: boolean;
}

/**
 * Splits a reasoning model's streamed text into thinking and answer at `<think>…</think>`, tags
 * split across chunks included. Some models (DeepSeek-R1) start thinking without the opening
 * tag, which their prompt template already wrote.
 */
export class ThinkSplitter {
  readonly #startsThinking: boolean;
  #state: 'start' | 'thinking' | 'answer' = 'start';
  #held = '';
  #trimNext = false;

  constructor(options: { startsThinking?: boolean } = {}) {
    this.#startsThinking = options.startsThinking ?? false;
  }

  /** The pieces `text` completes; some of it may be held back until the next call. */
  push(text: string): Piece[] {
    this.#held += text;
    const pieces: Piece[] = [];
    for (;;) {
      if (this.#state === 'start') {
        const lead = this.#held.trimStart();
        if (lead.startsWith(OPEN)) {
          this.#held = lead.slice(OPEN.length);
          this.#state = 'thinking';
          this.#trimNext = true;
          continue;
        }
        if (OPEN.startsWith(lead) && lead.length < OPEN.length) return pieces; // undecided yet
        this.#state = this.#startsThinking ? 'thinking' : 'answer';
        if (this.#state === 'thinking') this.#trimNext = true;
        continue;
      }
      if (this.#state === 'answer') {
        this.#emit(pieces, this.#held, false);
        this.#held = '';
        return pieces;
      }
      const close = this.#held.indexOf(CLOSE);
      if (close !== -1) {
        this.#emit(pieces, this.#held.slice(0, close).trimEnd(), true);
        this.#held = this.#held.slice(close + CLOSE.length);
        this.#state = 'answer';
        this.#trimNext = true;
        continue;
      }
      // Hold back a possible start of `</think>`, and whitespace that may precede it.
      const keep = partialTagAtEnd(this.#held, CLOSE);
      let cut = this.#held.length - keep;
      while (cut > 0 && /\s/.test(this.#held[cut - 1] ?? '')) cut -= 1;
      this.#emit(pieces, this.#held.slice(0, cut), true);
      this.#held = this.#held.slice(cut);
      return pieces;
    }
  }

  /** Whatever is still held, at the end of the output. */
  flush(): Piece[] {
    const pieces: Piece[] = [];
    const reasoning =
      this.#state === 'thinking' || (this.#state === 'start' && this.#startsThinking);
    this.#emit(pieces, this.#held, reasoning);
    this.#held = '';
    return pieces;
  }

  #emit(pieces: Piece[], text: string, reasoning: boolean): void {
    let out = text;
    if (this.#trimNext) {
      out = out.trimStart();
      if (out === '') return;
      this.#trimNext = false;
    }
    if (out !== '') pieces.push({ text: out, reasoning });
  }
}

/** Whether a reasoning model begins thinking before any tag (its template opened it). */
export function startsThinking(modelId: string): boolean {
  return /DeepSeek-R1/i.test(modelId);
}

/** What the engine reads of WebLLM's pipeline after a chunk: the text so far, and its logprobs. */
export interface PipelineView {
  /** The pipeline's text: a matched stop string trimmed, a character cut at the end kept raw. */
  message: string;
  /** One entry per token of the reply (WebLLM's chunks carry only the last one). */
  logprobs: TokenLogprob[];
}

/** What closes a stream: the last outputs, and how much of what was sent the engine took back. */
export interface StreamEnd {
  outputs: EngineOutput[];
  /** Characters at the end of the streamed text that WebLLM trimmed (the start of a stop string). */
  retract: number;
}

/** A character WebLLM decoded from an incomplete UTF-8 sequence. */
const REPLACEMENT_AT_END = /\uFFFD+$/u;

/**
 * Reads one WebLLM stream into engine outputs. With tools, WebLLM streams the calls' raw JSON as
 * content before the final chunk parses it: that text is held back, and either the tool calls or
 * (when the model called none) nothing comes out at the end. Logprobs come from the pipeline,
 * whole, rather than from the chunks, which carry only the last token's entry and skip the tokens
 * of a character WebLLM held back.
 */
export class ChunkReader {
  readonly #splitter: ThinkSplitter | undefined;
  readonly #tools: boolean;
  readonly #top: number | undefined;
  #raw = '';
  #logprobsTaken = 0;
  #calls: ToolCall[] = [];
  #finish: WebLLMFinishReason | null = null;
  #usage: WebLLMUsage | undefined;

  constructor(options: { model: MappedModel; tools: boolean; topLogprobs?: number }) {
    const { model } = options;
    this.#splitter = model.reasoning
      ? new ThinkSplitter({ startsThinking: startsThinking(model.webllmId) })
      : undefined;
    this.#tools = options.tools;
    this.#top = options.topLogprobs;
  }

  /** The logprob entries the pipeline made since the last call, when they were asked for. */
  #newLogprobs(view: PipelineView | undefined): TokenLogprob[] | undefined {
    if (this.#top === undefined || !view) return undefined;
    const entries = view.logprobs.slice(this.#logprobsTaken);
    this.#logprobsTaken = Math.max(this.#logprobsTaken, view.logprobs.length);
    return entries.length > 0 ? trimLogprobs(entries, this.#top) : undefined;
  }

  /** The outputs one chunk makes. */
  read(chunk: WebLLMChunk, view?: PipelineView): EngineOutput[] {
    if (chunk.usage) this.#usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) return [];
    const outputs: EngineOutput[] = [];
    const text = choice.delta.content ?? '';
    this.#raw += text;
    // With tools, the text is the calls' JSON, which the final chunk parses.
    if (!this.#tools) {
      const logprobs = this.#newLogprobs(view);
      if (text !== '' || logprobs) outputs.push(...this.#tokens(text, logprobs));
    }
    if (choice.delta.tool_calls?.length) this.#calls.push(...toolCalls(choice.delta.tool_calls));
    if (choice.finish_reason) this.#finish = choice.finish_reason;
    return outputs;
  }

  #tokens(text: string, logprobs: TokenLogprob[] | undefined): EngineOutput[] {
    const pieces = this.#splitter ? this.#splitter.push(text) : [{ text, reasoning: false }];
    if (pieces.length === 0 && logprobs) pieces.push({ text: '', reasoning: false });
    return pieces.map((p, i) => ({
      type: 'token',
      text: p.text,
      ...(p.reasoning && { reasoning: true }),
      // Logprobs belong to the chunk's tokens: they ride with its first piece.
      ...(logprobs && i === 0 && { logprobs }),
    }));
  }

  /** Why the reply ended: WebLLM says `tool_calls` for any reply to tools, calls or none. */
  #endReason(): FinishReason {
    if (this.#calls.length > 0) return 'tool_calls';
    const reason = finishReason(this.#finish);
    return reason === 'tool_calls' ? 'stop' : reason;
  }

  /** Whether WebLLM stopped because it was interrupted (the request was cancelled). */
  get aborted(): boolean {
    return this.#finish === 'abort';
  }

  /**
   * The outputs that close the reply: text WebLLM held back and never sent (a cut mid-character
   * or mid-delta), tool calls, then the end; and how much of the sent text WebLLM trimmed.
   * `promptTokens` replaces WebLLM's count, which leaves out a reused prefix (notes §3.4).
   */
  finish(promptTokens?: number, view?: PipelineView): StreamEnd {
    const outputs: EngineOutput[] = [];
    let retract = 0;
    let missing = '';
    if (view) {
      const final = view.message;
      if (final.length > this.#raw.length && final.startsWith(this.#raw)) {
        missing = final.slice(this.#raw.length).replace(REPLACEMENT_AT_END, '');
      } else if (this.#raw.length > final.length && this.#raw.startsWith(final)) {
        retract = this.#raw.length - final.length;
      }
    }
    const logprobs = this.#newLogprobs(view);
    if (this.#calls.length > 0) outputs.push({ type: 'tool_calls', calls: this.#calls });
    else if (this.#tools) {
      // WebLLM forces a JSON array of calls: `[]` is the model calling none, not an answer.
    } else if (missing !== '' || logprobs) outputs.push(...this.#tokens(missing, logprobs));
    if (this.#splitter) {
      outputs.push(
        ...this.#splitter.flush().map((p): EngineOutput => ({
          type: 'token',
          text: p.text,
          ...(p.reasoning && { reasoning: true }),
        })),
      );
    }
    const usage = this.#usage;
    const speed = speedOf(usage);
    outputs.push({
      type: 'end',
      finish_reason: this.#endReason(),
      usage: {
        prompt_tokens: promptTokens ?? usage?.prompt_tokens ?? 0,
        completion_tokens: usage?.completion_tokens ?? 0,
        ...(speed && { speed }),
      },
    });
    return { outputs, retract: this.#tools ? 0 : retract };
  }
}

/** How each WebLLM error reaches the client: code, and the request field at fault. */
const ERRORS: Record<string, [ErrorCode, string | null]> = {
  ContextWindowSizeExceededError: ['context_length_exceeded', 'messages'],
  MessageOrderError: ['invalid_value', 'messages'],
  SystemMessageOrderError: ['invalid_value', 'messages'],
  ContentTypeError: ['invalid_value', 'messages'],
  UnsupportedRoleError: ['invalid_value', 'messages'],
  UserMessageContentErrorForNonVLM: ['unsupported_parameter', 'messages'],
  MultipleTextContentError: ['invalid_value', 'messages'],
  UnsupportedContentPartError: ['unsupported_parameter', 'messages'],
  UnsupportedDetailError: ['unsupported_parameter', 'messages'],
  UnsupportedImageURLError: ['unsupported_parameter', 'messages'],
  // A system prompt cannot be combined with tools on WebLLM's function-calling models.
  CustomSystemPromptError: ['unsupported_parameter', 'messages'],
  CustomResponseFormatError: ['unsupported_parameter', 'response_format'],
  UnsupportedModelIdError: ['unsupported_parameter', 'tools'],
  StreamingCountError: ['unsupported_parameter', 'n'],
  InvalidStreamOptionsError: ['invalid_value', 'stream_options'],
  InvalidResponseFormatError: ['invalid_value', 'response_format'],
  InvalidResponseFormatGrammarError: ['invalid_value', 'response_format'],
  InvalidResponseFormatStructuralTagError: ['invalid_value', 'response_format'],
  GrammarMatcherInitError: ['invalid_value', 'response_format'],
  RangeError: ['invalid_value', null],
  MinValueError: ['invalid_value', null],
  NonNegativeError: ['invalid_value', null],
  InvalidNumberStringError: ['invalid_value', 'logit_bias'],
  DependencyError: ['invalid_value', 'top_logprobs'],
  SeedTypeError: ['invalid_value', 'seed'],
  WebGPUNotAvailableError: ['webgpu_unavailable', null],
  WebGPUNotFoundError: ['webgpu_unavailable', null],
  FeatureSupportError: ['webgpu_unavailable', null],
  ShaderF16SupportError: ['webgpu_unavailable', null],
  ModelNotFoundError: ['model_not_found', 'model'],
  SpecifiedModelNotFoundError: ['model_not_found', 'model'],
  // The device was lost during the load: most often, not enough GPU memory.
  DeviceLostError: ['webgpu_unavailable', null],
  // Embeddings (Hearth checks most of these first; the engine has the last word).
  EmbeddingExceedContextWindowSizeError: ['context_length_exceeded', 'input'],
  EmbeddingInputEmptyError: ['invalid_value', 'input'],
  EmbeddingUnsupportedEncodingFormatError: ['unsupported_parameter', 'encoding_format'],
  EmbeddingUnsupportedModelError: ['invalid_value', 'model'],
  IncorrectPipelineLoadedError: ['invalid_value', 'model'],
};

/**
 * Plain `Error`s WebLLM throws by message (notes §2.7): no adapter, or one whose limits are too
 * small (`detectGPUDevice`); a message role the model's template has not got.
 */
const PLAIN_ERRORS: [RegExp, ErrorCode, string | null][] = [
  [/^Unable to find a compatible GPU/, 'webgpu_unavailable', null],
  [/^Cannot initialize runtime because of requested/, 'webgpu_unavailable', null],
  [/^Role is not supported: /, 'unsupported_parameter', 'messages'],
];

/** The name and message of an error WebLLM threw, whether an object or a `"Name: msg"` string. */
export function errorParts(err: unknown): { name: string; message: string } {
  if (err instanceof Error) return { name: err.name, message: err.message };
  const text = String(err);
  const match = /^([A-Za-z0-9]*Error):\s*([\s\S]*)$/.exec(text);
  return match
    ? { name: match[1] ?? 'Error', message: match[2] ?? '' }
    : { name: 'Error', message: text };
}

/** The field a WebLLM value error names: "Make sure 0 < top_p <= 1.", or quoted in backticks. */
function paramIn(message: string): string | null {
  return (
    /Make sure (?:[-\d.]+ <=? )?([a-z_]+)\b/.exec(message)?.[1] ??
    /`([a-z_]+)`/.exec(message)?.[1] ??
    null
  );
}

/** WebLLM's error as the API's. */
export function fromWebLLMError(err: unknown): OpenAIError {
  if (err instanceof OpenAIError) return err;
  const { name, message } = errorParts(err);
  // WebLLM's own `RangeError` (a bad field) shadows the built-in's name; the built-in one is a
  // failure of the engine (an array too long, a stack overflow), not of the request.
  const native = err instanceof globalThis.RangeError;
  const known = native ? undefined : ERRORS[name];
  if (known) {
    const [code, param] = known;
    return new OpenAIError(code, message || name, {
      param: param ?? paramIn(message),
      ...(code === 'webgpu_unavailable' && { shouldRetry: false }),
    });
  }
  for (const [pattern, code, param] of PLAIN_ERRORS) {
    if (name !== 'Error' || !pattern.test(message)) continue;
    const text =
      code === 'unsupported_parameter'
        ? `This model's chat template has no place for that message: ${message}.`
        : `WebGPU cannot run this model here: ${message}`;
    return new OpenAIError(code, text, {
      param,
      ...(code === 'webgpu_unavailable' && { shouldRetry: false }),
    });
  }
  if (name === 'QuotaExceededError') {
    return new OpenAIError(
      'engine_error',
      `The device's storage is full, so the model's files could not be kept: ${message}`,
    );
  }
  return new OpenAIError('engine_error', `The engine failed: ${name}: ${message}`);
}
