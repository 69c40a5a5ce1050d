import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../../scripts/catalog-plugin';
import type { CatalogModel } from '../../../../src/app/shared/api-client';
import {
  DEFAULT_FILTERS,
  ModelIndex,
  narrows,
  tokenize,
  viewModels,
  type Filters,
} from '../../../../src/app/models/model-search';

/**
 * The real catalogue of the tests' build (WebLLM's list, Hearth's GGUFs, the e2e fixtures) as
 * a device with WebGPU but without shader-f16 sees it.
 */
let catalog: CatalogModel[];
beforeAll(async () => {
  const entries = await buildCatalog('tests/e2e/fixtures/models.json');
  catalog = entries.map((e) => {
    const f16 = e.required_features.includes('shader-f16');
    return {
      ...(e as unknown as CatalogModel),
      available: !f16,
      ...(f16 && { unavailable_reason: 'This GPU lacks shader-f16.' }),
      backend: e.engine === 'llama.cpp' ? 'cpu' : 'webgpu',
      fit: f16 ? 'no' : 'good',
      ...(f16 && { fit_reason: 'This GPU lacks shader-f16.' }),
      downloaded: false,
      loaded: false,
    };
  });
  catalog.push({
    id: 'hearth/echo',
    object: 'model',
    owned_by: 'hearth',
    engine: 'echo',
    size_mb: null,
    vram_required_mb: null,
    context_window: 1_048_576,
    required_features: [],
    available: true,
    backend: null,
    fit: 'good',
    downloaded: true,
    loaded: false,
    source: 'built-in',
    tools: false,
    reasoning: false,
    vision: true,
  });
}, 30_000);

const view = (query: string, filters: Partial<Filters> = {}) =>
  viewModels(new ModelIndex(catalog), query, { ...DEFAULT_FILTERS, ...filters });
const names = (query: string, filters: Partial<Filters> = {}) =>
  view(query, filters).cards.map((c) => c.name);

describe('tokenize', () => {
  it('splits at punctuation, keeps version dots, and unglues a name from its version', () => {
    expect(tokenize('mlc-ai/Qwen2.5-0.5B-Instruct-q4f16_1-MLC')).toEqual([
      'mlc',
      'ai',
      'qwen2.5',
      'qwen',
      '2.5',
      '0.5b',
      'instruct',
      'q4f16',
      '1',
      'mlc',
    ]);
    expect(tokenize('llama.cpp  Llama 3.2!')).toEqual(['llama', 'cpp', 'llama', '3.2']);
  });
});

describe('grouping into cards', () => {
  it('puts every variant of a model in one card: quantisations, builds and engines', () => {
    const card = view('', { show: 'all' }).cards.find((c) => c.name === 'Llama 3.2 1B Instruct')!;
    expect(card.family).toBe('Llama 3.2');
    expect(card.variants.map((v) => v.model.id).sort()).toEqual([
      'bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M',
      'mlc-ai/Llama-3.2-1B-Instruct-q0f16-MLC',
      'mlc-ai/Llama-3.2-1B-Instruct-q0f32-MLC',
      'mlc-ai/Llama-3.2-1B-Instruct-q4f16_1-MLC',
      'mlc-ai/Llama-3.2-1B-Instruct-q4f32_1-MLC',
    ]);
    // Runnable variants first, smallest first; what the card is good for gathers its variants'.
    expect(card.variants[0]!.model.id).toBe('mlc-ai/Llama-3.2-1B-Instruct-q4f32_1-MLC');
    expect(card.goodFor).toEqual(['chat', 'tools']);
    // Fewer cards than entries: ~180 entries make well under 100 cards.
    expect(view('', { show: 'all' }).cards.length).toBeLessThan(catalog.length / 2);
  });

  it('shows only the variants this device can run, unless asked for all', () => {
    const card = (show: Filters['show']) =>
      view('llama 3.2 1b instruct', { show }).cards.find(
        (c) => c.name === 'Llama 3.2 1B Instruct',
      )!;
    expect(card('runnable').variants.every((v) => v.model.available)).toBe(true);
    expect(card('all').variants).toHaveLength(5);
  });
});

