import { describe, expect, it } from 'vitest';
import { fixtureGguf } from '../../../scripts/fixture-gguf.mjs';
import {
  embeddingFactsOf,
  embeddingLengthOf,
  readGgufHeader,
  SMALL_ARRAY,
  type GgufValue,
} from '../../../src/models/added/gguf-header';

/** One value as the test writes it: its type number and its bytes. */
type Value = [type: number, bytes: number[]];

const u32 = (n: number): number[] => [...new Uint8Array(new Uint32Array([n]).buffer)];
const u64 = (n: bigint | number): number[] => [
  ...new Uint8Array(new BigUint64Array([BigInt(n)]).buffer),
];
const text = (s: string): number[] => {
  const utf8 = [...new TextEncoder().encode(s)];
  return [...u64(utf8.length), ...utf8];
};
const str = (s: string): Value => [8, text(s)];
const uint = (n: number): Value => [4, u32(n)];

/** A GGUF v3 header with these pairs and no tensors. */
function header(pairs: [string, Value][], options: { kvCount?: bigint | number } = {}) {
  const bytes = [
    ...[0x47, 0x47, 0x55, 0x46],
    ...u32(3),
    ...u64(0),
    ...u64(options.kvCount ?? pairs.length),
  ];
  for (const [key, [type, value]] of pairs) bytes.push(...text(key), ...u32(type), ...value);
  return new Uint8Array(bytes);
}

/** The metadata of a model of this architecture with these pairs of its own. */
function model(arch: string, own: Record<string, Value>): Map<string, GgufValue> {
  const pairs: [string, Value][] = [['general.architecture', str(arch)]];
  for (const [key, value] of Object.entries(own)) pairs.push([`${arch}.${key}`, value]);
  const read = readGgufHeader(header(pairs));
  expect(read).toMatchObject({ complete: true, error: null });
  return read.metadata;
}

