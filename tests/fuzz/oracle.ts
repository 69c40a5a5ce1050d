/**
 * @module
 * The fuzz suite's oracle: what docs/api.md's contract says a request must get, written
 * here from the contract alone (nothing of src/ is imported, so that a fault in the code cannot
 * hide in the oracle too), and the check of an answer against it.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { echoAnswer, wellFormed, type EchoCall, type EchoMessage } from './echo';
import type { FuzzCase } from './generate';
import { responseFault } from './responses-oracle';

export { echoTokens, wellFormed } from './echo';

/** The reply a valid chat request must get. */
export interface Reply {
  model: string;
  content: string;
  finish_reason: 'stop' | 'length' | 'tool_calls';
  /** Null where the contract does not fix it (a real model's template and tokenizer). */
  prompt_tokens: number | null;
  completion_tokens: number | null;
  stream: boolean;
  include_usage: boolean;
  /**
   * The streamed chunks' contents where the contract fixes them, one token a chunk (the echo
   * engine); null where only their concatenation is fixed (a real model).
   */
  chunks: string[] | null;
  /** The calls a `/call` message makes (docs/api.md, The echo engine: Tools); none otherwise. */
  tool_calls: EchoCall[];
}

// ---------------------------------------------------------------------------------------------
// The echo engine, from docs/api.md "The echo engine" (echo.ts), for a chat request.

/** A message's content as a string: text parts joined with a line break (docs/api.md, Messages). */
function textOf(content: unknown): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return wellFormed(content);
  return wellFormed((content as { text: string }[]).map((part) => part.text).join('\n'));
}

/** The exact reply of the echo engine to a valid chat request `body`. */
export function echoExpectation(body: Record<string, unknown>, model: string): Reply {
  const messages = body.messages as { role: string; content?: unknown; tool_calls?: unknown[] }[];
  const tools = (body.tools ?? []) as { function: { name: string } }[];
  const stop = body.stop == null ? [] : typeof body.stop === 'string' ? [body.stop] : body.stop;
  const limit = (body.max_completion_tokens ?? body.max_tokens) as number | null | undefined;
  const answer = echoAnswer({
    messages: messages.map((m) => ({
      role: (m.role === 'developer' ? 'system' : m.role) as EchoMessage['role'],
      text: textOf(m.content),
      calls: m.tool_calls?.length ?? 0,
    })),
    tools: tools.map((t) => t.function.name),
    noTools: body.tool_choice === 'none',
    stop: stop as string[],
    limit: limit ?? null,
  });
  const stream = body.stream === true;
  return {
    model,
    content: answer.content,
    finish_reason: answer.finish_reason,
    prompt_tokens: answer.prompt_tokens,
    completion_tokens: answer.completion_tokens,
    stream,
    include_usage:
      stream && (body.stream_options as { include_usage?: unknown } | null)?.include_usage === true,
    chunks: answer.tokens,
    tool_calls: answer.calls,
  };
}

// ---------------------------------------------------------------------------------------------
// The error table of docs/api.md (Errors).

const ERROR_TABLE: Record<string, [number, string]> = {
  invalid_json: [400, 'invalid_request_error'],
  missing_field: [400, 'invalid_request_error'],
  invalid_type: [400, 'invalid_request_error'],
  invalid_value: [400, 'invalid_request_error'],
  unsupported_parameter: [400, 'invalid_request_error'],
  context_length_exceeded: [400, 'invalid_request_error'],
  invalid_api_key: [401, 'authentication_error'],
  model_not_found: [404, 'not_found_error'],
  model_not_downloaded: [404, 'not_found_error'],
  // OpenAI's type for it (docs/api.md, Errors).
  response_not_found: [404, 'invalid_request_error'],
  file_not_found: [404, 'invalid_request_error'],
  vector_store_not_found: [404, 'invalid_request_error'],
  embedding_model_required: [409, 'invalid_request_error'],
  unknown_url: [404, 'not_found_error'],
  method_not_allowed: [405, 'invalid_request_error'],
  request_too_large: [413, 'invalid_request_error'],
  unsupported_media_type: [415, 'invalid_request_error'],
  queue_full: [429, 'rate_limit_error'],
  webgpu_unavailable: [503, 'unavailable_error'],
  upstream_error: [502, 'server_error'],
  upstream_unavailable: [503, 'server_error'],
  upstream_timeout: [504, 'server_error'],
};

