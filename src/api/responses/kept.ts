/**
 * @module
 * The endpoints that read the responses kept on the device: `GET /responses/{id}`, its
 * `input_items`, `DELETE /responses/{id}`, and Hearth's `GET` and `DELETE /v1/hearth/responses`,
 * which list and clear them (Settings → Developer calls these).
 */
import { OpenAIError } from '../../protocol/errors';
import { jsonResponse } from '../../protocol/respond';
import { cursorPage, cursorQuery, idAndTail } from '../resources';
import { notFound } from './conversation';
import type { ResponseStore } from './store';

/** `GET /responses/{id}` and `GET /responses/{id}/input_items`. */
export async function readResponse(
  request: Request,
  rest: string,
  store: ResponseStore,
  requestId: string,
): Promise<Response> {
  const { id, tail } = idAndTail(rest);
  if (tail !== '' && tail !== 'input_items') {
    throw new OpenAIError('unknown_url', `Unknown request URL: GET /v1/responses/${rest}.`);
  }
  const record = await store.get(id);
  if (!record) throw notFound(id);
  if (tail === '') return jsonResponse(record.response, requestId);
  // The model's reading order: the earlier turns, then this request's input.
  const page = cursorPage([...record.context, ...record.input], cursorQuery(request.url));
  return jsonResponse(page, requestId);
}

/** `DELETE /responses/{id}`. */
export async function deleteResponse(
  rest: string,
  store: ResponseStore,
  requestId: string,
): Promise<Response> {
  const { id, tail } = idAndTail(rest);
  if (tail !== '' || !(await store.delete(id))) throw notFound(id);
  return jsonResponse({ id, object: 'response', deleted: true }, requestId);
}

/** `GET /v1/hearth/responses`: what is kept, newest first, without the conversations. */
export async function listKept(store: ResponseStore, requestId: string): Promise<Response> {
  const list = await store.list();
  const data = list.reverse().map(({ id, created_at, bytes }) => ({ id, created_at, bytes }));
  return jsonResponse({ object: 'list', data }, requestId);
}

/** `DELETE /v1/hearth/responses`: forgets every kept response. */
export async function clearKept(store: ResponseStore, requestId: string): Promise<Response> {
  return jsonResponse({ object: 'list', deleted: await store.clear() }, requestId);
}
