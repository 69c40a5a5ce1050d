import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import {
  filterSchema,
  hybridSearch,
  matchesFilter,
  SearchIndex,
  type Filter,
  type SearchFile,
  type SearchOptions,
} from '../../../src/documents/search';
import type { Chunk } from '../../../src/documents/types';

const DIMS = 8;

/** A unit vector at `angle` from the query's direction (axis 0), in the plane of axes 0 and `axis`. */
function at(angle: number, axis = 1): Float32Array {
  const vector = new Float32Array(DIMS);
  vector[0] = Math.cos(angle);
  vector[axis] = Math.sin(angle);
  return vector;
}
const QUERY = at(0);

function chunk(fileId: string, index: number, text: string, vector: Float32Array): Chunk {
  return {
    id: `vs_1/${fileId}/${index}`,
    vector_store_id: 'vs_1',
    file_id: fileId,
    index,
    text,
    vector,
  };
}

const FILLER = [
  'The device starts when the power button is held for three seconds.',
  'Charge the device with the cable that came in the box.',
  'The screen of the device dims after a minute without a touch.',
  'Updates for the device arrive over the air at night.',
  'The battery of the device lasts about two days.',
  'Pair the device with a phone from its settings page.',
  'The device speaker plays alerts and music.',
  'Store the device somewhere dry and cool.',
  'The warranty covers the device for a year.',
  'A light on the device blinks while it charges.',
];
const RARE = 'Descale the zyxolate every month with warm vinegar.';

/** The filler passages, the embedding ranking them in this order, and the rare one last of all. */
function corpus(): Chunk[] {
  const out = FILLER.map((text, i) => chunk('file-a', i, text, at(0.1 + i * 0.1)));
  out.push(chunk('file-b', 0, RARE, at(Math.PI)));
  return out;
}

const files = (ids: Record<string, SearchFile['attributes']>): Map<string, SearchFile> =>
  new Map(
    Object.entries(ids).map(([id, attributes]) => [id, { filename: `${id}.md`, attributes }]),
  );

const FILES = files({ 'file-a': { lang: 'en' }, 'file-b': { lang: 'en' } });
const options = (more: Partial<SearchOptions> = {}): SearchOptions => ({
  maxResults: 10,
  files: FILES,
  ...more,
});
const ids = (results: { chunk_id: string }[]) => results.map((r) => r.chunk_id);

