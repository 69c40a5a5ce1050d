/**
 * @module
 * The oracle of the Responses API (`POST /v1/openai/responses`), from docs/api.md's "The Responses
 * API" and "The echo engine" alone: what reaches the model (instructions first, system and
 * developer items merged, function calls and their outputs as the assistant's calls and the
 * tools' answers, reasoning left out, hosted tools not offered, a namespace's functions offered
 * as `<namespace>__<name>`), the echo engine's answer to it (echo.ts), and the check of a
 * response object or of its stream of numbered events.
 */
import { echoAnswer, wellFormed, type EchoMessage } from './echo';
import type { Answer } from './oracle';

/** The response a valid Responses request must get. */
export interface ResponseReply {
  model: string;
  /** The message's text; '' when the answer is calls. */
  text: string;
  /** The text's tokens, one `response.output_text.delta` each. */
  tokens: string[];
  calls: { call_id: string; name: string; namespace?: string; arguments: string }[];
  status: 'completed' | 'incomplete';
  input_tokens: number;
  /** Null where the contract does not fix it (calls). */
  output_tokens: number | null;
  stream: boolean;
  /** The settings echoed. */
  store: boolean;
  instructions: string | null;
  max_output_tokens: number | null;
}

type Item = Record<string, unknown>;
type Tool = { type: string; name?: string; tools?: Tool[] };

/** Content or a tool's output as text: a string, or its text parts joined by a line break. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return wellFormed(content);
  return wellFormed((content as { text?: string }[]).map((p) => p.text ?? '').join('\n'));
}

/** The conversation the model reads, from `instructions` and `input`. */
function messagesOf(body: Item): EchoMessage[] {
  const out: EchoMessage[] = [];
  if (typeof body.instructions === 'string') {
    out.push({ role: 'system', text: wellFormed(body.instructions) });
  }
  const input = body.input;
  if (typeof input === 'string') return [...out, { role: 'user', text: wellFormed(input) }];
  for (const item of input as Item[]) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      const role = item.role === 'developer' ? 'system' : (item.role as EchoMessage['role']);
      out.push({ role, text: textOf(item.content) });
    } else if (type === 'function_call') out.push({ role: 'assistant', text: '', calls: 1 });
    else if (type === 'function_call_output') out.push({ role: 'tool', text: textOf(item.output) });
    // `reasoning` items do not reach the model.
  }
  return out;
}

/** The functions offered, by the name the model sees, with the caller's name and namespace. */
function offeredOf(tools: Tool[]): Map<string, { name: string; namespace?: string }> {
  const offered = new Map<string, { name: string; namespace?: string }>();
  for (const tool of tools) {
    if (tool.type === 'function') offered.set(tool.name!, { name: tool.name! });
    if (tool.type === 'namespace') {
      for (const inner of tool.tools ?? []) {
        if (inner.type !== 'function') continue;
        offered.set(`${tool.name}__${inner.name}`, { name: inner.name!, namespace: tool.name! });
      }
    }
  }
  return offered;
}