// ---------------------------------------------------------------------------------------------
// Checking an answer.

/** What came back for one request, as plain data. */
export interface Answer {
  status: number;
  contentType: string | null;
  requestId: string | null;
  text: string;
  /** Milliseconds to the whole answer. */
  ms: number;
  /** `retry-after` and `x-should-retry`, where there are. */
  retryAfter?: string | null;
  shouldRetry?: string | null;
  /** The fetch failed, or gave no whole answer in time (`timedOut`). */
  failure?: string;
  timedOut?: boolean;
}

const show = (value: unknown) => JSON.stringify(value)?.slice(0, 300);

/** `created`: unix seconds, of about now (a day either way). */
const createdNow = (created: unknown) =>
  Number.isInteger(created) && Math.abs((created as number) - Date.now() / 1000) < 86_400;

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Why `answer` is not what `c` must get, or null when it is. */
export function faultOf(c: FuzzCase, answer: Answer): string | null {
  if (answer.failure !== undefined) return answer.failure;
  if (!answer.requestId) return 'no x-request-id header';
  const expect = c.expect;
  if ('head' in expect) return headFault(expect.status, answer);
  if ('oneOf' in expect) return oneOfFault(expect.oneOf, answer);
  if (answer.status !== expect.status) {
    return `status ${answer.status}, expected ${expect.status}: ${answer.text.slice(0, 300)}`;
  }
  if ('error' in expect) {
    if (!answer.contentType?.startsWith('application/json'))
      return `error as ${answer.contentType}`;
    const body = parse(answer.text) as { error?: Record<string, unknown> } | undefined;
    const error = body?.error;
    if (!error || Object.keys(error).sort().join() !== 'code,message,param,type') {
      return `error body of another shape: ${answer.text.slice(0, 300)}`;
    }
    if (error.code !== expect.error.code || error.param !== expect.error.param) {
      return `error ${show({ code: error.code, param: error.param })}, expected ${show(expect.error)}: ${String(error.message)}`;
    }
    const [status, type] = ERROR_TABLE[error.code as string] ?? [];
    if (status !== answer.status || type !== error.type) {
      return `error ${String(error.code)} with status ${answer.status} and type ${String(error.type)}, the table says ${status} ${type}`;
    }
    if (typeof error.message !== 'string' || error.message === '') return 'error without a message';
    // docs/api.md, Errors: `retry-after` when waiting helps, `x-should-retry: false` when it cannot.
    if (error.code === 'queue_full' && !/^\d+$/.test(answer.retryAfter ?? '')) {
      return `queue_full without retry-after (${answer.retryAfter})`;
    }
    if (error.code === 'webgpu_unavailable' && answer.shouldRetry !== 'false') {
      return `webgpu_unavailable with x-should-retry ${answer.shouldRetry}, not false`;
    }
    return null;
  }
  if ('listing' in expect) {
    const body = parse(answer.text) as { object?: string; data?: Record<string, unknown>[] };
    const echo =
      expect.listing === 'list'
        ? body?.object === 'list'
          ? body.data?.find((m) => m.id === 'hearth/echo')
          : undefined
        : (body as Record<string, unknown>);
    // The echo engine is always listed: an organisation's model with its context window.
    const want = {
      id: 'hearth/echo',
      object: 'model',
      owned_by: 'hearth',
      context_window: 1_048_576,
    };
    const got = echo && {
      id: echo.id,
      object: echo.object,
      owned_by: echo.owned_by,
      context_window: echo.context_window,
    };
    if (show(got) !== show(want) || typeof echo?.created !== 'number') {
      return `not ${expect.listing === 'list' ? 'a list with ' : ''}hearth/echo: ${answer.text.slice(0, 300)}`;
    }
    return null;
  }
  if ('response' in expect) return responseFault(expect.response, answer);
  return expect.reply.stream
    ? streamFault(expect.reply, answer)
    : completionFault(expect.reply, answer);
}

/** A HEAD request: GET's status (or 401, 404, 405 as for GET), and no body (RFC 9110 §9.3.2). */
function headFault(status: number, answer: Answer): string | null {
  if (answer.status !== status) return `HEAD got ${answer.status}, expected ${status}`;
  if (answer.text !== '') return `HEAD got a body: ${answer.text.slice(0, 200)}`;
  return null;
}

