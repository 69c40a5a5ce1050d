import { describe, expect, it } from 'vitest';
import { MIN_MEASURABLE_MS, replySpeed } from '../../../../src/app/chat/speed';

describe('the speed shown under a reply', () => {
  it('counts the tokens after the first over the time from the first to the last', () => {
    // 51 tokens, the first at 1000 ms and the last at 1500 ms: 50 tokens in 0.5 s.
    expect(replySpeed(51, 1000, 1500)).toBeCloseTo(100);
  });

  it.each([
    ['an instant reply, measured as 0 ms (Firefox clock steps of 1 ms)', 20, 1000, 1000],
    ['a reply measured in one clock step', 20, 1000, 1001],
    [
      'a reply shorter than what the clock can measure well',
      20,
      1000,
      1000 + MIN_MEASURABLE_MS - 1,
    ],
    ['a reply of one token', 1, 1000, 2000],
    ['a reply of no tokens', 0, 1000, 2000],
    ['a reply with no first token time', 20, null, 2000],
    ['a clock that went backwards', 20, 2000, 1000],
  ])('shows no speed for %s', (_what, tokens, first, last) => {
    expect(replySpeed(tokens, first, last)).toBeNull();
  });

  it('shows a speed from the shortest measurable time on, always finite', () => {
    const speed = replySpeed(3, 1000, 1000 + MIN_MEASURABLE_MS);
    expect(speed).toBeCloseTo(2 / (MIN_MEASURABLE_MS / 1000));
    expect(Number.isFinite(speed)).toBe(true);
  });
});
