import { describe, expect, it } from 'vitest';
import type { Token } from '../../../src/protocol/host/backend';
import { StopFilter } from '../../../src/protocol/host/stop';

const text = (tokens: Token[]) => tokens.map((t) => (typeof t === 'string' ? t : t.text)).join('');

describe('StopFilter', () => {
  it('passes tokens through at once when there are no stop strings', () => {
    const filter = new StopFilter(undefined);
    expect(filter.holds).toBe(false);
    expect(filter.push(['a', '<'])).toEqual(['a', '<']);
  });

  it('holds back the start of a stop string until the next token settles it', () => {
    const filter = new StopFilter(['<END>']);
    expect(text(filter.push(['Hi <']))).toBe('Hi ');
    expect(text(filter.push(['b']))).toBe('<b');
    expect(text(filter.push(['<E']))).toBe('');
    // The reply ended there without the rest of the stop string: what was held was text.
    expect(text(filter.end())).toBe('<E');
  });

  it('cuts the reply at a whole stop string, even one across tokens, and drops what follows', () => {
    const filter = new StopFilter(['lo w']);
    const out = [...filter.push(['Hel']), ...filter.push(['lo', ' wo']), ...filter.push(['rld'])];
    expect(text(out)).toBe('Hel');
    expect(filter.stopped).toBe(true);
    expect(filter.end()).toEqual([]);
  });

  it('takes back at the end the characters the engine trimmed as the start of a stop string', () => {
    const filter = new StopFilter(['wor']);
    const out = [...filter.push(['Hello', ' w'])];
    expect(text([...out, ...filter.end(1)])).toBe('Hello ');
  });

  it('keeps a token’s logprobs with the part of it that goes out', () => {
    const logprobs = [{ token: 'a<', logprob: -1, bytes: [97, 60], top_logprobs: [] }];
    const filter = new StopFilter(['<x']);
    const [head] = filter.push([{ text: 'a<', logprobs }]);
    expect(head).toEqual({ text: 'a', logprobs });
    expect(filter.end()).toEqual([{ text: '<' }]);
  });

  it('releases the logprobs of trailing tokens without text at the end, as without stop strings', () => {
    const entry = (token: string) => ({ token, logprob: -1, bytes: [], top_logprobs: [] });
    const tokens: Token[] = [
      { text: 'ab', logprobs: [entry('ab')] },
      { text: '', logprobs: [entry('\\xe3')] },
      { text: '', logprobs: [entry('\\x81')] },
    ];
    const filter = new StopFilter(['zz']);
    const out = [...filter.push(tokens), ...filter.end()];
    expect(out.flatMap((t) => (typeof t === 'string' ? [] : (t.logprobs ?? [])))).toHaveLength(3);
    expect(text(out)).toBe('ab');
  });

  it('drops the tokens without text that follow a whole stop string', () => {
    const entry = { token: 'x', logprob: -1, bytes: [], top_logprobs: [] };
    const filter = new StopFilter(['zz']);
    const out = filter.push(['a', 'zz', { text: '', logprobs: [entry] }]);
    expect(out).toEqual(['a']);
    expect(filter.end()).toEqual([]);
  });
});
