/**
 * @module
 * From WebLLM 0.2.86's stream to engine outputs, whatever WebLLM emits: `abort` is no finish
 * reason, tool calls arrive as raw JSON text first, thinking is mixed into content
 * (./webllm-thinking.ts splits it), and the pipeline's own text and logprobs settle the reply at
 * the end. The other direction is ./webllm-mapping.ts. What WebLLM does is stated in docs/api.md
 * (What WebLLM honours) and held by tests/unit/engines/webllm.
 */
import type { SpeedFigures } from '../../protocol/host/backend';
import type { FinishReason, TokenLogprob, ToolCall } from '../../protocol/types';
import type { EngineOutput } from '../engine';
import type { MappedModel } from './webllm-mapping';
import { ThinkSplitter, startsThinking } from './webllm-thinking';

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
   * `promptTokens` replaces WebLLM's count, which leaves out a reused prefix (docs/models.md,
   * Real models: usage).
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
