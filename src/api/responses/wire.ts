/**
 * @module
 * The pieces of a Responses stream's bytes that `output.ts` writes with: one SSE event (its type
 * as the `event:` line and in its JSON), the frame of a text delta event around its sequence
 * number and text, a number written straight into bytes, and the response's usage.
 */
import type { EngineUsage } from '../../protocol/host/backend';
import { estimateCost, type ModelPrice } from '../../models/models';
import { sseJson } from '../../protocol/sse';
import type { ResponseUsage } from './types';

export const encoder = new TextEncoder();
/** What follows a delta event's sequence number, up to its text's JSON. */
export const MIDDLE = ',"delta":';
export const MIDDLE_BYTES = encoder.encode(MIDDLE);
/** What follows the text's JSON: the end of the object and of the event. */
export const END = '}\n\n';
export const END_BYTES = encoder.encode(END);

/**
 * Writes `n` (a whole number ≥ 0) in decimal ASCII into `into` at `at`; returns where it ends.
 */
export function writeDecimal(n: number, into: Uint8Array, at: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits += 1;
  let rest = n;
  for (let i = at + digits - 1; i >= at; i -= 1) {
    into[i] = 48 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}

/** One SSE event: its type as the `event:` line, and the same in its JSON. */
export function event(type: string, sequence: number, fields: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${sseJson({ type, sequence_number: sequence, ...fields })}\n\n`;
}

/** The response's usage from the engine's counts (null where the backend could not count). */
export function responseUsage(
  usage: EngineUsage | null,
  reasoningTokens: number,
  price: ModelPrice,
): ResponseUsage | null {
  if (usage === null) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: {
      reasoning_tokens: Math.min(reasoningTokens, usage.completion_tokens),
    },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    estimated_cost: estimateCost(price, usage.prompt_tokens, usage.completion_tokens),
  };
}
