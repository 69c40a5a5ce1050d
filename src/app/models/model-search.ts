/**
 * @module
 * Finding a model among the catalogue's: word search (MiniSearch, every word in any order,
 * ignoring case and punctuation, each word a prefix), filters (size, capability, engine, what
 * this device can run), sort, and the grouping of variants (quantisations, engines, publishers)
 * into one card per model. Pure, so that the view only renders what it returns.
 */
import MiniSearch from 'minisearch';
import type { CatalogModel } from '../shared/api-client';
import { describeModel, type Capability, type ModelInfo } from './model-info';
import { recommendedRank } from './model-facts';

/** One variant of a model: a catalogue entry and what its id says. */
export interface Variant {
  model: CatalogModel;
  info: ModelInfo;
}

/** A model with its variants, as one card shows it. */
export interface ModelCard {
  /** What groups the variants: the name in lower case. */
  key: string;
  name: string;
  family: string;
  parameters: string | null;
  /** What any of its variants is good for, in the order describeModel gives. */
  goodFor: string[];
  variants: Variant[];
}

/** Sizes the view filters by: under 1 GB, 1 to 4 GB, over 4 GB. */
export type SizeFilter = 'any' | 'small' | 'medium' | 'large';
/** What the view shows: what this device can run, what is on it, or everything. */
export type ShowFilter = 'runnable' | 'downloaded' | 'all';
export type EngineFilter = 'any' | 'webllm' | 'llama.cpp' | 'server';
export type SortOrder = 'recommended' | 'smallest' | 'largest' | 'name';

/** The view's choices besides the words searched for. */
export interface Filters {
  size: SizeFilter;
  capability: 'any' | Capability;
  engine: EngineFilter;
  show: ShowFilter;
  sort: SortOrder;
}

export const DEFAULT_FILTERS: Filters = {
  size: 'any',
  capability: 'any',
  engine: 'any',
  show: 'runnable',
  sort: 'recommended',
};

/**
 * Splits text into lower-case words at spaces and punctuation, keeping a version's dot
 * (`3.2`, `qwen2.5`, `0.5b`); a name glued to its version also gives both halves (`qwen2.5` →
 * `qwen`, `2.5`), so "qwen 2.5" finds Qwen2.5. Queries and documents share it.
 */
export function tokenize(text: string): string[] {
  const words: string[] = [];
  for (const chunk of text.toLowerCase().split(/[^\p{L}\p{N}.]+/u)) {
    // A dot counts only between digits: `llama.cpp` is two words, `3.2` one.
    for (const word of chunk.split(/(?<!\d)\.|\.(?!\d)/)) {
      if (word === '') continue;
      words.push(word);
      const glued = /^(\p{L}+)(\d+(?:\.\d+)*)$/u.exec(word);
      if (glued) words.push(glued[1]!, glued[2]!);
    }
  }
  return words;
}

/** What the index holds of a variant. */
interface Doc {
  id: string;
  name: string;
  family: string;
  quant: string;
  capabilities: string;
}

/** A variant of each catalogue entry, and a word index over them. */
export class ModelIndex {
  readonly variants: Variant[];
  readonly #search = new MiniSearch<Doc>({
    fields: ['name', 'family', 'id', 'quant', 'capabilities'],
    tokenize,
    searchOptions: {
      combineWith: 'AND',
      prefix: true,
      boost: { name: 2, family: 1.5 },
    },
  });

  constructor(catalog: readonly CatalogModel[]) {
    this.variants = catalog.map((model) => ({ model, info: describeModel(model) }));
    this.#search.addAll(
      this.variants.map(({ model, info }) => ({
        id: model.id,
        name: info.name,
        family: info.family,
        quant: info.quantisation?.label ?? '',
        capabilities: [
          ...info.capabilities,
          ...info.goodFor,
          ...(info.capabilities.includes('coding') ? ['code'] : []),
          ...(info.capabilities.includes('maths') ? ['math'] : []),
        ].join(' '),
      })),
    );
  }

  /** The ids matching every word of `query`, best first; null when it has no words. */
  search(query: string): Map<string, number> | null {
    if (tokenize(query).length === 0) return null;
    return new Map(this.#search.search(query).map((r) => [r.id as string, r.score]));
  }
}

/**
 * Whether this device can run it (or it is here already); a fit not known yet counts as yes. A
 * model that would only crawl here (`slow_here`) runs, and its card says so.
 */
export function runsHere(m: CatalogModel): boolean {
  return m.available !== false || m.downloaded;
}

/** Whether the model's files are on this device (the echo engine and servers have none). */
export function onDevice(m: CatalogModel): boolean {
  return m.downloaded && m.engine !== 'echo' && !m.leaves_device;
}

function sizeFits(m: CatalogModel, size: SizeFilter): boolean {
  if (size === 'any') return true;
  if (m.size_mb === null) return false;
  if (size === 'small') return m.size_mb < 1024;
  if (size === 'medium') return m.size_mb >= 1024 && m.size_mb <= 4096;
  return m.size_mb > 4096;
}

/** Whether a variant passes the filters, leaving out what this device can run. */
function fits(v: Variant, f: Filters): boolean {
  const m = v.model;
  if (!sizeFits(m, f.size)) return false;
  if (f.capability !== 'any' && !v.info.capabilities.includes(f.capability)) return false;
  if (f.engine !== 'any' && m.engine !== f.engine) return false;
  if (f.show === 'downloaded' && !onDevice(m)) return false;
  return true;
}

