/**
 * @module
 * `file_search` on the device, one implementation for both endpoints: the Responses API's tool
 * (`tools: [{type: "file_search", vector_store_ids, …}]`) and chat completions' extension field
 * (`file_search: {vector_store_ids, …}`). The device searches the stores with the last user
 * message, and the model gets the passages, numbered, as context to cite by number; the answer's
 * `[n]` markers are its citations of passage n (docs/api.md, file_search).
 */
import * as v from 'valibot';
import { OpenAIError } from '../../protocol/errors';
import { noArray } from '../../protocol/schema';
import { filterSchema, type Filter } from '../../documents/search';
import type { SearchResult } from '../../documents/types';
import { rankingSchema, searchStores } from './search';
import type { VectorStoreContext } from './context';
import { issueToError } from '../../protocol/validate';

/** What a `file_search` asks, as both endpoints take it. */
export const fileSearchFields = {
  vector_store_ids: v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1))),
    v.minLength(1),
    v.maxLength(10),
  ),
  max_num_results: v.nullish(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(50))),
  filters: v.nullish(filterSchema),
  ranking_options: v.nullish(rankingSchema),
};

/** Chat completions' extension field. */
export const chatFileSearchSchema = noArray(v.looseObject(fileSearchFields));

export type FileSearchTool = v.InferOutput<typeof chatFileSearchSchema>;

/** Passages given to the model when a request asks for none: OpenAI's default is 10. */
const DEFAULT_RESULTS = 10;

/** One search of a turn: what was asked, and what was found (best first). */
export interface FileSearchRun {
  queries: string[];
  results: SearchResult[];
}

/** Runs the search for a turn whose last user message is `query`; `param` names the tool. */
export async function runFileSearch(
  tool: FileSearchTool,
  query: string,
  ctx: VectorStoreContext,
  param: string,
): Promise<FileSearchRun> {
  const queries = query.trim() === '' ? [] : [query];
  if (queries.length === 0) return { queries, results: [] };
  try {
    const results = await searchStores(
      tool.vector_store_ids,
      {
        queries,
        maxResults: tool.max_num_results ?? DEFAULT_RESULTS,
        filters: (tool.filters ?? undefined) as Filter | undefined,
        ranking: tool.ranking_options ?? undefined,
      },
      ctx,
    );
    return { queries, results };
  } catch (err) {
    if (err instanceof OpenAIError && err.code === 'vector_store_not_found') {
      throw new OpenAIError(
        'vector_store_not_found',
        `${err.message} ('${param}.vector_store_ids')`,
        {
          param: `${param}.vector_store_ids`,
        },
      );
    }
    throw err;
  }
}

/** Where a passage is in its file: its page or heading. */
function place(result: SearchResult): string {
  if (result.page !== undefined) return `, page ${result.page}`;
  return result.heading !== undefined ? `, "${result.heading}"` : '';
}

/** The context the model gets: the passages, numbered, and how to cite them. */
export function passagesText(run: FileSearchRun): string {
  if (run.results.length === 0) {
    return 'A search of the user’s documents found nothing for this question.';
  }
  const passages = run.results.map(
    (r, i) => `[${i + 1}] ${r.filename}${place(r)}: ${r.content.map((c) => c.text).join('\n')}`,
  );
  return [
    'Passages from the user’s documents, found for this question. Answer from them where they help, and cite each passage you use by its number in brackets, as [1].',
    ...passages,
  ].join('\n');
}

/** A result as the endpoints report it (`file_search_call.results`, chat's `file_search`). */
export function reportedResult(r: SearchResult) {
  return {
    file_id: r.file_id,
    filename: r.filename,
    score: r.score,
    text: r.content.map((c) => c.text).join('\n'),
    attributes: r.attributes,
    chunk_id: r.chunk_id,
    ...(r.page !== undefined && { page: r.page }),
    ...(r.heading !== undefined && { heading: r.heading }),
  };
}

/** Each `[n]` in `text` that names a passage: where it ends, and the passage. */
export function citations(
  text: string,
  results: readonly SearchResult[],
): { index: number; result: SearchResult }[] {
  const found: { index: number; result: SearchResult }[] = [];
  for (const match of text.matchAll(/\[(\d{1,2})\]/g)) {
    const result = results[Number(match[1]) - 1];
    if (result) found.push({ index: match.index + match[0].length, result });
  }
  return found;
}

/** The text of a chat message or item content: a string, or its text parts joined. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((p: { text?: unknown }) => (typeof p?.text === 'string' ? p.text : ''))
    .filter((t) => t !== '')
    .join('\n');
}

const chatBodySchema = v.looseObject({ file_search: chatFileSearchSchema });

/** A chat body after its `file_search`: the body to check, the one to send, what was found. */
export interface ChatSearched {
  checked: Record<string, unknown>;
  sent: Record<string, unknown>;
  reported: unknown;
}

/**
 * Chat completions' `file_search` (Hearth's extension): the search on the last user message, and
 * the bodies with the passages as a system message — at the end for the checks (so that every
 * error names the message the client sent), first for a server the user added (whose templates
 * may want a system message first). Undefined without the field.
 */
export async function chatFileSearch(
  body: Record<string, unknown>,
  stores: Omit<VectorStoreContext, 'requestId'>,
  requestId: string,
): Promise<ChatSearched | undefined> {
  // A body that is no object: the chat checks say so.
  if (typeof body !== 'object' || body === null || body.file_search == null) return undefined;
  const parsed = v.safeParse(chatBodySchema, body, { abortEarly: true });
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  const { file_search: _, ...rest } = body;
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: unknown }[]) : null;
  // Without messages, the chat checks say what is wrong first.
  if (!messages) return { checked: rest, sent: rest, reported: null };
  const last = messages.findLast((m) => m?.role === 'user') as { content?: unknown } | undefined;
  const run = await runFileSearch(
    parsed.output.file_search,
    textOf(last?.content),
    { ...stores, requestId },
    'file_search',
  );
  const passages = { role: 'system', content: passagesText(run) };
  return {
    checked: { ...rest, messages: [...messages, passages] },
    sent: { ...rest, messages: [passages, ...messages] },
    reported: { queries: run.queries, results: run.results.map(reportedResult) },
  };
}
