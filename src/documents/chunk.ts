/**
 * @module
 * A document's sections cut into chunks, as a vector store's `chunking_strategy` says: each
 * chunk at most `max_chunk_size_tokens`, consecutive chunks of a section sharing up to
 * `chunk_overlap_tokens`. A chunk never spans two sections and keeps the section's page or
 * heading. Pure and deterministic; linear in the text.
 *
 * Tokens are estimated without a tokenizer (the store's embedding model has its own, in the
 * engine worker): an ASCII character is a quarter token (OpenAI's rule of thumb for English, four
 * characters a token), another character below U+3000 (accented Latin, Greek, Cyrillic, …) half a
 * token, and one from U+3000 on (CJK, emoji) a whole token. Chunks begin and end on white space,
 * never inside a word; only a word longer than a chunk (a run of CJK, a long URL) is cut inside.
 */
import * as v from 'valibot';
import type { Section } from '../protocol/host/documents';
import type { ChunkingStrategy } from './types';

/** OpenAI's `auto`: 800 tokens a chunk, 400 of them shared with the next. */
export const DEFAULT_CHUNKING: ChunkingStrategy = {
  type: 'static',
  static: { max_chunk_size_tokens: 800, chunk_overlap_tokens: 400 },
};

/** `chunking_strategy` as OpenAI's requests give it. */
export type ChunkingRequest =
  | { type: 'auto' }
  | { type: 'static'; static: { max_chunk_size_tokens: number; chunk_overlap_tokens: number } };

/** The strategy a file reports for the one asked (`auto` is static 800/400, as OpenAI's). */
export function chunkingStrategy(asked: ChunkingRequest): ChunkingStrategy {
  if (asked.type === 'auto') return DEFAULT_CHUNKING;
  const { max_chunk_size_tokens, chunk_overlap_tokens } = asked.static;
  return { type: 'static', static: { max_chunk_size_tokens, chunk_overlap_tokens } };
}

const int = v.pipe(v.number(), v.integer());

/**
 * `chunking_strategy` as OpenAI's requests take it: `{type: 'auto'}`, or `{type: 'static',
 * static: {max_chunk_size_tokens: 100–4096, chunk_overlap_tokens: 0 to half the max}}`; its
 * output is the strategy a file reports (`chunkingStrategy`).
 */
export const ChunkingStrategySchema = v.pipe(
  v.variant('type', [
    v.looseObject({ type: v.literal('auto') }),
    v.pipe(
      v.looseObject({
        type: v.literal('static'),
        static: v.looseObject({
          max_chunk_size_tokens: v.pipe(int, v.minValue(100), v.maxValue(4096)),
          chunk_overlap_tokens: v.pipe(int, v.minValue(0)),
        }),
      }),
      v.forward(
        v.check(
          (s) => s.static.chunk_overlap_tokens <= s.static.max_chunk_size_tokens / 2,
          'chunk_overlap_tokens must not exceed half of max_chunk_size_tokens.',
        ),
        ['static', 'chunk_overlap_tokens'],
      ),
    ),
  ]),
  v.transform(chunkingStrategy),
);

/** A token's share of one UTF-16 code unit (a surrogate pair is one character, one token). */
function weight(code: number): number {
  if (code < 0x80) return 0.25;
  if (code >= 0xdc00 && code <= 0xdfff) return 0; // the second half of a pair
  return code < 0x3000 ? 0.5 : 1;
}

/** The estimated tokens of a text (see the module's comment). */
export function estimateTokens(text: string): number {
  let tokens = 0;
  for (let i = 0; i < text.length; i++) tokens += weight(text.charCodeAt(i));
  return Math.ceil(tokens);
}

/** `[start, end)` of each word of `text` (a run without white space), a word over `max` cut up. */
function words(text: string, before: Float64Array, max: number): [number, number][] {
  const spans: [number, number][] = [];
  for (const match of text.matchAll(/\S+/g)) {
    let start = match.index;
    const end = start + match[0].length;
    while ((before[end] ?? 0) - (before[start] ?? 0) > max) {
      let cut = start + 1;
      while (cut < end && (before[cut + 1] ?? 0) - (before[start] ?? 0) <= max) cut++;
      // Never between the halves of a surrogate pair.
      if (/[\uDC00-\uDFFF]/.test(text[cut] ?? '') && cut - 1 > start) cut--;
      spans.push([start, cut]);
      start = cut;
    }
    spans.push([start, end]);
  }
  return spans;
}

/** One section's chunks (texts), by the strategy's sizes. */
function cut(text: string, max: number, overlap: number): string[] {
  const before = new Float64Array(text.length + 1);
  for (let i = 0; i < text.length; i++)
    before[i + 1] = (before[i] ?? 0) + weight(text.charCodeAt(i));
  const spans = words(text, before, max);
  const tokens = (from: number, to: number) =>
    (before[spans[to]?.[1] ?? 0] ?? 0) - (before[spans[from]?.[0] ?? 0] ?? 0);
  const chunks: string[] = [];
  let first = 0;
  let last = 0;
  while (first < spans.length) {
    // The chunk grows word by word while it fits.
    if (last < first) last = first;
    while (last + 1 < spans.length && tokens(first, last + 1) <= max) last++;
    chunks.push(text.slice(spans[first]?.[0], spans[last]?.[1]));
    if (last === spans.length - 1) break;
    // The next begins with the chunk's last words that fit in the overlap, and moves on by one
    // word at least.
    let next = last + 1;
    while (next - 1 > first && tokens(next - 1, last) <= overlap) next--;
    first = next;
  }
  return chunks;
}

/**
 * The chunks of a document's sections, in order: each has its section's page or heading; none is
 * empty, none spans two sections, and each holds at most `max_chunk_size_tokens` by the
 * estimate. A section that fits is one chunk.
 */
export function chunkSections(sections: Section[], strategy: ChunkingStrategy): Section[] {
  const { max_chunk_size_tokens: max, chunk_overlap_tokens: overlap } = strategy.static;
  const chunks: Section[] = [];
  for (const section of sections) {
    const { text: _text, ...where } = section;
    for (const text of cut(section.text, max, overlap)) chunks.push({ ...where, text });
  }
  return chunks;
}
