/**
 * @module
 * A vision model made at test time: a projector GGUF in llama.cpp's `clip` format (the llava "mlp"
 * projector) and a language model in the style of scripts/fixture-gguf.mjs that reads what the
 * projector writes. Through real llama.cpp (mtmd) a picture whose red channel is mostly bright
 * gets `VISION_REPLIES.red`, any other picture (or none) `VISION_REPLIES.other`: two pictures, two
 * known replies, so a test can prove that the image reached the model. Plain JavaScript with JSDoc
 * types; the GGUF writer is fixture-gguf.mjs's, and so are the language model's key/values
 * (`llamaKv`), token embedding, feed-forward tensors and reply chains.
 *
 * The projector (what llama.cpp's `clip_graph_llava` computes, tools/mtmd/models/llava.cpp):
 * - Preprocessing: a picture that is not square is padded to one with llava's grey (122, 116, 104:
 *   its red is a little below half, so padding counts against red), resized to
 *   `clip.vision.image_size`, and each channel becomes `(value / 255 - 0.5) / 0.5`, in [-1, 1]
 *   (`image_mean`, `image_std` 0.5 each).
 * - `v.patch_embd.weight` (a convolution, one output per patch): vision dimension 0 is the mean of
 *   the patch's red channel, `m`, dimension 1 is `-m`; `v.patch_embd.bias` puts `+B` and `-B` on
 *   dimensions 2 and 3 (`B` = 4). Every other dimension is 0, and `v.position_embd` is zero.
 * - `v.pre_ln` (a LayerNorm, weight 1, bias 0): the mean over dimensions is 0, the variance is
 *   `(2m² + 2B²) / d`, so dimension 0 becomes `m·sqrt(d) / sqrt(2m² + 2B²)`: nearly linear in `m`
 *   because `B` dominates (without `B` every patch would come out ±1, its sign only).
 * - The blocks: llava runs `block_count - 1` of them (the last is the "feature layer" it stops
 *   at) but loads all of them. Their attention-output and feed-forward-down matrices are zero, so
 *   each adds nothing to the residual stream while all its maths runs. (`ffn_down` must not be
 *   `[n_ff, n_embd]` with `n_ff == n_embd`: llama.cpp takes that for a legacy file and swaps up and
 *   down; here `n_ff` is 4·`d`.) No `v.post_ln`, no class embedding: one token per patch.
 * - `mm.0` + GELU + `mm.2`: two hidden units read `±a·dim0` (`a = B·sqrt(2 / d)`, which makes the
 *   pair `±m / sqrt(1 + m²/B²)`), and `GELU(x) - GELU(-x) = x` exactly, so `mm.2` writes
 *   `s = m / sqrt(1 + m²/B²)`, within ±0.97, on the language model's SIGN dimension; `mm.2.bias`
 *   writes `MARKER_VALUE` on its MARKER dimension, on every image token. `mm.2`'s output width is
 *   the language model's `n_embd`, which llama.cpp checks.
 *
 * The language model: the fixture's vocabulary and ChatML template, both replies' pieces each
 * with an embedding direction of its own (all distinct, so each has one successor), every other
 * token on direction 0; three more residual dimensions, SIGN, MARKER and VERDICT. One block:
 * - After `attn_norm` (RMS, weight 1) a text token has `sqrt(64)` = 8 on its direction; an image
 *   token has nearly 8 on MARKER (`MARKER_VALUE` = 8 dwarfs `s`) and about `s` on SIGN.
 * - Head 0 of the attention: the query of a direction-0 token (the last token of the prompt is
 *   the generation prompt's `\n`) reads direction 0, the key of an image token reads MARKER, both
 *   on the head's dimension 31; their score, ~25 after `1/sqrt(32)`, puts all the attention on
 *   the image tokens. The value reads SIGN; `attn_output` writes `VERDICT_WEIGHT` times it to
 *   VERDICT: about ±10.6 for a pure red or blue square, 0 with no image (text tokens' values are 0).
 * - RoPE would turn those scores with the distance between the tokens. Pair `i` of a head turns by
 *   `pos·base^(-2i/32)` (pair 0 always by `pos` radians), and llama.cpp requires the llama
 *   architecture's `rope.dimension_count` to be the head size, so the signals sit in dimensions
 *   30 and 31, the last pair (llama pairs adjacent dimensions; pairing `i` with `i + 16`, as NeoX
 *   does, would make them pairs 14 and 15), and `rope.freq_base` is 1e12: they turn by less than
 *   1e-7 radians at position 2048.
 * - The head fires at every step of the reply too. There the query is a reply piece's, which reads
 *   the piece directions on the head's dimension 30, where the key of every direction-0 token
 *   (the prompt's text) sits: the attention goes to the text, whose values are 0, and VERDICT
 *   stays ~1e-10: the reply follows its chain.
 * - `output.weight` (after `output_norm`, RMS): direction 0 gives the other reply's first piece
 *   the fixture's weight (a one-hot direction makes a logit of `LOGIT_GAP`, 80, so with no image
 *   that piece wins by 80); VERDICT gives the red reply's first piece twice that weight, and the
 *   other's minus twice. The residual is direction 0 at 1 plus VERDICT, so the red reply starts
 *   once VERDICT passes 0.25, i.e. the picture's mean normalised red `s` passes ~0.023 (a red channel above
 *   ~51 % of full scale, averaged over the patches, give or take the attention's weighting).
 *   Then each piece leads to the next with a gap of 80, the last to `<|im_end|>` (and, second,
 *   to its reply's first piece, so that ignoring end-of-generation repeats it), as the fixture.
 *
 * CLI: `node scripts/fixture-vision.mjs <out-dir> [--bench]` writes `fixture-vision.gguf` and
 * `mmproj-fixture-vision.gguf`.
 */
