import { describe, expect, it } from 'vitest';
import { MAX_NESTING, parseMarkdown } from '../../../../../src/app/chat/markdown/markdown-parse';

/** Elements HTML cannot nest (marked writes them as `<br>`, `<hr>`, `<img …>`). */
const VOID = new Set(['br', 'hr', 'img', 'input']);

/** How many elements named `names` the HTML has, and how deep inside one another at most. */
function nesting(html: string, names: readonly string[]): { count: number; depth: number } {
  const open: string[] = [];
  let count = 0;
  let inside = 0;
  let depth = 0;
  for (const [, closing, name] of html.matchAll(/<(\/?)([a-z][a-z0-9]*)\b[^>]*>/g)) {
    if (VOID.has(name!)) continue;
    const counted = names.includes(name!);
    if (closing) {
      expect(open.pop()).toBe(name); // well formed, or the depth below means nothing
      if (counted) inside--;
    } else {
      open.push(name!);
      if (counted) {
        count++;
        inside++;
        depth = Math.max(depth, inside);
      }
    }
  }
  expect(open).toEqual([]);
  return { count, depth };
}

/** The text a reader sees: no tags, entities decoded. */
function textOf(html: string): string {
  const entities: Record<string, string> = {
    '&amp;': '&',
    '&lt;': '<',
    '&gt;': '>',
    '&quot;': '"',
    '&#39;': "'",
  };
  return html.replace(/<[^>]*>/g, '').replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => entities[e]!);
}

const occurrences = (text: string, marker: string) => text.split(marker).length - 1;

const BLOCKS = ['blockquote', 'ul', 'ol'] as const;

/**
 * Each way to nest quotes and lists, `n` levels of a unit deep. `markers` are what one unit is
 * made of, each with the element it makes when rendered: a marker is either an element or text.
 */
const blockForms: {
  name: string;
  make: (n: number) => string;
  markers: { marker: string; element: (typeof BLOCKS)[number] }[];
  sizes: number[];
}[] = [
  ...(['> ', '>'] as const).map((unit) => ({
    name: `quotes written "${unit}"`,
    make: (n: number) => `${unit.repeat(n)} end`,
    markers: [{ marker: '>', element: 'blockquote' as const }],
    sizes: [10, 32, 33, 1_000, 100_000],
  })),
  ...(['- ', '* ', '+ '] as const).map((unit) => ({
    name: `bullet lists written "${unit}"`,
    make: (n: number) => `${unit.repeat(n)}end`,
    markers: [{ marker: unit.trim(), element: 'ul' as const }],
    sizes: [10, 32, 33, 1_000, 100_000],
  })),
  ...(['1. ', '1) '] as const).map((unit) => ({
    name: `ordered lists written "${unit}"`,
    make: (n: number) => `${unit.repeat(n)}end`,
    markers: [{ marker: unit.trim(), element: 'ol' as const }],
    sizes: [10, 32, 33, 1_000, 100_000],
  })),
  {
    name: 'quotes and bullet lists alternating ("> - ")',
    make: (n) => `${'> - '.repeat(n)}end`,
    markers: [
      { marker: '>', element: 'blockquote' },
      { marker: '-', element: 'ul' },
    ],
    sizes: [10, 16, 17, 1_000, 100_000],
  },
  {
    name: 'quotes and ordered lists alternating ("> 1. ")',
    make: (n) => `${'> 1. '.repeat(n)}end`,
    markers: [
      { marker: '>', element: 'blockquote' },
      { marker: '1.', element: 'ol' },
    ],
    sizes: [10, 16, 17, 1_000, 100_000],
  },
  // An item per line, each indented under the one before: the text grows as the square of the
  // depth (4 MB at 2,000), so these stop there.
  {
    name: 'bullet items indented under one another',
    make: (n) => Array.from({ length: n }, (_, i) => `${'  '.repeat(i)}- item${i}`).join('\n'),
    markers: [{ marker: '-', element: 'ul' }],
    sizes: [10, 32, 33, 1_000, 2_000],
  },
  {
    name: 'ordered items indented under one another',
    make: (n) => Array.from({ length: n }, (_, i) => `${'   '.repeat(i)}1. item${i}`).join('\n'),
    markers: [{ marker: '1.', element: 'ol' }],
    sizes: [10, 32, 33, 1_000, 2_000],
  },
];

