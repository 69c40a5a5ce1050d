/**
 * @module
 * The speed shown under a reply, in tokens per second, as the page measures it: only when it is
 * measurable. Firefox's `performance.now()` moves in steps of 1 ms (coarser still with its
 * fingerprinting protection), so an instant reply can measure 0 ms, or one step.
 */

/**
 * The shortest time from a reply's first token to its last that gives a speed: 20 steps of a 1 ms
 * clock, so that the clock's step is at most a tenth of what is measured.
 */
export const MIN_MEASURABLE_MS = 20;

/**
 * Tokens per second of a reply of `tokens` completion tokens whose first token arrived at
 * `firstMs` and last at `lastMs` (`performance.now()`): the tokens after the first over the time
 * between them. `null` when that cannot be measured: fewer than two tokens, no first token, or
 * less than `MIN_MEASURABLE_MS` between them (never a division by zero).
 */
export function replySpeed(tokens: number, firstMs: number | null, lastMs: number): number | null {
  if (firstMs === null || tokens < 2) return null;
  const ms = lastMs - firstMs;
  if (!(ms >= MIN_MEASURABLE_MS)) return null;
  return (tokens - 1) / (ms / 1000);
}