import {
  CHATML_TEMPLATE,
  FIXTURE_TOKEN_IDS,
  assertPieces,
  encodeGguf,
  feedForwardTensors,
  ggufValue,
  llamaKv,
  noise,
  ones,
  tokenEmbedding,
  vocabulary,
  writeReplyChain,
} from './fixture-gguf.mjs';

/** @typedef {import('./fixture-gguf.mjs').TensorSpec} TensorSpec */
/** @typedef {import('./fixture-gguf.mjs').Value} Value */

const { string, u32, f32, bool, array, type: GGUF } = ggufValue;

/** What the vision model answers: `red` for a picture that is mostly red, `other` otherwise. */
export const VISION_REPLIES = Object.freeze({
  red: 'Red, like ripe cherries.',
  other: 'Nothing red here!',
});

/** @param {string} text */
const piecesOf = (text) => Object.freeze(text.match(/ ?\w+|[^\w\s]/g) ?? []);

/** The replies as generated, one token a piece; no piece is in both, nor twice in one. */
export const VISION_PIECES = Object.freeze({
  red: piecesOf(VISION_REPLIES.red),
  other: piecesOf(VISION_REPLIES.other),
});
assertPieces([...VISION_PIECES.red, ...VISION_PIECES.other]);

/** The side of the square every picture is resized to (`clip.vision.image_size`). */
export const VISION_IMAGE_SIZE = 32;
/** The side of a patch: `(32 / 8)²` = 16 patches, one image token each. */
export const VISION_PATCH_SIZE = 8;

/**
 * How many tokens one image adds to `usage.prompt_tokens`, as llama.cpp counts them (measured
 * through wllama 3.13, tests/e2e/fixture-vision.spec.ts): the image chunk's 16, one a patch (the
 * llava projector neither merges patches nor adds begin/end tokens). The text around it adds as
 * usual: llama-server joins a message's parts with `\n` (one token, `<0x0A>`), and text after an
 * image is tokenized on its own, starting with SentencePiece's `▁` (one more). So a message of a
 * question then an image counts 17 more than the question alone; of an image then the question,
 * 18 more.
 */
export const VISION_IMAGE_TOKENS = (VISION_IMAGE_SIZE / VISION_PATCH_SIZE) ** 2;

/**
 * The projector options of the bigger variant, for measuring how long an image takes to encode:
 * CLIP ViT-B/14's geometry (224 pixels, 14-pixel patches: 256 image tokens), 256 wide, 4 blocks
 * (3 run). The same replies.
 */
export const VISION_BENCH_OPTIONS = Object.freeze({
  imageSize: 224,
  patchSize: 14,
  visionWidth: 256,
  visionBlocks: 4,
});

