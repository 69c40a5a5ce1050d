/**
 * The vision fixture (scripts/fixture-vision.mjs) read back by a GGUF reader of its own, checked
 * for what llama.cpp's clip loader and llama loader require, and run by hand: the projector on a
 * picture (patch convolution, LayerNorm, blocks, MLP), then the language model over a prompt with
 * the image tokens in it (RMS norms, attention with RoPE, feed-forward, output), greedily, with
 * the margin of every step. tests/e2e/fixture-vision.spec.ts runs both files in llama.cpp.
 */
import { describe, expect, it } from 'vitest';
import { FIXTURE_TOKEN_IDS } from '../../../scripts/fixture-gguf.mjs';
import {
  VISION_BENCH_OPTIONS,
  VISION_IMAGE_SIZE,
  VISION_IMAGE_TOKENS,
  VISION_PATCH_SIZE,
  VISION_PIECES,
  VISION_REPLIES,
  fixtureVisionGguf,
} from '../../../scripts/fixture-vision.mjs';

interface Gguf {
  kv: Map<string, unknown>;
  tensors: Map<string, { ne: number[]; type: number; data: Float32Array }>;
  alignment: number;
}

/** Reads a GGUF v3 file whole: its key/values, and each tensor's shape, type and F32 data. */
function readGguf(bytes: Uint8Array): Gguf {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const take = (n: number) => ((at += n), at - n);
  const u32 = () => view.getUint32(take(4), true);
  const u64 = () => Number(view.getBigUint64(take(8), true));
  const str = () => {
    const n = u64();
    return new TextDecoder().decode(bytes.subarray(take(n), at));
  };
  const value = (type: number): unknown => {
    if (type === 4) return u32();
    if (type === 5) return view.getInt32(take(4), true);
    if (type === 6) return view.getFloat32(take(4), true);
    if (type === 7) return view.getUint8(take(1)) === 1;
    if (type === 8) return str();
    if (type === 9) {
      const of = u32();
      return Array.from({ length: u64() }, () => value(of));
    }
    throw new Error(`value type ${type} not expected in the fixture`);
  };
  expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe('GGUF');
  at = 4;
  expect(u32()).toBe(3);
  const nTensors = u64();
  const nKv = u64();
  const kv = new Map<string, unknown>();
  for (let i = 0; i < nKv; i++) {
    const key = str();
    expect(kv.has(key)).toBe(false);
    kv.set(key, value(u32()));
  }
  const infos = Array.from({ length: nTensors }, () => ({
    name: str(),
    ne: Array.from({ length: u32() }, u64),
    type: u32(),
    offset: u64(),
  }));
  const alignment = (kv.get('general.alignment') as number | undefined) ?? 32;
  const dataStart = Math.ceil(at / alignment) * alignment;
  const tensors = new Map(
    infos.map(({ name, ne, type, offset }) => {
      const count = ne.reduce((a, b) => a * b, 1);
      const start = dataStart + offset;
      const data = new Float32Array(bytes.slice(start, start + 4 * count).buffer);
      expect(start + 4 * count).toBeLessThanOrEqual(bytes.length);
      return [name, { ne, type, data }];
    }),
  );
  expect(tensors.size).toBe(infos.length);
  return { kv, tensors, alignment };
}

function tensorOf(gguf: Gguf, name: string) {
  const tensor = gguf.tensors.get(name);
  if (!tensor) throw new Error(`no tensor ${name}`);
  return tensor;
}

const dataOf = (gguf: Gguf, name: string) => tensorOf(gguf, name).data;
const numberOf = (gguf: Gguf, key: string) => gguf.kv.get(key) as number;

/** `x` times the matrix `w` of `ne` [inputs, outputs] (element (c, r) at r * inputs + c). */
function matVec(w: Float32Array, x: ArrayLike<number>, inputs: number): number[] {
  return Array.from({ length: w.length / inputs }, (_, r) => {
    let sum = 0;
    for (let c = 0; c < inputs; c++) sum += (w[r * inputs + c] ?? 0) * (x[c] ?? 0);
    return sum;
  });
}

const add = (a: number[], b: ArrayLike<number>) => a.map((x, i) => x + (b[i] ?? 0));

