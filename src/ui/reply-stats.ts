/**
 * @module
 * The line under a reply: its tokens, its speed and what it cost, without the noise of numbers
 * that say nothing.
 */
import { ECHO_MODEL_ID } from '../openai/models';
import type { ReplyStats } from './conversation';

/**
 * `12 tokens · 34.5 tokens/s · $0.0001`: the speed only when measured, and not for the echo
 * engine (it answers at once: its speed says nothing); the cost only when there is one.
 */
export function statsLine(stats: ReplyStats, model: string | undefined): string {
  const parts = [`${stats.usage.completion_tokens} tokens`];
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