/** Width of the language model (`n_embd`), and so of what the projector writes. */
const WIDTH = 64;
/** Size of one attention head of the language model. */
const HEAD_SIZE = 32;
/** Logit of the intended next token above every other (after the final RMS norm). */
const LOGIT_GAP = 80;
/** The language model's residual dimensions that image tokens write and the head reads. */
const DIM = Object.freeze({ sign: WIDTH - 3, marker: WIDTH - 2, verdict: WIDTH - 1 });
/** What `mm.2.bias` writes on MARKER: large, so an image token's RMS norm hardly depends on SIGN. */
const MARKER_VALUE = 8;
/** Query and key weights of head 0 (both of its signals): scores of ~25 after `1/sqrt(32)`. */
const QK_WEIGHT = 1.5;
/** `attn_output`'s weight from head 0's value to VERDICT: VERDICT ≈ 11 × the images' mean `s`. */
const VERDICT_WEIGHT = 11;
/** The constant the patch embedding's bias adds (and subtracts) so that `pre_ln` stays linear. */
const PATCH_BIAS = 4;
/** The head's dimensions for the two signals: the last RoPE pair, which hardly turns. */
const HEAD_DIM = Object.freeze({ sink: HEAD_SIZE - 2, image: HEAD_SIZE - 1 });

/**
 * The vision fixture: the language model and its projector, as GGUF v3 files (F32). The defaults
 * make ~390 KB and ~150 KB; `VISION_BENCH_OPTIONS` a ~13.6 MB projector. The same options give the
 * same bytes.
 * @param {{ imageSize?: number, patchSize?: number, visionWidth?: number, visionBlocks?: number }}
 *   [options]
 * @returns {{ model: Uint8Array, mmproj: Uint8Array }}
 */
export function fixtureVisionGguf({
  imageSize = VISION_IMAGE_SIZE,
  patchSize = VISION_PATCH_SIZE,
  visionWidth = 32,
  visionBlocks = 2,
} = {}) {
  if (!Number.isInteger(patchSize) || patchSize < 1 || imageSize % patchSize !== 0) {
    throw new RangeError('imageSize must be a multiple of patchSize');
  }
  if (!Number.isInteger(visionWidth) || visionWidth % 32 !== 0 || visionWidth < 32) {
    throw new RangeError('visionWidth must be a positive multiple of 32');
  }
  if (!Number.isInteger(visionBlocks) || visionBlocks < 1) {
    throw new RangeError('visionBlocks must be at least 1');
  }
  return {
    model: languageModel(),
    mmproj: projector({ imageSize, patchSize, visionWidth, visionBlocks }),
  };
}

