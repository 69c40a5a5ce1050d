/**
 * @module
 * Hybrid search over a vector store's chunks, as OpenAI's `POST /vector_stores/{id}/search` and
 * `file_search` do it: a keyword ranking (BM25, minisearch) and an embedding ranking (cosine)
 * fused by reciprocal rank. Pure and synchronous; the caller embeds the query strings.
 *
 * **Rankings.** Each query string gives one keyword ranking, each query vector one embedding
 * ranking, over the chunks whose file exists and passes the filters:
 * - keyword: BM25 over the chunk's text, words matched whole (no prefix, no fuzzy: a fuzzy
 *   rare word would match its common neighbours), any word of the query sufficing (`OR`),
 *   English stop words left out. The ranking holds only chunks whose BM25 score is at least
 *   {@link KEYWORD_FLOOR} of the best one's: a chunk that shares only the query's common words
 *   with it is no keyword match. So a rare word (high IDF) puts its passage alone at the top,
 *   and a weak embedding model cannot bury it under chunks that happen to share a common word.
 * - embedding: the dot product of the L2-normalised vectors (their cosine), every candidate.
 * Equal scores share a rank (1, 2, 2, 4).
 *
 * **Fusion.** A chunk's fused score is the sum over rankings of `weight / (60 + rank)` (RRF,
 * k = 60), the weight `embedding` or `text` of the ranking's kind (OpenAI's
 * `ranking_options.hybrid_search`; equal by default). The `score` returned is that sum divided by
 * the most it could be (first in every ranking), so it lies in 0..1: 1 for a chunk first
 * everywhere, 0.5 for one first in the embedding rankings alone at equal weights.
 * `scoreThreshold` drops results below it. Results go by score, then by file id, then by the
 * chunk's place in its file.
 *
 * **The index.** Building the word index costs far more than one search (see
 * docs/performance.md), so {@link SearchIndex} is meant to be kept, one per vector store, and
 * told of every change to the store's chunks; {@link hybridSearch} builds one for a single call.
 */
import MiniSearch from 'minisearch';
import { matchesFilter, type AttributeValue, type Filter } from './filters';
import type { Chunk, SearchResult } from './types';

export { filterSchema, matchesFilter, MAX_FILTER_DEPTH, type Filter } from './filters';

/** Reciprocal rank fusion's k (Cormack et al., and OpenAI's). */
export const RRF_K = 60;
/** The share of the best BM25 score a chunk needs to count as a keyword match. */
export const KEYWORD_FLOOR = 0.25;

/** What the search knows of a file: its name and attributes. A file not known is skipped. */
export interface SearchFile {
  filename: string;
  attributes: Record<string, AttributeValue>;
}

/** The query: its strings (for the keyword rankings) and their embeddings. */
export interface SearchQuery {
  texts: string[];
  vectors: Float32Array[];
}

export interface SearchOptions {
  /** At most this many results (OpenAI's `max_num_results`, 1–50). */
  maxResults: number;
  filters?: Filter;
  /** Results scoring below it (0..1) are dropped. */
  scoreThreshold?: number;
  /** The weights of the two kinds of ranking in the fusion; 1 and 1 when left out. */
  weights?: { embedding: number; text: number };
  /** The files that exist, by id; chunks of any other (a deleted file) are skipped. */
  files: ReadonlyMap<string, SearchFile>;
  /** Let a query word match longer words it begins (off by default). */
  prefix?: boolean;
  /** Let a query word match words this far from it (a fraction of its length; off by default). */
  fuzzy?: number;
}

// prettier-ignore
const STOP_WORDS = new Set(('a an and are as at be but by can do does for from had has have he her ' +
  'his how i if in into is it its me my no not of on or our she so than that the their them ' +
  'then there these they this to was we were what when where which who why will with you your').split(' '));

/** Words as the index keeps them: lower case, stop words left out. */
const processTerm = (term: string): string | null => {
  const word = term.toLowerCase();
  return STOP_WORDS.has(word) ? null : word;
};

/** Sorted ascending, the `-score` of every candidate: ranks are found by binary search in it. */
function rankOf(sortedNegated: Float64Array, score: number): number {
  let low = 0;
  let high = sortedNegated.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sortedNegated[mid]! < -score) low = mid + 1;
    else high = mid;
  }
  return low + 1;
}

