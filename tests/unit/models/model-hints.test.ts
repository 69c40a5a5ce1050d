import { describe, expect, it } from 'vitest';
import { CURATED_GGUF } from '../../../src/models/curated-gguf';
import {
  isOpenAIModelId,
  notDownloaded,
  notListed,
  suggestModelId,
  unknownModel,
  type KnownModel,
} from '../../../src/models/model-hints';

/** Hearth's curated GGUFs as they are, and WebLLM models as the prebuilt catalogue names them. */
const KNOWN: KnownModel[] = [
  { id: 'hearth/echo' },
  { id: 'mlc-ai/Qwen3-0.6B-q4f16_1-MLC' },
  { id: 'mlc-ai/Qwen3-0.6B-q4f32_1-MLC' },
  { id: 'mlc-ai/SmolLM2-360M-Instruct-q4f32_1-MLC' },
  ...CURATED_GGUF.map((r) => ({ id: r.id, files: r.files })),
];
const QWEN3_GGUF = 'unsloth/Qwen3-1.7B-GGUF:Q4_K_M';

describe('suggestModelId', () => {
  it.each([
    ['a bare MLC name', 'Qwen3-0.6B-q4f16_1-MLC', 'mlc-ai/Qwen3-0.6B-q4f16_1-MLC'],
    [
      'an MLC name under another owner',
      'Qwen/Qwen3-0.6B-q4f32_1-MLC',
      'mlc-ai/Qwen3-0.6B-q4f32_1-MLC',
    ],
    [
      'an id in other letter case',
      'mlc-ai/qwen3-0.6b-q4f16_1-mlc',
      'mlc-ai/Qwen3-0.6B-q4f16_1-MLC',
    ],
    ['a GGUF repository without its owner', 'Qwen3-1.7B-GGUF:Q4_K_M', QWEN3_GGUF],
    ['a GGUF repository without owner or quant', 'Qwen3-1.7B-GGUF', QWEN3_GGUF],
    ['a GGUF owner/repo without its :quant', 'unsloth/Qwen3-1.7B-GGUF', QWEN3_GGUF],
    ['an hf: id without its quant', 'hf:unsloth/Qwen3-1.7B-GGUF', QWEN3_GGUF],
    ['a GGUF file name', 'Qwen3-1.7B-Q4_K_M.gguf', QWEN3_GGUF],
    [
      'a GGUF file URL',
      'https://huggingface.co/unsloth/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf',
      QWEN3_GGUF,
    ],
    ['a GGUF file of another quantiser, by model and quant', 'qwen3-1.7b.Q4_K_M.gguf', QWEN3_GGUF],
    [
      'a file name with its repository in another case',
      'qwen2.5-0.5b-instruct-q4_k_m.gguf',
      'bartowski/Qwen2.5-0.5B-Instruct-GGUF:Q4_K_M',
    ],
  ])('names the catalogue id meant by %s', (_what, asked, meant) => {
    expect(KNOWN.some((m) => m.id === meant)).toBe(true);
    expect(suggestModelId(asked, KNOWN)).toBe(meant);
  });

  it.each([
    ['an id of OpenAI', 'gpt-4o-mini'],
    ['a model Hearth does not have', 'acme/none'],
    ['a GGUF quant the catalogue lacks', 'unsloth/Qwen3-1.7B-GGUF:Q8_0'],
    ['a file of a model the catalogue lacks', 'Mistral-7B-Instruct-v0.3-Q4_K_M.gguf'],
    ['an empty id', ''],
  ])('suggests nothing for %s', (_what, asked) => {
    expect(suggestModelId(asked, KNOWN)).toBeUndefined();
  });

  it('prefers the owner asked for, then Q4_K_M, among several matches', () => {
    const known = [
      { id: 'a/M-GGUF:Q8_0' },
      { id: 'b/M-GGUF:Q8_0' },
      { id: 'b/M-GGUF:Q4_K_M' },
      { id: 'a/M-GGUF:Q4_K_M' },
    ];
    expect(suggestModelId('M-GGUF', known)).toBe('b/M-GGUF:Q4_K_M');
    expect(suggestModelId('a/M-GGUF', known)).toBe('a/M-GGUF:Q4_K_M');
    // Under an owner the catalogue lacks, the quant asked for decides, then catalogue order.
    expect(suggestModelId('c/M-GGUF:Q8_0', known)).toBe('a/M-GGUF:Q8_0');
  });
});