function layerNorm(x: number[], eps: number, weight: Float32Array, bias: Float32Array): number[] {
  const mean = x.reduce((a, b) => a + b, 0) / x.length;
  const variance = x.reduce((a, b) => a + (b - mean) ** 2, 0) / x.length;
  return x.map(
    (v, i) => ((v - mean) / Math.sqrt(variance + eps)) * (weight[i] ?? 0) + (bias[i] ?? 0),
  );
}

function rmsNorm(x: number[], eps: number, weight: Float32Array): number[] {
  const rms = Math.sqrt(x.reduce((a, b) => a + b * b, 0) / x.length + eps);
  return x.map((v, i) => (v / rms) * (weight[i] ?? 0));
}

/** GELU as ggml computes it (the tanh approximation). */
const gelu = (x: number) =>
  0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

/** A picture as llama.cpp hands it to the projector: per channel, per row, `(v/255 - 0.5)/0.5`. */
type Picture = (channel: number, x: number, y: number) => number;

/** A solid colour, or rows of one colour above `split` and of another below. */
const solid =
  (rgb: number[], below: number[] = rgb, split = Infinity): Picture =>
  (channel, _x, y) =>
    ((y < split ? rgb : below)[channel]! / 255 - 0.5) / 0.5;

/**
 * The projector's output for `picture`, one language-model embedding per patch. The blocks are
 * left out: the test below shows that each adds nothing to the residual stream.
 */
function project(mmproj: Gguf, picture: Picture): number[][] {
  const size = numberOf(mmproj, 'clip.vision.image_size');
  const patch = numberOf(mmproj, 'clip.vision.patch_size');
  const d = numberOf(mmproj, 'clip.vision.embedding_length');
  const eps = numberOf(mmproj, 'clip.vision.attention.layer_norm_epsilon');
  const kernel = dataOf(mmproj, 'v.patch_embd.weight');
  const bias = dataOf(mmproj, 'v.patch_embd.bias');
  const positions = dataOf(mmproj, 'v.position_embd.weight');
  const side = size / patch;
  const plane = patch * patch;
  return Array.from({ length: side * side }, (_, p) => {
    const [px, py] = [p % side, Math.floor(p / side)];
    let x = Array.from({ length: d }, (_, o) => {
      let sum = bias[o] ?? 0;
      for (let c = 0; c < 3; c++) {
        for (let ky = 0; ky < patch; ky++) {
          for (let kx = 0; kx < patch; kx++) {
            const w = kernel[kx + patch * ky + plane * (c + 3 * o)] ?? 0;
            if (w !== 0) sum += w * picture(c, px * patch + kx, py * patch + ky);
          }
        }
      }
      return sum + (positions[p * d + o] ?? 0);
    });
    x = layerNorm(x, eps, dataOf(mmproj, 'v.pre_ln.weight'), dataOf(mmproj, 'v.pre_ln.bias'));
    const hidden = add(matVec(dataOf(mmproj, 'mm.0.weight'), x, d), dataOf(mmproj, 'mm.0.bias'));
    const out = matVec(dataOf(mmproj, 'mm.2.weight'), hidden.map(gelu), hidden.length);
    return add(out, dataOf(mmproj, 'mm.2.bias'));
  });
}

/** An input of the language model: a token id, or an embedding (an image token). */
type Input = number | number[];

