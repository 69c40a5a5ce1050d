/**
 * @module
 * Turns a parsed JSON body into a `ChatRequest` every engine can take, or throws the 400 that
 * names the first field at fault. Normalisation happens here, once, for every engine: system and
 * developer messages merge into one system message placed first, text parts join into a string,
 * lone surrogates become U+FFFD.
 */
import * as v from 'valibot';
import { OpenAIError } from './errors';
import { chatCompletionRequestSchema, UNSUPPORTED, type ParsedChatRequest } from './schema';
import type { ChatMessage, ChatRequest } from './types';

/** Text parts of one message are joined with this (a line break keeps words apart). */
export const PART_SEPARATOR = '\n';
/** System and developer messages are joined with this (DESIGN §3). */
export const SYSTEM_SEPARATOR = ' ';

/** Validates and normalises a chat-completions body; throws a 400 `OpenAIError`. */
export function parseChatRequest(body: unknown): ChatRequest {
  const result = v.safeParse(chatCompletionRequestSchema, body, { abortEarly: true });
  if (!result.success) throw issueToError(result.issues[0]);
  return normalize(result.output);
}

/** `messages[2].content[0].type` from a valibot issue path. */
export function paramOf(issue: v.BaseIssue<unknown>): string | null {
  if (!issue.path) return null;
  let param = '';
  for (const item of issue.path) {
    const key = item.key;
    param += typeof key === 'number' ? `[${key}]` : param === '' ? String(key) : `.${String(key)}`;
  }
  return param;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') {
    return value.length > 40 ? `a string` : JSON.stringify(value);
  }
  if (typeof value === 'object') return 'an object';
  return typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : `a ${typeof value}`;
}

/** Maps the first schema issue to the error table's code and a sentence naming the field. */
function issueToError(issue: v.BaseIssue<unknown>): OpenAIError {
  const param = paramOf(issue);
  const field = param ?? 'body';
  if (issue.message === UNSUPPORTED) {
    const what = typeof issue.input === 'string' ? ` ${JSON.stringify(issue.input)}` : '';
    return new OpenAIError(
      'unsupported_parameter',
      `Unsupported parameter: '${field}'${what} is not supported by Hearth.`,
      { param },
    );
  }
  if (issue.kind === 'schema') {
    if (issue.input === undefined) {
      return new OpenAIError('missing_field', `Missing required parameter: '${field}'.`, { param });
    }
    // A string where a fixed set of strings is expected is a wrong value, not a wrong type.
    const enumerated = issue.type === 'literal' || issue.type === 'picklist';
    const discriminator = issue.type === 'variant' && issue.expected !== 'Object';
    if ((enumerated || discriminator) && typeof issue.input === 'string') {
      return new OpenAIError(
        'invalid_value',
        `Invalid value for '${field}': expected ${issue.expected ?? 'another value'}, got ${describe(issue.input)}.`,
        { param },
      );
    }
    return new OpenAIError(
      'invalid_type',
      `Invalid type for '${field}': expected ${issue.expected ?? 'another type'}, got ${describe(issue.input)}.`,
      { param },
    );
  }
  if (issue.type === 'check') {
    return new OpenAIError('invalid_value', `Invalid value for '${field}': ${issue.message}`, {
      param,
    });
  }
  return new OpenAIError(
    'invalid_value',
    `Invalid value for '${field}': expected ${issue.expected ?? 'another value'}, got ${describe(issue.input)}.`,
    { param },
  );
}

/** Message content as the schema lets it through: a string, or parts of which only text counts. */
type ParsedContent = string | readonly { type: string; text?: unknown }[] | null | undefined;

function contentText(content: ParsedContent): string {
  if (content == null) return '';
  if (typeof content === 'string') return content.toWellFormed();
  return content
    .map((part) => ('text' in part && typeof part.text === 'string' ? part.text : ''))
    .join(PART_SEPARATOR)
    .toWellFormed();
}

function normalize(parsed: ParsedChatRequest): ChatRequest {
  const system: string[] = [];
  const conversation: ChatMessage[] = [];
  for (const m of parsed.messages) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(contentText(m.content));
      continue;
    }
    if (m.role === 'function') continue; // rejected by the schema; narrows the type
    const out: ChatMessage = { role: m.role, content: contentText(m.content) };
    if (m.role !== 'tool' && typeof m.name === 'string') out.name = m.name;
    if (m.role === 'assistant' && m.tool_calls != null) {
      out.tool_calls = m.tool_calls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.function.name, arguments: c.function.arguments },
      }));
    }
    if (m.role === 'tool') out.tool_call_id = m.tool_call_id;
    conversation.push(out);
  }
  const messages: ChatMessage[] =
    system.length > 0
      ? [{ role: 'system', content: system.join(SYSTEM_SEPARATOR) }, ...conversation]
      : conversation;

  const stream = parsed.stream === true;
  const request: ChatRequest = {
    model: parsed.model,
    messages,
    stream,
    include_usage: stream && parsed.stream_options?.include_usage === true,
    n: parsed.n ?? 1,
  };
  const maxTokens = parsed.max_completion_tokens ?? parsed.max_tokens;
  if (maxTokens != null) request.max_tokens = maxTokens;
  if (parsed.stop != null) {
    const stop = typeof parsed.stop === 'string' ? [parsed.stop] : parsed.stop;
    request.stop = stop.map((s) => s.toWellFormed());
  }
  if (parsed.temperature != null) request.temperature = parsed.temperature;
  if (parsed.top_p != null) request.top_p = parsed.top_p;
  if (parsed.seed != null) request.seed = parsed.seed;
  if (parsed.frequency_penalty != null) request.frequency_penalty = parsed.frequency_penalty;
  if (parsed.presence_penalty != null) request.presence_penalty = parsed.presence_penalty;
  if (parsed.logit_bias != null) request.logit_bias = { ...parsed.logit_bias };
  if (parsed.logprobs != null) request.logprobs = parsed.logprobs;
  if (parsed.top_logprobs != null) request.top_logprobs = parsed.top_logprobs;
  if (parsed.response_format != null) {
    const f = parsed.response_format;
    request.response_format =
      f.type === 'json_schema'
        ? {
            type: 'json_schema',
            json_schema: {
              name: f.json_schema.name,
              ...(f.json_schema.description != null && {
                description: f.json_schema.description,
              }),
              ...(f.json_schema.schema != null && { schema: f.json_schema.schema }),
              ...(f.json_schema.strict != null && { strict: f.json_schema.strict }),
            },
          }
        : { type: f.type };
  }
  if (parsed.tools != null) {
    request.tools = parsed.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.function.name,
        ...(t.function.description != null && { description: t.function.description }),
        ...(t.function.parameters != null && { parameters: t.function.parameters }),
      },
    }));
  }
  if (parsed.tool_choice != null) {
    const c = parsed.tool_choice;
    // The schema lets only the named-function object form through.
    if (typeof c === 'string') request.tool_choice = c;
    else if (c.type === 'function') {
      request.tool_choice = { type: 'function', function: { name: c.function.name } };
    }
  }
  if (parsed.echo_delay_ms != null) request.echo_delay_ms = parsed.echo_delay_ms;
  return request;
}