/** The dot product of `vector` with each candidate's row of `matrix` (rows `n` wide). */
function dotProducts(matrix: Float32Array, n: number, vector: Float32Array, candidates: number[]) {
  const scores = new Float64Array(candidates.length);
  for (let c = 0; c < candidates.length; c += 1) {
    let dot = 0;
    for (let d = 0, at = candidates[c]! * n; d < n; d += 1, at += 1) {
      dot += matrix[at]! * vector[d]!;
    }
    scores[c] = dot;
  }
  return scores;
}

/**
 * A vector store's chunks, indexed for search: keep one per store (in the service worker, for
 * as long as it lives) and tell it of every change, or rebuild it. What the caller must do:
 * - a file's chunks put (`putChunks`): `replaceFile(fileId, chunks)`, which forgets the file's
 *   old chunks (a file chunked anew may have fewer) and adds the new;
 * - a file taken out of the store (`deleteStoreFile`): `removeFile(fileId)`;
 * - the store deleted, or its embedding model changed: drop the index (build a new one);
 * - a file deleted from Files: nothing at once (search skips chunks whose file is not in
 *   `files`), but `removeFile` frees its memory;
 * - attributes or a filename changed: nothing (`files` is read at each search).
 * Chunks are kept by reference and must not be changed once added.
 */