/** The logits after `inputs`, as llama.cpp's llama graph computes them (one block, causal). */
function logitsAfter(model: Gguf, inputs: Input[]): number[] {
  const width = numberOf(model, 'llama.embedding_length');
  const heads = numberOf(model, 'llama.attention.head_count');
  const headSize = width / heads;
  const eps = numberOf(model, 'llama.attention.layer_norm_rms_epsilon');
  const base = numberOf(model, 'llama.rope.freq_base');
  const embd = dataOf(model, 'token_embd.weight');
  const xs = inputs.map((input) =>
    typeof input === 'number'
      ? Array.from(embd.subarray(input * width, (input + 1) * width))
      : input,
  );
  // RoPE of the llama architecture: adjacent pairs, pair i turned by pos·base^(-2i/headSize).
  const rope = (v: number[], pos: number) =>
    v.map((value, i) => {
      const j = i % headSize;
      const angle = pos * base ** (-(j - (j % 2)) / headSize);
      const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
      return j % 2 === 0
        ? value * cos - (v[i + 1] ?? 0) * sin
        : (v[i - 1] ?? 0) * sin + value * cos;
    });
  const normed = xs.map((x) => rmsNorm(x, eps, dataOf(model, 'blk.0.attn_norm.weight')));
  const q = normed.map((h, pos) =>
    rope(matVec(dataOf(model, 'blk.0.attn_q.weight'), h, width), pos),
  );
  const k = normed.map((h, pos) =>
    rope(matVec(dataOf(model, 'blk.0.attn_k.weight'), h, width), pos),
  );
  const v = normed.map((h) => matVec(dataOf(model, 'blk.0.attn_v.weight'), h, width));
  const last = xs.length - 1;
  const attended = new Array<number>(width).fill(0);
  for (let head = 0; head < heads; head++) {
    const dims = (vector: number[]) => vector.slice(head * headSize, (head + 1) * headSize);
    const query = dims(q[last]!);
    const scores = k.map(
      (key) => dims(key).reduce((sum, x, i) => sum + x * query[i]!, 0) / Math.sqrt(headSize),
    );
    const top = Math.max(...scores);
    const weights = scores.map((s) => Math.exp(s - top));
    const total = weights.reduce((a, b) => a + b, 0);
    v.forEach((value, pos) => {
      for (let i = 0; i < headSize; i++) {
        attended[head * headSize + i]! += (weights[pos]! / total) * value[head * headSize + i]!;
      }
    });
  }
  let x = add(xs[last]!, matVec(dataOf(model, 'blk.0.attn_output.weight'), attended, width));
  const h = rmsNorm(x, eps, dataOf(model, 'blk.0.ffn_norm.weight'));
  const gate = matVec(dataOf(model, 'blk.0.ffn_gate.weight'), h, width);
  const up = matVec(dataOf(model, 'blk.0.ffn_up.weight'), h, width);
  const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]!);
  x = add(x, matVec(dataOf(model, 'blk.0.ffn_down.weight'), act, act.length));
  const out = rmsNorm(x, eps, dataOf(model, 'output_norm.weight'));
  return matVec(dataOf(model, 'output.weight'), out, width);
}

/**
 * The reply to `prompt` as greedy sampling makes it, up to `<|im_end|>`, and the smallest margin
 * of the chosen token over the runner-up at any step.
 */
function reply(model: Gguf, prompt: Input[]): { pieces: string[]; margin: number } {
  const tokens = model.kv.get('tokenizer.ggml.tokens') as string[];
  const inputs = [...prompt];
  const pieces: string[] = [];
  let margin = Infinity;
  for (let step = 0; step < 20; step++) {
    const logits = logitsAfter(model, inputs);
    const ranked = logits.map((logit, id) => ({ id, logit })).sort((a, b) => b.logit - a.logit);
    const [best, second] = [ranked[0]!, ranked[1]!];
    margin = Math.min(margin, best.logit - second.logit);
    if (best.id === FIXTURE_TOKEN_IDS.imEnd) return { pieces, margin };
    pieces.push(tokens[best.id]!.replaceAll('\u2581', ' '));
    inputs.push(best.id);
  }
  throw new Error(`no end of turn after ${pieces.join('')}`);
}

/**
 * A ChatML prompt around `images` as the model sees it (the exact tokenization of the text does
 * not matter to it: every token that is not a reply's piece shares one direction).
 */
function chatPrompt(model: Gguf, images: number[][][]): Input[] {
  const tokens = model.kv.get('tokenizer.ggml.tokens') as string[];
  const id = (token: string) => tokens.indexOf(token);
  const newline = id('<0x0A>');
  const word = (text: string) => [...text].map(id);
  const { bos, imStart, imEnd } = FIXTURE_TOKEN_IDS;
  return [
    ...[bos, imStart, ...word('user'), newline, ...word('\u2581what')],
    ...images.flat(),
    ...[imEnd, newline, imStart, ...word('assistant'), newline],
  ];
}

