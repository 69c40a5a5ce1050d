import { describe, expect, it } from 'vitest';
import { replyStats, statsLine } from '../../../../src/app/chat/reply-stats';

const stats = (estimated_cost: number, tokens_per_s: number | null) => ({
  usage: { prompt_tokens: 5, completion_tokens: 12, total_tokens: 17, estimated_cost },
  tokens_per_s,
});

describe('the line under a reply', () => {
  it('says the tokens, the speed and the cost of a priced model', () => {
    expect(statsLine(stats(0.00012, 34.56), 'acme/model')).toBe(
      '12 tokens · 34.6 tokens/s · $0.00012',
    );
    expect(statsLine(stats(0.9, 34.56), 'acme/model')).toBe('12 tokens · 34.6 tokens/s · $0.90');
  });

  it('leaves out a cost of nothing and a speed not measured', () => {
    expect(statsLine(stats(0, null), 'acme/model')).toBe('12 tokens');
    expect(statsLine(stats(0, 20), 'acme/model')).toBe('12 tokens · 20.0 tokens/s');
  });

  it("leaves out the echo engine's speed, which says nothing", () => {
    expect(statsLine(stats(0, 50_000), 'hearth/echo')).toBe('12 tokens');
    expect(statsLine(stats(0.5, 50_000), 'hearth/echo')).toBe('12 tokens · $0.50');
  });
});

const usage = (prompt_tokens: number, completion_tokens: number, estimated_cost = 0) => ({
  prompt_tokens,
  completion_tokens,
  total_tokens: prompt_tokens + completion_tokens,
  estimated_cost,
});

describe('the stats of a reply written in parts (stopped or cut off, then continued)', () => {
  it('counts the tokens of a stopped reply as they streamed in, and says the count is not the model’s', () => {
    const stopped = replyStats(undefined, { tokens: 7, first: 0, last: 600, usage: null });
    expect(stopped.usage.completion_tokens).toBe(7);
    expect(stopped.counted).toBe(true);
    expect(statsLine(stopped, 'acme/model')).toBe('about 7 tokens · 10.0 tokens/s');
  });

  it('after Continue, covers the whole reply: the tokens, the cost and the speed of every part', () => {
    // 7 tokens in 600 ms, stopped; then 11 more in 1000 ms, reported by the model.
    const stopped = replyStats(undefined, { tokens: 7, first: 0, last: 600, usage: null });
    const whole = replyStats(stopped, {
      tokens: 11,
      first: 5000,
      last: 6000,
      usage: usage(40, 11, 0.002),
    });
    expect(whole.usage.completion_tokens).toBe(18);
    expect(statsLine(whole, 'acme/model')).toBe('about 18 tokens · 10.0 tokens/s · $0.0020');

    // A reply cut off at the maximum length has the model's count: its sum is exact.
    const cut = replyStats(undefined, {
      tokens: 3,
      first: 0,
      last: 200,
      usage: usage(10, 3, 0.001),
    });
    const continued = replyStats(cut, {
      tokens: 5,
      first: 900,
      last: 1300,
      usage: usage(20, 5, 0.002),
    });
    expect(continued.counted).toBeUndefined();
    expect(continued.usage).toMatchObject({
      // The prompt of the last request: it holds the whole conversation, the reply so far too.
      prompt_tokens: 20,
      completion_tokens: 8,
      total_tokens: 28,
    });
    expect(continued.usage.estimated_cost).toBeCloseTo(0.003, 10);
    // (3 − 1) + (5 − 1) tokens after each part's first, over 200 + 400 ms.
    expect(continued.tokens_per_s).toBeCloseTo(10);
  });

  it('gives no speed where no part was long enough to measure', () => {
    const quick = replyStats(undefined, { tokens: 3, first: 0, last: 5, usage: usage(1, 3) });
    expect(
      replyStats(quick, { tokens: 1, first: 10, last: 10, usage: usage(5, 1) }).tokens_per_s,
    ).toBeNull();
  });
});
