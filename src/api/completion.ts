/**
 * @module
 * Response bodies of the chat-completions endpoint: the non-streamed completion and the stream's
 * chunks in the fixed order of docs/api.md's Chat completion replies. The per-token path writes SSE text from a prefix and suffix
 * made once per stream, so a plain token costs one `JSON.stringify` of its own text; a batch of
 * tokens can be written straight to bytes (`tokenBytes`), which spares the stream a `TextEncoder`
 * pass over the whole batch's text.
 */
import type { ChoiceResult, EngineUsage, SpeedFigures, Token } from '../protocol/host/backend';
import { estimateCost, type ModelPrice } from '../models/models';
import { SSE_DONE, sseEvent, sseJson } from '../protocol/sse';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChoiceLogprobs,
  ChunkDelta,
  CompletionChoice,
  FinishReason,
  TokenLogprob,
  ToolCall,
  Usage,
} from '../protocol/types';

/** The SSE comment that carries an engine's speed figures: `: hearth-speed {…}`. */
export const SPEED_COMMENT = ': hearth-speed ';

/** What every body of one reply shares. */
export interface ReplyMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
  /** `stream_options.include_usage`: chunks carry `usage: null`, and a usage chunk comes last. */
  include_usage: boolean;
  /** Whether `logprobs` was asked for (a non-streamed choice then always carries them). */
  logprobs?: boolean;
  /**
   * Hearth's fields of the reply (a `file_search`'s results): on the completion, and on a
   * stream's first chunk only.
   */
  extra?: Record<string, unknown>;
}

/** Engine counts plus total and price; null where the backend could not count. */
export function toUsage(usage: EngineUsage | null, price: ModelPrice): Usage | null {
  if (usage === null) return null;
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    estimated_cost: estimateCost(price, usage.prompt_tokens, usage.completion_tokens),
  };
}

const logprobsOf = (content: TokenLogprob[] | undefined): ChoiceLogprobs | null =>
  content ? { content, refusal: null } : null;

/** One choice of a non-streamed reply. */
export function completionChoice(
  index: number,
  choice: ChoiceResult,
  withLogprobs: boolean,
): CompletionChoice {
  const message: CompletionChoice['message'] = {
    role: 'assistant',
    content: choice.content,
    refusal: null,
  };
  if (choice.reasoning) message.reasoning_content = choice.reasoning;
  if (choice.tool_calls?.length) message.tool_calls = choice.tool_calls;
  return {
    index,
    message,
    logprobs: withLogprobs ? logprobsOf(choice.logprobs ?? []) : null,
    finish_reason: choice.finish_reason,
  };
}

/** The non-streamed reply. */
export function completionBody(
  meta: ReplyMeta,
  choices: readonly ChoiceResult[],
  usage: Usage | null,
): ChatCompletion {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: choices.map((c, i) => completionChoice(i, c, meta.logprobs === true)),
    usage,
    ...meta.extra,
  };
}

/** One stream chunk with a single choice. */
export function chunkBody(
  meta: ReplyMeta,
  delta: ChunkDelta,
  finish_reason: FinishReason | null,
  logprobs: ChoiceLogprobs | null = null,
): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, logprobs, finish_reason }],
  };
  if (meta.include_usage) chunk.usage = null;
  return chunk;
}

/** The chunk that carries usage: no choices. */
export function usageChunkBody(meta: ReplyMeta, usage: Usage | null): ChatCompletionChunk {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [],
    usage,
  };
}

const encoder = new TextEncoder();

/**
 * Writes `text` as UTF-8 into `into` at `at`, which has room for 3 bytes per UTF-16 unit of
 * `text`; returns where it ends. ASCII (nearly all of a chunk's JSON) is copied a unit at a
 * time, which costs less than a `TextEncoder` call; the rest from the first other unit on is
 * left to `encodeInto`.
 */
export function writeUtf8(text: string, into: Uint8Array, at: number): number {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit >= 0x80) return at + encoder.encodeInto(text.slice(i), into.subarray(at)).written;
    into[at++] = unit;
  }
  return at;
}

/** Writes one reply's SSE text, event by event, in the order of docs/api.md's Chat completion replies. */
export class SseReplyWriter {
  readonly #meta: ReplyMeta;
  readonly #prefix: string;
  readonly #suffix: string;
  readonly #prefixBytes: Uint8Array;
  readonly #suffixBytes: Uint8Array;
  #started = false;

  constructor(meta: ReplyMeta) {
    this.#meta = meta;
    // The JSON of a content chunk around its `content` value: `{…"content":` + text + `}…}`.
    const template = sseJson(chunkBody(meta, { content: '\u0000' }, null));
    const [prefix, suffix] = template.split('"\\u0000"');
    if (prefix === undefined || suffix === undefined) throw new Error('chunk template broken');
    this.#prefix = `data: ${prefix}`;
    this.#suffix = `${suffix}\n\n`;
    this.#prefixBytes = encoder.encode(this.#prefix);
    this.#suffixBytes = encoder.encode(this.#suffix);
  }

