import { describe, expect, it } from 'vitest';
import { statsLine } from '../../../src/ui/reply-stats';

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