describe(`quotes and lists nest at most ${MAX_NESTING} deep`, () => {
  for (const form of blockForms) {
    for (const n of form.sizes) {
      it(`${form.name}, ${n} deep, render ${Math.min(n * form.markers.length, MAX_NESTING)} deep with every marker and word shown`, () => {
        const html = parseMarkdown(form.make(n));
        const levels = nesting(html, BLOCKS);
        expect(levels.depth).toBe(Math.min(n * form.markers.length, MAX_NESTING));
        const text = textOf(html);
        // Nothing is lost: each marker is an element or shown as text.
        for (const { marker, element } of form.markers) {
          const elements = nesting(html, [element]).count;
          expect(occurrences(text, marker) + elements).toBe(n);
        }
        if (form.name.includes('indented')) {
          // One pass over the text (a `toContain` per item read megabytes 2,000 times).
          const shown = new Set(text.match(/item\d+/g));
          const items = Array.from({ length: n }, (_, i) => `item${i}`);
          expect(items.filter((item) => !shown.has(item))).toEqual([]);
        } else {
          expect(text).toContain('end');
        }
      }, 30_000);
    }
  }
});

const INLINE = ['em', 'strong', 'del', 'a'] as const;

/** Emphasis and links inside one another, `n` deep: each opens before a word and closes after one. */
const inlineForms: {
  name: string;
  make: (n: number) => string;
  delimiter: string;
  sizes?: number[];
}[] = [
  {
    name: 'emphasis with "*"',
    make: (n) => `${'*a '.repeat(n)}x${' b*'.repeat(n)}`,
    delimiter: '*',
  },
  {
    name: 'emphasis with "_"',
    make: (n) => `${'_a '.repeat(n)}x${' b_'.repeat(n)}`,
    delimiter: '_',
  },
  {
    name: 'strong emphasis',
    make: (n) => `${'**a '.repeat(n)}x${' b**'.repeat(n)}`,
    delimiter: '*',
  },
  { name: 'strikethrough', make: (n) => `${'~~a '.repeat(n)}x${' b~~'.repeat(n)}`, delimiter: '~' },
  // marked matches one long run in time that grows as its square (2 s at 2 × 30,000), depth aside.
  {
    name: 'one run of "*"',
    make: (n) => `${'*'.repeat(n)}a x b${'*'.repeat(n)}`,
    delimiter: '*',
    sizes: [10, 32, 33, 1_000, 10_000],
  },
  { name: 'links', make: (n) => `${'[a '.repeat(n)}x${' b](u)'.repeat(n)}`, delimiter: '[' },
  {
    name: 'emphasis and links',
    make: (n) => `${'*[a '.repeat(n)}x${' b](u)*'.repeat(n)}`,
    delimiter: '[',
  },
];

/** How many of a delimiter each element takes out of the text. */
const TAKES: Record<string, Partial<Record<(typeof INLINE)[number], number>>> = {
  '*': { em: 2, strong: 4 },
  _: { em: 2, strong: 4 },
  '~': { del: 4 },
  '[': { a: 1 },
};

describe(`emphasis and links nest at most ${MAX_NESTING} deep`, () => {
  for (const form of inlineForms) {
    for (const n of form.sizes ?? [10, 32, 33, 1_000, 100_000]) {
      it(`${form.name}, ${n} deep, render at most ${MAX_NESTING} deep with every word and delimiter shown`, () => {
        const source = form.make(n);
        const html = parseMarkdown(source);
        expect(nesting(html, INLINE).depth).toBeLessThanOrEqual(MAX_NESTING);
        const text = textOf(html);
        expect(occurrences(text, 'a')).toBe(occurrences(source, 'a'));
        expect(occurrences(text, 'b')).toBe(occurrences(source, 'b'));
        expect(text).toContain('x');
        const taken = Object.entries(TAKES[form.delimiter]!).reduce(
          (sum, [element, each]) => sum + nesting(html, [element]).count * each,
          0,
        );
        expect(occurrences(text, form.delimiter) + taken).toBe(occurrences(source, form.delimiter));
      }, 30_000);
    }
  }
});
