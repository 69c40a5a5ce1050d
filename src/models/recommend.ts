/**
 * @module
 * The one rule for the model to suggest to someone who has none: the chat app's first-run choice
 * and `hearth.models.recommend()` on a site. Plain data in (the entries of `/v1/hearth/catalog`),
 * a model out: no DOM, no app code.
 */
import type { CatalogModel } from './catalog';

/** Models worth starting with, best first: small, good at chat, well known. */
const RECOMMENDED = [
  'Qwen3-0.6B',
  'Llama-3.2-1B-Instruct',
  'SmolLM2-360M-Instruct',
  'Qwen2.5-0.5B-Instruct',
  'gemma-2-2b-it',
];

/** Where `m` stands among the models worth starting with (0 first; after them all if not one). */
export function recommendedRank(m: Pick<CatalogModel, 'id'>): number {
  const rank = RECOMMENDED.findIndex((name) => m.id.includes(name));
  return rank === -1 ? RECOMMENDED.length : rank;
}

/** What the caller looks for. */
export interface RecommendOptions {
  /** `chat` (the default) or `embedding`. */
  task?: 'chat' | 'embedding';
  /** Only models that take images. */
  vision?: boolean;
  /** Only models whose download is at most this many MB (one already on the device needs none). */
  maxDownloadMB?: number;
}

/** Smallest first, a model of unknown size last; WebLLM before llama.cpp at the same size. */
function bySize(a: CatalogModel, b: CatalogModel): number {
  return (
    (a.size_mb ?? Infinity) - (b.size_mb ?? Infinity) ||
    Number(a.engine !== 'webllm') - Number(b.engine !== 'webllm')
  );
}

/** Among `models`, the smallest GGUF worth starting with (on the CPU, size is speed). */
function listedGguf<M extends CatalogModel>(models: readonly M[]): M | undefined {
  return models
    .filter((m) => m.engine === 'llama.cpp' && recommendedRank(m) < RECOMMENDED.length)
    .sort((a, b) => bySize(a, b) || recommendedRank(a) - recommendedRank(b))[0];
}

/**
 * Among `models`, the first WebLLM model worth starting with, in the list's order: its f16 build
 * where the GPU has `shader-f16` (smaller and faster).
 */
function listedWebllm<M extends CatalogModel>(models: readonly M[]): M | undefined {
  for (const name of RECOMMENDED) {
    const webllm = models.filter((m) => m.engine === 'webllm' && m.id.includes(name));
    const pick = webllm.find((m) => m.required_features.includes('shader-f16')) ?? webllm[0];
    if (pick) return pick;
  }
  return undefined;
}

/**
 * The model to suggest, or null when none runs here. Never the echo engine (it only repeats) nor
 * a server's model (it leaves the device); only a model whose fit here is known and not `no`, of
 * the task asked (chat or embedding), taking images if asked, within the download asked. Among
 * the models worth starting with: WebLLM that runs `good` (the fastest, on a GPU), then the
 * smallest GGUF that runs `good`; then the smallest GGUF that runs `slow` (its speed estimated
 * from this CPU), then WebLLM that runs `slow` (on a software adapter: it crawls). Where none of
 * those is left (a vision model, an embedding model): the smallest `good` model, then the smallest
 * `slow` one, a GGUF before WebLLM.
 */
export function recommendModel<M extends CatalogModel>(
  models: readonly M[],
  options: RecommendOptions = {},
): M | null {
  const embedding = options.task === 'embedding';
  const { maxDownloadMB } = options;
  const candidates = models.filter(
    (m) =>
      m.engine !== 'echo' &&
      m.engine !== 'server' &&
      !m.leaves_device &&
      (m.fit === 'good' || m.fit === 'slow') &&
      (m.embedding !== undefined) === embedding &&
      (!options.vision || m.vision === true) &&
      (maxDownloadMB === undefined ||
        m.downloaded ||
        (m.size_mb !== null && m.size_mb <= maxDownloadMB)),
  );
  const good = candidates.filter((m) => m.fit === 'good');
  const slow = candidates.filter((m) => m.fit === 'slow');
  const slowest = (m: CatalogModel) => Number(m.engine === 'webllm');
  return (
    listedWebllm(good) ??
    listedGguf(good) ??
    listedGguf(slow) ??
    listedWebllm(slow) ??
    [...good].sort(bySize)[0] ??
    [...slow].sort((a, b) => slowest(a) - slowest(b) || bySize(a, b))[0] ??
    null
  );
}
