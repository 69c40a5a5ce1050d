/**
 * @module
 * What a catalogue id says about a model, in words people read: its name without the variant
 * ("Llama 3.2 1B Instruct"), its family ("Llama 3.2"), its parameter count ("1B"), its
 * quantisation explained in one line, and what it is good for. One parser for the three id shapes:
 * WebLLM's `mlc-ai/<Name>-<quant>-MLC[-<build>]`, a GGUF's `<user>/<Repo>-GGUF:<QUANT>` and a
 * server's `<server>/<upstream id>`. Pure: the Models view and its tests use it alike.
 */
import type { CatalogModel } from '../shared/api-client';

/** A model's quantisation: its label as the id writes it and what it means. */
export interface Quantisation {
  /** As the id writes it: `q4f16_1`, `Q4_K_M`, `F16`. */
  label: string;
  /** One line of plain English: `4-bit, good balance`. */
  explanation: string;
  /** Bits per weight, to compare variants (16 or 32 for unquantised ones). */
  bits: number;
}

/** What the Models view says about a model. */
export interface ModelInfo {
  /** The model without its variant: `Llama 3.2 1B Instruct`. */
  name: string;
  /** The family it belongs to: `Llama 3.2`, `Qwen2.5 Coder`. */
  family: string;
  /** Its parameter count as people write it (`1B`, `0.5B`, `360M`), or null when not known. */
  parameters: string | null;
  /** The parameter count in billions (0.36 for 360M), or null. */
  billions: number | null;
  quantisation: Quantisation | null;
  /** What sets this variant apart from the card's others: `q4f16_1 · 1k context`. */
  variant: string;
  /** What it is good for, in words: `chat`, `coding`, `reasoning`, `tools`, `retrieval`. */
  goodFor: string[];
  /** The capabilities the view filters on (`chat`, `coding`, `reasoning`, `tools`, `maths`, `embeddings`). */
  capabilities: Capability[];
  /** The same name whatever the variant, engine or publisher: the card a variant belongs to. */
  key: string;
}

/** What the view filters models by. */
export type Capability = 'chat' | 'coding' | 'reasoning' | 'tools' | 'maths' | 'embeddings';

/** WebLLM's quantisation and build suffix: `-q4f16_1-MLC`, `-q0f32-MLC-1k`. */
const MLC = /^(.*?)-(q(\d+)f(16|32)(?:_\d+)?)-MLC(?:-(.+))?$/i;
/** A parameter count: `1B`, `0.5b`, `360M`, `E2B` (effective, for Gemma's per-layer embeddings). */
const PARAMETERS = /^(e)?(\d+(?:\.\d+)?)([bm])$/i;
/** Mixture of experts: `8x7B`. */
const EXPERTS = /^(\d+)x(\d+(?:\.\d+)?)([bm])$/i;
/** A four-digit release (`2512`, `1124`): part of the name, not of the family. */
const RELEASE = /^\d{4}$/;
/** Words that say how a model was tuned, not which family it is. */
const TUNING = new Set(['instruct', 'chat', 'it', 'base', 'reasoning', 'mini', 'hf']);
/** Spellings an id gives in lower case, as their makers write them. */
const SPELLING: Record<string, string> = {
  it: 'Instruct',
  jpn: 'Japanese',
  en: 'English',
  bge: 'BGE',
  stablelm: 'StableLM',
  gemma3: 'Gemma 3',
  llama3: 'Llama 3',
  'llama3.1': 'Llama 3.1',
  'llama3.2': 'Llama 3.2',
  'llama3.3': 'Llama 3.3',
  gpt: 'GPT',
  hf: '',
};
/** A trailing precision of the source weights (`-BF16`): the quantisation says the precision. */
const SOURCE_PRECISION = /^(bf16|fp16|f16|fp32)$/i;