describe('hybrid search', () => {
  it('ranks a rare word’s passage first though the embedding ranks it last', () => {
    const chunks = corpus();
    // 'device' is in every filler passage, and the embedding's favourite is one of them.
    for (const text of ['zyxolate', 'How do I descale the zyxolate of my device?']) {
      const results = hybridSearch(chunks, { texts: [text], vectors: [QUERY] }, options());
      expect(results[0]).toMatchObject({
        chunk_id: 'vs_1/file-b/0',
        file_id: 'file-b',
        filename: 'file-b.md',
        attributes: { lang: 'en' },
        content: [{ type: 'text', text: RARE }],
      });
      expect(results[1]!.chunk_id).toBe('vs_1/file-a/0');
    }
  });

  it('finds a close embedding match that shares no word with the query', () => {
    const chunks = corpus();
    chunks.push(chunk('file-b', 1, 'Fixing cars at the garage.', at(0.01)));
    const query = { texts: ['automobile repair'], vectors: [QUERY] };
    const results = hybridSearch(chunks, query, options({ maxResults: 3 }));
    expect(results[0]!.chunk_id).toBe('vs_1/file-b/1');
    expect(results[0]!.score).toBeCloseTo(0.5, 5);
  });

  it('lets the fusion weights change the order', () => {
    const query = { texts: ['zyxolate'], vectors: [QUERY] };
    const first = (weights: { embedding: number; text: number }) =>
      hybridSearch(corpus(), query, options({ weights }))[0]!.chunk_id;
    expect(first({ embedding: 1, text: 1 })).toBe('vs_1/file-b/0');
    // Last of 11 in the embedding ranking is 1/71 where first is 1/61: the keyword's first place
    // outweighs that gap unless its weight is under about a seventh of the embedding's.
    expect(first({ embedding: 10, text: 1 })).toBe('vs_1/file-a/0');
    expect(first({ embedding: 1, text: 0.1 })).toBe('vs_1/file-a/0');
    expect(first({ embedding: 1, text: 0.2 })).toBe('vs_1/file-b/0');
    expect(first({ embedding: 0.5, text: 1 })).toBe('vs_1/file-b/0');
    // The keyword ranking alone: only what matches a word.
    const words = hybridSearch(corpus(), query, options({ weights: { embedding: 0, text: 1 } }));
    expect(ids(words)).toEqual(['vs_1/file-b/0']);
    expect(words[0]!.score).toBe(1);
  });

  it('scores in 0..1 and drops what falls under the threshold', () => {
    const chunks = corpus();
    // First in both rankings: the highest score there is.
    chunks.push(chunk('file-b', 1, 'A zyxolate guide.', at(0)));
    const query = { texts: ['zyxolate'], vectors: [QUERY] };
    const all = hybridSearch(chunks, query, options({ maxResults: 50 }));
    expect(all[0]).toMatchObject({ chunk_id: 'vs_1/file-b/1', score: 1 });
    for (const r of all) expect(r.score).toBeGreaterThan(0);
    for (const r of all) expect(r.score).toBeLessThanOrEqual(1);
    expect(all.map((r) => r.score)).toEqual([...all.map((r) => r.score)].sort((a, b) => b - a));
    const kept = hybridSearch(chunks, query, options({ scoreThreshold: 0.6 }));
    expect(ids(kept)).toEqual(['vs_1/file-b/1', 'vs_1/file-b/0']);
    expect(hybridSearch(chunks, query, options({ scoreThreshold: 1 }))).toHaveLength(1);
  });

  it('returns at most maxResults', () => {
    const query = { texts: ['device'], vectors: [QUERY] };
    expect(hybridSearch(corpus(), query, options({ maxResults: 3 }))).toHaveLength(3);
    expect(hybridSearch(corpus(), query, options({ maxResults: 50 }))).toHaveLength(11);
    expect(hybridSearch(corpus(), query, options({ maxResults: 0 }))).toEqual([]);
  });

  it('skips the chunks of files it is not given (deleted ones)', () => {
    const query = { texts: ['zyxolate'], vectors: [QUERY] };
    const only = files({ 'file-a': {} });
    const results = hybridSearch(corpus(), query, options({ files: only, maxResults: 50 }));
    expect(results).toHaveLength(10);
    expect(results.every((r) => r.file_id === 'file-a')).toBe(true);
  });

  it('breaks ties by file id, then the chunk’s place, whatever the order of the chunks', () => {
    const same = (fileId: string, index: number) => chunk(fileId, index, 'Same words here.', at(1));
    const chunks = [same('file-c', 1), same('file-b', 0), same('file-c', 0), same('file-a', 2)];
    const all = files({ 'file-a': {}, 'file-b': {}, 'file-c': {} });
    const query = { texts: ['words'], vectors: [QUERY] };
    const expected = ['vs_1/file-a/2', 'vs_1/file-b/0', 'vs_1/file-c/0', 'vs_1/file-c/1'];
    for (const order of [chunks, [...chunks].reverse()]) {
      const results = hybridSearch(order, query, options({ files: all }));
      expect(ids(results)).toEqual(expected);
      expect(new Set(results.map((r) => r.score)).size).toBe(1);
    }
  });

  it('fuses several query strings and their vectors', () => {
    const chunks = corpus();
    chunks.push(chunk('file-b', 1, 'The quorbit hums when it is full.', at(Math.PI - 0.1)));
    const one = hybridSearch(chunks, { texts: ['zyxolate'], vectors: [QUERY] }, options());
    expect(ids(one)).not.toContain('vs_1/file-b/1');
    const query = { texts: ['zyxolate', 'quorbit'], vectors: [QUERY, at(Math.PI - 0.1)] };
    const both = hybridSearch(chunks, query, options({ maxResults: 2 }));
    expect(ids(both).sort()).toEqual(['vs_1/file-b/0', 'vs_1/file-b/1']);
  });

  it('gives the page and the heading a chunk came from', () => {
    const paged = {
      ...chunk('file-a', 0, 'Zyxolate on page four.', at(0)),
      page: 4,
      heading: 'Care',
    };
    const [result] = hybridSearch([paged], { texts: ['zyxolate'], vectors: [] }, options());
    expect(result).toMatchObject({ page: 4, heading: 'Care', score: 1 });
    const [plain] = hybridSearch(corpus(), { texts: [], vectors: [QUERY] }, options());
    expect(plain).not.toHaveProperty('page');
    expect(plain).not.toHaveProperty('heading');
  });
});

