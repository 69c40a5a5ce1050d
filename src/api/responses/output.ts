/**
 * @module
 * A response as it is made: the chat pipeline's outputs (token batches, tool calls, the end)
 * become `output` items, and, for a stream, the events of docs/api.md's Responses section, each
 * with its `sequence_number`. A text token's event is written from a prefix and suffix made once
 * per message item, so that it costs what a chat chunk costs: one `JSON.stringify` of its text; a
 * stream's batch of tokens is written straight to bytes (`tokenBytes`), as chat's is.
 */
import type { EngineUsage, Token } from '../../protocol/host/backend';
import {
  encoder,
  END,
  END_BYTES,
  event,
  MIDDLE,
  MIDDLE_BYTES,
  responseUsage,
  writeDecimal,
} from './wire';
import type { ModelPrice } from '../../models/models';
import { sseJson } from '../../protocol/sse';
import { writeUtf8 } from '../completion';
import type { FinishReason, TokenLogprob, ToolCall } from '../../protocol/types';
import type { OfferedName } from './translate';
import { newItemId } from './translate';
import type { SearchResult } from '../../documents/types';
import { citations } from '../vector-stores/file-search';
import type {
  FileCitation,
  FileSearchCallItem,
  FunctionCallItem,
  OutputItem,
  OutputMessage,
  ReasoningItem,
  ResponseObject,
} from './types';

/** The item being written: its kind, text so far and the frame of its delta events. */
interface Open {
  item: OutputMessage | ReasoningItem;
  index: number;
  text: string;
  logprobs: TokenLogprob[];
  /** `event: …data: {…,"sequence_number":` */
  prefix: string;
  /** The same as UTF-8. */
  prefixBytes: Uint8Array;
}

/** Makes one response from the pipeline's outputs; `sse` also writes its events. */
export class ResponseWriter {
  readonly #response: ResponseObject;
  readonly #sse: boolean;
  readonly #names: ReadonlyMap<string, OfferedName>;
  readonly #logprobs: boolean;
  /** The passages a `file_search` gave the model: the text's `[n]` markers cite them. */
  readonly #passages: readonly SearchResult[];
  #sequence = 0;
  #open: Open | undefined;
  #reasoningTokens = 0;

  /** `response`: the object as created, `in_progress` with no output. */
  constructor(
    response: ResponseObject,
    options: {
      sse: boolean;
      names: ReadonlyMap<string, OfferedName>;
      logprobs: boolean;
      passages?: readonly SearchResult[];
    },
  ) {
    this.#response = response;
    this.#sse = options.sse;
    this.#names = options.names;
    this.#logprobs = options.logprobs;
    this.#passages = options.passages ?? [];
  }

