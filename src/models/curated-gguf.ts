/**
 * @module
 * Hearth's short list of GGUF chat models for llama.cpp: small enough for phones and laptops
 * (0.5B to 4B parameters, 4-bit; one that sees images, 8-bit), from the quantisers most people
 * download from. Data only; the
 * catalogue build adds them (scripts/catalog-plugin.ts). Sizes are the published files' (MB,
 * rounded); `memory_mb` is the file plus the KV cache and buffers for the context Hearth asks for.
 */
import type { GgufRecord } from './catalog.ts';

/** Where Hugging Face serves a repository's files. */
const HF = 'https://huggingface.co';

/** A bartowski-style repository: `<user>/<Model>-GGUF`, files `<Model>-<QUANT>.gguf`. */
function hf(
  user: string,
  model: string,
  quant: string,
  facts: Omit<GgufRecord, 'id' | 'files'>,
): GgufRecord {
  return {
    id: `${user}/${model}-GGUF:${quant}`,
    files: [`${HF}/${user}/${model}-GGUF/resolve/main/${model}-${quant}.gguf`],
    ...facts,
  };
}

/** The curated GGUF models, smallest first. */
export const CURATED_GGUF: readonly GgufRecord[] = [
  hf('bartowski', 'Qwen2.5-0.5B-Instruct', 'Q4_K_M', {
    size_mb: 398,
    memory_mb: 600,
    context_window: 4096,
    tools: true,
  }),
  {
    // SmolVLM 500M (SmolLM2 360M and a SigLIP encoder): it sees images, through its projector.
    // ggml-org's conversion, as `llama-server -hf ggml-org/SmolVLM-500M-Instruct-GGUF` takes
    // it; the sizes are the two files' (437 + 109 MB), checked by tests/real-model.
    ...hf('ggml-org', 'SmolVLM-500M-Instruct', 'Q8_0', {
      size_mb: 546,
      memory_mb: 900,
      context_window: 4096,
    }),
    mmproj: `${HF}/ggml-org/SmolVLM-500M-Instruct-GGUF/resolve/main/mmproj-SmolVLM-500M-Instruct-Q8_0.gguf`,
  },
  hf('bartowski', 'Llama-3.2-1B-Instruct', 'Q4_K_M', {
    size_mb: 808,
    memory_mb: 1100,
    context_window: 4096,
    tools: true,
  }),
  hf('bartowski', 'Qwen2.5-1.5B-Instruct', 'Q4_K_M', {
    size_mb: 986,
    memory_mb: 1300,
    context_window: 4096,
    tools: true,
  }),
  hf('bartowski', 'SmolLM2-1.7B-Instruct', 'Q4_K_M', {
    size_mb: 1056,
    memory_mb: 1500,
    context_window: 4096,
  }),
  hf('unsloth', 'Qwen3-1.7B', 'Q4_K_M', {
    size_mb: 1107,
    memory_mb: 1500,
    context_window: 4096,
    tools: true,
    reasoning: true,
  }),
  hf('bartowski', 'gemma-2-2b-it', 'Q4_K_M', {
    size_mb: 1709,
    memory_mb: 2200,
    context_window: 4096,
  }),
  hf('bartowski', 'Qwen2.5-3B-Instruct', 'Q4_K_M', {
    size_mb: 1930,
    memory_mb: 2500,
    context_window: 4096,
    tools: true,
  }),
  hf('bartowski', 'Llama-3.2-3B-Instruct', 'Q4_K_M', {
    size_mb: 2019,
    memory_mb: 2700,
    context_window: 4096,
    tools: true,
  }),
  hf('bartowski', 'Phi-3.5-mini-instruct', 'Q4_K_M', {
    size_mb: 2393,
    memory_mb: 3300,
    context_window: 4096,
  }),
  hf('unsloth', 'Qwen3-4B', 'Q4_K_M', {
    size_mb: 2497,
    memory_mb: 3200,
    context_window: 4096,
    tools: true,
    reasoning: true,
  }),
];

/**
 * The curated GGUF embedding models: small encoders that llama.cpp pools into one vector per
 * input, for retrieval on the device. Their files are named by their own repositories' rules.
 */
export const CURATED_GGUF_EMBEDDINGS: readonly GgufRecord[] = [
  {
    // BERT, 33 M parameters: the first token's state, 512 tokens.
    id: 'CompendiumLabs/bge-small-en-v1.5-gguf:Q8_0',
    files: [`${HF}/CompendiumLabs/bge-small-en-v1.5-gguf/resolve/main/bge-small-en-v1.5-q8_0.gguf`],
    size_mb: 37,
    memory_mb: 120,
    context_window: 512,
    embedding: { dimensions: 384, pooling: 'cls', normalized: true, matryoshka: [] },
  },
  {
    // Nomic BERT, 137 M parameters: mean pooling, trained to be cut to 512, 256, 128 or 64
    // dimensions (Matryoshka). It expects a task prefix on every input (`search_query: `,
    // `search_document: `). llama.cpp gives it 2,048 tokens without RoPE scaling.
    id: 'nomic-ai/nomic-embed-text-v1.5-GGUF:Q8_0',
    files: [
      `${HF}/nomic-ai/nomic-embed-text-v1.5-GGUF/resolve/main/nomic-embed-text-v1.5.Q8_0.gguf`,
    ],
    size_mb: 146,
    memory_mb: 320,
    context_window: 2048,
    embedding: {
      dimensions: 768,
      pooling: 'mean',
      normalized: true,
      matryoshka: [512, 256, 128, 64],
    },
  },
];
