/**
 * @module
 * Filters on a file's attributes, as OpenAI's vector-store search and `file_search` take them
 * (the SDK's `ComparisonFilter` and `CompoundFilter`): the valibot schema the API validates a
 * request's `filters` with, and the test of one file's attributes against a filter.
 *
 * How a filter matches (what OpenAI leaves unsaid, Hearth's choice):
 * - `eq` / `ne`: the same type and value (`1` is not `'1'`); `ne` is its negation.
 * - `gt` / `gte` / `lt` / `lte`: numbers by value, strings by code units (so ISO dates order
 *   right); an attribute of another type than the value, or a boolean, matches none.
 * - `in` / `nin`: the attribute is (is not) one of the array's values, compared as `eq`.
 * - An attribute the file lacks matches no comparison, `ne` and `nin` included (as SQL's NULL).
 * - `and` of no filters matches every file, `or` of none matches none.
 */
import * as v from 'valibot';

/** An attribute's value (OpenAI: strings up to 512 characters, numbers, booleans). */
export type AttributeValue = string | number | boolean;

/** OpenAI's `ComparisonFilter`. */
export interface ComparisonFilter {
  type: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'nin';
  key: string;
  value: AttributeValue | (string | number)[];
}

/** OpenAI's `CompoundFilter`: filters combined by `and` or `or`, nested as deep as needed. */
export interface CompoundFilter {
  type: 'and' | 'or';
  filters: Filter[];
}

export type Filter = ComparisonFilter | CompoundFilter;

/** How deep compound filters may nest; a deeper one is refused (it would only cost). */
export const MAX_FILTER_DEPTH = 8;

/**
 * The depth of a JSON value's nesting, counted without recursion (the input is untrusted): each
 * compound filter is two levels (its object and its `filters`), an `in` list one more.
 */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [item, depth] = stack.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_FILTER_DEPTH * 2 + 2) return deepest;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return deepest;
}

const key = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const scalar = v.union([v.string(), v.number(), v.boolean()]);

const comparisonSchema = v.object({
  type: v.picklist(['eq', 'ne', 'gt', 'gte', 'lt', 'lte']),
  key,
  value: scalar,
});
const listSchema = v.object({
  type: v.picklist(['in', 'nin']),
  key,
  value: v.array(v.union([v.string(), v.number()])),
});

const nodeSchema: v.GenericSchema<Filter> = v.variant('type', [
  comparisonSchema,
  listSchema,
  v.object({
    type: v.picklist(['and', 'or']),
    filters: v.array(v.lazy(() => nodeSchema)),
  }),
]);

/**
 * A request's `filters`: a comparison or a compound filter. Its issues carry the path of the
 * field at fault (`filters.1.value`), for a 400 that names it. Nesting deeper than
 * {@link MAX_FILTER_DEPTH} compound filters is refused before it is walked.
 */
export const filterSchema = v.pipe(
  v.unknown(),
  v.check(
    (input) => depthOf(input) <= MAX_FILTER_DEPTH * 2 + 2,
    `Filters may nest at most ${MAX_FILTER_DEPTH} compound filters deep.`,
  ),
  nodeSchema,
);

const ordered = (a: AttributeValue, b: AttributeValue): number | undefined =>
  (typeof a === 'number' && typeof b === 'number') ||
  (typeof a === 'string' && typeof b === 'string')
    ? a < b
      ? -1
      : a > b
        ? 1
        : 0
    : undefined;

function compare(filter: ComparisonFilter, attributes: Readonly<Record<string, AttributeValue>>) {
  if (!Object.hasOwn(attributes, filter.key)) return false;
  const actual = attributes[filter.key]!;
  const { type, value } = filter;
  if (type === 'in' || type === 'nin') {
    const found = Array.isArray(value) && value.some((one) => one === actual);
    return type === 'in' ? found : !found;
  }
  if (Array.isArray(value)) return false;
  if (type === 'eq') return actual === value;
  if (type === 'ne') return actual !== value;
  const order = ordered(actual, value);
  if (order === undefined) return false;
  if (type === 'gt') return order > 0;
  if (type === 'gte') return order >= 0;
  if (type === 'lt') return order < 0;
  return order <= 0;
}

/** Whether a file with these attributes passes the filter. */
export function matchesFilter(
  filter: Filter,
  attributes: Readonly<Record<string, AttributeValue>>,
): boolean {
  if (!('filters' in filter)) return compare(filter, attributes);
  const one = (f: Filter) => matchesFilter(f, attributes);
  return filter.type === 'and' ? filter.filters.every(one) : filter.filters.some(one);
}
