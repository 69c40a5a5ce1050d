/**
 * @module
 * Wire types of the Responses API: the subset Hearth emits and keeps, named as OpenAI's SDK
 * names them (`resources/responses/responses.d.ts`). Types only.
 */
import type { TokenLogprob } from '../../protocol/types';

/** A passage of the user's documents that the text cites (`[n]`), ending at `index`. */
export interface FileCitation {
  type: 'file_citation';
  file_id: string;
  filename: string;
  index: number;
}

/** Text the model wrote. */
export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: FileCitation[];
  /** With `include: ["message.output_text.logprobs"]`. */
  logprobs?: TokenLogprob[];
}

/** The assistant's answer. */
export interface OutputMessage {
  type: 'message';
  id: string;
  role: 'assistant';
  status: ItemStatus;
  content: OutputText[];
}

/** A call of one of the caller's functions. */
export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
  /** The `namespace` tool the function belongs to. */
  namespace?: string;
}

/** What a reasoning model thought before answering. */
export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: [];
  content: { type: 'reasoning_text'; text: string }[];
  status: ItemStatus;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

/** The device's search of the vector stores for the turn (`file_search`). */
export interface FileSearchCallItem {
  type: 'file_search_call';
  id: string;
  queries: string[];
  status: 'in_progress' | 'searching' | 'completed' | 'failed';
  /** With `include: ["file_search_call.results"]`. */
  results: Record<string, unknown>[] | null;
}

/** An item of `output`. */
export type OutputItem = OutputMessage | FunctionCallItem | ReasoningItem | FileSearchCallItem;

/**
 * An input item as kept and listed (`input_items`): what the client sent, with an `id` (and a
 * message's `type`) added where it had none.
 */
export type InputItem = Record<string, unknown> & { id: string; type: string };

export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
  /** Hearth's: US dollars at the model's price (0 on the device unless the owner set one). */
  estimated_cost: number;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The response object. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  /** With status `completed` or `incomplete`: when it ended (Unix seconds). */
  completed_at: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' } | null;
  instructions: string | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: { effort: string | null; summary: string | null };
  store: boolean;
  temperature: number;
  text: { format: Record<string, unknown> };
  tool_choice: unknown;
  tools: unknown[];
  top_p: number;
  top_logprobs: number;
  truncation: 'auto' | 'disabled';
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  background: false;
  user: string | null;
  usage: ResponseUsage | null;
}

/** One response kept on the device (`store: true`). */
export interface StoredResponse {
  id: string;
  /** Unix seconds. */
  created_at: number;
  response: ResponseObject;
  /** This request's own input items. */
  input: InputItem[];
  /**
   * The conversation before `input`, as items (from `previous_response_id`'s record): kept whole
   * in each record, so that deleting one response never breaks a later one.
   */
  context: InputItem[];
  /** The record's size as JSON, for the store's bound. */
  bytes: number;
}