/** Explanations of llama.cpp's quantisation types, by their names. */
const GGUF_QUANTS: Record<string, [bits: number, explanation: string]> = {
  F32: [32, '32-bit, full precision: the largest'],
  F16: [16, '16-bit, full quality: large'],
  BF16: [16, '16-bit (bfloat), full quality: large'],
  Q8_0: [8, '8-bit, close to full quality, twice the size of 4-bit'],
  Q6_K: [6, '6-bit, near full quality'],
  Q5_K_M: [5, '5-bit, better quality than 4-bit, a little larger'],
  Q5_K_S: [5, '5-bit, better quality than 4-bit'],
  Q5_0: [5, '5-bit, better quality than 4-bit'],
  Q4_K_M: [4, '4-bit, good balance'],
  Q4_K_S: [4, '4-bit, a little smaller and a little worse than Q4_K_M'],
  Q4_0: [4, '4-bit, simple and fast on processors'],
  IQ4_XS: [4, '4-bit (importance-weighted), small for its quality'],
  IQ4_NL: [4, '4-bit (importance-weighted), fast on processors'],
  Q3_K_L: [3, '3-bit, smaller, noticeably worse'],
  Q3_K_M: [3, '3-bit, smaller, noticeably worse'],
  Q3_K_S: [3, '3-bit, small, noticeably worse'],
  Q2_K: [2, '2-bit, the smallest, much worse'],
};

/** What a quantisation label means, for WebLLM's (`q4f16_1`) and llama.cpp's (`Q4_K_M`) names. */
export function explainQuantisation(label: string): Quantisation | null {
  const mlc = /^q(\d+)f(16|32)(?:_\d+)?$/i.exec(label);
  if (mlc) {
    const bits = Number(mlc[1]);
    const maths = mlc[2]!;
    const needs = maths === '16' ? 'needs shader-f16' : 'runs on any WebGPU';
    const explanation =
      bits === 0
        ? `unquantised ${maths}-bit weights — full quality, large, ${needs}`
        : `${bits}-bit weights, ${maths}-bit maths — ${bits <= 3 ? 'smallest, some quality lost' : 'small'}, ${needs}`;
    return { label, explanation, bits: bits === 0 ? Number(maths) : bits };
  }
  const upper = label.toUpperCase();
  const known = GGUF_QUANTS[upper];
  if (known) return { label, explanation: known[1], bits: known[0] };
  const gguf = /^I?Q(\d)_/.exec(upper);
  if (gguf) {
    const bits = Number(gguf[1]);
    return { label, explanation: `${bits}-bit`, bits };
  }
  return null;
}

/** The parts of an id that name the model, its quantisation and its build, by engine. */
function partsOf(m: Pick<CatalogModel, 'id' | 'engine' | 'server'>): {
  base: string;
  quant: string | null;
  build: string | null;
} {
  const slash = m.id.indexOf('/');
  const rest = slash === -1 ? m.id : m.id.slice(slash + 1);
  if (m.engine === 'server') {
    // `Qwen/Qwen2.5-7B-Instruct`, `llama3.2:1b` (Ollama's tag), `gpt-4o-mini`.
    const upstream = m.server?.upstream_id ?? rest;
    const last = upstream.slice(upstream.lastIndexOf('/') + 1);
    const [name = last, tag] = last.split(':');
    const quant = tag && explainQuantisation(tag) ? tag : null;
    return {
      base: tag && !quant && tag !== 'latest' ? `${name}-${tag}` : name,
      quant,
      build: null,
    };
  }
  const colon = rest.lastIndexOf(':');
  if (colon !== -1) {
    // A GGUF: `<Repo>-GGUF:<QUANT>`.
    return {
      base: rest.slice(0, colon).replace(/[-_.]gguf$/i, ''),
      quant: rest.slice(colon + 1),
      build: null,
    };
  }
  const mlc = MLC.exec(rest);
  if (mlc) return { base: mlc[1]!, quant: mlc[2]!, build: mlc[5] ?? null };
  return { base: rest.replace(/[-_.]gguf$/i, ''), quant: null, build: null };
}

/** A word of an id as people write it: `llama` → `Llama`, `1b` → `1B`, `it` → `Instruct`. */
function spell(word: string): string {
  const known = SPELLING[word.toLowerCase()];
  if (known !== undefined) return known;
  if (PARAMETERS.test(word) || EXPERTS.test(word)) return word.toUpperCase();
  if (/^v\d/i.test(word)) return word.toLowerCase();
  return word === word.toLowerCase() ? word.charAt(0).toUpperCase() + word.slice(1) : word;
}