describe('isOpenAIModelId', () => {
  it.each([
    'gpt-4o-mini',
    'gpt-4.1',
    'o3',
    'o4-mini',
    'text-embedding-3-small',
    'chatgpt-4o-latest',
  ])('knows %s as one of OpenAI’s', (id) => expect(isOpenAIModelId(id)).toBe(true));
  it.each(['hearth/echo', 'mlc-ai/Qwen3-0.6B-q4f16_1-MLC', 'ollama/gpt-oss', 'openchat-3.5'])(
    'does not take %s for one of OpenAI’s',
    (id) => expect(isOpenAIModelId(id)).toBe(false),
  );
});

describe('unknownModel', () => {
  it('is 404 model_not_found naming the catalogue route under the base, and the id a bare MLC name meant', () => {
    const error = unknownModel('Qwen3-0.6B-q4f16_1-MLC', KNOWN, '/repo/');
    expect(error).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect(error.message).toBe(
      "The model 'Qwen3-0.6B-q4f16_1-MLC' does not exist. Did you mean 'mlc-ai/Qwen3-0.6B-q4f16_1-MLC'? " +
        'GET /repo/v1/openai/models lists the models ready on this device; the whole catalogue is at GET /repo/v1/hearth/catalog, in a page of the site.',
    );
  });

  it('says of an OpenAI id that Hearth serves on-device models, and points at the catalogue without aliasing', () => {
    const { message } = unknownModel('gpt-4o-mini', KNOWN);
    expect(message).toContain("'gpt-4o-mini' does not exist here: it is one of OpenAI's");
    expect(message).toContain('Hearth serves models that run on this device');
    expect(message).toContain('GET /v1/hearth/catalog');
    expect(message).not.toContain('Did you mean');
  });

  it('tells how to add a GGUF name that matches nothing in the catalogue', () => {
    const { message } = unknownModel('acme/Tiny-GGUF:Q4_K_M', KNOWN, '/');
    expect(message).toContain('can be added with POST /v1/hearth/models.');
    expect(message).toContain('GET /v1/hearth/catalog');
  });
});

describe('notDownloaded and notListed', () => {
  it('model_not_downloaded says how to download: hearth.models.prepare, or the download route', () => {
    const error = notDownloaded('mlc-ai/Qwen3-0.6B-q4f32_1-MLC', '/repo/');
    expect(error).toMatchObject({ status: 404, code: 'model_not_downloaded', param: 'model' });
    expect(error.message).toBe(
      "The model 'mlc-ai/Qwen3-0.6B-q4f32_1-MLC' is not on this device; download it first: " +
        "hearth.models.prepare('mlc-ai/Qwen3-0.6B-q4f32_1-MLC') in a page of the site, or POST /repo/v1/hearth/models/mlc-ai/Qwen3-0.6B-q4f32_1-MLC/download from one (not through the relay).",
    );
  });

  it('a catalogue model the list leaves out is model_not_found saying why and how to get it', () => {
    const missing = notListed(QWEN3_GGUF, { why: 'not_downloaded' });
    expect(missing).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
    expect(missing.message).toContain("is in Hearth's catalogue but not on this device");
    expect(missing.message).toContain(`hearth.models.prepare('${QWEN3_GGUF}')`);
    expect(missing.message).toContain(`POST /v1/hearth/models/${QWEN3_GGUF}/download`);
    expect(missing.message).toContain(
      'the whole catalogue is at GET /v1/hearth/catalog, in a page of the site.',
    );
    const reason = 'This GPU lacks shader-f16, which this model needs.';
    const cannot = notListed('mlc-ai/Qwen3-0.6B-q4f16_1-MLC', { why: 'unavailable', reason });
    expect(cannot).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(cannot.message).toContain(`cannot answer here: ${reason}`);
    expect(cannot.message).not.toContain('prepare');
  });
});
