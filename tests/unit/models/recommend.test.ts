import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../src/models/catalog';
import { recommendModel } from '../../../src/models/recommend';

/** A catalogue entry as `/v1/hearth/catalog` gives it: a GGUF that runs well here, by default. */
function model(id: string, fields: Partial<CatalogModel> = {}): CatalogModel {
  const fit = fields.fit ?? 'good';
  return {
    id,
    object: 'model',
    owned_by: id.split('/')[0]!,
    engine: 'llama.cpp',
    size_mb: 400,
    vram_required_mb: 600,
    context_window: 4096,
    required_features: [],
    available: fit !== 'no',
    backend: 'cpu',
    fit,
    downloaded: false,
    loaded: false,
    source: 'curated',
    tools: false,
    reasoning: false,
    vision: false,
    ...fields,
  };
}

const echo = model('hearth/echo', { engine: 'echo', backend: null, size_mb: 0, downloaded: true });
const server = model('gpu-box/llama', {
  engine: 'server',
  backend: null,
  size_mb: null,
  source: 'server',
  leaves_device: true,
});
const qwen05 = model('bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M', { size_mb: 398 });
const llama1b = model('bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', { size_mb: 808 });
const qwen4b = model('unsloth/Qwen3-4B-GGUF:Q4_K_M', { size_mb: 2497, fit: 'slow' });
const webllm = (id: string, fields: Partial<CatalogModel> = {}) =>
  model(`mlc-ai/${id}`, { engine: 'webllm', backend: 'webgpu', source: 'prebuilt', ...fields });
const bge = model('CompendiumLabs/bge-small-en-v1.5-gguf:Q8_0', {
  size_mb: 37,
  embedding: { dimensions: 384, pooling: 'cls', normalized: true, matryoshka: [] },
});
const vlm = model('ggml-org/SmolVLM-500M-Instruct-GGUF:Q8_0', { size_mb: 546, vision: true });

describe('recommendModel', () => {
  it('never recommends the echo engine or a server’s model, even when nothing else runs here', () => {
    expect(recommendModel([echo, server])).toBeNull();
    expect(recommendModel([echo, server, { ...qwen05, fit: 'no' }])).toBeNull();
    expect(recommendModel([echo, server, qwen05])?.id).toBe(qwen05.id);
  });

  it('recommends nothing whose fit is not known yet', () => {
    expect(recommendModel([{ ...qwen05, fit: null }])).toBeNull();
  });

  it('prefers a model that runs well here over one that runs slowly, whatever the list’s order', () => {
    const slowSmall = { ...qwen05, fit: 'slow' as const };
    expect(recommendModel([slowSmall, llama1b, qwen4b])?.id).toBe(llama1b.id);
    // With nothing good, the slow one is still better than nothing.
    expect(recommendModel([slowSmall, qwen4b])?.id).toBe(qwen05.id);
  });

  it('prefers WebLLM that runs well, its f16 build first, over a GGUF', () => {
    const pick = recommendModel([
      qwen05,
      webllm('Qwen3-0.6B-q4f32_1-MLC'),
      webllm('Qwen3-0.6B-q4f16_1-MLC', { required_features: ['shader-f16'] }),
    ]);
    expect(pick?.id).toBe('mlc-ai/Qwen3-0.6B-q4f16_1-MLC');
  });

  it('takes the smallest GGUF worth starting with over WebLLM that is slow here, and over a tiny unknown one', () => {
    const pick = recommendModel([
      webllm('Qwen3-0.6B-q4f32_1-MLC', { fit: 'slow' }),
      llama1b,
      qwen05,
      model('e2e/fixture-GGUF:F32', { size_mb: 1 }),
    ]);
    expect(pick?.id).toBe(qwen05.id);
  });

  it('takes a GGUF that runs slowly over WebLLM that is slow here too (a software adapter crawls)', () => {
    const pick = recommendModel([
      webllm('Qwen3-0.6B-q4f32_1-MLC', { fit: 'slow' }),
      { ...llama1b, fit: 'slow' },
      { ...qwen05, fit: 'slow' },
    ]);
    expect(pick?.id).toBe(qwen05.id);
  });

  it('respects maxDownloadMB, counting a model already on the device as no download', () => {
    expect(recommendModel([llama1b, qwen4b], { maxDownloadMB: 500 })).toBeNull();
    expect(recommendModel([llama1b, qwen05], { maxDownloadMB: 500 })?.id).toBe(qwen05.id);
    const onDevice = { ...llama1b, downloaded: true };
    expect(recommendModel([onDevice], { maxDownloadMB: 100 })?.id).toBe(llama1b.id);
    expect(recommendModel([{ ...qwen05, size_mb: null }], { maxDownloadMB: 500 })).toBeNull();
  });

  it('gives only models that take images when asked for vision, and only chat models otherwise', () => {
    expect(recommendModel([qwen05, vlm], { vision: true })?.id).toBe(vlm.id);
    expect(recommendModel([qwen05], { vision: true })).toBeNull();
    expect(recommendModel([bge, vlm])?.id).toBe(vlm.id);
  });

  it('gives an embedding model for the embedding task, and never one for chat', () => {
    expect(recommendModel([qwen05, bge], { task: 'embedding' })?.id).toBe(bge.id);
    expect(recommendModel([bge], { task: 'chat' })).toBeNull();
    expect(recommendModel([qwen05], { task: 'embedding' })).toBeNull();
  });
});
