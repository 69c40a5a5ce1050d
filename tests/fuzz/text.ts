/**
 * @module
 * Text for the fuzz cases, hostile on purpose: every string reaches the echo reply, so it must
 * come back whole. Shared by the chat cases (generate.ts) and the Responses cases (responses.ts).
 */
import type { Rng } from './generate';

export const WORDS = [
  'hello',
  'world',
  'Ω',
  '😀',
  'é',
  '"quoted"',
  '\\back\\slash',
  '</script><script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  'data: [DONE]',
  '{"error":{"code":"x"}}',
  '\u0000',
  '\u0007',
  '\u001b[31m',
  '\u2028',
  '\u2029',
  '\u0085',
  '\ud800',
  '\udfff',
  '\udbff\udfff',
  'a\ud800b',
  '\u202e',
  '%00',
  '${x}',
  "'; DROP TABLE x; --",
  '-->',
  '[',
  ']',
  'Bearer',
];
/** Whitespace of every kind `\s` knows, and characters that look like it but are not. */
export const SPACES = [
  ' ',
  ' ',
  ' ',
  '  ',
  '\t',
  '\n',
  '\r\n',
  '\r\n\r\n',
  '\u00a0',
  '\u3000',
  '\ufeff',
];

export function text(rng: Rng, maxWords = 6): string {
  const n = rng.int(0, maxWords);
  let out = rng.chance(0.15) ? rng.pick(SPACES) : '';
  for (let i = 0; i < n; i += 1) {
    out += rng.chance(0.7) ? rng.pick(WORDS.slice(0, 5)) : rng.pick(WORDS);
    if (i < n - 1 || rng.chance(0.2)) out += rng.pick(SPACES);
  }
  return out;
}
