/**
 * @module
 * `POST /vector_stores/{id}/search`, and the search `file_search` runs: the query embedded by
 * the store's model, then hybrid search (src/documents/search.ts: BM25 and the embeddings fused
 * by reciprocal rank) over an index kept per store for as long as the worker lives, built again
 * when the store has changed since.
 */
import * as v from 'valibot';
import { noArray } from '../../protocol/schema';
import { jsonResponse } from '../../protocol/respond';
import { issueToError } from '../../protocol/validate';
import { filterSchema, SearchIndex, type Filter, type SearchFile } from '../../documents/search';
import type { SearchResult } from '../../documents/types';
import { embedTexts } from '../embeddings';
import { readJson } from './requests';
import { storeObject, type VectorStoreContext } from './context';

const weight = v.pipe(v.number(), v.minValue(0), v.maxValue(1));

/** OpenAI's `ranking_options`, with the hybrid weights of its newer API. */
export const rankingSchema = noArray(
  v.looseObject({
    ranker: v.nullish(v.picklist(['none', 'auto', 'default-2024-11-15'])),
    score_threshold: v.nullish(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
    hybrid_search: v.nullish(
      noArray(v.looseObject({ embedding_weight: weight, text_weight: weight })),
    ),
  }),
);

const query = v.lazy((input) =>
  Array.isArray(input)
    ? v.pipe(v.array(v.pipe(v.string(), v.minLength(1))), v.minLength(1), v.maxLength(10))
    : v.pipe(v.string(), v.minLength(1)),
);

/** The body of `POST /vector_stores/{id}/search`. */
const searchSchema = noArray(
  v.looseObject({
    query,
    max_num_results: v.nullish(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50))),
    filters: v.nullish(filterSchema),
    ranking_options: v.nullish(rankingSchema),
    // Accepted: the device has no model to spare for rewriting the query; it is searched as given.
    rewrite_query: v.nullish(v.boolean()),
  }),
);

/** What one search asks, whoever asks it (the endpoint, or `file_search`). */
export interface StoreSearch {
  queries: string[];
  maxResults: number;
  filters?: Filter | undefined;
  ranking?: v.InferOutput<typeof rankingSchema> | undefined;
}

/** Each store's index, with the generation it was built at. */
const indexes = new WeakMap<object, Map<string, { generation: number; index: SearchIndex }>>();

/** The store's index, built again if the store changed since it was built. */
async function indexOf(ctx: VectorStoreContext, storeId: string): Promise<SearchIndex> {
  let kept = indexes.get(ctx.indexer);
  if (!kept) indexes.set(ctx.indexer, (kept = new Map()));
  const generation = ctx.indexer.generation(storeId);
  const cached = kept.get(storeId);
  if (cached && cached.generation === generation) return cached.index;
  const index = new SearchIndex(await ctx.deps.documents.chunksOf(storeId));
  kept.set(storeId, { generation, index });
  return index;
}

/** A search keeps the store active: its expiry counts from now. */
async function touch(ctx: VectorStoreContext, storeId: string): Promise<void> {
  const kept = await ctx.deps.documents.getStore(storeId);
  if (!kept) return;
  const now = Math.floor(Date.now() / 1000);
  const days = kept.expires_after?.days;
  await ctx.deps.documents.putStore({
    ...kept,
    last_active_at: now,
    expires_at: days === undefined ? kept.expires_at : now + days * 24 * 60 * 60,
  });
}

/** Searches the stores `storeIds` (each with its own model and index), best first. */
export async function searchStores(
  storeIds: readonly string[],
  search: StoreSearch,
  ctx: VectorStoreContext,
): Promise<SearchResult[]> {
  const { documents } = ctx.deps;
  const results: SearchResult[] = [];
  for (const storeId of storeIds) {
    const store = await storeObject(documents, storeId);
    const files = new Map<string, SearchFile>();
    const [known, storeFiles] = await Promise.all([
      documents.listFiles(),
      documents.listStoreFiles(storeId),
    ]);
    const names = new Map(known.map((f) => [f.id, f.filename]));
    for (const file of storeFiles) {
      const filename = names.get(file.id);
      if (filename !== undefined && file.status === 'completed') {
        files.set(file.id, { filename, attributes: file.attributes });
      }
    }
    const index = await indexOf(ctx, storeId);
    if (index.size === 0) continue;
    const vectors = await embedTexts(ctx.deps, store.embedding_model, search.queries, {
      requestId: ctx.requestId,
    });
    const hybrid = search.ranking?.hybrid_search;
    results.push(
      ...index.search(
        { texts: search.queries, vectors },
        {
          maxResults: search.maxResults,
          files,
          ...(search.filters && { filters: search.filters }),
          ...(search.ranking?.score_threshold != null && {
            scoreThreshold: search.ranking.score_threshold,
          }),
          ...(hybrid && {
            weights: { embedding: hybrid.embedding_weight, text: hybrid.text_weight },
          }),
        },
      ),
    );
    await touch(ctx, storeId);
  }
  return results.sort((a, b) => b.score - a.score).slice(0, search.maxResults);
}

/** `POST /vector_stores/{id}/search`. */
export async function search(
  request: Request,
  storeId: string,
  ctx: VectorStoreContext,
): Promise<Response> {
  await storeObject(ctx.deps.documents, storeId);
  const parsed = v.safeParse(searchSchema, await readJson(request, ctx.deps));
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  const body = parsed.output;
  const queries = typeof body.query === 'string' ? [body.query] : body.query;
  const data = await searchStores(
    [storeId],
    {
      queries,
      maxResults: body.max_num_results ?? 10,
      filters: (body.filters ?? undefined) as Filter | undefined,
      ranking: body.ranking_options ?? undefined,
    },
    ctx,
  );
  return jsonResponse(
    {
      object: 'vector_store.search_results.page',
      search_query: queries,
      data,
      has_more: false,
      next_page: null,
    },
    ctx.requestId,
  );
}
