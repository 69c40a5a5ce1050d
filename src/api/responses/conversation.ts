/**
 * @module
 * The conversation on the device around one Responses request: what it continues
 * (`previous_response_id`, `item_reference`), the oldest turns dropped under `truncation: auto`,
 * a `file_search` tool's passages for the turn, and the finished response kept.
 */
import { OpenAIError } from '../../protocol/errors';
import type { ChatContext, ChatDeps } from '../chat-deps';
import type { VectorStoreContext } from '../vector-stores/context';
import {
  passagesText,
  reportedResult,
  runFileSearch,
  textOf,
  type FileSearchTool,
} from '../vector-stores/file-search';
import type { ParsedResponseRequest } from './schema';
import { overLimits, type ResponseStore } from './store';
import { inputItems, newItemId, type PlacedItem } from './translate';
import type { InputItem, ResponseObject, StoredResponse } from './types';

/** What the endpoints need beyond chat's. */
export interface ResponsesDeps extends ChatDeps {
  store: ResponseStore;
  /** The vector stores `file_search` searches (absent: the tool finds no store). */
  vectorStores?: Omit<VectorStoreContext, 'requestId'> | undefined;
}

/** OpenAI's 404 for a response (or, naming the field, a `previous_response_id`) not kept. */
export function notFound(id: string, param: string | null = null): OpenAIError {
  if (param === 'previous_response_id') {
    return new OpenAIError(
      'response_not_found',
      `Previous response with id '${id}' not found: 'previous_response_id' must name a response kept on this device (made with store: true, not deleted, within the bounds of docs/api.md).`,
      { param },
    );
  }
  return new OpenAIError('response_not_found', `Response with id '${id}' not found.`, { param });
}

/** The conversation a request continues, as items, and its own input, references resolved. */
export async function conversation(
  parsed: ParsedResponseRequest,
  store: ResponseStore,
): Promise<{ context: InputItem[]; input: InputItem[] }> {
  let context: InputItem[] = [];
  const previousId = parsed.previous_response_id;
  if (previousId != null) {
    const previous = await store.get(previousId);
    if (!previous) throw notFound(previousId, 'previous_response_id');
    context = [
      ...previous.context,
      ...previous.input,
      ...(previous.response.output as unknown as InputItem[]),
    ];
  }
  const known = new Set(context.map((item) => item.id));
  const input: InputItem[] = [];
  for (const [i, item] of inputItems(parsed.input).entries()) {
    if (item.type !== 'item_reference') {
      input.push(item);
      continue;
    }
    const id = String((item as { id: unknown }).id);
    // An item the conversation already holds is not said twice.
    if (known.has(id)) continue;
    const found = await store.findItem(id);
    if (!found) {
      throw new OpenAIError('response_not_found', `Item with id '${id}' not found.`, {
        param: `input[${i}].id`,
      });
    }
    input.push(found);
  }
  return { context, input };
}

/**
 * Drops the oldest turn of `items` (from the first item up to the next user message), keeping
 * the last user message and what follows it; null when nothing can go.
 */
export function dropOldestTurn(items: readonly PlacedItem[]): PlacedItem[] | null {
  const isUser = ({ item }: PlacedItem) => item.type === 'message' && item.role === 'user';
  const lastUser = items.findLastIndex(isUser);
  const first = items.findIndex(
    ({ item }) =>
      !(item.type === 'message' && (item.role === 'system' || item.role === 'developer')),
  );
  if (first === -1 || lastUser <= first) return null;
  let next = items.findIndex((entry, i) => i > first && isUser(entry));
  if (next === -1 || next > lastUser) next = lastUser;
  return [...items.slice(0, first), ...items.slice(next)];
}

/** Keeps a finished response; a store that fails (a full disk) costs the record, not the answer. */
export async function keep(
  store: ResponseStore,
  response: ResponseObject,
  input: InputItem[],
  context: InputItem[],
): Promise<void> {
  const record: StoredResponse = {
    id: response.id,
    created_at: response.created_at,
    response,
    input,
    context,
    bytes: 0,
  };
  try {
    record.bytes = JSON.stringify(record).length;
    await store.put(record);
    const drop = overLimits(await store.list(), Math.floor(Date.now() / 1000));
    for (const id of drop) await store.delete(id);
  } catch (err) {
    console.warn(`Hearth could not keep the response ${response.id}:`, err);
  }
}

/**
 * A `file_search` tool's search for this turn, unless `tool_choice` is `none`: run on the last
 * user message, its passages as a developer message for the model (not kept with the input).
 */
export async function fileSearch(
  parsed: ParsedResponseRequest,
  placed: readonly PlacedItem[],
  deps: ResponsesDeps,
  context: ChatContext,
) {
  const at = (parsed.tools ?? []).findIndex((t) => t.type === 'file_search');
  if (at === -1 || parsed.tool_choice === 'none') return undefined;
  const tool = (parsed.tools ?? [])[at] as FileSearchTool & { type: 'file_search' };
  const param = `tools[${at}]`;
  if (!deps.vectorStores) {
    throw new OpenAIError('vector_store_not_found', 'No vector store is kept here.', {
      param: `${param}.vector_store_ids`,
    });
  }
  const last = placed.findLast(({ item }) => item.type === 'message' && item.role === 'user');
  const run = await runFileSearch(
    tool,
    textOf(last?.item.content),
    { ...deps.vectorStores, requestId: context.requestId },
    param,
  );
  const include = parsed.include?.includes('file_search_call.results') === true;
  const passages: InputItem = {
    id: newItemId('msg'),
    type: 'message',
    role: 'developer',
    content: passagesText(run),
  };
  return {
    run,
    param,
    context: passages,
    reported: include ? run.results.map(reportedResult) : null,
  };
}
