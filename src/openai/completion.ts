/**
 * @module
 * Response bodies of the chat-completions endpoint: the non-streamed completion and the stream's
 * chunks in DESIGN §3's fixed order. The per-token path writes SSE text from a prefix and suffix
 * made once per stream, so a token costs one `JSON.stringify` of its own text.
 */
import type { EngineUsage } from './backend';
import { estimateCost, type ModelPrice } from './models';
import { SSE_DONE, sseEvent, sseJson } from './sse';
import type { ChatCompletion, ChatCompletionChunk, ChunkDelta, FinishReason, Usage } from './types';

/** What every body of one reply shares. */
export interface ReplyMeta {
  id: string;
  /** Unix seconds. */
  created: number;
  model: string;
  /** `stream_options.include_usage`: chunks carry `usage: null`, and a usage chunk comes last. */
  include_usage: boolean;
}

/** Engine counts plus total and price. */
export function toUsage(usage: EngineUsage, price: ModelPrice): Usage {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    estimated_cost: estimateCost(price, usage.prompt_tokens, usage.completion_tokens),
  };
}

/** The non-streamed reply. */
export function completionBody(
  meta: ReplyMeta,
  content: string,
  finish_reason: FinishReason,
  usage: Usage,
): ChatCompletion {
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        logprobs: null,
        finish_reason,
      },
    ],
    usage,
  };
}

/** One stream chunk with a single choice. */
export function chunkBody(
  meta: ReplyMeta,
  delta: ChunkDelta,
  finish_reason: FinishReason | null,
): ChatCompletionChunk {
  const chunk: ChatCompletionChunk = {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  };
  if (meta.include_usage) chunk.usage = null;
  return chunk;
}

/** The chunk that carries usage: no choices. */
export function usageChunkBody(meta: ReplyMeta, usage: Usage): ChatCompletionChunk {
  return {
    id: meta.id,
    object: 'chat.completion.chunk',
    created: meta.created,
    model: meta.model,
    choices: [],
    usage,
  };
}

/** Writes one reply's SSE text, event by event, in DESIGN §3's order. */
export class SseReplyWriter {
  readonly #meta: ReplyMeta;
  readonly #prefix: string;
  readonly #suffix: string;
  #started = false;

  constructor(meta: ReplyMeta) {
    this.#meta = meta;
    // The JSON of a content chunk around its `content` value: `{…"content":` + text + `}…}`.
    const template = sseJson(chunkBody(meta, { content: '\u0000' }, null));
    const [prefix, suffix] = template.split('"\\u0000"');
    if (prefix === undefined || suffix === undefined) throw new Error('chunk template broken');
    this.#prefix = `data: ${prefix}`;
    this.#suffix = `${suffix}\n\n`;
  }

  /** Events for a batch of tokens; the reply's first one also carries the role. */
  tokens(tokens: readonly string[]): string {
    let out = '';
    for (const token of tokens) {
      if (!this.#started) {
        this.#started = true;
        out += sseEvent(chunkBody(this.#meta, { role: 'assistant', content: token }, null));
      } else {
        out += this.#prefix + sseJson(token) + this.#suffix;
      }
    }
    return out;
  }

  /** The final chunk, the usage chunk when asked for, and `[DONE]`. */
  end(finish_reason: FinishReason, usage: Usage): string {
    // An empty reply still opens with the role (DESIGN §3).
    let out = this.#started ? '' : this.tokens(['']);
    out += sseEvent(chunkBody(this.#meta, {}, finish_reason));
    if (this.#meta.include_usage) out += sseEvent(usageChunkBody(this.#meta, usage));
    return out + SSE_DONE;
  }
}