describe('readGgufHeader', () => {
  const fixture = fixtureGguf({ contextLength: 1024 });

  it('reads the metadata of the fixture model, walking over its vocabulary', () => {
    const read = readGgufHeader(fixture);
    expect(read).toMatchObject({ version: 3, complete: true, error: null });
    expect(read.kvCount).toBe(read.metadata.size);
    expect(read.tensorCount).toBeGreaterThan(0);
    const m = read.metadata;
    expect(m.get('general.architecture')).toBe('llama');
    expect(m.get('llama.context_length')).toBe(1024);
    expect(m.get('llama.embedding_length')).toBe(64);
    expect(m.get('llama.rope.freq_base')).toBe(10000);
    expect(m.get('tokenizer.ggml.add_bos_token')).toBe(true);
    // The vocabulary is walked over, not kept, and the keys after it are read.
    const tokens = m.get('tokenizer.ggml.tokens');
    expect(tokens).toMatchObject({ type: 'array', of: 'string', values: null });
    expect((tokens as { length: number }).length).toBeGreaterThan(SMALL_ARRAY);
    expect(m.get('tokenizer.ggml.scores')).toMatchObject({ of: 'f32', values: null });
    expect(m.get('tokenizer.chat_template')).toEqual(expect.stringContaining('<|im_start|>'));
    expect(embeddingFactsOf(m)).toBeNull();
  });

  it('never throws on the fixture cut at any byte of its first 4 KiB, and says it is cut', () => {
    const whole = readGgufHeader(fixture);
    const keys = [...whole.metadata.keys()];
    let previous = 0;
    for (let end = 0; end <= 4096; end++) {
      const read = readGgufHeader(fixture.subarray(0, end));
      expect(read.complete).toBe(false);
      expect(read.error).toBeNull();
      // What was read is the beginning of the whole, and grows with the bytes.
      const got = [...read.metadata.keys()];
      expect(got).toEqual(keys.slice(0, got.length));
      expect(got.length).toBeGreaterThanOrEqual(previous);
      previous = got.length;
    }
    expect(previous).toBeGreaterThan(10);
    // The vocabulary (a few KiB) is not whole in the first 4 KiB: the cut fell in it.
    expect(readGgufHeader(fixture.subarray(0, 4096)).metadata.has('tokenizer.ggml.tokens')).toBe(
      false,
    );
  });

  it('keeps the elements of a short array', () => {
    const dims = [...u32(4), ...u64(3), ...u32(256), ...u32(128), ...u32(64)];
    const read = readGgufHeader(header([['x.dims', [9, dims]]]));
    expect(read.metadata.get('x.dims')).toEqual({
      type: 'array',
      of: 'u32',
      length: 3,
      values: [256, 128, 64],
    });
  });

  it('reads every scalar type', () => {
    const f64 = [...new Uint8Array(new Float64Array([0.5]).buffer)];
    const read = readGgufHeader(
      header([
        ['u8', [0, [200]]],
        ['i8', [1, [0xff]]],
        ['u16', [2, [0x34, 0x12]]],
        ['i16', [3, [0xfe, 0xff]]],
        ['i32', [5, u32(0xffffffff)]],
        ['bool', [7, [0]]],
        ['u64', [10, u64(2n ** 60n)]],
        ['i64', [11, u64(2n ** 64n - 5n)]],
        ['f64', [12, f64]],
      ]),
    );
    expect(Object.fromEntries(read.metadata)).toEqual({
      u8: 200,
      i8: -1,
      u16: 0x1234,
      i16: -2,
      i32: -1,
      bool: false,
      u64: 2n ** 60n,
      i64: -5,
      f64: 0.5,
    });
  });

  it.each([
    [
      'a key length of 2^60',
      () => new Uint8Array([...header([]).slice(0, 16), ...u64(1), ...u64(2n ** 60n)]),
      /key/,
    ],
    ['an array count of 2^50', () => header([['a', [9, [...u32(0), ...u64(2n ** 50n)]]]]), /array/],
    ['a value type of 99', () => header([['a', [99, [0, 0, 0, 0]]]]), /type 99/],
    ['an array of type 99', () => header([['a', [9, [...u32(99), ...u64(1), 0]]]]), /type 99/],
    ['a string value of 2^62 bytes', () => header([['a', [8, u64(2n ** 62n)]]]), /string/],
    ['2^40 pairs', () => header([], { kvCount: 2n ** 40n }), /pairs/],
    [
      'a key given twice',
      () =>
        header([
          ['a', uint(1)],
          ['a', uint(2)],
        ]),
      /twice/,
    ],
    ['version 1', () => new Uint8Array([0x47, 0x47, 0x55, 0x46, ...u32(1)]), /version 1/],
    ['a big-endian file', () => new Uint8Array([0x47, 0x47, 0x55, 0x46, 0, 0, 0, 3]), /big-endian/],
    ['another magic', () => new TextEncoder().encode('<!doctype html>'), /GGUF/],
  ])('stops with an error on %s, quickly', (_what, make, message) => {
    const started = performance.now();
    const read = readGgufHeader(make());
    expect(read.complete).toBe(false);
    expect(read.error).toMatch(message);
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('walks over a long array of empty strings without taking its word for the count', () => {
    // 2^32 elements are believable; the bytes end long before, and reading stops there.
    const bytes = header([['a', [9, [...u32(8), ...u64(2 ** 32), ...new Array(80_000).fill(0)]]]]);
    const started = performance.now();
    const read = readGgufHeader(bytes);
    expect(read).toMatchObject({ complete: false, error: null });
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('keeps the pairs before a spoilt one', () => {
    const read = readGgufHeader(
      header([
        ['general.architecture', str('bert')],
        ['b', [99, []]],
      ]),
    );
    expect(read.metadata.get('general.architecture')).toBe('bert');
    expect(read.error).toMatch(/type 99/);
  });

  it('says it is cut, without an error, for an empty buffer or the magic alone', () => {
    for (const bytes of [new Uint8Array(0), new Uint8Array([0x47, 0x47])]) {
      expect(readGgufHeader(bytes)).toMatchObject({ complete: false, error: null, version: null });
    }
  });
});

describe('embeddingFactsOf', () => {
  it.each([
    [1, 'mean'],
    [2, 'cls'],
    [3, 'last'],
  ])('makes pooling type %i (%s) an embedding model, as wide as the model', (type, pooling) => {
    const metadata = model('bert', { pooling_type: uint(type), embedding_length: uint(384) });
    expect(embeddingFactsOf(metadata)).toEqual({
      dimensions: 384,
      pooling,
      normalized: true,
      matryoshka: [],
    });
  });

  it.each([
    ['none (0)', { pooling_type: uint(0) }],
    ['rank (4), a reranker', { pooling_type: uint(4) }],
    ['a type it does not know (9)', { pooling_type: uint(9) }],
    ['no pooling type', {}],
    ['a pooling type that is a string', { pooling_type: str('mean') }],
  ])('finds no embedding model in %s', (_what, own) => {
    expect(embeddingFactsOf(model('bert', { ...own, embedding_length: uint(384) }))).toBeNull();
  });

  it('reads the keys of the architecture the metadata names, only', () => {
    const other = model('qwen3', { embedding_length: uint(1024) });
    other.set('llama.pooling_type', 1);
    expect(embeddingFactsOf(other)).toBeNull();
    expect(embeddingFactsOf(new Map([['bert.pooling_type', 1]]))).toBeNull();
  });

  it('gives null dimensions when the metadata lack the width', () => {
    expect(embeddingFactsOf(model('bert', { pooling_type: uint(1) }))?.dimensions).toBeNull();
    expect(embeddingLengthOf(model('bert', {}))).toBeNull();
  });
});
