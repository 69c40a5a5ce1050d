/**
 * @module
 * Requests for a server's models, forwarded from the service worker itself (no host tab needed):
 * the validated body goes to the server with `model` rewritten to its own id and the server's
 * key, and what comes back is read into the same events an engine yields, so that the endpoint
 * answers in Hearth's contract (one id, docs/api.md's SSE order, the final chunk, usage when
 * asked, `estimated_cost`, errors in Hearth's shape) whatever the server's dialect: usage on
 * every chunk (vLLM with continuous usage), no `created`, the role repeated, no `[DONE]` (some
 * Ollama versions), errors as plain text. A stream is read as the client reads it: nothing is
 * buffered ahead, so a slow client slows the server's connection, and aborting stops the fetch.
 */
import type {
  ChatBackend,
  ChatEvent,
  ChatOptions,
  EngineUsage,
  RichToken,
} from '../protocol/host/backend';
import { OpenAIError } from '../protocol/errors';
import { openaiPathOf } from '../../relay/protocol.js';
import type { FetchLike, ServerModel } from './server-record';
import { unreachable, upstreamMessage } from './upstream-errors';
import {
  lostMidway,
  readCapped,
  sseData,
  UPSTREAM_ERROR_READ,
  UPSTREAM_REPLY_LIMIT,
} from './upstream-read';
import type {
  ChatRequest,
  EmbeddingRequest,
  FinishReason,
  TokenLogprob,
  ToolCall,
} from '../protocol/types';

/** What forwarding needs. */
export interface UpstreamOptions {
  /**
   * The server model an id names, for `chat` and `embed` called with an id alone. The service
   * worker does not need it: its model directory resolves an id once and binds the target (`to`).
   */
  resolve?: (id: string) => Promise<ServerModel | undefined>;
  fetch: FetchLike;
  /** This app's origin, named in messages about CORS. */
  origin?: string;
  /**
   * How long a server may take to start its answer (the status line). Just under the API's own
   * 4 minutes, so that a silent server is a 504 that says so.
   */
  headersTimeoutMs?: number;
}

const HEADERS_TIMEOUT_MS = 230_000;
/** Where a server has chat completions and embeddings after its base URL: OpenAI's paths. */
const CHAT_PATH = openaiPathOf('chat');
const EMBEDDINGS_PATH = openaiPathOf('embeddings');
const FINISH_REASONS = new Set<FinishReason>(['stop', 'length', 'tool_calls']);

