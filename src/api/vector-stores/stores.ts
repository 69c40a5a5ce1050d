/**
 * @module
 * The vector stores themselves: `POST`/`GET`/`DELETE /vector_stores[/{id}]`.
 */
import * as v from 'valibot';
import { jsonResponse } from '../../protocol/respond';
import { issueToError } from '../../protocol/validate';
import type { VectorStoreObject } from '../../documents/types';
import { cursorPage, cursorQuery } from '../resources';
import { readJson, newId } from './requests';
import { createStoreSchema, updateStoreSchema } from './schema';
import { addFiles } from './store-files';
import { chooseEmbeddingModel, storeObject, withCounts, type VectorStoreContext } from './context';

const DAY_S = 24 * 60 * 60;

function expiry(
  after: VectorStoreObject['expires_after'],
  lastActive: number,
): VectorStoreObject['expires_at'] {
  return after ? lastActive + after.days * DAY_S : null;
}

/** `POST /vector_stores`. */
export async function createStore(request: Request, ctx: VectorStoreContext): Promise<Response> {
  const parsed = v.safeParse(createStoreSchema, await readJson(request, ctx.deps));
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  const body = parsed.output;
  const embedding_model = await chooseEmbeddingModel(ctx.deps, body.embedding_model ?? undefined);
  const now = Math.floor(Date.now() / 1000);
  const expires_after = body.expires_after
    ? { anchor: 'last_active_at' as const, days: body.expires_after.days }
    : null;
  const store: VectorStoreObject = {
    id: newId('vs'),
    object: 'vector_store',
    created_at: now,
    name: body.name ?? '',
    status: 'completed',
    file_counts: { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: 0 },
    usage_bytes: 0,
    last_active_at: now,
    metadata: body.metadata ?? {},
    expires_after,
    expires_at: expiry(expires_after, now),
    embedding_model,
  };
  // The files are checked before anything is kept: a missing one leaves no store behind.
  const files = (body.file_ids ?? []).map((file_id) => ({ file_id }));
  await addFiles(store, files, body.chunking_strategy ?? undefined, ctx, 'file_ids', {
    check: true,
  });
  await ctx.deps.documents.putStore(store);
  await addFiles(store, files, body.chunking_strategy ?? undefined, ctx, 'file_ids');
  return jsonResponse(await storeObject(ctx.deps.documents, store.id), ctx.requestId);
}

/** `GET /vector_stores`. */
export async function listStores(request: Request, ctx: VectorStoreContext): Promise<Response> {
  const { documents } = ctx.deps;
  const stores = await documents.listStores();
  const objects = await Promise.all(
    stores.map(async (s) => withCounts(s, await documents.listStoreFiles(s.id))),
  );
  return jsonResponse(cursorPage(objects, cursorQuery(request.url)), ctx.requestId);
}

/** `POST /vector_stores/{id}`: its name, expiry or metadata. */
export async function updateStore(
  request: Request,
  id: string,
  ctx: VectorStoreContext,
): Promise<Response> {
  await storeObject(ctx.deps.documents, id);
  // The record as kept (with what rides along in it), not the answer made from it.
  const store = (await ctx.deps.documents.getStore(id)) as VectorStoreObject;
  const parsed = v.safeParse(updateStoreSchema, await readJson(request, ctx.deps));
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  const body = parsed.output;
  if (body.name != null) store.name = body.name;
  if (body.metadata != null) store.metadata = body.metadata;
  if (body.expires_after != null) {
    store.expires_after = { anchor: 'last_active_at', days: body.expires_after.days };
    store.expires_at = expiry(store.expires_after, store.last_active_at ?? store.created_at);
  }
  await ctx.deps.documents.putStore(store);
  return jsonResponse(await storeObject(ctx.deps.documents, id), ctx.requestId);
}

/** `DELETE /vector_stores/{id}`: the store, its chunks and files' entries (not the files). */
export async function deleteStore(id: string, ctx: VectorStoreContext): Promise<Response> {
  await storeObject(ctx.deps.documents, id);
  ctx.indexer.cancel(id);
  await ctx.deps.documents.deleteStore(id);
  return jsonResponse({ id, object: 'vector_store.deleted', deleted: true }, ctx.requestId);
}
