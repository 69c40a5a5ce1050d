/**
 * @module
 * Normalisation, once, for every engine (docs/api.md, Request fields: Messages): system and developer messages merge into
 * one system message placed first, text parts join into a string (a user message with images
 * keeps its parts too, in order, each image named by its place in the request as sent),
 * speakers' `name`s are dropped, lone surrogates become U+FFFD, and null fields disappear.
 */
import { OpenAIError } from './errors';
import type { ParsedChatRequest } from './schema';
import type { ChatMessage, ChatRequest, FunctionTool, MessagePart, ResponseFormat } from './types';

/** Text parts of one message are joined with this (a line break keeps words apart). */
export const PART_SEPARATOR = '\n';
/** System and developer messages are joined with this (docs/api.md, Request fields: Messages). */
export const SYSTEM_SEPARATOR = ' ';
/** Deepest nesting of a JSON value passed through to an engine (tool parameters, schemas). */
export const MAX_JSON_DEPTH = 64;

/** Message content as the schema lets it through: a string, or parts of which only text counts. */
type ParsedContent =
  string | readonly { type: string; text?: unknown; image_url?: unknown }[] | null | undefined;

const wellFormed = (text: string) => text.toWellFormed();

function contentText(content: ParsedContent): string {
  if (content == null) return '';
  if (typeof content === 'string') return wellFormed(content);
  const texts = content.flatMap((part) => (typeof part.text === 'string' ? [part.text] : []));
  return wellFormed(texts.join(PART_SEPARATOR));
}

/** A user message's parts when it has an image among them (`param`: where its content is). */
function imageParts(content: ParsedContent, param: string): MessagePart[] | undefined {
  if (content == null || typeof content === 'string') return undefined;
  if (!content.some((part) => part.type === 'image_url')) return undefined;
  return content.map((part, j): MessagePart => {
    if (part.type !== 'image_url') {
      return { type: 'text', text: wellFormed(typeof part.text === 'string' ? part.text : '') };
    }
    // The schema let only `{url, detail?}` objects through.
    const image = part.image_url as { url: string; detail?: 'auto' | 'low' | 'high' | null };
    return {
      type: 'image',
      param: `${param}[${j}]`,
      ...(image.detail != null && { detail: image.detail }),
      source: { url: image.url },
    };
  });
}

/** A JSON value with every string well-formed; too deep a value is a 400 naming `param`. */
function cleanJson(value: unknown, param: string, depth = 0): unknown {
  if (typeof value === 'string') return wellFormed(value);
  if (typeof value !== 'object' || value === null) return value;
  if (depth >= MAX_JSON_DEPTH) {
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for '${param}': it is nested more than ${MAX_JSON_DEPTH} levels deep.`,
      { param },
    );
  }
  if (Array.isArray(value)) return value.map((item) => cleanJson(item, param, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [wellFormed(k), cleanJson(v, param, depth + 1)]),
  );
}

function normalizeMessages(parsed: ParsedChatRequest['messages']): ChatMessage[] {
  const system: string[] = [];
  const conversation: ChatMessage[] = [];
  for (const [index, m] of parsed.entries()) {
    if (m.role === 'system' || m.role === 'developer') {
      system.push(contentText(m.content));
      continue;
    }
    if (m.role === 'function') continue; // rejected by the schema; narrows the type
    const out: ChatMessage = { role: m.role, content: contentText(m.content) };
    if (m.role === 'user') {
      const parts = imageParts(m.content, `messages[${index}].content`);
      if (parts) out.parts = parts;
    }
    // `name` is dropped: WebLLM writes it in place of the role string, which carries the
    // template's special tokens (a ChatML turn would lose `<|im_start|>`), and no engine here
    // has a place for it that every template keeps.
    if (m.role === 'assistant' && m.tool_calls != null) {
      out.tool_calls = m.tool_calls.map((c) => ({
        id: wellFormed(c.id),
        type: 'function',
        function: {
          name: wellFormed(c.function.name),
          arguments: wellFormed(c.function.arguments),
        },
      }));
    }
    if (m.role === 'tool') out.tool_call_id = wellFormed(m.tool_call_id);
    conversation.push(out);
  }
  if (system.length === 0) return conversation;
  return [{ role: 'system', content: system.join(SYSTEM_SEPARATOR) }, ...conversation];
}

function normalizeResponseFormat(
  f: NonNullable<ParsedChatRequest['response_format']>,
): ResponseFormat {
  if (f.type !== 'json_schema') return { type: f.type };
  const s = f.json_schema;
  return {
    type: 'json_schema',
    json_schema: {
      name: wellFormed(s.name),
      ...(s.description != null && { description: wellFormed(s.description) }),
      ...(s.schema != null && {
        schema: cleanJson(s.schema, 'response_format.json_schema.schema') as Record<
          string,
          unknown
        >,
      }),
      ...(s.strict != null && { strict: s.strict }),
    },
  };
}

function normalizeTools(tools: NonNullable<ParsedChatRequest['tools']>): FunctionTool[] {
  return tools.flatMap((t, i) => {
    if (t.type !== 'function') return []; // other tool types are rejected by the schema
    const f = t.function;
    const tool: FunctionTool = { type: 'function', function: { name: f.name } };
    if (f.description != null) tool.function.description = wellFormed(f.description);
    if (f.parameters != null) {
      const param = `tools[${i}].function.parameters`;
      tool.function.parameters = cleanJson(f.parameters, param) as Record<string, unknown>;
    }
    return [tool];
  });
}

/** The request every engine sees, from a body the schema accepted. */
export function normalize(parsed: ParsedChatRequest): ChatRequest {
  const stream = parsed.stream === true;
  const request: ChatRequest = {
    model: parsed.model,
    messages: normalizeMessages(parsed.messages),
    stream,
    include_usage: stream && parsed.stream_options?.include_usage === true,
    n: parsed.n ?? 1,
  };
  const maxTokens = parsed.max_completion_tokens ?? parsed.max_tokens;
  if (maxTokens != null) request.max_tokens = maxTokens;
  if (parsed.stop != null) {
    const stop = typeof parsed.stop === 'string' ? [parsed.stop] : parsed.stop;
    request.stop = stop.map(wellFormed);
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
    request.response_format = normalizeResponseFormat(parsed.response_format);
  }
  if (parsed.tools != null) request.tools = normalizeTools(parsed.tools);
  const choice = parsed.tool_choice;
  if (typeof choice === 'string') request.tool_choice = choice;
  else if (choice?.type === 'function') {
    // The schema lets only the named-function object form through.
    request.tool_choice = { type: 'function', function: { name: choice.function.name } };
  }
  if (parsed.repetition_penalty != null) request.repetition_penalty = parsed.repetition_penalty;
  if (parsed.ignore_eos != null) request.ignore_eos = parsed.ignore_eos;
  if (parsed.enable_thinking != null) request.enable_thinking = parsed.enable_thinking;
  if (parsed.echo_delay_ms != null) request.echo_delay_ms = parsed.echo_delay_ms;
  return request;
}