  #event(type: string, fields: Record<string, unknown>): string {
    if (!this.#sse) return '';
    return event(type, this.#sequence++, fields);
  }

  /** A copy of the response as it stands (events carry snapshots, never the live object). */
  #snapshot(): ResponseObject {
    return structuredClone(this.#response);
  }

  /** `response.created` and `response.in_progress`. */
  start(): string {
    if (!this.#sse) return '';
    const response = this.#snapshot();
    return (
      this.#event('response.created', { response }) +
      this.#event('response.in_progress', { response })
    );
  }

  #openItem(reasoning: boolean): string {
    const index = this.#response.output.length;
    const item: OutputMessage | ReasoningItem = reasoning
      ? { type: 'reasoning', id: newItemId('rs'), summary: [], content: [], status: 'in_progress' }
      : {
          type: 'message',
          id: newItemId('msg'),
          role: 'assistant',
          status: 'in_progress',
          content: [],
        };
    this.#response.output.push(item);
    const deltaType = reasoning ? 'response.reasoning_text.delta' : 'response.output_text.delta';
    const head = { type: deltaType, item_id: item.id, output_index: index, content_index: 0 };
    // The JSON of a delta event, up to its sequence number; the text goes last.
    const json = sseJson(reasoning ? head : { ...head, logprobs: [] });
    const prefix = `event: ${deltaType}\ndata: ${json.slice(0, -1)},"sequence_number":`;
    this.#open = {
      item,
      index,
      text: '',
      logprobs: [],
      prefix,
      prefixBytes: encoder.encode(prefix),
    };
    const part = reasoning
      ? { type: 'reasoning_text', text: '' }
      : { type: 'output_text', text: '', annotations: [], ...(this.#logprobs && { logprobs: [] }) };
    return (
      this.#event('response.output_item.added', {
        output_index: index,
        item: structuredClone(item),
      }) +
      this.#event('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part,
      })
    );
  }

  #closeItem(status: 'completed' | 'incomplete'): string {
    const open = this.#open;
    if (!open) return '';
    this.#open = undefined;
    const { item, index, text } = open;
    const where = { item_id: item.id, output_index: index, content_index: 0 };
    let part;
    let out;
    if (item.type === 'reasoning') {
      part = { type: 'reasoning_text' as const, text };
      item.content = [part];
      out = this.#event('response.reasoning_text.done', { ...where, text });
    } else {
      const annotations: FileCitation[] = citations(text, this.#passages).map(
        ({ index, result }) => ({
          type: 'file_citation',
          file_id: result.file_id,
          filename: result.filename,
          index,
        }),
      );
      part = {
        type: 'output_text' as const,
        text,
        annotations,
        ...(this.#logprobs && { logprobs: open.logprobs }),
      };
      item.content = [part];
      out = annotations
        .map((annotation, annotation_index) =>
          this.#event('response.output_text.annotation.added', {
            ...where,
            annotation_index,
            annotation,
          }),
        )
        .join('');
      out += this.#event('response.output_text.done', {
        ...where,
        text,
        logprobs: open.logprobs,
      });
    }
    item.status = status;
    return (
      out +
      this.#event('response.content_part.done', { ...where, part }) +
      this.#event('response.output_item.done', { output_index: index, item: structuredClone(item) })
    );
  }

  /**
   * The device's search for the turn, done before the model runs: its item first in the output,
   * and its events (`response.file_search_call.in_progress`, `.searching`, `.completed`).
   */
  fileSearch(queries: string[], results: Record<string, unknown>[] | null): string {
    const index = this.#response.output.length;
    const item: FileSearchCallItem = {
      type: 'file_search_call',
      id: newItemId('fs'),
      queries,
      status: 'in_progress',
      results: null,
    };
    this.#response.output.push(item);
    const where = { output_index: index, item_id: item.id };
    let out = this.#event('response.output_item.added', {
      output_index: index,
      item: structuredClone(item),
    });
    out += this.#event('response.file_search_call.in_progress', where);
    out += this.#event('response.file_search_call.searching', where);
    item.status = 'completed';
    item.results = results;
    out += this.#event('response.file_search_call.completed', where);
    out += this.#event('response.output_item.done', {
      output_index: index,
      item: structuredClone(item),
    });
    return out;
  }

  /** Events for a batch of tokens (and the text kept for the output). */
  tokens(tokens: readonly Token[]): string {
    let out = '';
    for (const token of tokens) {
      const rich = typeof token !== 'string';
      const text = rich ? token.text : token;
      const reasoning = rich && token.reasoning === true;
      if (reasoning) this.#reasoningTokens += 1;
      if (this.#open === undefined || (this.#open.item.type === 'reasoning') !== reasoning) {
        out += this.#closeItem('completed') + this.#openItem(reasoning);
      }
      const open = this.#open as Open;
      open.text += text;
      if (rich && token.logprobs) open.logprobs.push(...token.logprobs);
      if (!this.#sse) continue;
      if (rich && token.logprobs) {
        const type = 'response.output_text.delta';
        out += event(type, this.#sequence++, {
          item_id: open.item.id,
          output_index: open.index,
          content_index: 0,
          logprobs: token.logprobs,
          delta: text,
        });
      } else {
        out += `${open.prefix}${this.#sequence++}${MIDDLE}${sseJson(text)}${END}`;
      }
    }
    return out;
  }

  /**
   * `tokens(tokens)` as UTF-8 bytes, written straight into one buffer: a plain token of the open
   * message is its item's prefix, its sequence number, its JSON and the frame's end; any other
   * token's events are written from their text.
   */
  tokenBytes(tokens: readonly Token[]): Uint8Array {
    // Each token's JSON when its delta is framed (with its frame and number), else its events.
    const texts: string[] = [];
    const frames: (Uint8Array | undefined)[] = [];
    const sequences: number[] = [];
    const fixed = MIDDLE_BYTES.length + END_BYTES.length + 16;
    let room = 0;
    for (const token of tokens) {
      const open = this.#open;
      if (this.#sse && typeof token === 'string' && open?.item.type === 'message') {
        open.text += token;
        const json = sseJson(token);
        texts.push(json);
        frames.push(open.prefixBytes);
        sequences.push(this.#sequence++);
        room += open.prefixBytes.length + fixed + 3 * json.length;
      } else {
        const text = this.tokens([token]);
        texts.push(text);
        frames.push(undefined);
        sequences.push(0);
        room += 3 * text.length;
      }
    }
    const out = new Uint8Array(room);
    let at = 0;
    for (let i = 0; i < texts.length; i += 1) {
      const frame = frames[i];
      if (frame) {
        out.set(frame, at);
        at = writeDecimal(sequences[i] ?? 0, out, at + frame.length);
        out.set(MIDDLE_BYTES, at);
        at = writeUtf8(texts[i] ?? '', out, at + MIDDLE_BYTES.length);
        out.set(END_BYTES, at);
        at += END_BYTES.length;
      } else {
        at = writeUtf8(texts[i] ?? '', out, at);
      }
    }
    // Plain ASCII leaves two thirds of each token's JSON room unused: a copy of the written
    // part when that is much, so that the stream does not hold the slack.
    return at * 2 < room ? out.slice(0, at) : out.subarray(0, at);
  }

  /** Events for the model's calls of functions, each an item of its own. */
  toolCalls(calls: readonly ToolCall[]): string {
    let out = this.#closeItem('completed');
    for (const call of calls) {
      const offered = this.#names.get(call.function.name);
      const item: FunctionCallItem = {
        type: 'function_call',
        id: newItemId('fc'),
        call_id: call.id,
        name: offered?.name ?? call.function.name,
        arguments: '',
        status: 'in_progress',
        ...(offered?.namespace !== undefined && { namespace: offered.namespace }),
      };
      const index = this.#response.output.length;
      this.#response.output.push(item);
      const args = call.function.arguments;
      out += this.#event('response.output_item.added', {
        output_index: index,
        item: structuredClone(item),
      });
      out += this.#event('response.function_call_arguments.delta', {
        item_id: item.id,
        output_index: index,
        delta: args,
      });
      item.arguments = args;
      item.status = 'completed';
      out += this.#event('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: args,
      });
      out += this.#event('response.output_item.done', {
        output_index: index,
        item: structuredClone(item),
      });
    }
    return out;
  }

  /** The last events; the response is complete (or incomplete, cut at `max_output_tokens`). */
  end(finish: FinishReason, usage: EngineUsage | null, price: ModelPrice): string {
    const [closing, last] = this.endParts(finish, usage, price);
    return closing + last;
  }

  /**
   * `end()` in two: the events that close the output (its items done), and the last one
   * (`response.completed` or `response.incomplete`), which a stream may hold back until the
   * response is kept.
   */
  endParts(finish: FinishReason, usage: EngineUsage | null, price: ModelPrice): [string, string] {
    const cut = finish === 'length';
    // An empty answer is still a message with its (empty) text, as OpenAI sends (the device's
    // search, when it ran, is no answer).
    const answered = this.#response.output.some((item) => item.type !== 'file_search_call');
    let out = answered ? '' : this.#openItem(false);
    out += this.#closeItem(cut ? 'incomplete' : 'completed');
    const response = this.#response;
    response.status = cut ? 'incomplete' : 'completed';
    response.incomplete_details = cut ? { reason: 'max_output_tokens' } : null;
    response.completed_at = Math.floor(Date.now() / 1000);
    response.usage = responseUsage(usage, this.#reasoningTokens, price);
    return [out, this.#event(cut ? 'response.incomplete' : 'response.completed', { response })];
  }

  /** The last event of a response that failed once under way. */
  fail(error: { code: string; message: string }): string {
    const response = this.#response;
    response.status = 'failed';
    response.error = error;
    return this.#event('response.failed', { response });
  }

  /** The response as it stands. */
  get response(): ResponseObject {
    return this.#response;
  }

  /** The output items so far (the model's turn, for the conversation kept). */
  get output(): readonly OutputItem[] {
    return this.#response.output;
  }
}
