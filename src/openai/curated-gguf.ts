/**
 * @module
 * Hearth's short list of GGUF chat models for llama.cpp: small enough for phones and laptops
 * (0.5B to 4B parameters, 4-bit), from the quantisers most people download from. Data only; the
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
