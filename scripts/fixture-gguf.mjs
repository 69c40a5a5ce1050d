/**
 * @module
 * A real GGUF model made at test time: llama.cpp loads it, tokenizes prompts with its
 * SentencePiece-style vocabulary, renders its ChatML template, runs every layer and samples, and
 * whatever the prompt or the sampler it answers with one known sentence (notes/wllama-3.13.md).
 * Plain JavaScript with JSDoc types, so that Node runs the CLI as it is and TypeScript imports it.
 *
 * The weights are crafted, not trained. Each piece of the sentence has an embedding direction of
 * its own; every other token shares one more. The blocks' output matrices are zero, so the last
 * hidden state is the last token's embedding, and `output.weight` maps each piece to the next (and
 * any other token to the first) with a logit gap of `LOGIT_GAP`, the last piece to `<|im_end|>`,
 * and, second to it, to the first piece: with end-of-generation suppressed the sentence repeats.
 * A chat prompt always ends with the template's `<|im_start|>assistant\n`, so every chat reply is
 * the sentence. A raw completion follows the prompt's last token: most of the sentence's pieces
 * cannot come out of the tokenizer (no chain of merges leads to them), but `,`, `.` and ` it` can,
 * and a prompt ending in one of them goes on from there.
 *
 * `fixtureEmbeddingGguf` makes an embedding model of the same scheme whose vectors are known in
 * closed form (`fixtureEmbedding`).
 *
 * CLI: `node scripts/fixture-gguf.mjs <out.gguf> [--bench] [--variant tools|thinking|embedding]
 * [--split N]`.
 */

/** What the model answers, whatever it is asked. */
export const FIXTURE_SENTENCE = 'The quick brown fox jumps over the lazy dog, and then it rests.';

/**
 * The sentence as the model generates it, one token each: a word with the space before it, or a
 * punctuation mark. A streamed reply has one content chunk per piece.
 */
export const FIXTURE_PIECES = Object.freeze(FIXTURE_SENTENCE.match(/ ?\w+|[^\w\s]/g) ?? []);

if (FIXTURE_PIECES.join('') !== FIXTURE_SENTENCE) {
  throw new Error('FIXTURE_SENTENCE must split into pieces');
}
assertPieces(FIXTURE_PIECES);

/**
 * Throws unless `pieces` can be a reply: non-empty, and no piece repeats (a chain of pieces spells
 * the reply only if each piece has one successor).
 * @param {readonly string[]} pieces
 */
export function assertPieces(pieces) {
  if (pieces.length === 0 || pieces.some((piece) => piece === '')) {
    throw new Error('a reply needs at least one piece, and no empty one');
  }
  if (new Set(pieces).size !== pieces.length) {
    throw new Error(`a reply must split into distinct pieces: ${JSON.stringify(pieces)}`);
  }
}

/** The options of the bigger variant, for benchmarks: ~50 MB, the same text. */
export const BENCH_OPTIONS = Object.freeze({ width: 512, blocks: 4 });

/**
 * Token ids: the control tokens (`<|im_end|>` ends a turn; llama.cpp takes it and `</s>` as the
 * end of generation), then the first of the sentence's pieces, after the 256 byte tokens.
 */
export const FIXTURE_TOKEN_IDS = Object.freeze({
  unk: 0,
  bos: 1,
  eos: 2,
  imStart: 3,
  imEnd: 4,
  firstPiece: 261,
});

/** The standard ChatML template (Jinja), as llama.cpp reads it from `tokenizer.chat_template`. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content']" +
  " + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n'" +
  ' }}{% endif %}';

/**
 * A ChatML template that offers tools the Hermes 2 Pro / Qwen2.5 way: the tools' JSON signatures
 * in the system turn between `<tools>` tags, each call the assistant made as a JSON object between
 * `<tool_call>` tags, each result as a user turn between `<tool_response>` tags. llama.cpp reads
 * the format off what the template renders and parses such replies into `tool_calls`.
 */
export const TOOL_CALL_TEMPLATE = [
  '{%- if tools %}',
  "{{- '<|im_start|>system\\n' }}",
  "{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] + '\\n\\n' }}{%- endif %}",
  "{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\n' }}",
  "{{- 'You are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}",
  "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}",
  "{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and' }}",
  "{{- ' arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n' }}",
  '{{- \'{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n\' }}',
  "{%- elif messages[0]['role'] == 'system' %}",
  "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' }}",
  '{%- endif %}',
  '{%- for message in messages %}',
  "{%- if message['role'] == 'user' or (message['role'] == 'system' and not loop.first) %}",
  "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}",
  "{%- elif message['role'] == 'assistant' %}",
  "{{- '<|im_start|>assistant' }}",
  "{%- if message['content'] %}{{- '\\n' + message['content'] }}{%- endif %}",
  "{%- for tool_call in message['tool_calls'] or [] %}",
  "{%- set call = tool_call['function'] if tool_call['function'] is defined else tool_call %}",
  '{{- \'\\n<tool_call>\\n{"name": "\' + call[\'name\'] + \'", "arguments": \' }}',
  "{%- if call['arguments'] is string %}{{- call['arguments'] }}",
  "{%- else %}{{- call['arguments'] | tojson }}{%- endif %}",
  "{{- '}\\n</tool_call>' }}",
  '{%- endfor %}',
  "{{- '<|im_end|>\\n' }}",
  "{%- elif message['role'] == 'tool' %}",
  "{%- if loop.first or messages[loop.index0 - 1]['role'] != 'tool' %}",
  "{{- '<|im_start|>user' }}",
  '{%- endif %}',
  "{{- '\\n<tool_response>\\n' + message['content'] + '\\n</tool_response>' }}",
  "{%- if loop.last or messages[loop.index0 + 1]['role'] != 'tool' %}",
  "{{- '<|im_end|>\\n' }}",
  '{%- endif %}',
  '{%- endif %}',
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
].join('');