/** The language model: see the module comment. */
function languageModel() {
  const { red, other } = VISION_PIECES;
  const vocab = vocabulary([...red, ...other]);
  const nVocab = vocab.tokens.length;
  const heads = WIDTH / HEAD_SIZE;
  const ff = 3 * WIDTH;
  const { firstPiece } = FIXTURE_TOKEN_IDS;
  // Token ids and embedding directions of the pieces: red's, then other's.
  const redIds = red.map((_, k) => firstPiece + k);
  const otherIds = other.map((_, k) => firstPiece + red.length + k);
  /** @param {number} id */
  const direction = (id) =>
    id >= firstPiece && id < firstPiece + red.length + other.length ? id - firstPiece + 1 : 0;
  const pieceDirections = [...redIds, ...otherIds].map(direction);

  const kv = llamaKv({
    name: 'hearth-fixture-vision',
    vocabulary: vocab,
    contextLength: 2048,
    width: WIDTH,
    blocks: 1,
    ff,
    heads,
    kvHeads: heads,
    // Huge, so that the last rotary pairs, where head 0's signals sit, hardly turn.
    ropeFreqBase: 1e12,
    template: CHATML_TEMPLATE,
  });

  // After the RMS norm a one-hot vector has the value sqrt(WIDTH).
  const weight = LOGIT_GAP / Math.sqrt(WIDTH);
  /** Element (input c, output r) of a matrix `width` inputs wide is at r * width + c. */
  const at = (/** @type {number} */ r, /** @type {number} */ c) => r * WIDTH + c;

  /** @type {TensorSpec[]} */
  const tensors = [
    tokenEmbedding(WIDTH, nVocab, direction),
    { name: 'blk.0.attn_norm.weight', ne: [WIDTH], fill: ones },
    {
      name: 'blk.0.attn_q.weight',
      ne: [WIDTH, WIDTH],
      fill: (data) => {
        // Head 0: a direction-0 token looks for images, a reply piece for the prompt's text.
        data[at(HEAD_DIM.image, 0)] = QK_WEIGHT;
        for (const d of pieceDirections) data[at(HEAD_DIM.sink, d)] = QK_WEIGHT;
      },
    },
    {
      name: 'blk.0.attn_k.weight',
      ne: [WIDTH, WIDTH],
      fill: (data) => {
        data[at(HEAD_DIM.image, DIM.marker)] = QK_WEIGHT;
        data[at(HEAD_DIM.sink, 0)] = QK_WEIGHT;
      },
    },
    {
      name: 'blk.0.attn_v.weight',
      ne: [WIDTH, WIDTH],
      fill: (data) => void (data[at(0, DIM.sign)] = 1),
    },
    {
      name: 'blk.0.attn_output.weight',
      ne: [WIDTH, WIDTH],
      fill: (data) => void (data[at(DIM.verdict, 0)] = VERDICT_WEIGHT),
    },
    // The feed-forward network adds nothing.
    ...feedForwardTensors(0, WIDTH, ff),
    { name: 'output_norm.weight', ne: [WIDTH], fill: ones },
    {
      name: 'output.weight',
      ne: [WIDTH, nVocab],
      fill: (data) => {
        const [redFirst, otherFirst] = [redIds[0] ?? 0, otherIds[0] ?? 0];
        data[at(otherFirst, 0)] = weight;
        data[at(redFirst, DIM.verdict)] = 2 * weight;
        data[at(otherFirst, DIM.verdict)] = -2 * weight;
        for (const ids of [redIds, otherIds]) writeReplyChain(data, WIDTH, ids, direction, weight);
      },
    },
  ];
  return encodeGguf(kv, tensors);
}

/**
 * The projector: see the module comment.
 * @param {{ imageSize: number, patchSize: number, visionWidth: number, visionBlocks: number }} size
 */
