/**
 * @module
 * The files of a vector store and its file batches: adding a file (it is indexed in the
 * background, `in_progress` until it is `completed` or `failed` alone), listing, reading,
 * changing its attributes, removing it, its parsed content, and batches of several at once.
 */
import * as v from 'valibot';
import { OpenAIError } from '../../protocol/errors';
import { jsonResponse } from '../../protocol/respond';
import { issueToError } from '../../protocol/validate';
import type {
  ChunkingStrategy,
  VectorStoreFileObject,
  VectorStoreObject,
} from '../../documents/types';
import { DEFAULT_CHUNKING } from '../../documents/chunk';
import { cursorPage, cursorQuery } from '../resources';
import { newId, readJson } from './requests';
import { addFileSchema, batchSchema, updateFileSchema } from './schema';
import { storeObject, type VectorStoreContext } from './context';

type Attributes = VectorStoreFileObject['attributes'];

/** A store as kept: its batches ride along, never answered (`withCounts` leaves them out). */
export type KeptStore = VectorStoreObject & {
  hearth_batches?: Record<string, { created_at: number; file_ids: string[] }>;
};

/**
 * Adds files to `store` (each `in_progress`, then indexed in turn). A file that does not exist is
 * 404 naming where it was given (`param[i]`); `check` only checks, keeping nothing.
 */
export async function addFiles(
  store: VectorStoreObject,
  files: readonly {
    file_id: string;
    attributes?: Attributes | null;
    chunking_strategy?: ChunkingStrategy | null;
  }[],
  strategy: ChunkingStrategy | undefined,
  ctx: VectorStoreContext,
  param: string,
  { check = false } = {},
): Promise<VectorStoreFileObject[]> {
  const { documents } = ctx.deps;
  for (const [i, { file_id }] of files.entries()) {
    if (!(await documents.getFile(file_id))) {
      throw new OpenAIError('file_not_found', `No file with id '${file_id}'.`, {
        param: `${param}[${i}]`,
      });
    }
  }
  if (check) return [];
  const now = Math.floor(Date.now() / 1000);
  const added: VectorStoreFileObject[] = [];
  for (const file of files) {
    const record: VectorStoreFileObject = {
      id: file.file_id,
      object: 'vector_store.file',
      created_at: now,
      vector_store_id: store.id,
      status: 'in_progress',
      last_error: null,
      usage_bytes: 0,
      attributes: file.attributes ?? {},
      chunking_strategy: chunkingOf(file.chunking_strategy ?? strategy),
      progress: { chunks_done: 0, chunks_total: null },
    };
    await documents.putStoreFile(record);
    ctx.indexer.enqueue(store.id, file.file_id, ctx.keepAlive);
    added.push(record);
  }
  return added;
}

function chunkingOf(asked: ChunkingStrategy | null | undefined): ChunkingStrategy {
  return asked ?? DEFAULT_CHUNKING;
}

/** The file `fileId` of store `storeId`, or 404. */
async function storeFile(ctx: VectorStoreContext, storeId: string, fileId: string) {
  const file = await ctx.deps.documents.getStoreFile(storeId, fileId);
  if (!file) {
    throw new OpenAIError('file_not_found', `No file '${fileId}' in vector store '${storeId}'.`);
  }
  return file;
}

function parse<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const parsed = v.safeParse(schema, body);
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  return parsed.output;
}

/** `POST /vector_stores/{id}/files`. */
export async function addFile(request: Request, storeId: string, ctx: VectorStoreContext) {
  const store = await storeObject(ctx.deps.documents, storeId);
  const body = parse(addFileSchema, await readJson(request, ctx.deps));
  const [file] = await addFiles(store, [body], undefined, ctx, 'file_id');
  return jsonResponse(file, ctx.requestId);
}

/** `GET /vector_stores/{id}/files` (and a batch's files, `only` its ids). */
export async function listFiles(
  request: Request,
  storeId: string,
  ctx: VectorStoreContext,
  only?: ReadonlySet<string>,
) {
  await storeObject(ctx.deps.documents, storeId);
  const status = new URL(request.url).searchParams.get('filter');
  const files = (await ctx.deps.documents.listStoreFiles(storeId)).filter(
    (f) => (status === null || f.status === status) && (only === undefined || only.has(f.id)),
  );
  return jsonResponse(cursorPage(files, cursorQuery(request.url)), ctx.requestId);
}

/** `GET /vector_stores/{id}/files/{file_id}`. */
export async function getFile(storeId: string, fileId: string, ctx: VectorStoreContext) {
  return jsonResponse(await storeFile(ctx, storeId, fileId), ctx.requestId);
}