/**
 * A ChatML template of a model that thinks before it answers, the Qwen3 way: an assistant turn's
 * `reasoning_content` is written between `<think>` and `</think>` before its content, and with
 * `enable_thinking` false the generation prompt holds an empty thought. llama.cpp reads the tags
 * off what the template renders and splits replies into `reasoning_content` and `content`.
 */
export const THINKING_TEMPLATE = [
  '{%- for message in messages %}',
  "{%- if message['role'] == 'assistant' %}",
  "{{- '<|im_start|>assistant\\n' }}",
  "{%- if message['reasoning_content'] %}",
  "{{- '<think>\\n' + message['reasoning_content'] + '\\n</think>\\n\\n' }}",
  '{%- endif %}',
  "{{- (message['content'] or '') + '<|im_end|>\\n' }}",
  '{%- else %}',
  "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}",
  '{%- endif %}',
  '{%- endfor %}',
  "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}",
  '{%- if enable_thinking is defined and enable_thinking is false %}',
  "{{- '<think>\\n\\n</think>\\n\\n' }}",
  '{%- endif %}',
  '{%- endif %}',
].join('');

/** The tool-calling variant's reply: one call of `get_weather` for Paris, in Hermes style. */
export const TOOL_CALL_PIECES = Object.freeze([
  '<tool_call>',
  '\n{"name": "',
  'get_weather',
  '", "arguments": {"city": "',
  'Paris',
  '"}}',
  '\n</tool_call>',
]);

/** The thinking variant's reply: a thought between `<think>` tags, then the answer. */
export const THINKING_PIECES = Object.freeze([
  '<think>',
  '\nThe',
  ' user',
  ' asks',
  ' about',
  ' France',
  '.\n',
  '</think>',
  '\n\nIt',
  ' is',
  ' Paris',
  '.',
]);

/** The variants the tests use, as `fixtureGguf` options. */
export const FIXTURE_VARIANTS = Object.freeze({
  tools: Object.freeze({ reply: TOOL_CALL_PIECES, template: TOOL_CALL_TEMPLATE }),
  thinking: Object.freeze({ reply: THINKING_PIECES, template: THINKING_TEMPLATE }),
});

/** Logit of the intended next token above every other (after the final RMS norm). */
const LOGIT_GAP = 80;
/** Size of one attention head; the width must be a multiple of it. */
const HEAD_SIZE = 32;
/** GGUF's default alignment of the data section and of each tensor in it. */
const ALIGNMENT = 32;
/** RMS-norm epsilon of every fixture model (`llama.attention.layer_norm_rms_epsilon`). */
const RMS_EPS = 1e-5;

/** ggml token types (llama.cpp's `llama_token_type`). */
const TOKEN = { normal: 1, unknown: 2, control: 3, byte: 6 };
/** GGUF value types. */
const GGUF = { u16: 2, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9 };

const SPACE = '\u2581';
const LETTERS = [...'abcdefghijklmnopqrstuvwxyz'];
const SHORT_WORDS = ['is', 'to', 'in', 'of', 'on', 'at', 'me', 'my', 'we', 'be', 'do', 'no'];

/**
 * The vocabulary, in id order: the control tokens, the 256 byte tokens (so that any character
 * tokenizes), the reply's pieces (the sentence's by default), then ordinary pieces: `▁`, the letters, `▁`+letter and a few
 * short words, each reachable by SentencePiece's pairwise merges, so prompts make several tokens.
 * Shared with scripts/fixture-vision.mjs, whose model speaks the same vocabulary.
 */