export class SearchIndex {
  #words = new MiniSearch<{ id: string; text: string }>({
    fields: ['text'],
    storeFields: [],
    processTerm,
  });
  #chunks: Chunk[] = [];
  #positions = new Map<string, number>();
  /** Every chunk's vector, one after another, rebuilt when chunks change. */
  #matrix: Float32Array | undefined;
  #dimensions = 0;

  constructor(chunks: readonly Chunk[] = []) {
    this.add(chunks);
  }

  /** How many chunks it holds. */
  get size(): number {
    return this.#chunks.length;
  }

  /** Adds chunks; one whose id is already held replaces it. */
  add(chunks: readonly Chunk[]): void {
    for (const chunk of chunks) {
      if (this.#dimensions === 0) this.#dimensions = chunk.vector.length;
      if (chunk.vector.length !== this.#dimensions) {
        throw new RangeError(
          `Chunk ${chunk.id} has ${chunk.vector.length} dimensions where the index has ${this.#dimensions}.`,
        );
      }
      const at = this.#positions.get(chunk.id);
      if (at === undefined) {
        this.#positions.set(chunk.id, this.#chunks.length);
        this.#chunks.push(chunk);
      } else {
        this.#words.discard(chunk.id);
        this.#chunks[at] = chunk;
      }
      this.#words.add({ id: chunk.id, text: chunk.text });
    }
    if (chunks.length > 0) this.#matrix = undefined;
  }

  /** Forgets a file's chunks; returns how many there were. */
  removeFile(fileId: string): number {
    const kept = this.#chunks.filter((chunk) => chunk.file_id !== fileId);
    const removed = this.#chunks.length - kept.length;
    if (removed === 0) return 0;
    for (const chunk of this.#chunks) if (chunk.file_id === fileId) this.#words.discard(chunk.id);
    this.#chunks = kept;
    this.#positions = new Map(kept.map((chunk, i) => [chunk.id, i]));
    this.#matrix = undefined;
    if (kept.length === 0) this.#dimensions = 0;
    return removed;
  }

  /** Forgets a file's chunks and adds its new ones. */
  replaceFile(fileId: string, chunks: readonly Chunk[]): void {
    this.removeFile(fileId);
    this.add(chunks);
  }

  /** The chunks that best answer the query, best first (see the module's comment). */
  search(query: SearchQuery, options: SearchOptions): SearchResult[] {
    const weights = options.weights ?? { embedding: 1, text: 1 };
    const chunks = this.#chunks;
    const candidates = this.#candidates(options);
    const fused = new Float64Array(chunks.length);
    for (const vector of query.vectors) {
      this.#fuseEmbedding(vector, candidates, fused, weights.embedding);
    }
    for (const text of query.texts)
      this.#fuseKeywords(text, candidates, fused, weights.text, options);
    const best =
      (query.vectors.length * weights.embedding + query.texts.length * weights.text) / (RRF_K + 1);
    if (!(best > 0)) return [];
    const threshold = options.scoreThreshold ?? 0;
    const picked = candidates.filter((i) => fused[i]! > 0 && fused[i]! / best >= threshold);
    return top(picked, fused, chunks, options.maxResults).map((i) => {
      const chunk = chunks[i]!;
      const file = options.files.get(chunk.file_id)!;
      return {
        file_id: chunk.file_id,
        filename: file.filename,
        score: Math.min(1, fused[i]! / best),
        attributes: { ...file.attributes },
        content: [{ type: 'text' as const, text: chunk.text }],
        chunk_id: chunk.id,
        ...(chunk.page !== undefined && { page: chunk.page }),
        ...(chunk.heading !== undefined && { heading: chunk.heading }),
      };
    });
  }

  /** The positions of the chunks whose file exists and passes the filters. */
  #candidates({ files, filters }: SearchOptions): number[] {
    const passes = new Map<string, boolean>();
    const out: number[] = [];
    this.#chunks.forEach((chunk, i) => {
      let ok = passes.get(chunk.file_id);
      if (ok === undefined) {
        const file = files.get(chunk.file_id);
        ok = file !== undefined && (!filters || matchesFilter(filters, file.attributes));
        passes.set(chunk.file_id, ok);
      }
      if (ok) out.push(i);
    });
    return out;
  }

  #fuseEmbedding(vector: Float32Array, candidates: number[], fused: Float64Array, weight: number) {
    if (weight === 0 || candidates.length === 0) return;
    const n = this.#dimensions;
    if (vector.length !== n) {
      throw new RangeError(`The query has ${vector.length} dimensions where the index has ${n}.`);
    }
    const matrix = (this.#matrix ??= this.#buildMatrix());
    const scores = dotProducts(matrix, n, vector, candidates);
    const sorted = scores.map((s) => -s).sort();
    for (let c = 0; c < candidates.length; c += 1) {
      const i = candidates[c]!;
      fused[i] = fused[i]! + weight / (RRF_K + rankOf(sorted, scores[c]!));
    }
  }

  #fuseKeywords(
    text: string,
    candidates: number[],
    fused: Float64Array,
    weight: number,
    options: SearchOptions,
  ) {
    if (weight === 0 || candidates.length === 0) return;
    const positions = this.#positions;
    let filter: ((hit: { id: unknown }) => boolean) | undefined;
    // Every chunk a candidate (no filters, no file deleted) is the common case: no filter then.
    if (candidates.length < this.#chunks.length) {
      const allowed = new Uint8Array(this.#chunks.length);
      for (const i of candidates) allowed[i] = 1;
      filter = (hit) => allowed[positions.get(hit.id as string)!] === 1;
    }
    const hits = this.#words.search(text, {
      combineWith: 'OR',
      prefix: options.prefix ?? false,
      fuzzy: options.fuzzy ?? false,
      ...(filter && { filter }),
    });
    const floor = (hits[0]?.score ?? 0) * KEYWORD_FLOOR;
    let rank = 0;
    // Sorted by score: those under the floor are the tail.
    for (let h = 0; h < hits.length && hits[h]!.score >= floor; h += 1) {
      if (h === 0 || hits[h]!.score !== hits[h - 1]!.score) rank = h + 1;
      const i = positions.get(hits[h]!.id as string)!;
      fused[i] = fused[i]! + weight / (RRF_K + rank);
    }
  }

  #buildMatrix(): Float32Array {
    const n = this.#dimensions;
    const matrix = new Float32Array(this.#chunks.length * n);
    this.#chunks.forEach((chunk, i) => matrix.set(chunk.vector, i * n));
    return matrix;
  }
}

/** The `count` best of `picked` by fused score, ties by file id, then place in the file. */
function top(picked: number[], fused: Float64Array, chunks: Chunk[], count: number): number[] {
  const limit = Math.max(0, Math.floor(count));
  if (limit === 0 || picked.length === 0) return [];
  // Only those at or above the limit-th best score can make it: sort those alone.
  const scores = Float64Array.from(picked, (i) => fused[i]!).sort();
  const cut = scores[Math.max(0, scores.length - limit)]!;
  return picked
    .filter((i) => fused[i]! >= cut)
    .sort((a, b) => {
      const byScore = fused[b]! - fused[a]!;
      if (byScore !== 0) return byScore;
      const [x, y] = [chunks[a]!, chunks[b]!];
      if (x.file_id !== y.file_id) return x.file_id < y.file_id ? -1 : 1;
      return x.index - y.index;
    })
    .slice(0, limit);
}

/**
 * One search over these chunks, the index built for it and dropped: for a single call. To search
 * a store more than once, keep a {@link SearchIndex}.
 */
export function hybridSearch(
  chunks: readonly Chunk[],
  query: SearchQuery,
  options: SearchOptions,
): SearchResult[] {
  return new SearchIndex(chunks).search(query, options);
}