/**
 * A management route's answer: one of the statuses it may give; an error of the contract's
 * shape (its table's status where the code is in it), or a success that is a JSON object.
 */
function oneOfFault(statuses: number[], answer: Answer): string | null {
  if (!statuses.includes(answer.status)) {
    return `status ${answer.status}, expected one of ${statuses.join(', ')}: ${answer.text.slice(0, 300)}`;
  }
  if (!answer.contentType?.startsWith('application/json')) return `answer as ${answer.contentType}`;
  const body = parse(answer.text) as Record<string, unknown> | undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return `not a JSON object: ${answer.text.slice(0, 300)}`;
  }
  if (answer.status < 400) return null;
  const error = body.error as Record<string, unknown> | undefined;
  if (!error || Object.keys(error).sort().join() !== 'code,message,param,type') {
    return `error body of another shape: ${answer.text.slice(0, 300)}`;
  }
  if (typeof error.message !== 'string' || error.message === '') return 'error without a message';
  const [status, type] = ERROR_TABLE[error.code as string] ?? [answer.status, error.type];
  if (status !== answer.status || type !== error.type || typeof type !== 'string') {
    return `error ${String(error.code)} with status ${answer.status} and type ${String(error.type)}, the table says ${status} ${String(type)}`;
  }
  return null;
}

function usageFault(reply: Reply, usage: unknown): string | null {
  const got = usage as Record<string, number> | undefined;
  const prompt = reply.prompt_tokens ?? got?.prompt_tokens;
  const completion = reply.completion_tokens ?? got?.completion_tokens;
  if (typeof prompt !== 'number' || typeof completion !== 'number') return `usage ${show(usage)}`;
  const want = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    estimated_cost: 0,
  };
  return show(usage) === show(want) ? null : `usage ${show(usage)}, expected ${show(want)}`;
}

function completionFault(reply: Reply, answer: Answer): string | null {
  if (answer.contentType !== 'application/json') return `completion as ${answer.contentType}`;
  const body = parse(answer.text) as {
    id?: string;
    object?: string;
    created?: number;
    model?: string;
    choices?: { index: number; message: Record<string, unknown>; finish_reason: string }[];
    usage?: unknown;
  };
  if (body?.object !== 'chat.completion' || !body.id?.startsWith('chatcmpl-')) {
    return `not a completion: ${answer.text.slice(0, 300)}`;
  }
  if (!createdNow(body.created)) return `created ${body.created} is not now in unix seconds`;
  if (body.model !== reply.model) return `model ${body.model}, expected ${reply.model}`;
  const choice = body.choices?.[0];
  if (body.choices?.length !== 1 || choice?.index !== 0) return `choices ${show(body.choices)}`;
  if (choice.message.role !== 'assistant') return `role ${show(choice.message.role)}`;
  // A call answers with the calls and no content (null, as OpenAI's).
  const calls = reply.tool_calls.length > 0 ? chatCalls(reply.tool_calls) : undefined;
  if (show(choice.message.tool_calls) !== show(calls)) {
    return `tool_calls ${show(choice.message.tool_calls)}, expected ${show(calls)}`;
  }
  if (calls && choice.message.content !== null) {
    return `content ${show(choice.message.content)} beside tool calls, expected null`;
  }
  if (!calls && choice.message.content !== reply.content) {
    return `content ${show(choice.message.content)}, expected ${show(reply.content)}`;
  }
  if (choice.finish_reason !== reply.finish_reason) {
    return `finish_reason ${choice.finish_reason}, expected ${reply.finish_reason}`;
  }
  return usageFault(reply, body.usage);
}

/** Calls as a chat message carries them. */
function chatCalls(calls: EchoCall[]) {
  return calls.map(({ id, name, arguments: args }) => ({
    id,
    type: 'function',
    function: { name, arguments: args },
  }));
}

interface Chunk {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  choices?: { index: number; delta: Record<string, unknown>; finish_reason: string | null }[];
  usage?: unknown;
  error?: unknown;
}

