/**
 * @module
 * What the API's resources under a route's `*` share (responses, files, vector stores): the id
 * and the rest of the path, and OpenAI's cursor lists (`{object: "list", data, first_id, last_id,
 * has_more}`) read from a request's `limit`, `order`, `after` and `before`.
 */
import * as v from 'valibot';
import { OpenAIError } from '../protocol/errors';
import { issueToError } from '../protocol/validate';

/** The query of a cursor list; `limit` within 1..`max`. */
export function cursorQuery(url: string, max = 100, fallback = 20) {
  const params = new URL(url).searchParams;
  const schema = v.object({
    limit: v.optional(
      v.pipe(v.string(), v.toNumber(), v.integer(), v.minValue(1), v.maxValue(max)),
      String(fallback),
    ),
    order: v.optional(v.picklist(['asc', 'desc']), 'desc'),
    after: v.optional(v.string()),
    before: v.optional(v.string()),
  });
  const read = (name: string) => params.get(name) ?? undefined;
  const parsed = v.safeParse(schema, {
    limit: read('limit'),
    order: read('order'),
    after: read('after'),
    before: read('before'),
  });
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  return parsed.output;
}

export type CursorQuery = ReturnType<typeof cursorQuery>;

/** A page of `items` (oldest first) as `query` asks: ordered, after or before a cursor, cut. */
export function cursorPage<T extends { id: string }>(items: readonly T[], query: CursorQuery) {
  let list = query.order === 'desc' ? [...items].reverse() : [...items];
  const at = (cursor: string, name: 'after' | 'before') => {
    const index = list.findIndex((item) => item.id === cursor);
    if (index === -1) {
      throw new OpenAIError('invalid_value', `Invalid value for '${name}': no item '${cursor}'.`, {
        param: name,
      });
    }
    return index;
  };
  if (query.after !== undefined) list = list.slice(at(query.after, 'after') + 1);
  if (query.before !== undefined) list = list.slice(0, at(query.before, 'before'));
  const data = list.slice(0, query.limit);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: list.length > query.limit,
  };
}

/** A path segment as sent, decoded where it can be (one that is not stays as sent: it names nothing). */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * The id that starts `rest` (a route's `*`: `{id}` or `{id}/…`), decoded, and what follows it.
 * `{id}/` (a second trailing slash: the router takes one) is no route: its tail is `/`.
 */
export function idAndTail(rest: string): { id: string; tail: string } {
  const slash = rest.indexOf('/');
  const id = decodeSegment(slash === -1 ? rest : rest.slice(0, slash));
  return { id, tail: slash === -1 ? '' : rest.slice(slash + 1) || '/' };
}