  /** The event for one token; the reply's first event also carries the role. */
  #token(token: Token): string {
    if (typeof token === 'string' && this.#started) {
      return this.#prefix + sseJson(token) + this.#suffix;
    }
    const text = typeof token === 'string' ? token : token.text;
    const delta: ChunkDelta = this.#started ? {} : { role: 'assistant' };
    this.#started = true;
    if (typeof token !== 'string' && token.reasoning) delta.reasoning_content = text;
    else delta.content = text;
    const logprobs = typeof token === 'string' ? null : logprobsOf(token.logprobs);
    const chunk = chunkBody(this.#meta, delta, null, logprobs);
    return sseEvent(delta.role ? { ...chunk, ...this.#meta.extra } : chunk);
  }

  /** Events for a batch of tokens. */
  tokens(tokens: readonly Token[]): string {
    let out = '';
    for (const token of tokens) out += this.#token(token);
    return out;
  }

  /**
   * `tokens(tokens)` as UTF-8 bytes, written straight into one buffer: a plain token is the
   * prefix's bytes, its JSON, the suffix's bytes.
   */
  tokenBytes(tokens: readonly Token[]): Uint8Array {
    // Each token's text: its JSON alone when it goes between the prefix and the suffix, else
    // its whole event.
    const texts: string[] = [];
    const framed: boolean[] = [];
    const frame = this.#prefixBytes.length + this.#suffixBytes.length;
    let room = 0;
    for (const token of tokens) {
      const plain = typeof token === 'string' && this.#started;
      const text = plain ? sseJson(token) : this.#token(token);
      texts.push(text);
      framed.push(plain);
      room += 3 * text.length + (plain ? frame : 0);
    }
    const out = new Uint8Array(room);
    let at = 0;
    for (let i = 0; i < texts.length; i += 1) {
      if (framed[i]) {
        out.set(this.#prefixBytes, at);
        at = writeUtf8(texts[i] ?? '', out, at + this.#prefixBytes.length);
        out.set(this.#suffixBytes, at);
        at += this.#suffixBytes.length;
      } else {
        at = writeUtf8(texts[i] ?? '', out, at);
      }
    }
    // Plain ASCII leaves two thirds of each token's JSON room unused: a copy of the written
    // part when that is much, so that the stream does not hold the slack.
    return at * 2 < room ? out.slice(0, at) : out.subarray(0, at);
  }

  /** The event carrying the model's tool calls. */
  toolCalls(calls: readonly ToolCall[]): string {
    const delta: ChunkDelta = this.#started ? {} : { role: 'assistant' };
    this.#started = true;
    delta.tool_calls = calls.map((call, index) => ({ index, ...call }));
    const chunk = chunkBody(this.#meta, delta, null);
    return sseEvent(delta.role ? { ...chunk, ...this.#meta.extra } : chunk);
  }

  /**
   * The final chunk, the usage chunk when asked for, and `[DONE]`. The engine's speed figures,
   * when it gave any, travel as an SSE comment, which every SSE parser skips: people see them,
   * strict clients never do.
   */
  end(finish_reason: FinishReason, usage: Usage | null, speed?: SpeedFigures): string {
    // An empty reply still opens with the role (docs/api.md, Chat completion replies).
    let out = this.#started ? '' : this.tokens(['']);
    out += sseEvent(chunkBody(this.#meta, {}, finish_reason));
    if (this.#meta.include_usage) out += sseEvent(usageChunkBody(this.#meta, usage));
    if (speed) out += `${SPEED_COMMENT}${sseJson(speed)}\n\n`;
    return out + SSE_DONE;
  }
}

/** Collects a non-streamed reply from token batches, tool calls or whole choices. */
export class ReplyAccumulator {
  #content = '';
  #reasoning = '';
  #logprobs: TokenLogprob[] = [];
  #toolCalls: ToolCall[] = [];
  #choices: ChoiceResult[] | undefined;

  tokens(tokens: readonly Token[]): void {
    for (const token of tokens) {
      if (typeof token === 'string') {
        this.#content += token;
        continue;
      }
      if (token.reasoning) this.#reasoning += token.text;
      else this.#content += token.text;
      if (token.logprobs) this.#logprobs.push(...token.logprobs);
    }
  }

  toolCalls(calls: readonly ToolCall[]): void {
    this.#toolCalls.push(...calls);
  }

  choices(choices: readonly ChoiceResult[]): void {
    this.#choices = [...choices];
  }

  /** The choices of the reply, the single one ending with `finish_reason`. */
  result(finish_reason: FinishReason): ChoiceResult[] {
    if (this.#choices) return this.#choices;
    const choice: ChoiceResult = {
      // With tool calls and no text, OpenAI's content is null.
      content: this.#toolCalls.length > 0 && this.#content === '' ? null : this.#content,
      finish_reason,
    };
    if (this.#reasoning) choice.reasoning = this.#reasoning;
    if (this.#toolCalls.length > 0) choice.tool_calls = this.#toolCalls;
    if (this.#logprobs.length > 0) choice.logprobs = this.#logprobs;
    return [choice];
  }
}