function streamFault(reply: Reply, answer: Answer): string | null {
  if (!answer.contentType?.startsWith('text/event-stream')) {
    return `stream as ${answer.contentType}: ${answer.text.slice(0, 200)}`;
  }
  // JSON in SSE escapes these: line-splitting parsers break on them raw.
  if (/[\u2028\u2029\u0085]/.test(answer.text)) return 'U+2028, U+2029 or U+0085 raw in the stream';
  const data: string[] = [];
  for (const event of answer.text.split('\n\n')) {
    if (event === '') continue;
    for (const line of event.split('\n')) {
      if (line.startsWith(':')) continue; // a comment: keep-alives, the speed
      if (!line.startsWith('data: ')) return `stray line ${show(line)}`;
      data.push(line.slice('data: '.length));
    }
  }
  if (!answer.text.endsWith('\n\n') || data.at(-1) !== '[DONE]') {
    return `stream without [DONE] at its end: ${answer.text.slice(-200)}`;
  }
  const chunks = data.slice(0, -1).map((d) => parse(d) as Chunk);
  const first = chunks[0];
  if (!first?.id?.startsWith('chatcmpl-')) return `first event ${data[0]?.slice(0, 200)}`;
  if (!createdNow(first.created)) return `created ${first.created} is not now in unix seconds`;
  for (const chunk of chunks) {
    if (chunk?.error) return `error event ${show(chunk)}`;
    if (
      chunk.id !== first.id ||
      chunk.created !== first.created ||
      chunk.object !== 'chat.completion.chunk' ||
      chunk.model !== reply.model
    ) {
      return `chunk of another id, created, object or model: ${show(chunk)}`;
    }
  }
  const usage = reply.include_usage ? chunks.pop() : undefined;
  if (reply.include_usage) {
    if (usage?.choices?.length !== 0) return `no usage chunk last: ${show(usage)}`;
    const fault = usageFault(reply, usage.usage);
    if (fault) return fault;
  }
  const final = chunks.pop();
  const end = final?.choices?.[0];
  if (final?.choices?.length !== 1 || show(end?.delta) !== '{}') {
    return `final chunk ${show(final)}`;
  }
  if (end?.finish_reason !== reply.finish_reason) {
    return `finish_reason ${end?.finish_reason}, expected ${reply.finish_reason}`;
  }
  if (reply.tool_calls.length > 0) {
    // The calls go out whole, in one chunk that opens with the role.
    const calls = chatCalls(reply.tool_calls).map((call, index) => ({ index, ...call }));
    const want = { role: 'assistant', tool_calls: calls };
    const only = chunks[0]?.choices?.[0];
    if (chunks.length !== 1 || chunks[0]?.choices?.length !== 1 || only?.finish_reason !== null) {
      return `tool call chunks ${show(chunks)}`;
    }
    return show(only.delta) === show(want)
      ? null
      : `tool call delta ${show(only.delta)}, expected ${show(want)}`;
  }
  const contents: string[] = [];
  for (const [i, chunk] of chunks.entries()) {
    const choice = chunk.choices?.[0];
    if (chunk.choices?.length !== 1 || choice?.index !== 0 || choice.finish_reason !== null) {
      return `content chunk ${show(chunk)}`;
    }
    const keys = Object.keys(choice.delta).sort().join();
    if (keys !== (i === 0 ? 'content,role' : 'content')) return `delta ${show(choice.delta)}`;
    if (i === 0 && choice.delta.role !== 'assistant') return `role ${show(choice.delta.role)}`;
    contents.push(choice.delta.content as string);
  }
  if (contents.join('') !== reply.content) {
    return `streamed ${show(contents.join(''))}, expected ${show(reply.content)}`;
  }
  const want = reply.chunks && (reply.chunks.length === 0 ? [''] : reply.chunks);
  if (want && show(contents) !== show(want)) {
    return `chunks ${show(contents)}, expected one token a chunk ${show(want)}`;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Counting.

/** A failed case, with what reproduces it. */
export interface Failure {
  index: number;
  kind: string;
  fault: string;
  request: string;
}

/** Counts of a run: requests, distinct ones, statuses, codes, hangs, 5xx, failures. */
export class Tally {
  requests = 0;
  readonly #distinct = new Set<string>();
  readonly statuses = new Map<string, number>();
  readonly codes = new Map<string, number>();
  readonly kinds = new Set<string>();
  hangs = 0;
  /** Answers whose `x-request-id` an earlier answer had. */
  repeatedRequestIds = 0;
  readonly #requestIds = new Set<string>();
  serverErrors = 0;
  unexpectedServerErrors = 0;
  valid = 0;
  streamed = 0;
  readonly failures: Failure[] = [];
  slowestMs = 0;

  add(c: FuzzCase, answer: Answer, fault: string | null): void {
    this.requests += 1;
    this.#distinct.add(
      createHash('sha1')
        .update(JSON.stringify([c.method, c.path, c.headers, c.body]))
        .digest('hex'),
    );
    this.kinds.add(c.kind);
    this.slowestMs = Math.max(this.slowestMs, answer.ms);
    if (answer.timedOut) this.hangs += 1;
    if (answer.requestId) {
      if (this.#requestIds.has(answer.requestId)) this.repeatedRequestIds += 1;
      this.#requestIds.add(answer.requestId);
    }
    const status = answer.failure !== undefined ? 'no answer' : String(answer.status);
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    if (answer.status >= 500) {
      this.serverErrors += 1;
      const allowed = 'oneOf' in c.expect ? c.expect.oneOf : [c.expect.status];
      if (!allowed.includes(answer.status)) this.unexpectedServerErrors += 1;
    }
    const code =
      answer.status === 200
        ? '(200)'
        : String(
            (parse(answer.text) as { error?: { code?: string } } | undefined)?.error?.code ??
              '(not an error body)',
          );
    this.codes.set(code, (this.codes.get(code) ?? 0) + 1);
    if ('reply' in c.expect || 'response' in c.expect) {
      this.valid += 1;
      const stream = 'reply' in c.expect ? c.expect.reply.stream : c.expect.response.stream;
      if (stream) this.streamed += 1;
    }
    if (fault !== null) {
      this.failures.push({
        index: c.index,
        kind: c.kind,
        fault,
        request: JSON.stringify({
          method: c.method,
          path: c.path,
          headers: c.headers,
          body: c.body,
        }).slice(0, 600),
      });
    }
  }

  get distinct(): number {
    return this.#distinct.size;
  }

  /** The counts as a table of text. */
  table(title: string, seed: number, seconds: number): string {
    const sorted = (m: Map<string, number>) =>
      [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => `  ${k.padEnd(28)} ${v}`);
    return [
      `${title}`,
      `  seed                         ${seed}   (FUZZ_SEED=${seed} reproduces it)`,
      `  requests                     ${this.requests}`,
      `  distinct requests            ${this.distinct}`,
      `  mutation kinds               ${this.kinds.size}`,
      `  valid (reply checked)        ${this.valid} (${this.streamed} streamed)`,
      `  hangs (no answer in time)    ${this.hangs}`,
      `  repeated x-request-id        ${this.repeatedRequestIds}`,
      `  5xx                          ${this.serverErrors} (unexpected: ${this.unexpectedServerErrors})`,
      `  failures                     ${this.failures.length}`,
      `  seconds                      ${seconds.toFixed(1)} (slowest request ${Math.round(this.slowestMs)} ms)`,
      'by status:',
      ...sorted(this.statuses),
      'by code:',
      ...sorted(this.codes),
    ].join('\n');
  }
}

/** The report file: each run replaces its own section (`FUZZ_REPORT`, default /tmp/fuzz-report.txt). */
export function writeReport(section: string, text: string): void {
  const file = process.env.FUZZ_REPORT ?? '/tmp/fuzz-report.txt';
  let old = '';
  try {
    old = readFileSync(file, 'utf8');
  } catch {
    // First run.
  }
  const begin = `==== ${section} ====`;
  const end = `==== end of ${section} ====`;
  const kept = old.replace(new RegExp(`${begin}[\\s\\S]*?${end}\\n?`), '');
  writeFileSync(file, `${kept}${begin}\n${text}\n${end}\n`);
}

/** The message of a failed run: how many, the first few, and how to reproduce them. */
export function failureMessage(tally: Tally, seed: number, command: string): string {
  const first = tally.failures[0];
  const one = first
    ? `; the first alone: FUZZ_SEED=${seed} FUZZ_CASE=${first.index} ${command}`
    : '';
  const shown = tally.failures
    .slice(0, 15)
    .map((f) => `#${f.index} ${f.kind}: ${f.fault}\n    ${f.request}`);
  return [
    `${tally.failures.length} of ${tally.requests} fuzz cases failed (seed ${seed}); reproduce: FUZZ_SEED=${seed} ${command}${one}`,
    ...shown,
  ].join('\n');
}
