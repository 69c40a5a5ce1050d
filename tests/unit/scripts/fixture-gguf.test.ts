/**
 * The fixture GGUF read back by a reader of its own (the GGUF v3 layout from the format's
 * description, not the generator's code), and its crafted weights run by hand: the last token's
 * embedding, RMS-normed, times `output.weight`; for the embedding variant, every token's hidden
 * state RMS-normed, mean-pooled and normalised. tests/e2e/fixture-gguf.spec.ts runs it in llama.cpp.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BENCH_OPTIONS,
  CHATML_TEMPLATE,
  FIXTURE_PIECES,
  FIXTURE_SENTENCE,
  FIXTURE_TOKEN_IDS,
  FIXTURE_EMBEDDING_CONTEXT,
  FIXTURE_EMBEDDING_DIMENSIONS,
  FIXTURE_EMBEDDING_POOLING,
  FIXTURE_EMBEDDING_WORDS,
  FIXTURE_VARIANTS,
  fixtureEmbedding,
  fixtureEmbeddingGguf,
  fixtureEmbeddingTokens,
  fixtureGguf,
  splitGguf,
  THINKING_PIECES,
  THINKING_TEMPLATE,
  TOOL_CALL_PIECES,
  TOOL_CALL_TEMPLATE,
} from '../../../scripts/fixture-gguf.mjs';

interface Tensor {
  name: string;
  ne: number[];
  type: number;
  offset: number;
}

interface Gguf {
  version: number;
  kv: Map<string, unknown>;
  tensors: Tensor[];
  dataStart: number;
  bytes: Uint8Array;
}

/** Reads a GGUF v3 file: header, every key/value, tensor infos, and where the data starts. */
function readGguf(bytes: Uint8Array): Gguf {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const take = (n: number) => ((at += n), at - n);
  const u64 = () => Number(view.getBigUint64(take(8), true));
  const str = () => {
    const n = u64();
    return new TextDecoder().decode(bytes.subarray(take(n), at));
  };
  const value = (type: number): unknown => {
    switch (type) {
      case 0:
        return view.getUint8(take(1));
      case 2:
        return view.getUint16(take(2), true);
      case 4:
        return view.getUint32(take(4), true);
      case 5:
        return view.getInt32(take(4), true);
      case 6:
        return view.getFloat32(take(4), true);
      case 7:
        return view.getUint8(take(1)) === 1;
      case 8:
        return str();
      case 9: {
        const of = view.getUint32(take(4), true);
        return Array.from({ length: u64() }, () => value(of));
      }
      default:
        throw new Error(`value type ${type} not expected in the fixture`);
    }
  };
  expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('GGUF');
  at = 4;
  const version = view.getUint32(take(4), true);
  const nTensors = u64();
  const nKv = u64();
  const kv = new Map<string, unknown>();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    kv.set(key, value(view.getUint32(take(4), true)));
  }
  const tensors = Array.from({ length: nTensors }, () => {
    const name = str();
    const ne = Array.from({ length: view.getUint32(take(4), true) }, u64);
    return { name, ne, type: view.getUint32(take(4), true), offset: u64() };
  });
  const alignment = (kv.get('general.alignment') as number | undefined) ?? 32;
  return { version, kv, tensors, dataStart: Math.ceil(at / alignment) * alignment, bytes };
}

const elements = (tensor: Tensor) => tensor.ne.reduce((a, b) => a * b, 1);

function f32s(gguf: Gguf, name: string): Float32Array {
  const tensor = gguf.tensors.find((t) => t.name === name);
  if (!tensor) throw new Error(`no tensor ${name}`);
  const start = gguf.dataStart + tensor.offset;
  return new Float32Array(gguf.bytes.slice(start, start + 4 * elements(tensor)).buffer);
}

/** The logits after token `id`, as the model computes them with every block adding nothing. */
function logitsAfter(gguf: Gguf, id: number): number[] {
  const width = gguf.kv.get('llama.embedding_length') as number;
  const vocab = (gguf.kv.get('tokenizer.ggml.tokens') as string[]).length;
  const embd = f32s(gguf, 'token_embd.weight').subarray(id * width, (id + 1) * width);
  const eps = gguf.kv.get('llama.attention.layer_norm_rms_epsilon') as number;
  const rms = Math.sqrt(embd.reduce((sum, x) => sum + x * x, 0) / width + eps);
  const output = f32s(gguf, 'output.weight');
  return Array.from({ length: vocab }, (_, r) =>
    embd.reduce((sum, x, c) => sum + (output[r * width + c] ?? 0) * (x / rms), 0),
  );
}

