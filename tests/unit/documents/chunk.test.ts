import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  chunkingStrategy,
  ChunkingStrategySchema,
  chunkSections,
  DEFAULT_CHUNKING,
  estimateTokens,
} from '../../../src/documents/chunk';
import type { ChunkingStrategy, Section } from '../../../src/documents/types';
import { samplePages } from '../../test-pdfs';

const strategy = (max: number, overlap: number): ChunkingStrategy => ({
  type: 'static',
  static: { max_chunk_size_tokens: max, chunk_overlap_tokens: overlap },
});
/** `n` distinct words of 4 characters, `w000`…, a space between. */
const words = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `w${String(from + i).padStart(3, '0')}`).join(' ');

/** How many words the end of `before` and the start of `after` share. */
function sharedWords(before: string, after: string): string {
  const a = before.split(' ');
  const b = after.split(' ');
  for (let k = Math.min(a.length, b.length) - 1; k > 0; k--)
    if (a.slice(-k).join(' ') === b.slice(0, k).join(' ')) return b.slice(0, k).join(' ');
  return '';
}

describe('the token estimate', () => {
  it('is a quarter token an ASCII character, half one for other scripts, one for CJK', () => {
    expect(estimateTokens('abcd'.repeat(10))).toBe(10);
    expect(estimateTokens('\u00e9\u00e9')).toBe(1);
    expect(estimateTokens('\u4e2d\u6587')).toBe(2);
    expect(estimateTokens('\u{1F600}')).toBe(1);
  });
});

describe('chunking_strategy', () => {
  it('takes auto as OpenAI’s 800/400, and static as given', () => {
    expect(v.parse(ChunkingStrategySchema, { type: 'auto' })).toEqual(DEFAULT_CHUNKING);
    expect(DEFAULT_CHUNKING.static).toEqual({
      max_chunk_size_tokens: 800,
      chunk_overlap_tokens: 400,
    });
    const asked = {
      type: 'static',
      static: { max_chunk_size_tokens: 100, chunk_overlap_tokens: 50 },
    };
    expect(v.parse(ChunkingStrategySchema, asked)).toEqual(strategy(100, 50));
    expect(chunkingStrategy({ type: 'auto' })).toBe(DEFAULT_CHUNKING);
  });

  it.each([
    [{ type: 'static', static: { max_chunk_size_tokens: 99, chunk_overlap_tokens: 0 } }],
    [{ type: 'static', static: { max_chunk_size_tokens: 4097, chunk_overlap_tokens: 0 } }],
    [{ type: 'static', static: { max_chunk_size_tokens: 1000, chunk_overlap_tokens: 501 } }],
    [{ type: 'static', static: { max_chunk_size_tokens: 1000, chunk_overlap_tokens: -1 } }],
    [{ type: 'static', static: { max_chunk_size_tokens: 500.5, chunk_overlap_tokens: 0 } }],
    [{ type: 'static' }],
    [{ type: 'other' }],
  ])('refuses %j', (input) => {
    expect(v.safeParse(ChunkingStrategySchema, input).success).toBe(false);
  });

  it('says which field is wrong when the overlap is over half', () => {
    const result = v.safeParse(ChunkingStrategySchema, {
      type: 'static',
      static: { max_chunk_size_tokens: 200, chunk_overlap_tokens: 101 },
    });
    expect(result.issues?.[0]?.message).toContain('half');
    expect(v.getDotPath(result.issues![0]!)).toBe('static.chunk_overlap_tokens');
  });
});

describe('chunkSections', () => {
  it('keeps a section that fits whole, with its page or heading', () => {
    const sections: Section[] = [
      { text: 'one', page: 1 },
      { text: 'two', heading: 'H' },
      { text: 'three' },
    ];
    expect(chunkSections(sections, DEFAULT_CHUNKING)).toEqual(sections);
  });

  it('never spans two sections, however small they are', () => {
    const sections = Array.from({ length: 30 }, (_, i) => ({ text: `s${i}`, page: i + 1 }));
    const chunks = chunkSections(sections, strategy(100, 0));
    expect(chunks).toEqual(sections);
  });

  it('splits a long section by the sizes, overlapping, on white space, nothing lost', () => {
    const text = words(1000);
    const chunks = chunkSections([{ text, heading: 'Long' }], strategy(100, 40));
    for (const chunk of chunks) {
      expect(chunk.heading).toBe('Long');
      expect(estimateTokens(chunk.text)).toBeLessThanOrEqual(100);
      expect(chunk.text).toBe(chunk.text.trim());
      expect(text.includes(chunk.text)).toBe(true);
      // Whole words: the chunk starts and ends at word boundaries of the text.
      const at = text.indexOf(chunk.text);
      expect(at === 0 || text[at - 1] === ' ').toBe(true);
      expect(text[at + chunk.text.length] ?? ' ').toBe(' ');
    }
    // Consecutive chunks share their overlap: the next begins with the last words of this one.
    for (let i = 1; i < chunks.length; i++) {
      const shared = sharedWords(chunks[i - 1]!.text, chunks[i]!.text);
      expect(estimateTokens(shared)).toBeGreaterThan(35);
      expect(estimateTokens(shared)).toBeLessThanOrEqual(40);
    }
    expect(chunks[0]!.text.startsWith('w000 w001')).toBe(true);
    expect(chunks.at(-1)!.text.endsWith(words(1, 999))).toBe(true);
    // 1250 tokens, about 60 new a chunk.
    expect(chunks.length).toBeGreaterThan(18);
    expect(chunks.length).toBeLessThan(24);
  });

  it('with no overlap, gives back every word exactly once', () => {
    const text = words(2000);
    const chunks = chunkSections([{ text }], strategy(128, 0));
    expect(chunks.map((c) => c.text).join(' ')).toBe(text);
    expect(chunks.every((c) => estimateTokens(c.text) <= 128)).toBe(true);
  });

  it('keeps the line breaks inside a chunk, and makes no empty chunk', () => {
    const chunks = chunkSections(
      [{ text: 'a\nb\n\nc' }, { text: '   \n ' }, { text: '' }, { text: 'd' }],
      DEFAULT_CHUNKING,
    );
    expect(chunks).toEqual([{ text: 'a\nb\n\nc' }, { text: 'd' }]);
  });

  it('cuts a word longer than a chunk (CJK, a long URL), never inside a surrogate pair', () => {
    const cjk = '\u4e2d'.repeat(350);
    const chunks = chunkSections([{ text: cjk }], strategy(100, 0));
    expect(chunks.map((c) => c.text.length)).toEqual([100, 100, 100, 50]);
    const emoji = '\u{1F600}'.repeat(150);
    const pieces = chunkSections([{ text: emoji }], strategy(100, 10));
    expect(pieces.map((c) => c.text).join('')).toBe(emoji);
    for (const piece of pieces) expect(piece.text).toBe(Array.from(piece.text).join(''));
    expect(pieces.every((p) => !/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/.test(p.text))).toBe(true);
  });

  it('is deterministic, and a 100-page document chunks in milliseconds', () => {
    const sections = samplePages(100).map((lines, i) => ({ text: lines.join('\n'), page: i + 1 }));
    const started = performance.now();
    const chunks = chunkSections(sections, DEFAULT_CHUNKING);
    const ms = performance.now() - started;
    expect(chunkSections(sections, DEFAULT_CHUNKING)).toEqual(chunks);
    expect(chunks.length).toBeGreaterThanOrEqual(100);
    expect(new Set(chunks.map((c) => c.page)).size).toBe(100);
    expect(ms).toBeLessThan(200);
  });
});
