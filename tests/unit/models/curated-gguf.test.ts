import { describe, expect, it } from 'vitest';
import { ggufEntry, parseGgufId } from '../../../src/models/catalog';
import { CURATED_GGUF } from '../../../src/models/curated-gguf';

describe('the curated GGUF models', () => {
  it('are small chat models with GGUF ids whose file names carry their quantisation', () => {
    expect(CURATED_GGUF.length).toBeGreaterThanOrEqual(8);
    for (const record of CURATED_GGUF) {
      const parts = parseGgufId(record.id);
      expect(parts, record.id).not.toBeNull();
      expect(record.files).toHaveLength(1);
      const file = record.files[0] ?? '';
      expect(file).toMatch(
        /^https:\/\/huggingface\.co\/[\w.-]+\/[\w.-]+\/resolve\/main\/.+\.gguf$/,
      );
      expect(file).toContain(`/${parts?.owner}/${parts?.repo}/`);
      expect(file).toContain(parts?.quant);
      expect(record.size_mb).toBeLessThan(3000);
      expect(record.memory_mb).toBeGreaterThan(record.size_mb ?? 0);
    }
  });

  it('have ids of their own, and become llama.cpp entries of the curated source', () => {
    expect(new Set(CURATED_GGUF.map((r) => r.id)).size).toBe(CURATED_GGUF.length);
    const entry = ggufEntry(CURATED_GGUF[0]!, 'curated');
    expect(entry).toMatchObject({ engine: 'llama.cpp', source: 'curated', quant: 'Q4_K_M' });
    expect(entry.vram_required_mb).toBe(CURATED_GGUF[0]!.memory_mb);
  });

  it('have one model that sees images, its projector from its own repository', () => {
    const vision = CURATED_GGUF.filter((r) => r.mmproj !== undefined);
    expect(vision.map((r) => r.id)).toEqual(['ggml-org/SmolVLM-500M-Instruct-GGUF:Q8_0']);
    expect(vision[0]!.mmproj).toBe(
      'https://huggingface.co/ggml-org/SmolVLM-500M-Instruct-GGUF/resolve/main/mmproj-SmolVLM-500M-Instruct-Q8_0.gguf',
    );
    expect(ggufEntry(vision[0]!, 'curated').mmproj).toBe(vision[0]!.mmproj);
  });

  it('are listed smallest first', () => {
    const sizes = CURATED_GGUF.map((r) => r.size_mb ?? 0);
    expect(sizes).toEqual([...sizes].sort((a, b) => a - b));
  });

  it('mark the reasoning models (Qwen3) as thinking aloud', () => {
    const reasoning = CURATED_GGUF.filter((r) => r.reasoning).map((r) => r.id);
    expect(reasoning).toEqual(['unsloth/Qwen3-1.7B-GGUF:Q4_K_M', 'unsloth/Qwen3-4B-GGUF:Q4_K_M']);
  });
});
