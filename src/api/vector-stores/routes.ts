/**
 * @module
 * The vector stores' paths under `vector_stores/`, as one handler per method that the route
 * table's `openai/vector_stores` and `openai/vector_stores/*` lines call: `{id}`,
 * `{id}/files[/{file_id}[/content]]`, `{id}/file_batches[/{batch_id}[/cancel|/files]]` and
 * `{id}/search`. Any other is 404 `unknown_url`, as the router answers.
 */
import { OpenAIError } from '../../protocol/errors';
import { decodeSegment } from '../resources';
import { jsonResponse } from '../../protocol/respond';
import { search } from './search';
import {
  addFile,
  batchRoute,
  createBatch,
  fileContent,
  getFile,
  listFiles,
  removeFile,
  updateFile,
} from './store-files';
import { createStore, deleteStore, listStores, updateStore } from './stores';
import { storeObject, type VectorStoreContext } from './context';

type Method = 'GET' | 'POST' | 'DELETE';

function unknown(method: string, rest: string): OpenAIError {
  return new OpenAIError(
    'unknown_url',
    `Unknown request URL: ${method} /v1/vector_stores${rest === '' ? '' : `/${rest}`}.`,
  );
}

/** Answers `method` at `vector_stores/{rest}` (`rest` empty: the stores themselves). */
export async function vectorStoreRoute(
  request: Request,
  method: Method,
  rest: string,
  ctx: VectorStoreContext,
): Promise<Response> {
  await ctx.indexer.resume(ctx.keepAlive);
  if (rest === '') {
    if (method === 'POST') return createStore(request, ctx);
    if (method === 'GET') return listStores(request, ctx);
    throw unknown(method, rest);
  }
  const parts = rest.split('/').map(decodeSegment);
  // No path of ours has an empty segment (`{id}//files`, `{id}/files/`).
  if (parts.length > 4 || parts.includes('')) throw unknown(method, rest);
  const [id = '', part, sub, tail] = parts;
  if (part === undefined) {
    if (method === 'GET')
      return jsonResponse(await storeObject(ctx.deps.documents, id), ctx.requestId);
    if (method === 'POST') return updateStore(request, id, ctx);
    return deleteStore(id, ctx);
  }
  if (part === 'search' && sub === undefined && method === 'POST') return search(request, id, ctx);
  if (part === 'files') {
    if (sub === undefined) {
      if (method === 'POST') return addFile(request, id, ctx);
      if (method === 'GET') return listFiles(request, id, ctx);
    } else if (tail === undefined) {
      if (method === 'GET') return getFile(id, sub, ctx);
      if (method === 'POST') return updateFile(request, id, sub, ctx);
      return removeFile(id, sub, ctx);
    } else if (tail === 'content' && method === 'GET') {
      return fileContent(id, sub, ctx);
    }
  }
  if (part === 'file_batches') {
    if (sub === undefined && method === 'POST') return createBatch(request, id, ctx);
    if (sub !== undefined && tail === undefined && method === 'GET') {
      return batchRoute(request, id, sub, '', ctx);
    }
    if (
      sub !== undefined &&
      ((tail === 'cancel' && method === 'POST') || (tail === 'files' && method === 'GET'))
    ) {
      return batchRoute(request, id, sub, tail, ctx);
    }
  }
  throw unknown(method, rest);
}
