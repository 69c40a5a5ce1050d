/**
 * @module
 * The endpoints that read the responses kept on the device: `GET /responses/{id}`, its
 * `input_items`, `DELETE /responses/{id}`, and Hearth's `GET` and `DELETE /v1/hearth/responses`,
 * which list and clear them (Settings → Developer calls these).
 */
import * as v from 'valibot';
import { OpenAIError } from '../../protocol/errors';
import { jsonResponse } from '../../protocol/respond';
import { issueToError } from '../../protocol/validate';
import { notFound } from './responses';
import type { ResponseStore } from './store';

/** The id in `rest` (`{id}` or `{id}/input_items`). */
function splitRest(rest: string): { id: string; tail: string } {
  const slash = rest.indexOf('/');
  const raw = slash === -1 ? rest : rest.slice(0, slash);
  let id = raw;
  try {
    id = decodeURIComponent(raw);
  } catch {
    // Kept as sent: it names no response, and the 404 says so.
  }
  // `{id}/` (a second trailing slash: the router takes one) is no route: its tail is not empty.
  return { id, tail: slash === -1 ? '' : rest.slice(slash + 1) || '/' };
}

const listQuery = v.object({
  limit: v.optional(
    v.pipe(v.string(), v.toNumber(), v.integer(), v.minValue(1), v.maxValue(100)),
    '20',
  ),
  order: v.optional(v.picklist(['asc', 'desc']), 'desc'),
  after: v.optional(v.string()),
});

/** `GET /responses/{id}` and `GET /responses/{id}/input_items`. */
export async function readResponse(
  request: Request,
  rest: string,
  store: ResponseStore,
  requestId: string,
): Promise<Response> {
  const { id, tail } = splitRest(rest);
  if (tail !== '' && tail !== 'input_items') {
    throw new OpenAIError('unknown_url', `Unknown request URL: GET /v1/responses/${rest}.`);
  }
  const record = await store.get(id);
  if (!record) throw notFound(id);
  if (tail === '') return jsonResponse(record.response, requestId);
  const params = new URL(request.url).searchParams;
  const query = v.safeParse(listQuery, {
    limit: params.get('limit') ?? undefined,
    order: params.get('order') ?? undefined,
    after: params.get('after') ?? undefined,
  });
  if (!query.success) throw issueToError(query.issues[0]);
  const { limit, order, after } = query.output;
  let items = [...record.context, ...record.input];
  if (order === 'desc') items.reverse();
  if (after !== undefined) {
    const at = items.findIndex((item) => item.id === after);
    if (at === -1) {
      throw new OpenAIError('invalid_value', `Invalid value for 'after': no item '${after}'.`, {
        param: 'after',
      });
    }
    items = items.slice(at + 1);
  }
  const data = items.slice(0, limit);
  return jsonResponse(
    {
      object: 'list',
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: items.length > limit,
    },
    requestId,
  );
}

/** `DELETE /responses/{id}`. */
export async function deleteResponse(
  rest: string,
  store: ResponseStore,
  requestId: string,
): Promise<Response> {
  const { id, tail } = splitRest(rest);
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