const RED = [230, 20, 20];
const BLUE = [20, 40, 230];
/** llama.cpp's padding colour for the llava projector, where a picture is not square. */
const PAD_GREY = [122, 116, 104];

describe('fixtureVisionGguf', () => {
  const { model: modelBytes, mmproj: mmprojBytes } = fixtureVisionGguf();
  const model = readGguf(modelBytes);
  const mmproj = readGguf(mmprojBytes);

  it('is the same bytes every time', () => {
    const again = fixtureVisionGguf();
    expect(Buffer.from(again.model).equals(Buffer.from(modelBytes))).toBe(true);
    expect(Buffer.from(again.mmproj).equals(Buffer.from(mmprojBytes))).toBe(true);
  });

  it('splits the replies into pieces that are all distinct, in both replies together', () => {
    expect(VISION_PIECES.red.join('')).toBe(VISION_REPLIES.red);
    expect(VISION_PIECES.other.join('')).toBe(VISION_REPLIES.other);
    const all = [...VISION_PIECES.red, ...VISION_PIECES.other];
    expect(new Set(all).size).toBe(all.length);
    expect(Object.isFrozen(VISION_REPLIES)).toBe(true);
  });

  it('writes a clip projector with the keys llama.cpp’s llava loader requires', () => {
    expect(Object.fromEntries(mmproj.kv)).toMatchObject({
      'general.architecture': 'clip',
      'clip.has_vision_encoder': true,
      'clip.projector_type': 'mlp',
      'clip.vision.image_size': VISION_IMAGE_SIZE,
      'clip.vision.patch_size': VISION_PATCH_SIZE,
      'clip.vision.embedding_length': 32,
      'clip.vision.feed_forward_length': 128,
      'clip.vision.projection_dim': 64,
      'clip.vision.attention.head_count': 1,
      'clip.vision.block_count': 2,
      'clip.vision.image_mean': [0.5, 0.5, 0.5],
      'clip.vision.image_std': [0.5, 0.5, 0.5],
    });
    expect(numberOf(mmproj, 'clip.vision.attention.layer_norm_epsilon')).toBeCloseTo(1e-6, 10);
    expect(VISION_IMAGE_TOKENS).toBe((VISION_IMAGE_SIZE / VISION_PATCH_SIZE) ** 2);
  });

  it('has every tensor the llava graph reads, all F32, and mm.2 as wide as the model', () => {
    const d = 32;
    const shapes: Record<string, number[]> = {
      'v.patch_embd.weight': [VISION_PATCH_SIZE, VISION_PATCH_SIZE, 3, d],
      'v.patch_embd.bias': [d],
      'v.position_embd.weight': [d, VISION_IMAGE_TOKENS],
      'v.pre_ln.weight': [d],
      'v.pre_ln.bias': [d],
      'mm.0.weight': [d, 64],
      'mm.0.bias': [64],
      'mm.2.weight': [64, numberOf(model, 'llama.embedding_length')],
      'mm.2.bias': [64],
    };
    // llava runs block_count - 1 blocks but loads them all; ffn_down must not look like a legacy
    // file's swapped ffn_up ([n_ff, n_embd] with n_ff = n_embd).
    for (const b of [0, 1]) {
      for (const name of ['ln1', 'ln2', 'attn_q', 'attn_k', 'attn_v', 'attn_out']) {
        shapes[`v.blk.${b}.${name}.weight`] = name.startsWith('ln') ? [d] : [d, d];
        shapes[`v.blk.${b}.${name}.bias`] = [d];
      }
      shapes[`v.blk.${b}.ffn_up.weight`] = [d, 4 * d];
      shapes[`v.blk.${b}.ffn_up.bias`] = [4 * d];
      shapes[`v.blk.${b}.ffn_down.weight`] = [4 * d, d];
      shapes[`v.blk.${b}.ffn_down.bias`] = [d];
    }
    expect(Object.fromEntries([...mmproj.tensors].map(([name, { ne }]) => [name, ne]))).toEqual(
      shapes,
    );
    expect([...mmproj.tensors.values()].every(({ type }) => type === 0)).toBe(true);
    expect(mmproj.tensors.has('v.class_embd')).toBe(false);
  });

  it('makes every projector block add nothing: attention output and feed-forward down are zero', () => {
    for (const [name, { data }] of mmproj.tensors) {
      if (/^v\.blk\.\d+\.(attn_out|ffn_down)\./.test(name)) {
        expect(
          data.every((x) => x === 0),
          name,
        ).toBe(true);
      }
    }
  });

  it('writes a llama model whose RoPE dimension count is its head size, and both replies as tokens', () => {
    const width = numberOf(model, 'llama.embedding_length');
    expect(Object.fromEntries(model.kv)).toMatchObject({
      'general.architecture': 'llama',
      'llama.embedding_length': 64,
      'llama.block_count': 1,
      'llama.rope.dimension_count': width / numberOf(model, 'llama.attention.head_count'),
      'tokenizer.ggml.model': 'llama',
    });
    const tokens = model.kv.get('tokenizer.ggml.tokens') as string[];
    const types = model.kv.get('tokenizer.ggml.token_type') as number[];
    const pieces = [...VISION_PIECES.red, ...VISION_PIECES.other].map((p) =>
      p.replaceAll(' ', '\u2581'),
    );
    expect(tokens.slice(FIXTURE_TOKEN_IDS.firstPiece, FIXTURE_TOKEN_IDS.firstPiece + 10)).toEqual(
      pieces,
    );
    expect(pieces.map((p) => types[tokens.indexOf(p)])).toEqual(pieces.map(() => 1));
  });

  it('projects a red picture to a positive sign, a blue one to a negative, with the marker on every token', () => {
    const red = project(mmproj, solid(RED));
    const blue = project(mmproj, solid(BLUE));
    expect(red).toHaveLength(VISION_IMAGE_TOKENS);
    // SIGN, MARKER, VERDICT are the last three dimensions.
    for (const token of red) expect(token.slice(61)).toEqual([expect.closeTo(0.788, 2), 8, 0]);
    for (const token of blue) expect(token.slice(61)).toEqual([expect.closeTo(-0.825, 2), 8, 0]);
  });

  it('answers a red picture with the red reply, a blue one or none with the other, by wide margins', () => {
    const red = reply(model, chatPrompt(model, [project(mmproj, solid(RED))]));
    const blue = reply(model, chatPrompt(model, [project(mmproj, solid(BLUE))]));
    const none = reply(model, chatPrompt(model, []));
    expect(red.pieces).toEqual(VISION_PIECES.red);
    expect(blue.pieces).toEqual(VISION_PIECES.other);
    expect(none.pieces).toEqual(VISION_PIECES.other);
    // The same text under any sampler: every step's choice leads by 40 or more (the least is the
    // end of the turn over the reply's first piece again, half the gap of 80 between pieces).
    for (const { margin } of [red, blue, none]) expect(margin).toBeGreaterThan(39);
  });

  it('answers the red reply to a picture half red and half padding, the other to a blue and a red one together', () => {
    const half = solid(PAD_GREY, RED, VISION_IMAGE_SIZE / 2);
    expect(reply(model, chatPrompt(model, [project(mmproj, half)])).pieces).toEqual(
      VISION_PIECES.red,
    );
    const both = [project(mmproj, solid(BLUE)), project(mmproj, solid(RED))];
    // Two images average: a blue and a red one cancel to about nothing, and the other reply.
    expect(reply(model, chatPrompt(model, both)).pieces).toEqual(VISION_PIECES.other);
  });

  it('makes a bench projector of 256 image tokens that projects as the small one does', () => {
    const bench = readGguf(fixtureVisionGguf(VISION_BENCH_OPTIONS).mmproj);
    expect(Object.fromEntries(bench.kv)).toMatchObject({
      'clip.vision.image_size': 224,
      'clip.vision.patch_size': 14,
      'clip.vision.embedding_length': 256,
      'clip.vision.attention.head_count': 4,
      'clip.vision.block_count': 4,
    });
    const red = project(bench, solid(RED));
    expect(red).toHaveLength(256);
    expect(red[0]).toEqual(project(mmproj, solid(RED))[0]!.map((x) => expect.closeTo(x, 4)));
  });
});
