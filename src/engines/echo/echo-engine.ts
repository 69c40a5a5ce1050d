/**
 * @module
 * src/engines/echo/ is the echo engine, which needs no GPU: it imports only src/engines and the
 * API's folders.
 *
 * The echo engine (`hearth/echo`): a deterministic test engine that needs no GPU, exactly as
 * docs/api.md's "The echo engine" defines it. It echoes the last user message (prefixed by the
 * system prompt in brackets), one whitespace-delimited token per chunk; it calls the tools it is
 * offered when that message says `/call <name> <arguments>`, and after tool results it echoes
 * them, so that a tool loop runs end to end without a model.
 */
import { OpenAIError } from '../../protocol/errors';
import { ECHO_MODEL } from '../../models/models';
import { PART_SEPARATOR } from '../../protocol/normalize';
import type { ChatMessage, ChatRequest, FinishReason, ToolCall } from '../../protocol/types';
import type { Engine, EngineOutput } from '../engine';

/** Splits text into echo tokens: `/\S+\s*\/g`, leading whitespace joined to the first token. */
export function echoTokens(text: string): string[] {
  const tokens = text.match(/\S+\s*/g);
  if (!tokens) return text === '' ? [] : [text];
  const lead = text.length - text.trimStart().length;
  if (lead > 0) tokens[0] = text.slice(0, lead) + (tokens[0] ?? '');
  return tokens;
}

/**
 * A message's text as the echo engine reads it: its content, or, for a message with images, its
 * parts in order, each image said as `[image: image/png 64×48, 1234 bytes]` — what reached the
 * engine, so that a test can tell which image did.
 */
export function echoText(message: ChatMessage): string {
  if (!message.parts) return message.content;
  return message.parts
    .map((part) => {
      if (part.type === 'text') return part.text;
      if ('url' in part.source) {
        throw new OpenAIError('engine_error', `The image at '${part.param}' was never read.`);
      }
      const { type, width, height, bytes } = part.source;
      return `[image: ${type} ${width}×${height}, ${bytes.byteLength} bytes]`;
    })
    .join(PART_SEPARATOR);
}

/** The reply R before `stop` and `max_tokens`. */
export function echoReply(messages: readonly ChatMessage[]): string {
  const last = messages.at(-1);
  let text: string;
  if (last?.role === 'user') text = echoText(last);
  else if (last?.role === 'tool') {
    // After tool results, R is what the tools answered (the results since the last call).
    const since = messages.findLastIndex((m) => m.role !== 'tool');
    text = messages
      .slice(since + 1)
      .map((m) => m.content)
      .join('\n');
  } else {
    throw new OpenAIError(
      'invalid_value',
      'The echo engine needs the last message to be the user’s or a tool result.',
      { param: 'messages' },
    );
  }
  // Normalisation has merged every system and developer message into one, placed first.
  const system = messages[0]?.role === 'system' ? messages[0].content : undefined;
  return system === undefined ? text : `[${system}] ${text}`;
}

/** One line of a `/call` message: the tool's name, then its arguments as JSON. */
const CALL_LINE = /^\/call[ \t]+([A-Za-z0-9_-]{1,64})(?:[ \t]+(.*))?$/;

/**
 * The calls a request asks echo to make: when tools are offered (and `tool_choice` is not
 * `none`), a last user message whose every non-empty line is `/call <name> <arguments>` calls
 * those tools, each named by an offered function; anything else is not a call. Call ids count
 * the conversation's calls before (`call_echo_<k>`), so that they are unique in it and the same
 * on every run.
 */
export function echoCalls(request: ChatRequest): ToolCall[] | undefined {
  const offered = new Set((request.tools ?? []).map((t) => t.function.name));
  const last = request.messages.at(-1);
  if (offered.size === 0 || request.tool_choice === 'none' || last?.role !== 'user') {
    return undefined;
  }
  const lines = last.content.split('\n').filter((line) => line.trim() !== '');
  const calls: ToolCall[] = [];
  let k = request.messages.reduce((n, m) => n + (m.tool_calls?.length ?? 0), 0);
  for (const line of lines) {
    const match = CALL_LINE.exec(line.trim());
    const name = match?.[1];
    if (name === undefined || !offered.has(name)) return undefined;
    const args = match?.[2]?.trim() || '{}';
    calls.push({ id: `call_echo_${k++}`, type: 'function', function: { name, arguments: args } });
  }
  return calls.length > 0 ? calls : undefined;
}

function cutAtStop(reply: string, stop: readonly string[] | undefined): string {
  let end = reply.length;
  for (const s of stop ?? []) {
    const at = reply.indexOf(s);
    if (at !== -1 && at < end) end = at;
  }
  return reply.slice(0, end);
}

/** `scheduler.postTask`, where the platform has it (Chromium does; Node does not). */
type PostTask = (
  task: () => void,
  options: { delay: number; signal: AbortSignal },
) => Promise<void>;
const scheduler = (globalThis as { scheduler?: { postTask: PostTask } }).scheduler;

/**
 * Resolves after `ms`, or at once when `signal` aborts. Chained `setTimeout`s are clamped to
 * 4 ms after a few levels of nesting (HTML's timer rules), which would turn `echo_delay_ms: 1`
 * into 250 tokens/s; `scheduler.postTask` delays are not clamped.
 */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (scheduler) {
    return scheduler.postTask(() => undefined, { delay: ms, signal }).catch(() => undefined);
  }
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** The echo engine. */
export class EchoEngine implements Engine {
  readonly loadedModel = null;
  readonly models = [ECHO_MODEL.id];

  serves(model: string): boolean {
    return model === ECHO_MODEL.id;
  }

  isLoaded(): boolean {
    return true;
  }

  async load(): Promise<void> {
    // Nothing to put on a GPU.
  }

  async *generate(request: ChatRequest, signal: AbortSignal): AsyncGenerator<EngineOutput> {
    let promptTokens = 0;
    let lastTokens: string[] = [];
    for (const message of request.messages) {
      lastTokens = echoTokens(echoText(message));
      promptTokens += lastTokens.length;
    }
    if (promptTokens > ECHO_MODEL.context_window) {
      throw new OpenAIError(
        'context_length_exceeded',
        `The messages have ${promptTokens} tokens; ${ECHO_MODEL.id} takes at most ${ECHO_MODEL.context_window}.`,
        { param: 'messages' },
      );
    }
    const calls = echoCalls(request);
    if (calls) {
      yield { type: 'tool_calls', calls };
      yield {
        type: 'end',
        finish_reason: 'tool_calls',
        usage: { prompt_tokens: promptTokens, completion_tokens: calls.length },
      };
      return;
    }
    const reply = cutAtStop(echoReply(request.messages), request.stop);
    // Without a system prompt or a stop string met, the reply is the last message, split above.
    const last = request.messages.at(-1);
    let tokens = last && reply === echoText(last) ? lastTokens : echoTokens(reply);
    let finish_reason: FinishReason = 'stop';
    if (request.max_tokens !== undefined && tokens.length > request.max_tokens) {
      tokens = tokens.slice(0, request.max_tokens);
      finish_reason = 'length';
    }
    const delay = request.echo_delay_ms ?? 0;
    let emitted = 0;
    for (const text of tokens) {
      if (delay > 0) await sleep(delay, signal);
      if (signal.aborted) return;
      emitted += 1;
      yield { type: 'token', text };
    }
    yield {
      type: 'end',
      finish_reason,
      usage: { prompt_tokens: promptTokens, completion_tokens: emitted },
    };
  }
}
