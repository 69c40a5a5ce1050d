/**
 * @module
 * One translation onto the chat pipeline: a Responses request, with the conversation it
 * continues, becomes a chat-completions body, which the chat schema then validates and every
 * backend answers as it answers chat (docs/api.md, Responses: what reaches the model). An error
 * the chat side raises names the Responses field it came from (`paramMap`).
 */
import { OpenAIError } from '../../protocol/errors';
import type { ParsedInputItem, ParsedResponseRequest } from './schema';
import { HOSTED_TOOLS } from './schema';
import type { InputItem } from './types';

/** An item with where it came from in the request, for the errors that name it. */
export interface PlacedItem {
  item: InputItem;
  /** `input[2]`, or `previous_response_id` for the items of the conversation before. */
  param: string;
}

/** A function the model was offered, by the name it was offered under. */
export interface OfferedName {
  name: string;
  namespace?: string;
}

/** The chat body, and what it takes to map its errors and calls back. */
export interface Translation {
  body: Record<string, unknown>;
  /** Chat's `messages[i]` → the Responses field it came from. */
  messageParams: string[];
  /** Chat's `tools[i]` → the Responses field it came from. */
  toolParams: string[];
  /** Offered function names → the caller's name and namespace. */
  names: Map<string, OfferedName>;
}

/**
 * Fresh item ids: a prefix and 32 hex digits (a random UUID's 122 bits). OpenAI's are longer;
 * an item id is in every delta event of a stream, so each digit less is a byte less per token.
 */
export function newItemId(prefix: 'resp' | 'msg' | 'fc' | 'fco' | 'rs' | 'fs' | 'item'): string {
  return `${prefix}_${crypto.randomUUID().replaceAll('-', '')}`;
}

const ID_PREFIX: Record<string, 'msg' | 'fc' | 'fco' | 'rs' | 'item'> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

/** A message's content as OpenAI lists it: parts, `output_text` for the assistant's. */
function contentParts(role: unknown, content: unknown): unknown {
  if (typeof content !== 'string') return content;
  return role === 'assistant'
    ? [{ type: 'output_text', text: content, annotations: [] }]
    : [{ type: 'input_text', text: content }];
}

/**
 * The request's `input` as items to keep and list, as OpenAI lists them: a string is one user
 * message; every item gets an id (and a message its `type`), its status, and a message's text
 * content becomes parts.
 */
export function inputItems(input: ParsedResponseRequest['input']): InputItem[] {
  if (input == null) return [];
  const raw: ParsedInputItem[] =
    typeof input === 'string' ? [{ role: 'user', content: input }] : input;
  return raw.map((entry) => {
    const item = { ...(entry as Record<string, unknown>) };
    const type = typeof item.type === 'string' ? item.type : 'message';
    const id = typeof item.id === 'string' && item.id !== '' ? item.id : undefined;
    const kept: InputItem = { ...item, type, id: id ?? newItemId(ID_PREFIX[type] ?? 'item') };
    if (type === 'message') kept.content = contentParts(item.role, item.content);
    if (type !== 'item_reference' && type !== 'reasoning') kept.status ??= 'completed';
    return kept;
  });
}

interface Part {
  type: string;
  text?: string;
  image_url?: string;
  detail?: string | null;
}

/** Chat content from Responses content: a string stays one; parts map one to one. */
function chatContent(content: unknown): unknown {
  if (typeof content === 'string') return content;
  return (content as Part[]).map((part) =>
    part.type === 'input_image'
      ? {
          type: 'image_url',
          image_url: {
            url: part.image_url,
            // Chat's details are three; `original` asks for the most.
            ...(part.detail != null && {
              detail: part.detail === 'original' ? 'high' : part.detail,
            }),
          },
        }
      : { type: 'text', text: part.text ?? '' },
  );
}

/** A tool's answer as text: its text parts joined by a line break. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  return (output as Part[]).map((p) => p.text ?? '').join('\n');
}

/** The name a namespaced function is offered under (chat has no namespaces). */
export const namespacedName = (namespace: string, name: string) => `${namespace}__${name}`;

