import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../../src/app/shared/api-client';
import { describeModel, explainQuantisation } from '../../../../src/app/models/model-info';

type Described = Pick<
  CatalogModel,
  'id' | 'engine' | 'tools' | 'reasoning' | 'embedding' | 'server'
>;
const webllm = (id: string, fields: Partial<Described> = {}): Described => ({
  id,
  engine: 'webllm',
  tools: false,
  reasoning: false,
  ...fields,
});
const gguf = (id: string, fields: Partial<Described> = {}) =>
  webllm(id, { engine: 'llama.cpp', ...fields });

describe('describeModel', () => {
  it('names a WebLLM model without its variant, with its family, size and quantisation', () => {
    const info = describeModel(webllm('mlc-ai/Llama-3.2-1B-Instruct-q4f16_1-MLC'));
    expect(info).toMatchObject({
      name: 'Llama 3.2 1B Instruct',
      family: 'Llama 3.2',
      parameters: '1B',
      billions: 1,
      variant: 'q4f16_1',
      goodFor: ['chat'],
    });
    expect(info.quantisation?.explanation).toBe(
      '4-bit weights, 16-bit maths — small, needs shader-f16',
    );
  });

  it('gives a GGUF of the same model the same name and card, with its own quantisation', () => {
    const mlc = describeModel(webllm('mlc-ai/Llama-3.2-1B-Instruct-q4f32_1-MLC'));
    const ggufInfo = describeModel(
      gguf('bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M', { tools: true }),
    );
    expect(ggufInfo.name).toBe('Llama 3.2 1B Instruct');
    expect(ggufInfo.key).toBe(mlc.key);
    expect(ggufInfo.quantisation).toEqual({
      label: 'Q4_K_M',
      explanation: '4-bit, good balance',
      bits: 4,
    });
    expect(ggufInfo.goodFor).toEqual(['chat', 'tools']);
    expect(mlc.quantisation?.explanation).toBe(
      '4-bit weights, 32-bit maths — small, runs on any WebGPU',
    );
  });

  it('reads families, parameter counts and what a model is good for from real ids', () => {
    const cases: [Described, string, string, string | null, string[]][] = [
      [
        webllm('mlc-ai/Qwen2.5-Coder-1.5B-Instruct-q4f32_1-MLC'),
        'Qwen2.5 Coder 1.5B Instruct',
        'Qwen2.5 Coder',
        '1.5B',
        ['chat', 'coding'],
      ],
      [
        webllm('mlc-ai/Qwen2.5-0.5B-Instruct-q4f16_1-MLC'),
        'Qwen2.5 0.5B Instruct',
        'Qwen2.5',
        '0.5B',
        ['chat', 'tiny and fast'],
      ],
      [
        webllm('mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC'),
        'SmolLM2 360M Instruct',
        'SmolLM2',
        '360M',
        ['chat', 'tiny and fast'],
      ],
      [
        webllm('mlc-ai/Qwen3-1.7B-q4f16_1-MLC', { reasoning: true }),
        'Qwen3 1.7B',
        'Qwen3',
        '1.7B',
        ['chat', 'reasoning'],
      ],
      [
        webllm('mlc-ai/Qwen2.5-Math-1.5B-Instruct-q4f16_1-MLC'),
        'Qwen2.5 Math 1.5B Instruct',
        'Qwen2.5 Math',
        '1.5B',
        ['chat', 'maths'],
      ],
      [
        webllm('mlc-ai/gemma-2-2b-it-q4f16_1-MLC'),
        'Gemma 2 2B Instruct',
        'Gemma 2',
        '2B',
        ['chat'],
      ],
      [webllm('mlc-ai/gemma3-1b-it-q4f16_1-MLC'), 'Gemma 3 1B Instruct', 'Gemma 3', '1B', ['chat']],
      [
        webllm('mlc-ai/stablelm-2-zephyr-1_6b-q4f32_1-MLC'),
        'StableLM 2 Zephyr 1.6B',
        'StableLM 2 Zephyr',
        '1.6B',
        ['chat'],
      ],
      [
        webllm('mlc-ai/Phi-3.5-mini-instruct-q4f16_1-MLC'),
        'Phi 3.5 Mini Instruct',
        'Phi 3.5',
        null,
        ['chat'],
      ],
      [webllm('mlc-ai/phi-1_5-q4f16_1-MLC'), 'Phi 1.5', 'Phi 1.5', null, ['chat']],
      [
        webllm('mlc-ai/OLMo-2-0425-1B-Instruct-q4f32_1-MLC'),
        'OLMo 2 0425 1B Instruct',
        'OLMo 2',
        '1B',
        ['chat'],
      ],
      [
        webllm('mlc-ai/Ministral-3-3B-Instruct-2512-BF16-q4f16_1-MLC'),
        'Ministral 3 3B Instruct 2512',
        'Ministral 3',
        '3B',
        ['chat'],
      ],
      [
        webllm('mlc-ai/gemma-4-E2B-it-q4f16_1-MLC'),
        'Gemma 4 E2B Instruct',
        'Gemma 4',
        '2B effective',
        ['chat'],
      ],
      [
        gguf('unsloth/Qwen3-4B-GGUF:Q4_K_M', { tools: true, reasoning: true }),
        'Qwen3 4B',
        'Qwen3',
        '4B',
        ['chat', 'reasoning', 'tools'],
      ],
      [
        gguf('nomic-ai/nomic-embed-text-v1.5-GGUF:Q8_0', {
          embedding: { dimensions: 768, pooling: 'mean', normalized: true, matryoshka: [] },
        }),
        'Nomic Embed Text v1.5',
        'Nomic Embed Text',
        null,
        ['retrieval (embeddings)'],
      ],
    ];
    for (const [model, name, family, parameters, goodFor] of cases) {
      expect(describeModel(model), model.id).toMatchObject({ name, family, parameters, goodFor });
    }
  });

  it('says what sets a WebLLM build apart: a short context, a batch size', () => {
    expect(describeModel(webllm('mlc-ai/Llama-3.1-8B-Instruct-q4f16_1-MLC-1k')).variant).toBe(
      'q4f16_1 · 1k context',
    );
    expect(describeModel(webllm('mlc-ai/snowflake-arctic-embed-s-q0f32-MLC-b4')).variant).toBe(
      'q0f32 · batches of 4',
    );
  });

  it('describes a server model by its id there, and the echo engine as a test engine', () => {
    const server = describeModel({
      id: 'gpu-box/meta-llama/Llama-3.2-1B-Instruct',
      engine: 'server',
      tools: false,
      reasoning: false,
      server: {
        name: 'gpu-box',
        host: 'gpu.example',
        upstream_id: 'meta-llama/Llama-3.2-1B-Instruct',
      },
    });
    expect(server).toMatchObject({
      name: 'Llama 3.2 1B Instruct',
      family: 'Llama 3.2',
      quantisation: null,
    });
    const ollama = describeModel({
      id: 'home/llama3.2:1b',
      engine: 'server',
      tools: false,
      reasoning: false,
    });
    expect(ollama).toMatchObject({ name: 'Llama 3.2 1B', parameters: '1B' });
    expect(
      describeModel({ id: 'hearth/echo', engine: 'echo', tools: false, reasoning: false }),
    ).toMatchObject({
      name: 'Echo',
      family: 'Test engine',
    });
  });
});

describe('explainQuantisation', () => {
  it('explains WebLLM and llama.cpp quantisations in one line', () => {
    expect(explainQuantisation('q0f16')?.explanation).toBe(
      'unquantised 16-bit weights — full quality, large, needs shader-f16',
    );
    expect(explainQuantisation('Q8_0')?.explanation).toBe(
      '8-bit, close to full quality, twice the size of 4-bit',
    );
    expect(explainQuantisation('F16')).toMatchObject({ bits: 16 });
    expect(explainQuantisation('q3f16_1')?.explanation).toMatch(/^3-bit weights/);
    expect(explainQuantisation('IQ3_XXS')).toEqual({
      label: 'IQ3_XXS',
      explanation: '3-bit',
      bits: 3,
    });
    expect(explainQuantisation('latest')).toBeNull();
  });
});