/** A chunk of an OpenAI-style stream, as loosely as servers send it. */
interface UpstreamChunk {
  error?: unknown;
  choices?: {
    index?: number;
    delta?: {
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: {
        index?: number;
        id?: string;
        type?: string;
        function?: { name?: string; arguments?: string };
      }[];
    };
    finish_reason?: string | null;
    logprobs?: { content?: TokenLogprob[] | null } | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** A whole reply, as loosely as servers send it. */
interface UpstreamCompletion {
  choices?: {
    message?: {
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: ToolCall[];
    };
    finish_reason?: string | null;
    logprobs?: { content?: TokenLogprob[] | null } | null;
  }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

function finishReason(value: unknown): FinishReason {
  return FINISH_REASONS.has(value as FinishReason) ? (value as FinishReason) : 'stop';
}

function usageOf(usage: UpstreamChunk['usage']): EngineUsage | null {
  if (!usage || typeof usage.prompt_tokens !== 'number') return null;
  return { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens ?? 0 };
}

/**
 * A whole reply's JSON, at most `UPSTREAM_REPLY_LIMIT` bytes of it; a server that sends something
 * else (an HTML login page) says so.
 */
async function jsonOf<T>(response: Response, server: string): Promise<T> {
  const text = await readCapped(response, UPSTREAM_REPLY_LIMIT, server).catch((err: unknown) => {
    throw lostMidway(err, server);
  });
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new OpenAIError(
      'upstream_error',
      `The server ${server} answered with something that is not JSON: ${text.slice(0, 200)}`,
    );
  }
}

/** Forwards server models' requests. */
export class UpstreamBackend {
  readonly #options: UpstreamOptions;

  constructor(options: UpstreamOptions) {
    this.#options = options;
  }

  async #target(id: string): Promise<ServerModel> {
    const target = await this.#options.resolve?.(id);
    if (!target) {
      throw new OpenAIError('model_not_found', `The model '${id}' is no server's model now.`, {
        param: 'model',
      });
    }
    return target;
  }

  /** POSTs `body` to the server's `path`; the response when it is 2xx, else the error it means. */
  async #post(
    target: ServerModel,
    path: string,
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Response> {
    const { server } = target;
    const url = `${server.base_url}${path}`;
    const what = `The server ${server.name} (${new URL(server.base_url).host})`;
    if (server.key_kept === 'session' && !server.api_key) {
      throw new OpenAIError(
        'upstream_unavailable',
        `The key of the server ${server.name} was kept for the session only, and the session ended (the browser stopped Hearth's service worker): add the server again with its key, in Settings → Servers.`,
      );
    }
    const limitMs = this.#options.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
    // Only until the server starts its answer: a stream may then last as long as it needs.
    const timeout = new AbortController();
    const timer = setTimeout(
      () => timeout.abort(new DOMException('timeout', 'TimeoutError')),
      limitMs,
    );
    let response: Response;
    try {
      response = await this.#options.fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(server.api_key && { authorization: `Bearer ${server.api_key}` }),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, timeout.signal]),
      });
    } catch (err) {
      if (signal.aborted) throw err;
      if (timeout.signal.aborted) {
        throw new OpenAIError(
          'upstream_timeout',
          `${what} did not start its answer within ${Math.round(limitMs / 1000)} s.`,
        );
      }
      throw await unreachable(url, what, this.#options.fetch, this.#options.origin ?? 'this app', {
        added: true,
      });
    } finally {
      clearTimeout(timer);
    }
    if (response.ok) return response;
    const text = await readCapped(response, UPSTREAM_ERROR_READ, server.name, {
      truncate: true,
    }).catch(() => '');
    throw new OpenAIError(
      'upstream_error',
      `${what} answered HTTP ${response.status}: ${upstreamMessage(text)}`,
      {
        status: response.status,
        retryAfter: Number(response.headers.get('retry-after')) || undefined,
      },
    );
  }

  /**
   * A backend bound to one server model, resolved once by the model directory: its requests go
   * to that server without looking the id up again.
   */
  to(target: ServerModel): ChatBackend {
    return {
      chat: (request, options) => this.#chat(target, request, options),
      embed: (request, options) => this.#embed(target, request, options),
    };
  }

  /** Chat completions for the server model an id names (`resolve`); see `to`. */
  async *chat(request: ChatRequest, options: ChatOptions): AsyncGenerator<ChatEvent> {
    yield* this.#chat(await this.#target(request.model), request, options);
  }

  /** Embeddings for the server model an id names (`resolve`); see `to`. */
  async *embed(request: EmbeddingRequest, options: ChatOptions): AsyncGenerator<ChatEvent> {
    yield* this.#embed(await this.#target(request.model), request, options);
  }

  /** Chat completions: the request as the client sent it, `model` rewritten to the server's id. */
  async *#chat(
    target: ServerModel,
    request: ChatRequest,
    options: ChatOptions,
  ): AsyncGenerator<ChatEvent> {
    const body = { ...(options.body ?? {}), model: target.upstream };
    yield { type: 'state', state: 'running' };
    const response = await this.#post(target, CHAT_PATH, body, options.signal);
    if (request.stream && response.body) {
      yield* this.#stream(response.body, target);
      return;
    }
    yield* this.#whole(await jsonOf<UpstreamCompletion>(response, target.server.name), request.n);
  }

  /** A non-streamed reply: its text as one token (or whole choices), then the end. */
  *#whole(reply: UpstreamCompletion, n: number): Generator<ChatEvent> {
    const choices = reply.choices ?? [];
    const usage = usageOf(reply.usage);
    if (n > 1) {
      yield {
        type: 'choices',
        choices: choices.map((c) => ({
          content: c.message?.content ?? null,
          ...(c.message?.reasoning_content && { reasoning: c.message.reasoning_content }),
          ...(c.message?.tool_calls?.length && { tool_calls: c.message.tool_calls }),
          ...(c.logprobs?.content && { logprobs: c.logprobs.content }),
          finish_reason: finishReason(c.finish_reason),
        })),
      };
      yield { type: 'end', finish_reason: finishReason(choices[0]?.finish_reason), usage };
      return;
    }
    const [choice] = choices;
    const tokens: (string | RichToken)[] = [];
    if (choice?.message?.reasoning_content) {
      tokens.push({ text: choice.message.reasoning_content, reasoning: true });
    }
    const content = choice?.message?.content ?? '';
    const logprobs = choice?.logprobs?.content;
    tokens.push(logprobs ? { text: content, logprobs } : content);
    yield { type: 'tokens', tokens };
    if (choice?.message?.tool_calls?.length) {
      yield { type: 'tool_calls', calls: choice.message.tool_calls };
    }
    yield { type: 'end', finish_reason: finishReason(choice?.finish_reason), usage };
  }

  /** A streamed reply, chunk by chunk as it arrives. */
  async *#stream(body: ReadableStream<Uint8Array>, target: ServerModel): AsyncGenerator<ChatEvent> {
    let finish: FinishReason | undefined;
    let usage: EngineUsage | null = null;
    let done = false;
    const calls = new Map<number, ToolCall>();
    for await (const batch of sseData(body, target.server.name)) {
      // Every token of one read goes out as one batch (one write to the client).
      const tokens: (string | RichToken)[] = [];
      for (const data of batch) {
        // `[DONE]` is short: the long events of tokens are not trimmed to find out.
        if (data.length < 16 && data.trim() === '[DONE]') {
          done = true;
          break;
        }
        let chunk: UpstreamChunk;
        try {
          chunk = JSON.parse(data) as UpstreamChunk;
        } catch {
          if (tokens.length > 0) yield { type: 'tokens', tokens };
          throw new OpenAIError(
            'upstream_error',
            `The server ${target.server.name} sent an event that is not JSON: ${data.slice(0, 200)}`,
          );
        }
        if (chunk.error != null) {
          if (tokens.length > 0) yield { type: 'tokens', tokens };
          throw new OpenAIError(
            'upstream_error',
            `The server ${target.server.name} failed during the reply: ${upstreamMessage(JSON.stringify(chunk))}`,
          );
        }
        // Some servers put usage on every chunk: the last one counts.
        usage = usageOf(chunk.usage) ?? usage;
        // Choice 0 is nearly always first: no search (and no closure) per event for it.
        const first = chunk.choices?.[0];
        const choice =
          first && (first.index ?? 0) === 0
            ? first
            : chunk.choices?.find((c) => (c.index ?? 0) === 0);
        if (!choice) continue;
        const delta = choice.delta ?? {};
        if (delta.reasoning_content)
          tokens.push({ text: delta.reasoning_content, reasoning: true });
        const logprobs = choice.logprobs?.content;
        if (delta.content)
          tokens.push(logprobs ? { text: delta.content, logprobs } : delta.content);
        for (const call of delta.tool_calls ?? []) {
          const index = call.index ?? 0;
          const known = calls.get(index) ?? {
            id: '',
            type: 'function' as const,
            function: { name: '', arguments: '' },
          };
          if (call.id) known.id = call.id;
          if (call.function?.name) known.function.name += call.function.name;
          if (call.function?.arguments) known.function.arguments += call.function.arguments;
          calls.set(index, known);
        }
        if (choice.finish_reason) finish = finishReason(choice.finish_reason);
      }
      if (tokens.length > 0) yield { type: 'tokens', tokens };
      if (done) break;
    }
    if (finish === undefined && !done) {
      throw new OpenAIError(
        'upstream_error',
        `The server ${target.server.name} ended its stream before the reply was complete.`,
      );
    }
    if (calls.size > 0) {
      yield {
        type: 'tool_calls',
        calls: [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c),
      };
    }
    yield { type: 'end', finish_reason: finish ?? 'stop', usage };
  }

  /** Embeddings: floats asked of the server, whatever the client asked (Hearth encodes). */
  async *#embed(
    target: ServerModel,
    request: EmbeddingRequest,
    options: ChatOptions,
  ): AsyncGenerator<ChatEvent> {
    const body = {
      ...(options.body ?? {}),
      model: target.upstream,
      input: request.input,
      encoding_format: 'float',
    };
    yield { type: 'state', state: 'running' };
    const response = await this.#post(target, EMBEDDINGS_PATH, body, options.signal);
    const reply = await jsonOf<{
      data?: { index?: number; embedding?: unknown }[];
      usage?: { prompt_tokens?: number } | null;
    }>(response, target.server.name);
    const data = [...(reply.data ?? [])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    if (
      data.length !== request.input.length ||
      !data.every(
        (d) => Array.isArray(d.embedding) && d.embedding.every((x) => typeof x === 'number'),
      )
    ) {
      throw new OpenAIError(
        'upstream_error',
        `The server ${target.server.name} did not answer with one vector of numbers per input.`,
      );
    }
    yield {
      type: 'embeddings',
      vectors: data.map((d) => Float32Array.from(d.embedding as number[])),
      prompt_tokens:
        typeof reply.usage?.prompt_tokens === 'number' ? reply.usage.prompt_tokens : null,
    };
  }
}