function chatMessages(items: readonly PlacedItem[], instructions: string | null | undefined) {
  const messages: Record<string, unknown>[] = [];
  const params: string[] = [];
  if (instructions != null) {
    messages.push({ role: 'system', content: instructions });
    params.push('instructions');
  }
  for (const { item, param } of items) {
    switch (item.type) {
      case 'message':
        messages.push({ role: item.role, content: chatContent(item.content) });
        params.push(param);
        break;
      case 'function_call': {
        const last = messages.at(-1);
        const name =
          typeof item.namespace === 'string'
            ? namespacedName(item.namespace, String(item.name))
            : item.name;
        const call = {
          id: item.call_id,
          type: 'function',
          function: { name, arguments: item.arguments },
        };
        // Calls after the assistant's text (or after each other) are one assistant turn.
        if (last?.role === 'assistant') {
          last.tool_calls = [...((last.tool_calls as unknown[] | undefined) ?? []), call];
        } else {
          messages.push({ role: 'assistant', content: null, tool_calls: [call] });
          params.push(param);
        }
        break;
      }
      case 'function_call_output':
        messages.push({
          role: 'tool',
          tool_call_id: item.call_id,
          content: outputText(item.output),
        });
        params.push(param);
        break;
      // Reasoning from earlier turns does not reach the model (chat templates drop it too).
      default:
        break;
    }
  }
  return { messages, params };
}

type Tool = NonNullable<ParsedResponseRequest['tools']>[number];
type FunctionTool = Extract<Tool, { type: 'function' }>;

const isHosted = (type: string) => (HOSTED_TOOLS as readonly string[]).includes(type);

function chatTool(tool: FunctionTool, name: string) {
  return {
    type: 'function',
    function: {
      name,
      ...(tool.description != null && { description: tool.description }),
      ...(tool.parameters != null && { parameters: tool.parameters }),
      ...(tool.strict != null && { strict: tool.strict }),
    },
  };
}

/** The functions offered to the model: hosted tools are left out, namespaces flattened. */
function chatTools(tools: readonly Tool[], allowed: Set<string> | undefined) {
  const out: Record<string, unknown>[] = [];
  const params: string[] = [];
  const names = new Map<string, OfferedName>();
  const offer = (tool: FunctionTool, param: string, namespace?: string) => {
    const name = namespace === undefined ? tool.name : namespacedName(namespace, tool.name);
    if (allowed && !allowed.has(name) && !allowed.has(tool.name)) return;
    out.push(chatTool(tool, name));
    params.push(param);
    names.set(name, namespace === undefined ? { name } : { name: tool.name, namespace });
  };
  tools.forEach((tool, i) => {
    if (tool.type === 'function') offer(tool, `tools[${i}]`);
    else if (tool.type === 'namespace') {
      tool.tools.forEach((inner, j) => {
        if (inner.type === 'function')
          offer(inner as FunctionTool, `tools[${i}].tools[${j}]`, tool.name);
      });
    }
  });
  return { tools: out, params, names };
}

function unsupported(param: string, what: string): OpenAIError {
  return new OpenAIError('unsupported_parameter', `Unsupported parameter: '${param}' ${what}`, {
    param,
  });
}

/** `tool_choice` for chat, and the names `allowed_tools` keeps. */
function chatToolChoice(choice: ParsedResponseRequest['tool_choice']): {
  choice?: unknown;
  allowed?: Set<string>;
} {
  if (choice == null) return {};
  if (typeof choice === 'string') return { choice };
  if (choice.type === 'function') {
    const named = choice as { name: string; namespace?: unknown };
    const name =
      typeof named.namespace === 'string'
        ? namespacedName(named.namespace, named.name)
        : named.name;
    return { choice: { type: 'function', function: { name } } };
  }
  // The device runs the search before the model, whatever the choice: nothing to force.
  if (choice.type === 'file_search') return {};
  if (choice.type === 'allowed_tools') {
    const { mode, tools } = choice as { mode: string; tools: { type: string; name?: unknown }[] };
    const allowed = new Set(
      tools.flatMap((t) => (t.type === 'function' && typeof t.name === 'string' ? [t.name] : [])),
    );
    return { choice: mode, allowed };
  }
  throw unsupported(
    'tool_choice',
    isHosted(choice.type)
      ? `forces the tool "${choice.type}", which cannot run on this device.`
      : `of type "${choice.type}" is not supported by Hearth.`,
  );
}

/** Hearth's extensions that a Responses request may carry as chat's do (docs/api.md). */
const EXTENSIONS = [
  'echo_delay_ms',
  'seed',
  'stop',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'ignore_eos',
] as const;