describe('word search', () => {
  it('matches every word in any order, ignoring case and punctuation', () => {
    expect(names('llama 3.2')).toEqual(
      expect.arrayContaining([
        'Llama 3.2 1B Instruct',
        'Llama 3.2 3B Instruct',
        'Hermes 3 Llama 3.2 3B',
      ]),
    );
    expect(names('llama 3.2')).not.toContain('Llama 3.1 8B Instruct');
    expect(names('qwen coder')).toEqual([
      'Qwen2.5 Coder 0.5B Instruct',
      'Qwen2.5 Coder 1.5B Instruct',
      'Qwen2.5 Coder 3B Instruct',
      'Qwen2.5 Coder 7B Instruct',
    ]);
    expect(names('Coder, QWEN!')).toEqual(names('qwen coder'));
    expect(names('qwen2.5 0.5b')).toEqual(['Qwen2.5 0.5B Instruct', 'Qwen2.5 Coder 0.5B Instruct']);
    expect(names('qwen 2.5 math')).toEqual(['Qwen2.5 Math 1.5B Instruct']);
  });

  it('finds models by quantisation, capability and id', () => {
    const q4km = view('Q4_K_M').cards.flatMap((c) => c.variants.map((v) => v.model.id));
    expect(q4km.length).toBeGreaterThan(5);
    expect(q4km.every((id) => id.endsWith(':Q4_K_M'))).toBe(true);
    expect(names('coding')).toContain('Qwen2.5 Coder 1.5B Instruct');
    expect(names('bartowski gemma')).toEqual(['Gemma 2 2B Instruct']);
    expect(names('e2e/tiny')).toEqual(['Tiny']);
  });

  it('counts cards and the variants in them', () => {
    const result = view('qwen coder');
    expect(result.cards).toHaveLength(4);
    // q4f32_1 of each, and the unquantised q0f32 of the 0.5B.
    expect(result.variants).toBe(5);
  });
});

describe('filters and sort', () => {
  it('filters by size, capability and engine', () => {
    const ids = (filters: Partial<Filters>) =>
      view('', filters).cards.flatMap((c) => c.variants.map((v) => v.model));
    expect(ids({ size: 'small' }).every((m) => m.size_mb !== null && m.size_mb < 1024)).toBe(true);
    expect(ids({ size: 'large' }).every((m) => m.size_mb! > 4096)).toBe(true);
    expect(ids({ engine: 'llama.cpp' }).every((m) => m.engine === 'llama.cpp')).toBe(true);
    expect(names('', { capability: 'embeddings' })).toContain('Nomic Embed Text v1.5');
    expect(names('', { capability: 'embeddings' })).not.toContain('Qwen3 4B');
    expect(names('', { capability: 'reasoning', engine: 'llama.cpp' })).toEqual(
      expect.arrayContaining(['Qwen3 1.7B', 'Qwen3 4B', 'Fixture Thinking']),
    );
  });

  it('sorts by size either way and by name, the echo engine last when recommending', () => {
    const sizes = view('', { sort: 'smallest' }).cards.map((c) =>
      Math.min(...c.variants.map((v) => v.model.size_mb ?? Infinity)),
    );
    const known = sizes.filter((s) => s !== Infinity);
    expect(known).toEqual([...known].sort((a, b) => a - b));
    expect(sizes.indexOf(Infinity)).toBe(known.length);
    const largest = view('', { sort: 'largest' }).cards[0]!;
    expect(largest.name).toBe('Gemma 2 9B Instruct');
    const byName = names('', { sort: 'name' });
    expect(byName).toEqual([...byName].sort((a, b) => a.localeCompare(b)));
    const recommended = names('');
    expect(recommended[0]).toBe('Qwen3 0.6B');
    expect(recommended.at(-1)).toBe('Echo');
  });

  it('offers the matches this device cannot run when nothing it can run matches', () => {
    // Gemma 3 1B exists only as q4f16_1, which needs shader-f16.
    const result = view('gemma 3');
    expect(result.cards).toEqual([]);
    expect(result.elsewhere.map((c) => c.name)).toEqual(['Gemma 3 1B Instruct']);
    expect(result.hidden).toBe(1);
    expect(result.elsewhere[0]!.variants[0]!.model.unavailable_reason).toBe(
      'This GPU lacks shader-f16.',
    );
    // Nothing at all: nothing else to offer.
    expect(view('no such model')).toEqual({ cards: [], variants: 0, elsewhere: [], hidden: 0 });
  });
});

describe('whether a search narrows the list', () => {
  it('does not with no words and the default filters, whatever the sort order, nor showing all', () => {
    expect(narrows('', DEFAULT_FILTERS)).toBe(false);
    expect(narrows('  ', DEFAULT_FILTERS)).toBe(false);
    expect(narrows('', { ...DEFAULT_FILTERS, sort: 'name' })).toBe(false);
    expect(narrows('', { ...DEFAULT_FILTERS, show: 'all' })).toBe(false);
  });

  it('does with words, or with a filter that leaves models out', () => {
    expect(narrows('qwen', DEFAULT_FILTERS)).toBe(true);
    expect(narrows('', { ...DEFAULT_FILTERS, size: 'small' })).toBe(true);
    expect(narrows('', { ...DEFAULT_FILTERS, engine: 'llama.cpp' })).toBe(true);
    expect(narrows('', { ...DEFAULT_FILTERS, show: 'downloaded' })).toBe(true);
  });
});