export function vocabulary(/** @type {readonly string[]} */ replyPieces) {
  const specials = ['<unk>', '<s>', '</s>', '<|im_start|>', '<|im_end|>'];
  const bytes = Array.from(
    { length: 256 },
    (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`,
  );
  const pieces = replyPieces.map((piece) => piece.replaceAll(' ', SPACE));
  const ordinary = [
    SPACE,
    ...LETTERS,
    ...LETTERS.map((letter) => SPACE + letter),
    ...SHORT_WORDS.map((word) => SPACE + word),
  ].filter((piece) => !pieces.includes(piece));
  const tokens = [...specials, ...bytes, ...pieces, ...ordinary];
  const types = tokens.map((_, id) =>
    id === 0
      ? TOKEN.unknown
      : id < specials.length
        ? TOKEN.control
        : id < specials.length + 256
          ? TOKEN.byte
          : TOKEN.normal,
  );
  // SentencePiece merges the best-scoring pair first: earlier ordinary pieces are "commoner".
  const scores = tokens.map((_, id) => (types[id] === TOKEN.normal ? -id : 0));
  return { tokens, types, scores };
}

/**
 * A deterministic filler for the matrices whose values do not change the answer (queries, keys,
 * values, the feed-forward input): small, varied, the same bytes on every run.
 * @param {number} seed
 */
export function noise(seed) {
  let state = seed >>> 0 || 1;
  return (/** @type {Float32Array} */ data) => {
    for (let i = 0; i < data.length; i++) {
      // xorshift32
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      data[i] = ((state >>> 0) / 2 ** 32 - 0.5) * 0.1;
    }
  };
}

/** @typedef {(data: Float32Array) => void} Fill */
/** @typedef {{ name: string, ne: number[], fill?: Fill }} TensorSpec */
/** @typedef {(writer: Writer) => void} Value */
/** @typedef {ReturnType<typeof vocabulary>} Vocabulary */

/**
 * The fill of a norm's weight: all ones, which leaves the normed vector as it is.
 * @type {Fill}
 */
export const ones = (data) => void data.fill(1);

/**
 * The fixture model as a GGUF v3 file: llama architecture, F32 tensors. The defaults make ~380 KB;
 * `BENCH_OPTIONS` ~50 MB. The same options give the same bytes. `spacePrefix: false` writes
 * `tokenizer.ggml.add_space_prefix` false: SentencePiece then adds no space after a special token,
 * which llama.cpp's JSON grammars need (they must match the chat template's `assistant\n`), as
 * byte-level BPE tokenizers (Qwen, Llama 3) never add one.
 *
 * `reply` makes a variant that answers other text: its pieces, each one token (normal, spaces
 * written as `▁`), all distinct, spelled in order whatever the prompt; `template` replaces the
 * ChatML chat template (`tokenizer.chat_template`, Jinja), which is how llama.cpp decides whether
 * the model calls tools or thinks (TOOL_CALL_TEMPLATE, THINKING_TEMPLATE). The template's
 * generation prompt must end with a token that is not a piece (ChatML's `assistant\n` does).
 * @param {{ width?: number, blocks?: number, contextLength?: number, spacePrefix?: boolean,
 *   reply?: readonly string[], template?: string }} [options]
 * @returns {Uint8Array}
 */
export function fixtureGguf({
  width = 64,
  blocks = 1,
  contextLength = 2048,
  spacePrefix = true,
  reply = FIXTURE_PIECES,
  template = CHATML_TEMPLATE,
} = {}) {
  assertPieces(reply);
  const vocab = vocabulary(reply);
  const { firstPiece } = FIXTURE_TOKEN_IDS;
  const pieces = reply.length;
  if (!Number.isInteger(width) || width % HEAD_SIZE !== 0 || width < pieces + 1) {
    throw new RangeError(`width must be a multiple of ${HEAD_SIZE} and at least ${pieces + 1}`);
  }
  if (!Number.isInteger(blocks) || blocks < 1) throw new RangeError('blocks must be at least 1');
  if (!Number.isInteger(contextLength) || contextLength < 1) {
    throw new RangeError('contextLength must be a positive integer');
  }
  const nVocab = vocab.tokens.length;
  const heads = width / HEAD_SIZE;
  // Grouped-query attention, as most small models have.
  const kvHeads = heads % 2 === 0 ? heads / 2 : heads;
  const ff = 3 * width;

  const kv = llamaKv({
    name: `hearth-fixture-${width}x${blocks}`,
    vocabulary: vocab,
    contextLength,
    width,
    blocks,
    ff,
    heads,
    kvHeads,
    template,
  });
  if (!spacePrefix) kv.push(['tokenizer.ggml.add_space_prefix', bool(false)]);

  // Piece k owns direction k + 1; every other token shares direction 0.
  /** @param {number} id */
  const direction = (id) =>
    id >= firstPiece && id < firstPiece + pieces ? id - firstPiece + 1 : 0;
  // After the final RMS norm a one-hot vector has the value sqrt(width).
  const weight = LOGIT_GAP / Math.sqrt(width);
  const replyIds = reply.map((_, k) => firstPiece + k);

  /** @type {TensorSpec[]} */
  const tensors = [
    tokenEmbedding(width, nVocab, direction),
    ...blockTensors(width, blocks, kvHeads, ff),
    { name: 'output_norm.weight', ne: [width], fill: ones },
    {
      name: 'output.weight',
      ne: [width, nVocab],
      // Element (input c, output r) is at r * width + c.
      fill: (data) => {
        data[firstPiece * width + 0] = weight;
        writeReplyChain(data, width, replyIds, direction, weight);
      },
    },
  ];
  return encodeGguf(kv, tensors);
}

/**
 * The key/values of a fixture model of the llama architecture that speaks `vocabulary` (this
 * module's SentencePiece-style tokenizer), in the order the fixtures write them: `general.*`;
 * `llama.*`, with heads of `width / heads` (also the RoPE dimension count) and RMS-norm epsilon
 * 1e-5; `llama.pooling_type` where `pooling` is given; then `tokenizer.*`. A chat model (with a
 * `template`) ends a turn with `<|im_end|>` (`eot_token_id`), adds `<s>` and not `</s>`, and has
 * the chat template; an embedding model (no `template`) adds both `<s>` and `</s>`. Shared with
 * scripts/fixture-vision.mjs, whose language model is such a chat model.
 * @param {{ name: string, vocabulary: Vocabulary, contextLength: number, width: number,
 *   blocks: number, ff: number, heads: number, kvHeads: number, ropeFreqBase?: number,
 *   pooling?: number, template?: string }} model
 * @returns {[string, Value][]}
 */
export function llamaKv({
  name,
  vocabulary: { tokens, types, scores },
  contextLength,
  width,
  blocks,
  ff,
  heads,
  kvHeads,
  ropeFreqBase = 10000,
  pooling,
  template,
}) {
  /** @type {[string, Value][]} */
  const kv = [
    ['general.architecture', string('llama')],
    ['general.name', string(name)],
    ['general.alignment', u32(ALIGNMENT)],
    ['general.file_type', u32(0)],
    ['llama.vocab_size', u32(tokens.length)],
    ['llama.context_length', u32(contextLength)],
    ['llama.embedding_length', u32(width)],
    ['llama.block_count', u32(blocks)],
    ['llama.feed_forward_length', u32(ff)],
    ['llama.attention.head_count', u32(heads)],
    ['llama.attention.head_count_kv', u32(kvHeads)],
    ['llama.rope.dimension_count', u32(width / heads)],
    ['llama.rope.freq_base', f32(ropeFreqBase)],
    ['llama.attention.layer_norm_rms_epsilon', f32(RMS_EPS)],
  ];
  if (pooling !== undefined) kv.push(['llama.pooling_type', u32(pooling)]);
  kv.push(
    ['tokenizer.ggml.model', string('llama')],
    ['tokenizer.ggml.tokens', array(GGUF.string, tokens, (w, t) => w.string(t))],
    ['tokenizer.ggml.scores', array(GGUF.f32, scores, (w, s) => w.f32(s))],
    ['tokenizer.ggml.token_type', array(GGUF.i32, types, (w, t) => w.i32(t))],
    ['tokenizer.ggml.unknown_token_id', u32(FIXTURE_TOKEN_IDS.unk)],
    ['tokenizer.ggml.bos_token_id', u32(FIXTURE_TOKEN_IDS.bos)],
    ['tokenizer.ggml.eos_token_id', u32(FIXTURE_TOKEN_IDS.eos)],
  );
  if (template !== undefined)
    kv.push(['tokenizer.ggml.eot_token_id', u32(FIXTURE_TOKEN_IDS.imEnd)]);
  kv.push(
    ['tokenizer.ggml.add_bos_token', bool(true)],
    ['tokenizer.ggml.add_eos_token', bool(template === undefined)],
  );
  if (template !== undefined) kv.push(['tokenizer.chat_template', string(template)]);
  return kv;
}

/**
 * `token_embd.weight`: each token's embedding one-hot along its `direction`.
 * @param {number} width
 * @param {number} nVocab
 * @param {(id: number) => number} direction
 * @returns {TensorSpec}
 */
export function tokenEmbedding(width, nVocab, direction) {
  return {
    name: 'token_embd.weight',
    ne: [width, nVocab],
    fill: (data) => {
      for (let id = 0; id < nVocab; id++) data[id * width + direction(id)] = 1;
    },
  };
}

/**
 * Writes a reply's chain into `output.weight` (element (input c, output r) at r * width + c):
 * the direction of each of its pieces (token ids `ids`, in order) gives the next piece `weight`,
 * and the last piece's gives `<|im_end|>` `weight` and, second to it, the first piece
 * `weight / 2`, so that with end-of-generation suppressed the reply repeats.
 * @param {Float32Array} data
 * @param {number} width
 * @param {readonly number[]} ids
 * @param {(id: number) => number} direction
 * @param {number} weight
 */
export function writeReplyChain(data, width, ids, direction, weight) {
  for (let k = 0; k + 1 < ids.length; k++) {
    data[(ids[k + 1] ?? 0) * width + direction(ids[k] ?? 0)] = weight;
  }
  const last = direction(ids[ids.length - 1] ?? 0);
  data[FIXTURE_TOKEN_IDS.imEnd * width + last] = weight;
  data[(ids[0] ?? 0) * width + last] = weight / 2;
}

/**
 * The blocks' tensors: norms 1, queries, keys, values and the feed-forward input filled with
 * `noise`, the attention and feed-forward output matrices zero, so that every block adds nothing
 * to the residual stream while all its maths runs.
 * @param {number} width
 * @param {number} blocks
 * @param {number} kvHeads
 * @param {number} ff
 * @returns {TensorSpec[]}
 */
function blockTensors(width, blocks, kvHeads, ff) {
  /** @type {TensorSpec[]} */
  const tensors = [];
  for (let b = 0; b < blocks; b++) {
    tensors.push(
      { name: `blk.${b}.attn_norm.weight`, ne: [width], fill: ones },
      { name: `blk.${b}.attn_q.weight`, ne: [width, width], fill: noise(b * 8 + 1) },
      { name: `blk.${b}.attn_k.weight`, ne: [width, kvHeads * HEAD_SIZE], fill: noise(b * 8 + 2) },
      { name: `blk.${b}.attn_v.weight`, ne: [width, kvHeads * HEAD_SIZE], fill: noise(b * 8 + 3) },
      // Zero: attention adds nothing to the residual stream.
      { name: `blk.${b}.attn_output.weight`, ne: [width, width] },
      ...feedForwardTensors(b, width, ff),
    );
  }
  return tensors;
}

/**
 * Block `b`'s feed-forward tensors: the norm 1, the gate and up matrices filled with `noise`,
 * the down matrix zero, so that the feed-forward network adds nothing to the residual stream.
 * Shared with scripts/fixture-vision.mjs, whose language model's block has them too.
 * @param {number} b
 * @param {number} width
 * @param {number} ff
 * @returns {TensorSpec[]}
 */
export function feedForwardTensors(b, width, ff) {
  return [
    { name: `blk.${b}.ffn_norm.weight`, ne: [width], fill: ones },
    { name: `blk.${b}.ffn_gate.weight`, ne: [width, ff], fill: noise(b * 8 + 4) },
    { name: `blk.${b}.ffn_up.weight`, ne: [width, ff], fill: noise(b * 8 + 5) },
    // Zero: nor does the feed-forward network.
    { name: `blk.${b}.ffn_down.weight`, ne: [ff, width] },
  ];
}

// ---------------------------------------------------------------------------------------------
// The embedding variant

/** The embedding fixture's width: the length of its vectors. */
export const FIXTURE_EMBEDDING_DIMENSIONS = 128;
/** The embedding fixture's context length (`llama.context_length`): small, so a test can pass it. */
export const FIXTURE_EMBEDDING_CONTEXT = 512;
/** llama.cpp's `LLAMA_POOLING_TYPE_MEAN`, written as `llama.pooling_type`. */
export const FIXTURE_EMBEDDING_POOLING = 1;

/**
 * Words that are one token each in the embedding fixture (`▁` + the word), whatever words are
 * around them: the short words, then the 26 letters as words. A text of these words separated by
 * single spaces makes one token a word, between `<s>` and `</s>`.
 */
export const FIXTURE_EMBEDDING_WORDS = Object.freeze([...SHORT_WORDS, ...LETTERS]);

/**
 * The embedding fixture's vocabulary: the same control tokens (ids 0–4) and byte tokens (5–260)
 * as the chat fixture, then no reply pieces: `▁` (261), the letters `a`…`z` (262–287), `▁a`…`▁z`
 * (288–313), and `▁is`, `▁to`… (314–325).
 */
const EMBEDDING_VOCABULARY = vocabulary([]);

/**
 * The embedding direction of a token of the embedding fixture: the 256 byte tokens share
 * direction 0; `<unk>`, `<s>`, `</s>`, `<|im_start|>`, `<|im_end|>` have directions 1–5; the
 * ordinary pieces from `▁` on have directions 6–70 in id order. A width under 71 folds the
 * directions it lacks onto direction 0 (the default width, 128, and the bench's, 512, lack none).
 * @param {number} id
 * @param {number} width
 */
function embeddingDirection(id, width) {
  const { firstPiece } = FIXTURE_TOKEN_IDS;
  const direction = id < 5 ? id + 1 : id < firstPiece ? 0 : id - firstPiece + 6;
  return direction < width ? direction : 0;
}

/**
 * The embedding fixture as a GGUF v3 file: llama architecture, F32, `llama.pooling_type` 1
 * (mean), `tokenizer.ggml.add_bos_token` and `add_eos_token` true (as BERT-style embedding models
 * have: every text embeds as `<s>` text `</s>`), `general.name` `hearth-fixture-embedding-…`,
 * no chat template and no `output.weight` (an embedding model has no head; llama.cpp would tie it
 * to the token embeddings). Each token's embedding is one-hot along its direction
 * (`embeddingDirection`), and the blocks add nothing, so the last hidden state of a token, after
 * the final RMS norm, is its direction times `1 / sqrt(1 / width + eps)`: mean pooling gives the
 * count vector of the text's directions, scaled; see `fixtureEmbedding`. The defaults make
 * ~950 KB; `BENCH_OPTIONS` (width 512, 4 blocks) ~50 MB.
 *
 * wllama 3.13's llama.cpp reads `llama.pooling_type` for the llama architecture: loaded with
 * `embeddings: true` and no `pooling_type`, it mean-pools (tests/e2e/fixture-gguf.spec.ts shows
 * it, and that `pooling: 3`, last-token pooling, changes the vectors). `pooling` writes another
 * llama.cpp pooling type (0 none, 1 mean, 2 CLS, 3 last); `fixtureEmbedding` knows mean only.
 * @param {{ width?: number, blocks?: number, contextLength?: number, pooling?: number }} [options]
 * @returns {Uint8Array}
 */
export function fixtureEmbeddingGguf({
  width = FIXTURE_EMBEDDING_DIMENSIONS,
  blocks = 1,
  contextLength = FIXTURE_EMBEDDING_CONTEXT,
  pooling = FIXTURE_EMBEDDING_POOLING,
} = {}) {
  if (!Number.isInteger(width) || width % HEAD_SIZE !== 0 || width < HEAD_SIZE) {
    throw new RangeError(`width must be a positive multiple of ${HEAD_SIZE}`);
  }
  if (!Number.isInteger(blocks) || blocks < 1) throw new RangeError('blocks must be at least 1');
  if (!Number.isInteger(contextLength) || contextLength < 1) {
    throw new RangeError('contextLength must be a positive integer');
  }
  if (![0, 1, 2, 3].includes(pooling)) throw new RangeError('pooling must be 0, 1, 2 or 3');
  const nVocab = EMBEDDING_VOCABULARY.tokens.length;
  const heads = width / HEAD_SIZE;
  const kvHeads = heads % 2 === 0 ? heads / 2 : heads;
  const ff = 3 * width;

  const kv = llamaKv({
    name: `hearth-fixture-embedding-${width}x${blocks}`,
    vocabulary: EMBEDDING_VOCABULARY,
    contextLength,
    width,
    blocks,
    ff,
    heads,
    kvHeads,
    pooling,
  });
  /** @type {TensorSpec[]} */
  const tensors = [
    tokenEmbedding(width, nVocab, (id) => embeddingDirection(id, width)),
    ...blockTensors(width, blocks, kvHeads, ff),
    { name: 'output_norm.weight', ne: [width], fill: ones },
  ];
  return encodeGguf(kv, tensors);
}

/**
 * The token ids llama.cpp gives a text in the embedding fixture, `<s>` and `</s>` included:
 * SentencePiece's merges (a space before the text, spaces as `▁`, then the best-scoring pair of
 * neighbours that is a piece merged first, the leftmost of equals), for texts of the letters
 * `a`–`z` and spaces only (other characters would fall back to byte tokens; this refuses them).
 * A text of `FIXTURE_EMBEDDING_WORDS` separated by single spaces gives one token a word.
 * @param {string} text
 * @returns {number[]}
 */
export function fixtureEmbeddingTokens(text) {
  if (!/^[a-z ]+$/.test(text)) {
    throw new RangeError('fixtureEmbeddingTokens takes letters a-z and spaces only');
  }
  const { tokens, scores } = EMBEDDING_VOCABULARY;
  const ids = new Map(tokens.map((token, id) => [token, id]));
  const symbols = [...(SPACE + text.replaceAll(' ', SPACE))];
  for (;;) {
    let best = -1;
    let bestScore = -Infinity;
    for (let i = 0; i + 1 < symbols.length; i++) {
      const id = ids.get(`${symbols[i]}${symbols[i + 1]}`);
      const score = id === undefined ? undefined : scores[id];
      if (score !== undefined && score > bestScore) [best, bestScore] = [i, score];
    }
    if (best < 0) break;
    symbols.splice(best, 2, `${symbols[best]}${symbols[best + 1]}`);
  }
  return [
    FIXTURE_TOKEN_IDS.bos,
    ...symbols.map((symbol) => /** @type {number} */ (ids.get(symbol))),
    FIXTURE_TOKEN_IDS.eos,
  ];
}

/**
 * The embedding the fixture gives these tokens (as llama.cpp runs them, `<s>` and `</s>`
 * included), in closed form: the mean of the final-normed hidden states, each the token's one-hot
 * direction times `1 / sqrt(1 / width + eps)`, then normalised as llama-server's `embd_normalize`
 * says: 2 (its default) the Euclidean norm, which leaves the count vector of the directions over
 * its length; 1 the taxicab norm; -1 none, the raw mean.
 * @param {readonly number[]} tokenIds
 * @param {{ width?: number, normalize?: -1 | 1 | 2 }} [options]
 * @returns {number[]}
 */
export function fixtureEmbedding(
  tokenIds,
  { width = FIXTURE_EMBEDDING_DIMENSIONS, normalize = 2 } = {},
) {
  const nVocab = EMBEDDING_VOCABULARY.tokens.length;
  if (tokenIds.length === 0) throw new RangeError('no tokens');
  const counts = new Array(width).fill(0);
  for (const id of tokenIds) {
    if (!Number.isInteger(id) || id < 0 || id >= nVocab) throw new RangeError(`no token ${id}`);
    counts[embeddingDirection(id, width)]++;
  }
  const scale =
    normalize === -1
      ? 1 / Math.sqrt(1 / width + RMS_EPS) / tokenIds.length
      : normalize === 1
        ? 1 / tokenIds.length
        : normalize === 2
          ? 1 / Math.hypot(...counts)
          : NaN;
  if (Number.isNaN(scale)) throw new RangeError('normalize must be -1, 1 or 2');
  return counts.map((count) => count * scale);
}

/**
 * Splits a GGUF file into `parts` files as llama.cpp's `gguf-split` does: every part a GGUF of
 * its own with `split.no`, `split.count` and `split.tensors.count`; the first keeps the metadata;
 * the tensors, in order, spread by size. Give them to llama.cpp in order (wllama: `loadModel` with
 * Blobs in order, or Files named `…-00001-of-0000N.gguf`).
 * @param {Uint8Array} bytes
 * @param {number} parts
 * @returns {Uint8Array[]}
 */
export function splitGguf(bytes, parts) {
  const layout = readLayout(bytes);
  const { tensors } = layout;
  if (!Number.isInteger(parts) || parts < 1 || parts > tensors.length) {
    throw new RangeError(`parts must be between 1 and the tensor count, ${tensors.length}`);
  }
  if (parts === 1) return [bytes];
  const total = tensors.reduce((sum, t) => sum + t.size, 0);
  /** @type {(typeof tensors)[]} */
  const groups = Array.from({ length: parts }, () => []);
  let part = 0;
  let done = 0;
  tensors.forEach((tensor, i) => {
    const left = tensors.length - i;
    const full = done >= (total * (part + 1)) / parts || left <= parts - 1 - part;
    if (part < parts - 1 && groups[part]?.length && full) part++;
    groups[part]?.push(tensor);
    done += tensor.size;
  });
  return groups.map((group, no) => {
    const kv = layout.kv.filter(
      (entry) => !entry.key.startsWith('split.') && (no === 0 || entry.key === 'general.alignment'),
    );
    const w = new Writer();
    w.bytes(MAGIC);
    w.u32(3);
    w.u64(group.length);
    w.u64(kv.length + 3);
    for (const entry of kv) w.bytes(entry.raw);
    w.string('split.no');
    u16(no)(w);
    w.string('split.count');
    u16(parts)(w);
    w.string('split.tensors.count');
    i32(tensors.length)(w);
    let offset = 0;
    for (const tensor of group) {
      w.bytes(tensor.info);
      w.u64(offset);
      offset += tensor.size;
    }
    w.pad(layout.alignment);
    const out = new Uint8Array(w.length + offset);
    out.set(w.view());
    let at = w.length;
    for (const tensor of group) {
      out.set(bytes.subarray(tensor.start, tensor.start + tensor.size), at);
      at += tensor.size;
    }
    return out;
  });
}

const MAGIC = new TextEncoder().encode('GGUF');

/**
 * Lays out a GGUF v3 file: header, key/values, tensor infos, padding, then each tensor's data
 * (F32, filled in place, little-endian like every platform that runs this) padded to ALIGNMENT.
 * Tensors without `fill` stay zero.
 * @param {[string, Value][]} kv
 * @param {TensorSpec[]} tensors
 * @returns {Uint8Array}
 */
export function encodeGguf(kv, tensors) {
  const w = new Writer();
  w.bytes(MAGIC);
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kv.length);
  for (const [key, value] of kv) {
    w.string(key);
    value(w);
  }
  let offset = 0;
  const offsets = tensors.map((tensor) => {
    w.string(tensor.name);
    w.u32(tensor.ne.length);
    for (const n of tensor.ne) w.u64(n);
    w.u32(0); // GGML_TYPE_F32
    w.u64(offset);
    const at = offset;
    offset += padded(4 * count(tensor), ALIGNMENT);
    return at;
  });
  w.pad(ALIGNMENT);
  const out = new Uint8Array(w.length + offset);
  out.set(w.view());
  tensors.forEach((tensor, i) => {
    tensor.fill?.(new Float32Array(out.buffer, w.length + (offsets[i] ?? 0), count(tensor)));
  });
  return out;
}

/** @param {TensorSpec} tensor */
const count = (tensor) => tensor.ne.reduce((a, b) => a * b, 1);
/** @param {number} n @param {number} alignment */
const padded = (n, alignment) => Math.ceil(n / alignment) * alignment;

/** @param {string} v @returns {Value} */
const string = (v) => (w) => (w.u32(GGUF.string), w.string(v));
/** @param {number} v @returns {Value} */
const u16 = (v) => (w) => (w.u32(GGUF.u16), w.u16(v));
/** @param {number} v @returns {Value} */
const u32 = (v) => (w) => (w.u32(GGUF.u32), w.u32(v));
/** @param {number} v @returns {Value} */
const i32 = (v) => (w) => (w.u32(GGUF.i32), w.i32(v));
/** @param {number} v @returns {Value} */
const f32 = (v) => (w) => (w.u32(GGUF.f32), w.f32(v));
/** @param {boolean} v @returns {Value} */
const bool = (v) => (w) => (w.u32(GGUF.bool), w.u8(v ? 1 : 0));
/**
 * @template T
 * @param {number} type
 * @param {readonly T[]} items
 * @param {(w: Writer, item: T) => void} write
 * @returns {Value}
 */
const array = (type, items, write) => (w) => {
  w.u32(GGUF.array);
  w.u32(type);
  w.u64(items.length);
  for (const item of items) write(w, item);
};

/**
 * The key/value writers `encodeGguf` takes, and GGUF's value types (for `array`): what another
 * fixture (scripts/fixture-vision.mjs) needs to write a GGUF of its own.
 */
export const ggufValue = Object.freeze({ string, u32, i32, f32, bool, array, type: GGUF });

/** A growing little-endian byte buffer. */
class Writer {
  #buffer = new Uint8Array(1 << 16);
  #data = new DataView(this.#buffer.buffer);
  length = 0;

  /** @param {number} n */
  #room(n) {
    if (this.length + n <= this.#buffer.length) return this.length;
    const bigger = new Uint8Array(Math.max(2 * this.#buffer.length, this.length + n));
    bigger.set(this.#buffer);
    this.#buffer = bigger;
    this.#data = new DataView(bigger.buffer);
    return this.length;
  }
  /** @param {number} v */
  u8(v) {
    this.#data.setUint8(this.#room(1), v);
    this.length += 1;
  }
  /** @param {number} v */
  u16(v) {
    this.#data.setUint16(this.#room(2), v, true);
    this.length += 2;
  }
  /** @param {number} v */
  u32(v) {
    this.#data.setUint32(this.#room(4), v, true);
    this.length += 4;
  }
  /** @param {number} v */
  i32(v) {
    this.#data.setInt32(this.#room(4), v, true);
    this.length += 4;
  }
  /** @param {number} v */
  u64(v) {
    this.#data.setBigUint64(this.#room(8), BigInt(v), true);
    this.length += 8;
  }
  /** @param {number} v */
  f32(v) {
    this.#data.setFloat32(this.#room(4), v, true);
    this.length += 4;
  }
  /** @param {Uint8Array} v */
  bytes(v) {
    this.#buffer.set(v, this.#room(v.length));
    this.length += v.length;
  }
  /** A GGUF string: u64 byte length, then UTF-8 without a terminator. @param {string} v */
  string(v) {
    const utf8 = new TextEncoder().encode(v);
    this.u64(utf8.length);
    this.bytes(utf8);
  }
  /** @param {number} alignment */
  pad(alignment) {
    const n = padded(this.length, alignment) - this.length;
    this.#room(n);
    this.#buffer.fill(0, this.length, this.length + n);
    this.length += n;
  }
  view() {
    return this.#buffer.subarray(0, this.length);
  }
}

/** Byte sizes of GGUF's fixed-size value types, by type number. */
const FIXED_SIZE = /** @type {Record<number, number>} */ ({
  0: 1,
  1: 1,
  2: 2,
  3: 2,
  4: 4,
  5: 4,
  6: 4,
  7: 1,
  10: 8,
  11: 8,
  12: 8,
});

/**
 * Where things are in a GGUF v3 file: each key/value's raw bytes, each tensor's info (less its
 * offset) and data, and the alignment. A tensor's size is the distance to the next one, which
 * GGUF requires to be its padded byte size, so no table of ggml types is needed.
 * @param {Uint8Array} bytes
 */
function readLayout(bytes) {
  const data = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  const readU32 = () => ((at += 4), data.getUint32(at - 4, true));
  const readU64 = () => ((at += 8), Number(data.getBigUint64(at - 8, true)));
  const text = () => {
    const n = readU64();
    at += n;
    return new TextDecoder().decode(bytes.subarray(at - n, at));
  };
  /** @param {number} type */
  const skip = (type) => {
    if (type === GGUF.string) {
      const n = readU64(); // not `at += readU64()`: that adds to `at` as it was before the read
      at += n;
    } else if (type === GGUF.array) {
      const of = readU32();
      const n = readU64();
      if (FIXED_SIZE[of]) at += n * FIXED_SIZE[of];
      else for (let i = 0; i < n; i++) skip(of);
    } else if (FIXED_SIZE[type]) at += FIXED_SIZE[type];
    else throw new Error(`unknown GGUF value type ${type}`);
  };

  if (new TextDecoder().decode(bytes.subarray(0, 4)) !== 'GGUF' || ((at = 4), readU32()) !== 3) {
    throw new Error('not a GGUF v3 file');
  }
  const nTensors = readU64();
  const nKv = readU64();
  let alignment = ALIGNMENT;
  const kv = Array.from({ length: nKv }, () => {
    const start = at;
    const key = text();
    const type = readU32();
    if (key === 'general.alignment' && type === GGUF.u32) alignment = data.getUint32(at, true);
    skip(type);
    return { key, raw: bytes.subarray(start, at) };
  });
  const infos = Array.from({ length: nTensors }, () => {
    const start = at;
    text();
    const dims = readU32();
    at += 8 * dims + 4;
    const info = bytes.subarray(start, at);
    return { info, offset: readU64() };
  });
  const dataStart = padded(at, alignment);
  const tensors = infos.map(({ info, offset }, i) => ({
    info,
    start: dataStart + offset,
    size: (infos[i + 1]?.offset ?? bytes.length - dataStart) - offset,
  }));
  return { kv, tensors, alignment };
}

const USAGE =
  'node scripts/fixture-gguf.mjs <out.gguf> [--bench] [--variant tools|thinking|embedding] [--split N]';

/** `node scripts/fixture-gguf.mjs <out.gguf> [--bench] [--variant tools|thinking|embedding] [--split N]` */
async function main(/** @type {string[]} */ args) {
  const out = args.find(
    (arg, i) => !arg.startsWith('--') && !['--split', '--variant'].includes(args[i - 1] ?? ''),
  );
  const splitAt = args.indexOf('--split');
  const parts = splitAt >= 0 ? Number(args[splitAt + 1]) : 1;
  const variantAt = args.indexOf('--variant');
  const name = variantAt >= 0 ? args[variantAt + 1] : undefined;
  const variant =
    name === 'tools' || name === 'thinking' || name === 'embedding'
      ? name
      : name
        ? null
        : 'default';
  if (!out || !Number.isInteger(parts) || parts < 1 || !variant) {
    console.error(`usage: ${USAGE}`);
    process.exit(2);
  }
  const { writeFile } = await import('node:fs/promises');
  const size = args.includes('--bench') ? BENCH_OPTIONS : {};
  const bytes =
    variant === 'embedding'
      ? fixtureEmbeddingGguf(size)
      : fixtureGguf({ ...size, ...(variant === 'default' ? {} : FIXTURE_VARIANTS[variant]) });
  if (parts === 1) {
    await writeFile(out, bytes);
    console.log(`${out}: ${bytes.length} bytes`);
    return;
  }
  const base = out.replace(/\.gguf$/, '');
  const files = splitGguf(bytes, parts);
  for (const [i, file] of files.entries()) {
    const name = `${base}-${String(i + 1).padStart(5, '0')}-of-${String(parts).padStart(5, '0')}.gguf`;
    await writeFile(name, file);
    console.log(`${name}: ${file.length} bytes`);
  }
}

if (globalThis.process?.argv?.[1] && import.meta.url === `file://${process.argv[1]}`) {
  await main(process.argv.slice(2));
}