/** The chat body for `request`, whose conversation is `items` (the earlier ones first). */
export function translate(
  request: ParsedResponseRequest,
  items: readonly PlacedItem[],
): Translation {
  const { messages, params: messageParams } = chatMessages(items, request.instructions);
  if (!items.some(({ item }) => item.type === 'message' || item.type === 'function_call_output')) {
    throw new OpenAIError('missing_field', "Missing required parameter: 'input'.", {
      param: 'input',
    });
  }
  const body: Record<string, unknown> = { model: request.model, messages };
  const { choice, allowed } = chatToolChoice(request.tool_choice);
  const offered = chatTools(request.tools ?? [], allowed);
  if (offered.tools.length > 0) {
    body.tools = offered.tools;
    if (choice !== undefined) body.tool_choice = choice;
  } else if (choice === 'required' || (typeof choice === 'object' && choice !== null)) {
    throw unsupported(
      'tool_choice',
      'asks for a tool call, and no function the model could call on this device was offered (hosted tools cannot run here).',
    );
  }
  if (request.stream === true) {
    body.stream = true;
    // A server's stream then ends with its usage, as the response's usage needs.
    body.stream_options = { include_usage: true };
  }
  if (request.max_output_tokens != null) body.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) body.temperature = request.temperature;
  if (request.top_p != null) body.top_p = request.top_p;
  const format = request.text?.format;
  if (format != null && format.type !== 'text') {
    body.response_format =
      format.type === 'json_schema'
        ? {
            type: 'json_schema',
            json_schema: {
              name: format.name,
              schema: format.schema,
              ...(format.description != null && { description: format.description }),
              ...(format.strict != null && { strict: format.strict }),
            },
          }
        : { type: 'json_object' };
  }
  if (request.include?.includes('message.output_text.logprobs')) {
    body.logprobs = true;
    // Chat's engines give at most 5 alternatives.
    if (request.top_logprobs != null) body.top_logprobs = Math.min(request.top_logprobs, 5);
  }
  const effort = request.reasoning?.effort;
  if (effort != null) body.enable_thinking = effort !== 'none' && effort !== 'minimal';
  const extra = request as Record<string, unknown>;
  for (const key of EXTENSIONS) if (extra[key] != null) body[key] = extra[key];
  return { body, messageParams, toolParams: offered.params, names: offered.names };
}

/** Chat's field names → the Responses request's. */
const FIELDS: [RegExp, string][] = [
  [/^max_(?:completion_)?tokens/, 'max_output_tokens'],
  [/^response_format\.json_schema/, 'text.format'],
  [/^response_format/, 'text.format'],
  [/^logprobs/, 'include'],
  [/^enable_thinking/, 'reasoning.effort'],
  [/^messages$/, 'input'],
];

/** The Responses field for a chat field at fault. */
export function responsesParam(param: string, translation: Translation): string {
  const message = /^messages\[(\d+)\](?:\.tool_calls\[\d+\])?(.*)$/.exec(param);
  if (message) {
    const origin = translation.messageParams[Number(message[1])] ?? 'input';
    const rest = (message[2] ?? '')
      .replace(/^\.function/, '')
      .replace(/^\.tool_call_id/, '.call_id')
      // An input_image's `image_url` is the URL itself (chat's is `{url}`).
      .replace(/^(\.content\[\d+\]\.image_url)\.url$/, '$1');
    // A tool message's content is the item's `output`.
    const body = translation.body.messages as { role?: string }[];
    const tool = body[Number(message[1])]?.role === 'tool';
    return origin + (tool ? rest.replace(/^\.content/, '.output') : rest);
  }
  const tool = /^tools\[(\d+)\](?:\.function)?(.*)$/.exec(param);
  if (tool) return (translation.toolParams[Number(tool[1])] ?? 'tools') + (tool[2] ?? '');
  for (const [pattern, name] of FIELDS)
    if (pattern.test(param)) return param.replace(pattern, name);
  return param;
}

/** `err` with its field (and the field in its message) named as the Responses request names it. */
export function inResponsesTerms(err: unknown, translation: Translation): unknown {
  if (!(err instanceof OpenAIError) || err.param === null) return err;
  const param = responsesParam(err.param, translation);
  if (param === err.param) return err;
  return new OpenAIError(err.code, err.message.replaceAll(`'${err.param}'`, `'${param}'`), {
    param,
    ...(err.retryAfter !== undefined && { retryAfter: err.retryAfter }),
    ...(err.shouldRetry !== undefined && { shouldRetry: err.shouldRetry }),
    headers: err.headers,
    status: err.status,
  });
}