describe('filters', () => {
  const attributes = { year: 2024, author: 'ada', draft: false, date: '2024-05-01' };
  const cases: [Filter, boolean][] = [
    [{ type: 'eq', key: 'author', value: 'ada' }, true],
    [{ type: 'eq', key: 'year', value: '2024' }, false],
    [{ type: 'eq', key: 'draft', value: false }, true],
    [{ type: 'ne', key: 'author', value: 'bob' }, true],
    [{ type: 'ne', key: 'author', value: 'ada' }, false],
    [{ type: 'gt', key: 'year', value: 2023 }, true],
    [{ type: 'gt', key: 'year', value: 2024 }, false],
    [{ type: 'gte', key: 'year', value: 2024 }, true],
    [{ type: 'lt', key: 'year', value: 2024 }, false],
    [{ type: 'lte', key: 'year', value: 2024 }, true],
    [{ type: 'lt', key: 'date', value: '2024-06-01' }, true],
    [{ type: 'gt', key: 'year', value: '2000' }, false],
    [{ type: 'gt', key: 'draft', value: false }, false],
    [{ type: 'in', key: 'author', value: ['bob', 'ada'] }, true],
    [{ type: 'in', key: 'year', value: ['2024'] }, false],
    [{ type: 'nin', key: 'author', value: ['bob'] }, true],
    [{ type: 'nin', key: 'author', value: ['ada'] }, false],
    // A missing attribute matches no comparison, `ne` and `nin` included.
    [{ type: 'eq', key: 'lang', value: 'en' }, false],
    [{ type: 'ne', key: 'lang', value: 'en' }, false],
    [{ type: 'nin', key: 'lang', value: ['en'] }, false],
    [{ type: 'and', filters: [] }, true],
    [{ type: 'or', filters: [] }, false],
  ];
  it.each(cases)('%j matches: %s', (filter, expected) => {
    expect(matchesFilter(filter, attributes)).toBe(expected);
    expect(v.parse(filterSchema, filter)).toEqual(filter);
  });

  it('nests and and or', () => {
    const recent = { type: 'gte', key: 'year', value: 2024 } as const;
    const byAda = { type: 'eq', key: 'author', value: 'ada' } as const;
    const byBob = { type: 'eq', key: 'author', value: 'bob' } as const;
    const filter: Filter = {
      type: 'and',
      filters: [recent, { type: 'or', filters: [byBob, byAda] }],
    };
    expect(matchesFilter(filter, attributes)).toBe(true);
    expect(matchesFilter(filter, { ...attributes, author: 'eve' })).toBe(false);
    expect(matchesFilter(filter, { ...attributes, year: 2020 })).toBe(false);
  });

  it('filters the search by the files’ attributes', () => {
    const chunks = [
      chunk('file-a', 0, 'Zyxolate one.', at(0)),
      chunk('file-b', 0, 'Zyxolate two.', at(1)),
    ];
    const all = files({ 'file-a': { year: 2020 }, 'file-b': { year: 2025 } });
    const query = { texts: ['zyxolate'], vectors: [QUERY] };
    const filters: Filter = { type: 'gt', key: 'year', value: 2021 };
    const results = hybridSearch(chunks, query, options({ files: all, filters }));
    expect(results.map((r) => r.file_id)).toEqual(['file-b']);
    // Ranked among what passes: first in both rankings.
    expect(results[0]!.score).toBe(1);
  });

  it('refuses a bad filter, naming the field', () => {
    const issue = (input: unknown) => {
      const parsed = v.safeParse(filterSchema, input);
      expect(parsed.success).toBe(false);
      return parsed.issues![0].path?.map((p) => p.key).join('.');
    };
    expect(issue({ type: 'like', key: 'a', value: 1 })).toBe('type');
    expect(issue({ type: 'eq', key: 'a', value: [1] })).toBe('value');
    expect(issue({ type: 'in', key: 'a', value: 1 })).toBe('value');
    expect(issue({ type: 'eq', key: '', value: 1 })).toBe('key');
    const nested = { type: 'or', filters: [{ type: 'and', filters: [{ type: 'eq', key: 'a' }] }] };
    expect(issue(nested)).toBe('filters.0.filters.0.value');
    let deep: unknown = { type: 'eq', key: 'a', value: 1 };
    for (let i = 0; i < 9; i += 1) deep = { type: 'and', filters: [deep] };
    expect(v.safeParse(filterSchema, deep).success).toBe(false);
    let deepest: unknown = deep;
    for (let i = 0; i < 100_000; i += 1) deepest = { type: 'and', filters: [deepest] };
    expect(v.safeParse(filterSchema, deepest).success).toBe(false);
  });
});

describe('SearchIndex', () => {
  const query = { texts: ['zyxolate'], vectors: [QUERY] };
  it('keeps up with files put again and taken out', () => {
    const index = new SearchIndex(corpus());
    expect(index.size).toBe(11);
    expect(index.search(query, options())[0]!.chunk_id).toBe('vs_1/file-b/0');
    index.replaceFile('file-b', [chunk('file-b', 0, 'Now about a quorbit.', at(Math.PI))]);
    expect(ids(index.search(query, options()))).not.toContain('vs_1/file-b/0');
    expect(index.search({ ...query, texts: ['quorbit'] }, options())[0]!.chunk_id).toBe(
      'vs_1/file-b/0',
    );
    expect(index.removeFile('file-a')).toBe(10);
    expect(index.removeFile('file-a')).toBe(0);
    expect(ids(index.search(query, options()))).toEqual(['vs_1/file-b/0']);
    index.add([chunk('file-a', 0, 'The zyxolate is back.', at(0))]);
    expect(index.search(query, options())[0]).toMatchObject({
      chunk_id: 'vs_1/file-a/0',
      score: 1,
    });
  });

  it('refuses vectors of another width', () => {
    const index = new SearchIndex(corpus());
    expect(() => index.add([chunk('file-c', 0, 'x', new Float32Array(4))])).toThrow(RangeError);
    expect(() => index.search({ texts: [], vectors: [new Float32Array(4)] }, options())).toThrow(
      RangeError,
    );
  });

  it('answers nothing when empty or asked nothing', () => {
    expect(new SearchIndex().search(query, options())).toEqual([]);
    expect(new SearchIndex(corpus()).search({ texts: [], vectors: [] }, options())).toEqual([]);
  });
});
