/**
 * @module
 * From llama-server's stream (in wllama 3.13) to engine outputs, as a small pure reader: content
 * and reasoning deltas, tool-call deltas assembled by index, logprobs, usage and speed, and the
 * signs of life a long prefill or tool call gives. Kept apart from the request mapping
 * (./llama-mapping.ts) because it is the other direction, with its own chunk types.
 */
import type { SpeedFigures } from '../../protocol/host/backend';
import type { FinishReason, TokenLogprob, TopLogprob, ToolCall } from '../../protocol/types';
import type { EngineOutput } from '../engine';
import { PROGRESS_EVERY_MS } from '../engine-outputs';

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