/** Billions of parameters in a count such as `360M` or `E2B`. */
function billionsOf(word: string): number | null {
  const experts = EXPERTS.exec(word);
  if (experts) return Number(experts[1]) * Number(experts[2]) * (/m/i.test(experts[3]!) ? 1e-3 : 1);
  const plain = PARAMETERS.exec(word);
  if (!plain) return null;
  return Number(plain[2]) * (/m/i.test(plain[3]!) ? 1e-3 : 1);
}

/** A WebLLM build suffix in words: `1k` is a 1,024-token context, `b32` a batch of 32. */
function buildLabel(build: string | null): string | null {
  if (!build) return null;
  if (/^\d+k$/i.test(build)) return `${build} context`;
  const batch = /^b(\d+)$/i.exec(build);
  return batch ? `batches of ${batch[1]}` : `build ${build}`;
}

/** The card key of a name: lower case, letters and digits only. */
const keyOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^\p{L}\p{N}.]+/gu, ' ')
    .trim();

/** What the Models view says about `m`, from its id and its catalogue flags. */
export function describeModel(
  m: Pick<CatalogModel, 'id' | 'engine' | 'tools' | 'reasoning' | 'embedding' | 'server'>,
): ModelInfo {
  if (m.engine === 'echo') {
    return {
      name: 'Echo',
      family: 'Test engine',
      parameters: null,
      billions: null,
      quantisation: null,
      variant: 'test engine',
      goodFor: ['trying the API without a model'],
      capabilities: [],
      key: 'echo',
    };
  }
  const { base, quant, build } = partsOf(m);
  // `1_6b` and `phi-1_5` write a decimal point as `_`.
  const words = base
    .replace(/(\d)_(\d)/g, '$1.$2')
    .split(/[-_\s]+/)
    .filter((w) => w !== '');
  while (words.length > 1 && SOURCE_PRECISION.test(words.at(-1)!)) words.pop();
  const sizeAt = words.findIndex((w) => billionsOf(w) !== null);
  const spelled = words.map(spell).filter((w) => w !== '');
  const name = spelled.join(' ') || base;
  let familyWords: string[];
  if (sizeAt > 0) familyWords = words.slice(0, sizeAt);
  else if (words.length <= 2) familyWords = words;
  else {
    const tuning = words.findIndex((w, i) => i > 0 && TUNING.has(w.toLowerCase()));
    familyWords =
      tuning > 0 ? words.slice(0, tuning) : words.slice(0, Math.max(1, words.length - 1));
  }
  const family =
    familyWords
      .filter((w, i) => i === 0 || (!RELEASE.test(w) && !TUNING.has(w.toLowerCase())))
      .map(spell)
      .filter((w) => w !== '')
      .join(' ') || name;
  const sizeWord = sizeAt === -1 ? null : words[sizeAt]!;
  const effective = sizeWord ? /^e/i.test(sizeWord) : false;
  const parameters = sizeWord
    ? `${sizeWord.replace(/^e/i, '').toUpperCase()}${effective ? ' effective' : ''}`
    : null;
  const billions = sizeWord ? billionsOf(sizeWord) : null;
  const quantisation = quant ? explainQuantisation(quant) : null;

  const text = `${base} ${m.id}`.toLowerCase();
  const capabilities: Capability[] = [];
  const goodFor: string[] = [];
  if (m.embedding) {
    capabilities.push('embeddings');
    goodFor.push('retrieval (embeddings)');
  } else {
    capabilities.push('chat');
    goodFor.push('chat');
    if (/coder|code/.test(text)) {
      capabilities.push('coding');
      goodFor.push('coding');
    }
    if (/math/.test(text)) {
      capabilities.push('maths');
      goodFor.push('maths');
    }
    if (m.reasoning) {
      capabilities.push('reasoning');
      goodFor.push('reasoning');
    }
    if (m.tools) {
      capabilities.push('tools');
      goodFor.push('tools');
    }
  }
  if (billions !== null && billions < 1) goodFor.push('tiny and fast');

  const variant = [quantisation?.label ?? quant, buildLabel(build)]
    .filter((part): part is string => !!part)
    .join(' · ');
  return {
    name,
    family,
    parameters,
    billions,
    quantisation,
    variant,
    goodFor,
    capabilities,
    key: keyOf(name),
  };
}