function projector({ imageSize, patchSize, visionWidth: d, visionBlocks }) {
  const patches = (imageSize / patchSize) ** 2;
  const ff = 4 * d;
  // Heads of 64 where the width allows (as CLIP's), else of 32.
  const heads = d % 64 === 0 ? d / 64 : d / 32;
  const hidden = WIDTH;
  const perPixel = 1 / patchSize ** 2;
  // Scales the LayerNorm's output back to m / sqrt(1 + m²/B²).
  const a = PATCH_BIAS * Math.sqrt(2 / d);

  /** @type {[string, Value][]} */
  const kv = [
    ['general.architecture', string('clip')],
    ['general.name', string(`hearth-fixture-vision-mmproj-${imageSize}`)],
    ['general.alignment', u32(32)],
    ['general.file_type', u32(0)],
    ['clip.has_vision_encoder', bool(true)],
    ['clip.projector_type', string('mlp')],
    ['clip.vision.image_size', u32(imageSize)],
    ['clip.vision.patch_size', u32(patchSize)],
    ['clip.vision.embedding_length', u32(d)],
    ['clip.vision.feed_forward_length', u32(ff)],
    ['clip.vision.projection_dim', u32(WIDTH)],
    ['clip.vision.attention.head_count', u32(heads)],
    ['clip.vision.attention.layer_norm_epsilon', f32(1e-6)],
    ['clip.vision.block_count', u32(visionBlocks)],
    ['clip.vision.image_mean', array(GGUF.f32, [0.5, 0.5, 0.5], (w, v) => w.f32(v))],
    ['clip.vision.image_std', array(GGUF.f32, [0.5, 0.5, 0.5], (w, v) => w.f32(v))],
  ];

  /** @type {TensorSpec[]} */
  const tensors = [
    {
      // A convolution kernel [kx, ky, channel, output]: outputs 0 and 1 average the red channel.
      name: 'v.patch_embd.weight',
      ne: [patchSize, patchSize, 3, d],
      fill: (data) => {
        const plane = patchSize * patchSize;
        for (let i = 0; i < plane; i++) {
          data[0 * 3 * plane + i] = perPixel;
          data[1 * 3 * plane + i] = -perPixel;
        }
      },
    },
    {
      name: 'v.patch_embd.bias',
      ne: [d],
      fill: (data) => void data.set([PATCH_BIAS, -PATCH_BIAS], 2),
    },
    { name: 'v.position_embd.weight', ne: [d, patches] },
    { name: 'v.pre_ln.weight', ne: [d], fill: ones },
    { name: 'v.pre_ln.bias', ne: [d] },
  ];
  for (let b = 0; b < visionBlocks; b++) {
    const blk = `v.blk.${b}`;
    tensors.push(
      { name: `${blk}.ln1.weight`, ne: [d], fill: ones },
      { name: `${blk}.ln1.bias`, ne: [d] },
      { name: `${blk}.attn_q.weight`, ne: [d, d], fill: noise(b * 8 + 1) },
      { name: `${blk}.attn_q.bias`, ne: [d] },
      { name: `${blk}.attn_k.weight`, ne: [d, d], fill: noise(b * 8 + 2) },
      { name: `${blk}.attn_k.bias`, ne: [d] },
      { name: `${blk}.attn_v.weight`, ne: [d, d], fill: noise(b * 8 + 3) },
      { name: `${blk}.attn_v.bias`, ne: [d] },
      // Zero: attention adds nothing to the residual stream.
      { name: `${blk}.attn_out.weight`, ne: [d, d] },
      { name: `${blk}.attn_out.bias`, ne: [d] },
      { name: `${blk}.ln2.weight`, ne: [d], fill: ones },
      { name: `${blk}.ln2.bias`, ne: [d] },
      { name: `${blk}.ffn_up.weight`, ne: [d, ff], fill: noise(b * 8 + 4) },
      { name: `${blk}.ffn_up.bias`, ne: [ff] },
      // Zero: nor does the feed-forward network.
      { name: `${blk}.ffn_down.weight`, ne: [ff, d] },
      { name: `${blk}.ffn_down.bias`, ne: [d] },
    );
  }
  tensors.push(
    {
      name: 'mm.0.weight',
      ne: [d, hidden],
      // Element (input c, output r) at r * d + c: hidden units 0 and 1 read ±a × dimension 0.
      fill: (data) => void ((data[0 * d + 0] = a), (data[1 * d + 0] = -a)),
    },
    { name: 'mm.0.bias', ne: [hidden] },
    {
      name: 'mm.2.weight',
      ne: [hidden, WIDTH],
      // GELU(x) - GELU(-x) = x: SIGN gets the red mean back.
      fill: (data) => void ((data[DIM.sign * hidden + 0] = 1), (data[DIM.sign * hidden + 1] = -1)),
    },
    {
      name: 'mm.2.bias',
      ne: [WIDTH],
      fill: (data) => void (data[DIM.marker] = MARKER_VALUE),
    },
  );
  return encodeGguf(kv, tensors);
}

const USAGE = 'node scripts/fixture-vision.mjs <out-dir> [--bench]';

/** `node scripts/fixture-vision.mjs <out-dir> [--bench]` */
async function main(/** @type {string[]} */ args) {
  const dir = args.find((arg) => !arg.startsWith('--'));
  if (!dir || args.some((arg) => arg.startsWith('--') && arg !== '--bench')) {
    console.error(`usage: ${USAGE}`);
    process.exit(2);
  }
  const { mkdir, writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const { model, mmproj } = fixtureVisionGguf(args.includes('--bench') ? VISION_BENCH_OPTIONS : {});
  await mkdir(dir, { recursive: true });
  /** @type {[string, Uint8Array][]} */
  const files = [
    ['fixture-vision.gguf', model],
    ['mmproj-fixture-vision.gguf', mmproj],
  ];
  for (const [name, bytes] of files) {
    const path = join(dir, name);
    await writeFile(path, bytes);
    console.log(`${path}: ${bytes.length} bytes`);
  }
}

if (globalThis.process?.argv?.[1] && import.meta.url === `file://${process.argv[1]}`) {
  await main(process.argv.slice(2));
}