/** `POST /vector_stores/{id}/files/{file_id}`: new attributes. */
export async function updateFile(
  request: Request,
  storeId: string,
  fileId: string,
  ctx: VectorStoreContext,
) {
  const file = await storeFile(ctx, storeId, fileId);
  file.attributes = parse(updateFileSchema, await readJson(request, ctx.deps)).attributes;
  await ctx.deps.documents.putStoreFile(file);
  ctx.indexer.changed(storeId);
  return jsonResponse(file, ctx.requestId);
}

/** `DELETE /vector_stores/{id}/files/{file_id}`: out of the store (the file itself stays). */
export async function removeFile(storeId: string, fileId: string, ctx: VectorStoreContext) {
  await storeFile(ctx, storeId, fileId);
  ctx.indexer.cancel(storeId, fileId);
  await ctx.deps.documents.deleteStoreFile(storeId, fileId);
  ctx.indexer.changed(storeId);
  return jsonResponse(
    { id: fileId, object: 'vector_store.file.deleted', deleted: true },
    ctx.requestId,
  );
}

/** `GET /vector_stores/{id}/files/{file_id}/content`: the file's chunks' text, in order. */
export async function fileContent(storeId: string, fileId: string, ctx: VectorStoreContext) {
  await storeFile(ctx, storeId, fileId);
  const chunks = (await ctx.deps.documents.chunksOf(storeId))
    .filter((c) => c.file_id === fileId)
    .sort((a, b) => a.index - b.index);
  return jsonResponse(
    {
      object: 'vector_store.file_content.page',
      data: chunks.map((c) => ({ type: 'text', text: c.text })),
      has_more: false,
      next_page: null,
    },
    ctx.requestId,
  );
}

/** A batch as OpenAI's `VectorStoreFileBatch`, its counts from its files now. */
async function batchObject(ctx: VectorStoreContext, store: KeptStore, batchId: string) {
  const batch = store.hearth_batches?.[batchId];
  if (!batch) {
    throw new OpenAIError('file_not_found', `No file batch '${batchId}' in '${store.id}'.`);
  }
  const ids = new Set(batch.file_ids);
  const files = (await ctx.deps.documents.listStoreFiles(store.id)).filter((f) => ids.has(f.id));
  const counts = { in_progress: 0, completed: 0, failed: 0, cancelled: 0, total: files.length };
  for (const f of files) counts[f.status] += 1;
  return {
    id: batchId,
    object: 'vector_store.files_batch',
    created_at: batch.created_at,
    vector_store_id: store.id,
    status:
      counts.in_progress > 0
        ? 'in_progress'
        : counts.cancelled > 0
          ? 'cancelled'
          : counts.failed > 0 && counts.completed === 0
            ? 'failed'
            : 'completed',
    file_counts: counts,
  };
}

/** The store with its batches, as kept. */
async function keptStore(ctx: VectorStoreContext, storeId: string): Promise<KeptStore> {
  await storeObject(ctx.deps.documents, storeId);
  return (await ctx.deps.documents.getStore(storeId)) as KeptStore;
}

/** `POST /vector_stores/{id}/file_batches`. */
export async function createBatch(request: Request, storeId: string, ctx: VectorStoreContext) {
  const store = await keptStore(ctx, storeId);
  const body = parse(batchSchema, await readJson(request, ctx.deps));
  const files =
    body.files ??
    (body.file_ids ?? []).map((file_id) => ({ file_id, attributes: body.attributes }));
  const param = body.files ? 'files' : 'file_ids';
  await addFiles(store, files, body.chunking_strategy ?? undefined, ctx, param, { check: true });
  const id = newId('vsfb');
  const created_at = Math.floor(Date.now() / 1000);
  store.hearth_batches = {
    ...store.hearth_batches,
    [id]: { created_at, file_ids: files.map((f) => f.file_id) },
  };
  await ctx.deps.documents.putStore(store);
  await addFiles(store, files, body.chunking_strategy ?? undefined, ctx, param);
  return jsonResponse(await batchObject(ctx, store, id), ctx.requestId);
}

/** `GET /vector_stores/{id}/file_batches/{batch_id}` (and `…/cancel`, `…/files`). */
export async function batchRoute(
  request: Request,
  storeId: string,
  batchId: string,
  tail: string,
  ctx: VectorStoreContext,
) {
  const store = await keptStore(ctx, storeId);
  const batch = await batchObject(ctx, store, batchId);
  if (tail === 'files') {
    return listFiles(request, storeId, ctx, new Set(store.hearth_batches?.[batchId]?.file_ids));
  }
  if (tail === 'cancel') {
    for (const id of store.hearth_batches?.[batchId]?.file_ids ?? []) {
      const file = await ctx.deps.documents.getStoreFile(storeId, id);
      if (file?.status !== 'in_progress') continue;
      ctx.indexer.cancel(storeId, id);
      await ctx.deps.documents.putStoreFile({ ...file, status: 'cancelled', progress: null });
    }
    return jsonResponse(await batchObject(ctx, store, batchId), ctx.requestId);
  }
  return jsonResponse(batch, ctx.requestId);
}