/** The exact response of the echo engine to a valid Responses request `body`. */
export function responseExpectation(body: Item): ResponseReply {
  const offered = offeredOf((body.tools ?? []) as Tool[]);
  const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  const answer = echoAnswer({
    messages: messagesOf(body),
    tools: [...offered.keys()],
    noTools: body.tool_choice === 'none',
    stop: stop as string[],
    limit: (body.max_output_tokens as number | null | undefined) ?? null,
  });
  return {
    model: String(body.model),
    text: answer.content,
    tokens: answer.tokens,
    calls: answer.calls.map((call) => ({
      call_id: call.id,
      ...offered.get(call.name)!,
      arguments: call.arguments,
    })),
    status: answer.finish_reason === 'length' ? 'incomplete' : 'completed',
    input_tokens: answer.prompt_tokens,
    output_tokens: answer.completion_tokens,
    stream: body.stream === true,
    store: body.store !== false,
    instructions: typeof body.instructions === 'string' ? body.instructions : null,
    max_output_tokens: (body.max_output_tokens as number | null | undefined) ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// Checking an answer.

const show = (value: unknown) => JSON.stringify(value)?.slice(0, 300);

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Why `answer` is not the response `reply`, or null when it is. */
export function responseFault(reply: ResponseReply, answer: Answer): string | null {
  if (reply.stream) return streamFault(reply, answer);
  if (answer.contentType !== 'application/json') return `response as ${answer.contentType}`;
  return objectFault(reply, parse(answer.text) as Item | undefined);
}

/** The response object, as the last event carries it or as the JSON body is. */
function objectFault(reply: ResponseReply, body: Item | undefined): string | null {
  if (body?.object !== 'response' || !/^resp_\w+$/.test(String(body.id))) {
    return `not a response: ${show(body)}`;
  }
  const created = body.created_at as number;
  if (!Number.isInteger(created) || Math.abs(created - Date.now() / 1000) > 86_400) {
    return `created_at ${created} is not now in unix seconds`;
  }
  const settings = {
    status: body.status,
    error: body.error,
    incomplete_details: body.incomplete_details,
    model: body.model,
    store: body.store,
    instructions: body.instructions,
    max_output_tokens: body.max_output_tokens,
    previous_response_id: body.previous_response_id,
    background: body.background,
  };
  const want = {
    status: reply.status,
    error: null,
    incomplete_details: reply.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    model: reply.model,
    store: reply.store,
    instructions: reply.instructions,
    max_output_tokens: reply.max_output_tokens,
    previous_response_id: null,
    background: false,
  };
  if (show(settings) !== show(want)) return `response ${show(settings)}, expected ${show(want)}`;
  const fault = outputFault(reply, body.output as Item[] | undefined);
  if (fault) return fault;
  const usage = body.usage as Record<string, unknown> | undefined;
  const output = reply.output_tokens ?? (usage?.output_tokens as number);
  if (typeof output !== 'number') return `usage ${show(usage)}`;
  const wantUsage = {
    input_tokens: reply.input_tokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.input_tokens + output,
    estimated_cost: 0,
  };
  return show(usage) === show(wantUsage)
    ? null
    : `usage ${show(usage)}, expected ${show(wantUsage)}`;
}

/** `output`: the message with its text, or a `function_call` item per call. */
function outputFault(reply: ResponseReply, output: Item[] | undefined): string | null {
  if (!Array.isArray(output)) return `output ${show(output)}`;
  if (reply.calls.length > 0) {
    const calls = output.map(({ type, call_id, name, namespace, arguments: args, status }) => ({
      type,
      call_id,
      name,
      ...(namespace !== undefined && { namespace }),
      arguments: args,
      status,
    }));
    const want = reply.calls.map((call) => ({
      type: 'function_call',
      call_id: call.call_id,
      name: call.name,
      ...(call.namespace !== undefined && { namespace: call.namespace }),
      arguments: call.arguments,
      status: 'completed',
    }));
    if (show(calls) !== show(want)) return `calls ${show(calls)}, expected ${show(want)}`;
    if (!output.every((item) => /^fc_\w+$/.test(String(item.id))))
      return `call ids ${show(output)}`;
    return null;
  }
  const message = output[0];
  const want = {
    type: 'message',
    role: 'assistant',
    status: reply.status,
    content: [{ type: 'output_text', text: reply.text, annotations: [] }],
  };
  const got = message && {
    type: message.type,
    role: message.role,
    status: message.status,
    content: message.content,
  };
  if (output.length !== 1 || show(got) !== show(want)) {
    return `output ${show(output)}, expected ${show([want])}`;
  }
  return /^msg_\w+$/.test(String(message!.id)) ? null : `message id ${show(message!.id)}`;
}

/** The event types of the whole stream, in order. */
function eventTypes(reply: ResponseReply): string[] {
  const items =
    reply.calls.length > 0
      ? reply.calls.flatMap(() => [
          'response.output_item.added',
          'response.function_call_arguments.delta',
          'response.function_call_arguments.done',
          'response.output_item.done',
        ])
      : [
          'response.output_item.added',
          'response.content_part.added',
          ...reply.tokens.map(() => 'response.output_text.delta'),
          'response.output_text.done',
          'response.content_part.done',
          'response.output_item.done',
        ];
  const last = reply.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
  return ['response.created', 'response.in_progress', ...items, last];
}

/** `event: <type>` and `data: <json>`, numbered from 0, in docs/api.md's order; no `[DONE]`. */
function streamFault(reply: ResponseReply, answer: Answer): string | null {
  if (!answer.contentType?.startsWith('text/event-stream')) {
    return `stream as ${answer.contentType}: ${answer.text.slice(0, 200)}`;
  }
  if (/[\u2028\u2029\u0085]/.test(answer.text)) return 'U+2028, U+2029 or U+0085 raw in the stream';
  if (!answer.text.endsWith('\n\n')) return `stream cut: ${answer.text.slice(-200)}`;
  const events: { type: string; data: Item }[] = [];
  for (const block of answer.text.split('\n\n')) {
    const lines = block.split('\n').filter((line) => line !== '' && !line.startsWith(':'));
    if (lines.length === 0) continue;
    const [head, data, ...rest] = lines;
    if (!head?.startsWith('event: ') || !data?.startsWith('data: ') || rest.length > 0) {
      return `event of another shape: ${show(block)}`;
    }
    const json = parse(data.slice('data: '.length)) as Item | undefined;
    if (json?.type !== head.slice('event: '.length)) return `event ${show(block)}`;
    events.push({ type: head.slice('event: '.length), data: json });
  }
  const types = events.map((e) => e.type);
  const want = eventTypes(reply);
  if (show(types) !== show(want)) {
    return `events ${types.join(' ')}, expected ${want.join(' ')}`.slice(0, 600);
  }
  const numbers = events.map((e) => e.data.sequence_number);
  if (numbers.some((n, i) => n !== i)) return `sequence numbers ${show(numbers)}`;
  const deltas = events
    .filter((e) => e.type === 'response.output_text.delta')
    .map((e) => e.data.delta);
  if (show(deltas) !== show(reply.tokens)) {
    return `deltas ${show(deltas)}, expected one token each ${show(reply.tokens)}`;
  }
  const done = events.find((e) => e.type === 'response.output_text.done');
  if (done && done.data.text !== reply.text) {
    return `output_text.done ${show(done.data.text)}, expected ${show(reply.text)}`;
  }
  const args = events
    .filter((e) => e.type === 'response.function_call_arguments.done')
    .map((e) => e.data.arguments);
  if (show(args) !== show(reply.calls.map((c) => c.arguments))) return `arguments ${show(args)}`;
  return objectFault(reply, events.at(-1)?.data.response as Item | undefined);
}