/** Token ids by logit, best first. */
const ranked = (logits: number[]) =>
  logits.map((logit, id) => ({ id, logit })).sort((a, b) => b.logit - a.logit);

describe('fixtureGguf', () => {
  const bytes = fixtureGguf();
  const gguf = readGguf(bytes);
  const tokens = gguf.kv.get('tokenizer.ggml.tokens') as string[];
  const types = gguf.kv.get('tokenizer.ggml.token_type') as number[];

  it('writes a GGUF v3 header with a llama architecture and its hyper-parameters', () => {
    expect(gguf.version).toBe(3);
    expect(Object.fromEntries(gguf.kv)).toMatchObject({
      'general.architecture': 'llama',
      'general.alignment': 32,
      'general.file_type': 0,
      'llama.context_length': 2048,
      'llama.embedding_length': 64,
      'llama.block_count': 1,
      'llama.vocab_size': tokens.length,
      'llama.rope.dimension_count': 32,
      'tokenizer.ggml.model': 'llama',
      'tokenizer.ggml.eos_token_id': FIXTURE_TOKEN_IDS.eos,
      'tokenizer.ggml.eot_token_id': FIXTURE_TOKEN_IDS.imEnd,
      'tokenizer.ggml.add_bos_token': true,
      'tokenizer.chat_template': CHATML_TEMPLATE,
    });
    expect(CHATML_TEMPLATE).toContain('add_generation_prompt');
  });

  it('has a SentencePiece vocabulary: control tokens, 256 bytes, the sentence’s pieces', () => {
    expect(tokens.slice(0, 5)).toEqual(['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>']);
    expect(types.slice(0, 5)).toEqual([2, 3, 3, 3, 3]);
    expect(tokens.slice(5, 261)).toEqual(
      Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`),
    );
    expect(new Set(types.slice(5, 261))).toEqual(new Set([6]));
    const pieces = FIXTURE_PIECES.map((piece) => piece.replace(' ', '\u2581'));
    const first = FIXTURE_TOKEN_IDS.firstPiece;
    expect(tokens.slice(first, first + pieces.length)).toEqual(pieces);
    expect(tokens).toContain('a');
    expect(tokens).toContain('\u2581a');
    expect(new Set(tokens).size).toBe(tokens.length);
    expect((gguf.kv.get('tokenizer.ggml.scores') as number[]).length).toBe(tokens.length);
  });

  it('lays out F32 tensors of the llama shapes, each aligned, packed and within the file', () => {
    expect(gguf.tensors.map((t) => t.name)).toEqual([
      'token_embd.weight',
      ...[
        'attn_norm',
        'attn_q',
        'attn_k',
        'attn_v',
        'attn_output',
        'ffn_norm',
        'ffn_gate',
        'ffn_up',
        'ffn_down',
      ].map((name) => `blk.0.${name}.weight`),
      'output_norm.weight',
      'output.weight',
    ]);
    const shape = (name: string) => gguf.tensors.find((t) => t.name === name)?.ne;
    expect(shape('token_embd.weight')).toEqual([64, tokens.length]);
    expect(shape('blk.0.attn_k.weight')).toEqual([64, 32]);
    expect(shape('blk.0.ffn_down.weight')).toEqual([192, 64]);
    expect(shape('output.weight')).toEqual([64, tokens.length]);
    expect(gguf.dataStart % 32).toBe(0);
    let next = 0;
    for (const tensor of gguf.tensors) {
      expect(tensor.type).toBe(0);
      expect(tensor.offset).toBe(next);
      next += Math.ceil((4 * elements(tensor)) / 32) * 32;
    }
    expect(bytes.length).toBe(gguf.dataStart + next);
  });

  it('is ~380 KB, the same bytes every time', () => {
    expect(bytes.length).toBeGreaterThan(250_000);
    expect(bytes.length).toBeLessThan(450_000);
    // Buffer.equals: toEqual walks 380,000 elements one by one.
    expect(Buffer.from(fixtureGguf()).equals(bytes)).toBe(true);
    expect(Buffer.from(fixtureGguf({ blocks: 2 })).equals(bytes)).toBe(false);
  });

  it('chains the pieces: any other token leads to the first, the last to the end of the turn', () => {
    const first = FIXTURE_TOKEN_IDS.firstPiece;
    const chain: number[] = [];
    let id: number = FIXTURE_TOKEN_IDS.imStart;
    for (let step = 0; step <= FIXTURE_PIECES.length; step++) {
      const [best, second] = ranked(logitsAfter(gguf, id));
      // A gap that no temperature a test uses can cross.
      expect(best!.logit - second!.logit).toBeGreaterThan(30);
      id = best!.id;
      chain.push(id);
    }
    expect(
      chain
        .slice(0, -1)
        .map((id) => tokens[id]!.replace('\u2581', ' '))
        .join(''),
    ).toBe(FIXTURE_SENTENCE);
    expect(chain.at(-1)).toBe(FIXTURE_TOKEN_IDS.imEnd);
    // Second after the last piece: the first again, so ignoring the end repeats the sentence.
    expect(ranked(logitsAfter(gguf, chain.at(-2)!))[1]?.id).toBe(first);
    for (const other of [0, 1, 2, 4, 5 + 0x0a, tokens.indexOf('a')]) {
      expect(ranked(logitsAfter(gguf, other))[0]?.id).toBe(first);
    }
  });

  it('makes the bench variant from the same vocabulary and weights scheme, ~50 MB', () => {
    const bench = fixtureGguf(BENCH_OPTIONS);
    const read = readGguf(bench);
    expect(bench.length).toBeGreaterThan(45e6);
    expect(bench.length).toBeLessThan(60e6);
    expect(read.kv.get('llama.embedding_length')).toBe(512);
    expect(read.kv.get('llama.block_count')).toBe(4);
    expect(read.kv.get('tokenizer.ggml.tokens')).toEqual(tokens);
    expect(ranked(logitsAfter(read, 1))[0]?.id).toBe(FIXTURE_TOKEN_IDS.firstPiece);
  });

  it('adds no space after special tokens when asked, and is otherwise the same model', () => {
    expect(gguf.kv.has('tokenizer.ggml.add_space_prefix')).toBe(false);
    const plain = readGguf(fixtureGguf({ spacePrefix: false }));
    expect(plain.kv.get('tokenizer.ggml.add_space_prefix')).toBe(false);
    expect(plain.kv.get('tokenizer.ggml.tokens')).toEqual(tokens);
    expect(plain.tensors.map((t) => t.name)).toEqual(gguf.tensors.map((t) => t.name));
  });

  it('refuses sizes it cannot build', () => {
    expect(() => fixtureGguf({ width: 48 })).toThrow(RangeError);
    expect(() => fixtureGguf({ width: 0 })).toThrow(RangeError);
    expect(() => fixtureGguf({ blocks: 0 })).toThrow(RangeError);
    expect(() => fixtureGguf({ contextLength: 1.5 })).toThrow(RangeError);
  });
});

/** The text the model writes after its prompt: the chain of best tokens, to the end of the turn. */
function replyOf(gguf: Gguf): string {
  const tokens = gguf.kv.get('tokenizer.ggml.tokens') as string[];
  let id: number = FIXTURE_TOKEN_IDS.imStart;
  let text = '';
  for (let step = 0; step < 100; step++) {
    id = ranked(logitsAfter(gguf, id))[0]!.id;
    if (id === FIXTURE_TOKEN_IDS.imEnd) return text;
    text += tokens[id]!.replaceAll('\u2581', ' ');
  }
  throw new Error('no end of turn');
}

describe('fixtureGguf variants', () => {
  it('keeps the default model’s bytes: the sentence and ChatML are the defaults', () => {
    expect(
      Buffer.from(
        fixtureGguf({ reply: FIXTURE_PIECES, template: CHATML_TEMPLATE, spacePrefix: false }),
      ).equals(fixtureGguf({ spacePrefix: false })),
    ).toBe(true);
    // Recorded before the variants existed.
    const sha256 = createHash('sha256').update(fixtureGguf()).digest('hex');
    expect(sha256).toBe('3a8744262fb9cfd33a2410d9e40ef85cf09db9f19732de5c1d0545482486d54b');
  });

  it('spells any list of distinct pieces, one token each, spaces as ▁, under the template given', () => {
    const reply = ['Hello', ' there', ', my', ' friend', '!\n'];
    const gguf = readGguf(fixtureGguf({ reply, template: 'T' }));
    const tokens = gguf.kv.get('tokenizer.ggml.tokens') as string[];
    const first = FIXTURE_TOKEN_IDS.firstPiece;
    expect(tokens.slice(first, first + reply.length)).toEqual([
      'Hello',
      '\u2581there',
      ',\u2581my',
      '\u2581friend',
      '!\n',
    ]);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(gguf.kv.get('tokenizer.chat_template')).toBe('T');
    expect(replyOf(gguf)).toBe(reply.join(''));
  });

  it('makes a tool-calling variant that writes a Hermes-style call, and a thinking one', () => {
    const tools = readGguf(fixtureGguf(FIXTURE_VARIANTS.tools));
    expect(tools.kv.get('tokenizer.chat_template')).toBe(TOOL_CALL_TEMPLATE);
    expect(replyOf(tools)).toBe(
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
    );
    expect(TOOL_CALL_PIECES.join('')).toBe(replyOf(tools));
    const thinking = readGguf(fixtureGguf(FIXTURE_VARIANTS.thinking));
    expect(thinking.kv.get('tokenizer.chat_template')).toBe(THINKING_TEMPLATE);
    expect(replyOf(thinking)).toBe(THINKING_PIECES.join(''));
    expect(replyOf(thinking)).toMatch(/^<think>\n[^<]+\n<\/think>\n\n[^<]+$/);
  });

  it('refuses a reply with a repeated or empty piece, or none', () => {
    expect(() => fixtureGguf({ reply: ['a', 'b', 'a'] })).toThrow(/distinct/);
    expect(() => fixtureGguf({ reply: ['a', ''] })).toThrow(/empty/);
    expect(() => fixtureGguf({ reply: [] })).toThrow(/at least one piece/);
    expect(() => fixtureGguf({ reply: Array.from({ length: 64 }, (_, i) => `p${i}`) })).toThrow(
      RangeError,
    );
  });
});

describe('splitGguf', () => {
  const bytes = fixtureGguf({ blocks: 2 });
  const whole = readGguf(bytes);

  it('makes parts as gguf-split does: split keys in each, metadata in the first', () => {
    const parts = splitGguf(bytes, 3).map(readGguf);
    expect(parts.map((part) => part.kv.get('split.no'))).toEqual([0, 1, 2]);
    for (const part of parts) {
      expect(part.kv.get('split.count')).toBe(3);
      expect(part.kv.get('split.tensors.count')).toBe(whole.tensors.length);
      expect(part.tensors.length).toBeGreaterThan(0);
    }
    expect(parts[0]?.kv.get('tokenizer.ggml.tokens')).toEqual(
      whole.kv.get('tokenizer.ggml.tokens'),
    );
    expect([...(parts[1]?.kv.keys() ?? [])]).toEqual([
      'general.alignment',
      'split.no',
      'split.count',
      'split.tensors.count',
    ]);
  });

  it('keeps every tensor, in order, with its bytes', () => {
    const parts = splitGguf(bytes, 4).map(readGguf);
    const names = parts.flatMap((part) => part.tensors.map((t) => t.name));
    expect(names).toEqual(whole.tensors.map((t) => t.name));
    for (const part of parts) {
      for (const tensor of part.tensors) {
        const [mine, original] = [f32s(part, tensor.name), f32s(whole, tensor.name)];
        expect(Buffer.from(mine.buffer).equals(Buffer.from(original.buffer))).toBe(true);
      }
    }
  });

  it('spreads the bytes over the parts', () => {
    const sizes = splitGguf(fixtureGguf(BENCH_OPTIONS), 4).map((part) => part.length);
    for (const size of sizes) expect(size).toBeGreaterThan(8e6);
  });

  it('refuses more parts than tensors, and a file that is not GGUF v3', () => {
    expect(splitGguf(bytes, 1)).toHaveLength(1);
    expect(() => splitGguf(bytes, 0)).toThrow(RangeError);
    expect(() => splitGguf(bytes, whole.tensors.length + 1)).toThrow(RangeError);
    expect(() => splitGguf(new TextEncoder().encode('GGML and more'), 2)).toThrow(/GGUF v3/);
  });
});

/**
 * The embedding variant's forward pass by hand, as llama.cpp runs an embedding model: each token's
 * last hidden state is its embedding (every block adds nothing), RMS-normed with
 * `output_norm.weight`; mean pooling over the tokens; then llama-server's `embd_normalize` (2:
 * Euclidean, -1: none).
 */
function embeddingOf(gguf: Gguf, ids: number[], normalize: 2 | -1 = 2): number[] {
  const width = gguf.kv.get('llama.embedding_length') as number;
  const eps = gguf.kv.get('llama.attention.layer_norm_rms_epsilon') as number;
  const embd = f32s(gguf, 'token_embd.weight');
  const norm = f32s(gguf, 'output_norm.weight');
  const sum = new Array<number>(width).fill(0);
  for (const id of ids) {
    const x = embd.subarray(id * width, (id + 1) * width);
    const rms = Math.sqrt(x.reduce((s, v) => s + v * v, 0) / width + eps);
    x.forEach((v, c) => (sum[c]! += (v / rms) * norm[c]!));
  }
  const mean = sum.map((v) => v / ids.length);
  if (normalize === -1) return mean;
  const length = Math.sqrt(mean.reduce((s, v) => s + v * v, 0));
  return mean.map((v) => v / length);
}

const maxDiff = (a: number[], b: number[]) => {
  expect(a.length).toBe(b.length);
  return Math.max(...a.map((v, i) => Math.abs(v - b[i]!)));
};

describe('fixtureEmbeddingGguf', () => {
  const bytes = fixtureEmbeddingGguf();
  const gguf = readGguf(bytes);
  const tokens = gguf.kv.get('tokenizer.ggml.tokens') as string[];
  const TEXTS = [
    'is to be',
    'we do no',
    'a b c d e f g h i j k l m n o p q r s t u v w x y z',
    'me my me my me my',
    'to be or not to be',
    'the cat is on the mat',
  ];

  it('writes an embedding model: mean pooling, BOS and EOS added, its own name and sizes', () => {
    expect(Object.fromEntries(gguf.kv)).toMatchObject({
      'general.architecture': 'llama',
      'general.name': 'hearth-fixture-embedding-128x1',
      'llama.pooling_type': 1,
      'llama.context_length': 512,
      'llama.embedding_length': 128,
      'llama.vocab_size': tokens.length,
      'tokenizer.ggml.add_bos_token': true,
      'tokenizer.ggml.add_eos_token': true,
    });
    expect(FIXTURE_EMBEDDING_POOLING).toBe(1);
    expect(FIXTURE_EMBEDDING_DIMENSIONS).toBe(128);
    expect(FIXTURE_EMBEDDING_CONTEXT).toBe(512);
    expect(gguf.kv.has('tokenizer.chat_template')).toBe(false);
    expect(gguf.tensors.map((t) => t.name)).not.toContain('output.weight');
    expect(gguf.tensors.map((t) => t.name)).toContain('output_norm.weight');
    expect(bytes.length).toBeGreaterThan(800_000);
    expect(bytes.length).toBeLessThan(1_100_000);
    expect(Buffer.from(fixtureEmbeddingGguf()).equals(bytes)).toBe(true);
  });

  it('has the chat fixture’s control and byte tokens, then the ordinary pieces', () => {
    expect(tokens.slice(0, 261)).toEqual(
      (readGguf(fixtureGguf()).kv.get('tokenizer.ggml.tokens') as string[]).slice(0, 261),
    );
    expect(tokens[261]).toBe('\u2581');
    for (const word of FIXTURE_EMBEDDING_WORDS) expect(tokens).toContain(`\u2581${word}`);
    expect(new Set(tokens).size).toBe(tokens.length);
  });

  it('gives every non-byte token a one-hot direction of its own; byte tokens share one', () => {
    const width = 128;
    const embd = f32s(gguf, 'token_embd.weight');
    const directionOf = (id: number) => {
      const row = Array.from(embd.subarray(id * width, (id + 1) * width));
      expect(row.filter((v) => v !== 0)).toEqual([1]);
      return row.indexOf(1);
    };
    const own = tokens.map((_, id) => id).filter((id) => id < 5 || id >= 261);
    expect(new Set(own.map(directionOf)).size).toBe(own.length);
    const bytes = Array.from({ length: 256 }, (_, b) => directionOf(5 + b));
    expect(new Set(bytes)).toEqual(new Set([0]));
    expect(own.map(directionOf)).not.toContain(0);
  });

  it('tokenizes words as one token each between <s> and </s>, others as SentencePiece merges', () => {
    const id = (piece: string) => tokens.indexOf(piece);
    expect(fixtureEmbeddingTokens('is to be')).toEqual([
      FIXTURE_TOKEN_IDS.bos,
      id('\u2581is'),
      id('\u2581to'),
      id('\u2581be'),
      FIXTURE_TOKEN_IDS.eos,
    ]);
    const words = FIXTURE_EMBEDDING_WORDS.join(' ');
    expect(fixtureEmbeddingTokens(words)).toHaveLength(FIXTURE_EMBEDDING_WORDS.length + 2);
    // 'isle': ▁i+s makes ▁is, which outscores nothing else; l and e stay letters.
    expect(fixtureEmbeddingTokens('isle').slice(1, -1)).toEqual([id('\u2581is'), id('l'), id('e')]);
    expect(fixtureEmbeddingTokens('cat').slice(1, -1)).toEqual([id('\u2581c'), id('a'), id('t')]);
    expect(() => fixtureEmbeddingTokens('Cat')).toThrow(RangeError);
    expect(() => fixtureEmbeddingTokens('')).toThrow(RangeError);
  });

  it('its forward pass equals fixtureEmbedding, normalised and raw', () => {
    for (const text of TEXTS) {
      const ids = fixtureEmbeddingTokens(text);
      expect(maxDiff(embeddingOf(gguf, ids), fixtureEmbedding(ids)), text).toBeLessThan(1e-6);
      expect(
        maxDiff(embeddingOf(gguf, ids, -1), fixtureEmbedding(ids, { normalize: -1 })),
        text,
      ).toBeLessThan(1e-5);
    }
    // Byte tokens (any character outside a-z and space) all land on direction 0.
    const bytes = [1, 5 + 0x41, 5 + 0xe2, 2];
    expect(maxDiff(embeddingOf(gguf, bytes), fixtureEmbedding(bytes))).toBeLessThan(1e-6);
  });

  it('gives different texts different vectors, and unit length', () => {
    const vectors = TEXTS.map((text) => fixtureEmbedding(fixtureEmbeddingTokens(text)));
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 12);
    const keys = new Set(vectors.map((v) => v.map((x) => x.toFixed(6)).join()));
    expect(keys.size).toBe(TEXTS.length);
    // The raw mean of n tokens: each direction's share times 1 / sqrt(1 / width + eps).
    const raw = fixtureEmbedding([1, 2], { normalize: -1 });
    expect(raw[2]).toBeCloseTo(0.5 / Math.sqrt(1 / 128 + 1e-5), 10);
  });

  it('makes a bench-sized embedding model, every direction its own', () => {
    const bench = readGguf(fixtureEmbeddingGguf(BENCH_OPTIONS));
    expect(bench.kv.get('llama.embedding_length')).toBe(512);
    expect(bench.kv.get('llama.block_count')).toBe(4);
    expect(bench.kv.get('general.name')).toBe('hearth-fixture-embedding-512x4');
    const ids = fixtureEmbeddingTokens('to be or not to be');
    const expected = fixtureEmbedding(ids, { width: 512 });
    expect(maxDiff(embeddingOf(bench, ids), expected)).toBeLessThan(1e-6);
    expect(expected.slice(0, 128)).toEqual(fixtureEmbedding(ids));
  });

  it('folds directions a narrow width lacks onto direction 0, and refuses what it cannot build', () => {
    const narrow = readGguf(fixtureEmbeddingGguf({ width: 32 }));
    const ids = fixtureEmbeddingTokens('we do no');
    expect(maxDiff(embeddingOf(narrow, ids), fixtureEmbedding(ids, { width: 32 }))).toBeLessThan(
      1e-6,
    );
    expect(() => fixtureEmbeddingGguf({ width: 48 })).toThrow(RangeError);
    expect(() => fixtureEmbeddingGguf({ blocks: 0 })).toThrow(RangeError);
    expect(() => fixtureEmbeddingGguf({ contextLength: 0 })).toThrow(RangeError);
    expect(() => fixtureEmbeddingGguf({ pooling: 4 })).toThrow(RangeError);
    expect(readGguf(fixtureEmbeddingGguf({ pooling: 3 })).kv.get('llama.pooling_type')).toBe(3);
    expect(() => fixtureEmbedding([])).toThrow(RangeError);
    expect(() => fixtureEmbedding([100_000])).toThrow(RangeError);
    expect(() => fixtureEmbedding([1], { normalize: 0 as 2 })).toThrow(RangeError);
  });
});
