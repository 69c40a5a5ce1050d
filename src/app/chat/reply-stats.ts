/**
 * @module
 * The line under a reply: its tokens, its speed and what it cost, without the noise of numbers
 * that say nothing.
 */
import { ECHO_MODEL_ID } from '../../models/models';
import type { Usage } from '../../protocol/types';
import type { ReplyStats } from '../conversations/conversation';
import { replySpeed } from './speed';

/** What one request for a reply streamed. */
export interface ReplyPart {
  /** The tokens that streamed in (each event of content or reasoning is one). */
  tokens: number;
  /** When the first and the last of them came (`performance.now()`); first null: none came. */
  first: number | null;
  last: number;
  /** The model's count, null when the reply was stopped before it came. */
  usage: Usage | null;
}

/**
 * The stats of a reply after `part`, added to `earlier` (the stats of the reply so far, when it
 * is continued): the tokens and the cost of every part, the speed over the time each part
 * streamed (not the pause between them), and the prompt of the last request, which holds the
 * whole conversation (the context meter reads it).
 */
export function replyStats(earlier: ReplyStats | undefined, part: ReplyPart): ReplyStats {
  const tokens = part.usage?.completion_tokens ?? part.tokens;
  const completion = (earlier?.usage.completion_tokens ?? 0) + tokens;
  const prompt = part.usage?.prompt_tokens ?? earlier?.usage.prompt_tokens ?? 0;
  const timing = { ...(earlier?.timing ?? { tokens: 0, ms: 0 }) };
  if (part.first !== null && tokens > 0) {
    timing.tokens += tokens - 1;
    timing.ms += part.last - part.first;
  }
  const stats: ReplyStats = {
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      estimated_cost: (earlier?.usage.estimated_cost ?? 0) + (part.usage?.estimated_cost ?? 0),
    },
    // As one stretch: the tokens after each part's first, over the time the parts streamed.
    tokens_per_s: replySpeed(timing.tokens + 1, 0, timing.ms),
    timing,
  };
  if (earlier?.counted || part.usage === null) stats.counted = true;
  return stats;
}

/**
 * `12 tokens · 34.5 tokens/s · $0.0001`: the speed only when measured, and not for the echo
 * engine (it answers at once: its speed says nothing); the cost only when there is one; `about`
 * where tokens were counted as they came, not by the model.
 */
export function statsLine(stats: ReplyStats, model: string | undefined): string {
  const parts = [`${stats.counted ? 'about ' : ''}${stats.usage.completion_tokens} tokens`];
  if (stats.tokens_per_s !== null && model !== ECHO_MODEL_ID) {
    parts.push(`${stats.tokens_per_s.toFixed(1)} tokens/s`);
  }
  if (stats.usage.estimated_cost > 0) parts.push(`$${formatCost(stats.usage.estimated_cost)}`);
  return parts.join(' · ');
}

/** Dollars with the precision small sums need. */
export function formatCost(dollars: number): string {
  if (dollars === 0) return '0';
  if (dollars < 0.01) return dollars.toPrecision(2);
  return dollars.toFixed(2);
}