/** The smallest size of a card's variants, null when none is known. */
function smallest(card: ModelCard): number | null {
  const sizes = card.variants.map((v) => v.model.size_mb).filter((s): s is number => s !== null);
  return sizes.length ? Math.min(...sizes) : null;
}

/** Variants in a card: loaded, downloaded, runnable first, then the smallest. */
function variantOrder(a: Variant, b: Variant): number {
  const m = a.model;
  const n = b.model;
  return (
    Number(n.loaded) - Number(m.loaded) ||
    Number(n.downloaded) - Number(m.downloaded) ||
    Number(runsHere(n)) - Number(runsHere(m)) ||
    (m.size_mb ?? Infinity) - (n.size_mb ?? Infinity) ||
    m.id.localeCompare(n.id)
  );
}

/** Groups variants into cards, variants in each in their order, cards in `sort`'s. */
export function groupCards(
  variants: readonly Variant[],
  sort: SortOrder,
  scores: Map<string, number> | null = null,
): ModelCard[] {
  const byKey = new Map<string, ModelCard>();
  for (const v of variants) {
    let card = byKey.get(v.info.key);
    if (!card) {
      card = {
        key: v.info.key,
        name: v.info.name,
        family: v.info.family,
        parameters: v.info.parameters,
        goodFor: [],
        variants: [],
      };
      byKey.set(v.info.key, card);
    }
    card.variants.push(v);
    for (const use of v.info.goodFor) if (!card.goodFor.includes(use)) card.goodFor.push(use);
  }
  const cards = [...byKey.values()];
  for (const card of cards) card.variants.sort(variantOrder);
  const size = new Map(cards.map((c) => [c, smallest(c)]));
  const bySize = (a: ModelCard, b: ModelCard, sign: 1 | -1) => {
    const x = size.get(a) ?? null;
    const y = size.get(b) ?? null;
    // Unknown sizes last either way.
    if (x === null || y === null) return Number(x === null) - Number(y === null);
    return sign * (x - y);
  };
  const byName = (a: ModelCard, b: ModelCard) => a.name.localeCompare(b.name);
  if (sort === 'name') return cards.sort(byName);
  if (sort === 'smallest') return cards.sort((a, b) => bySize(a, b, 1) || byName(a, b));
  if (sort === 'largest') return cards.sort((a, b) => bySize(a, b, -1) || byName(a, b));
  const score = (c: ModelCard) => Math.max(...c.variants.map((v) => scores?.get(v.model.id) ?? 0));
  const rank = (c: ModelCard) => Math.min(...c.variants.map((v) => recommendedRank(v.model)));
  const echo = (c: ModelCard) => c.variants.every((v) => v.model.engine === 'echo');
  const has = (c: ModelCard, p: (m: CatalogModel) => boolean) => c.variants.some((v) => p(v.model));
  return cards.sort(
    (a, b) =>
      Number(echo(a)) - Number(echo(b)) ||
      Number(has(b, (m) => m.loaded)) - Number(has(a, (m) => m.loaded)) ||
      Number(has(b, onDevice)) - Number(has(a, onDevice)) ||
      // Searching: the best match first; else the models worth starting with.
      score(b) - score(a) ||
      rank(a) - rank(b) ||
      Number(has(b, runsHere)) - Number(has(a, runsHere)) ||
      bySize(a, b, 1) ||
      byName(a, b),
  );
}

/**
 * Whether the words or the filters leave models out: only then can "nothing matches" be the
 * search's doing (neither the sort order nor showing all models leaves any out).
 */
export function narrows(query: string, filters: Filters): boolean {
  const { sort: _sort, show, ...rest } = filters;
  return (
    tokenize(query).length > 0 ||
    show === 'downloaded' ||
    (Object.keys(rest) as (keyof typeof rest)[]).some((k) => rest[k] !== DEFAULT_FILTERS[k])
  );
}

/** What the view shows for a query and filters. */
export interface ModelView {
  /** The cards to show. */
  cards: ModelCard[];
  /** How many variants they hold. */
  variants: number;
  /**
   * When nothing this device can run matches but models it cannot run do: those, with why.
   * Empty otherwise.
   */
  elsewhere: ModelCard[];
  /** How many variants match but are left out as ones this device cannot run. */
  hidden: number;
}

/** The cards for `query` and `filters`, and what else matches where nothing runnable does. */
export function viewModels(index: ModelIndex, query: string, filters: Filters): ModelView {
  const scores = index.search(query);
  const matching = index.variants.filter(
    (v) => (scores === null || scores.has(v.model.id)) && fits(v, filters),
  );
  const shown = filters.show === 'runnable' ? matching.filter((v) => runsHere(v.model)) : matching;
  const cards = groupCards(shown, filters.sort, scores);
  const elsewhere =
    cards.length === 0 && filters.show === 'runnable'
      ? groupCards(
          matching.filter((v) => !runsHere(v.model)),
          filters.sort,
          scores,
        )
      : [];
  return { cards, variants: shown.length, elsewhere, hidden: matching.length - shown.length };
}
