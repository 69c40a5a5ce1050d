/**
 * The e2e tests' OpenAI-compatible server, the kind a user adds with `POST /v1/hearth/servers`:
 * a Node HTTP server on `localhost` (another origin than the app, so CORS applies) that speaks
 * three dialects, chosen by the path's first segment, with the quirks their /v1 endpoints have
 * (notes/peers-and-wire.md):
 *
 * - `/vllm/v1`: ids with `/`; the first delta carries the role and empty content; the last token's
 *   chunk carries `finish_reason`; with `include_usage`, usage on every chunk (as vLLM's
 *   `continuous_usage_stats`) and then a `choices: []` usage chunk; errors
 *   `{error:{message,type,param,code:<int>}}`.
 * - `/llama/v1` (llama-server): no `created`; the role repeated on every delta; `timings` extra; the
 *   usage chunk always sent, asked for or not; errors `{error:{code:<int>,message,type}}`.
 * - `/ollama/v1`: `system_fingerprint: "fp_ollama"`; no `[DONE]` at the end; errors
 *   `{"error":"<text>"}`, or plain text (`fail_format: "text"`).
 *
 * Replies are the echo engine's (docs/api.md, The echo engine): the last user message, prefixed by
 * the system messages in brackets, split by `/\S+\s*\/g`, cut by `stop` and `max_tokens`, with
 * usage counted the same way, so that a request to `hearth/echo` and the same request to a server's
 * model give the same text and the same token counts. Embeddings are vectors computed from the
 * text (`upstreamVector`), which the tests compute too.
 *
 * More paths, for the tests: `/keyed/v1` (vLLM's dialect) wants `Bearer sk-right`; `/nocors/v1`
 * answers without `Access-Control-Allow-Origin`; `/down/v1` destroys every connection at once.
 * `closedPort()` gives a port nothing listens on.
 *
 * Controls in the request's body (Hearth passes fields it does not know to the server):
 * `delay_ms` (pause before each token), `die_after` (destroy the connection after N tokens of a
 * stream, or halfway through a non-streamed reply), `reset` (destroy the connection before the status line),
 * `fail_status` / `fail_message` / `fail_format` (answer an
 * error in the dialect's shape, or as text), `omit_usage` (no usage anywhere, as LM Studio's
 * streams), `flood` / `flood_pad` (a stream of N tokens of about `flood_pad` characters each,
 * written as fast as the connection takes them, minding back-pressure).
 *
 * Every request (but preflights) is recorded: dialect, path, headers, body, whether its
 * connection closed before the reply ended, and the bytes of reply written to the socket.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { echoTokens } from '../../src/engines/echo/echo-engine';

/** The port of the upstream server (E2E_UPSTREAM_PORT, else three past the model server's). */
export const UPSTREAM_PORT = Number(
  process.env.E2E_UPSTREAM_PORT ?? Number(process.env.E2E_MODEL_PORT ?? 4188) + 3,
);
/** The origin of the upstream server. */
export const UPSTREAM_ORIGIN = `http://localhost:${UPSTREAM_PORT}`;

/** The dialects, by the path's first segment. */
export type Dialect = 'vllm' | 'llama' | 'ollama';
/** Every first segment the server answers. */
type Prefix = Dialect | 'keyed' | 'nocors' | 'down';

/** The base URL (`…/v1`) of a dialect or a control path. */
export const upstreamBase = (prefix: Prefix) => `${UPSTREAM_ORIGIN}/${prefix}/v1`;

/** The key `/keyed/v1` wants. */
export const RIGHT_KEY = 'sk-right';

/** The models each dialect's `/models` lists: a chat model, then an embedding model. */
export const UPSTREAM_MODELS: Record<Dialect, { chat: string; embed: string }> = {
  vllm: { chat: 'Qwen/Qwen2.5-0.5B-Instruct', embed: 'BAAI/bge-small-en-v1.5' },
  llama: { chat: 'ggml-org/gemma-3-1b-it-GGUF', embed: 'nomic-embed-text-v1.5.gguf' },
  ollama: { chat: 'llama3.2:1b', embed: 'nomic-embed-text:latest' },
};

/** The length of the vectors of every embedding model here. */
export const UPSTREAM_DIMENSIONS = 8;

/**
 * The vector the server answers for `text`: deterministic, not normalised, with fractions that
 * float32 cannot hold exactly (so a test sees whether Hearth rounds to float32).
 */
export function upstreamVector(text: string): number[] {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 16777619) >>> 0;
  }
  return Array.from({ length: UPSTREAM_DIMENSIONS }, (_, i) => {
    hash = Math.imul(hash ^ (hash >>> 13), 1540483477) >>> 0;
    return ((hash % 20001) - 10000) / 10001 + i / 3;
  });
}

/** The echo engine's tokens: the server answers as `hearth/echo` does, to compare the two. */
export { echoTokens };

/** One request the server received. */
export interface UpstreamRequest {
  prefix: string;
  method: string;
  /** The path after `/<prefix>/v1`, e.g. `/chat/completions`. */
  path: string;
  headers: IncomingMessage['headers'];
  /** The parsed JSON body (undefined for GET). */
  body: Record<string, unknown> | undefined;
  /** Whether its connection closed before the reply was complete (the client went). */
  closedEarly: boolean;
  /** Whether the reply was written to the end. */
  finished: boolean;
  /** Bytes of reply body the socket accepted (minding back-pressure). */
  bytesWritten: number;
  /** Bytes the whole reply would have (known for `flood` streams; else 0 until finished). */
  bytesTotal: number;
}

interface Message {
  role?: string;
  content?: unknown;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A message's content as text: a string, or its text parts joined. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((p: { type?: string; text?: string }) => (p?.type === 'text' ? (p.text ?? '') : ''))
      .join('');
  }
  return '';
}

/** The echo engine's reply and usage for a chat body. */
function echo(body: Record<string, unknown>): {
  tokens: string[];
  finish: 'stop' | 'length';
  prompt: number;
} {
  const raw = (Array.isArray(body.messages) ? body.messages : []) as Message[];
  // System and developer messages merged into one, first (as Hearth normalises them).
  const system = raw.filter((m) => m.role === 'system' || m.role === 'developer');
  const rest = raw.filter((m) => m.role !== 'system' && m.role !== 'developer');
  const messages = [
    ...(system.length
      ? [{ role: 'system', content: system.map((m) => textOf(m.content)).join(' ') }]
      : []),
    ...rest.map((m) => ({ role: m.role, content: textOf(m.content) })),
  ];
  const prompt = messages.reduce((n, m) => n + echoTokens(m.content).length, 0);
  const last = messages.at(-1)?.content ?? '';
  let reply = system.length ? `[${messages[0]!.content}] ${last}` : last;
  const stop =
    typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop : [];
  for (const s of stop as string[]) {
    const at = reply.indexOf(s);
    if (at !== -1) reply = reply.slice(0, at);
  }
  let tokens = echoTokens(reply);
  let finish: 'stop' | 'length' = 'stop';
  const max = (body.max_completion_tokens ?? body.max_tokens) as number | undefined;
  if (typeof max === 'number' && tokens.length > max) {
    tokens = tokens.slice(0, max);
    finish = 'length';
  }
  return { tokens, finish, prompt };
}

/** The error body of a dialect (or plain text). */
function errorBody(
  dialect: string,
  status: number,
  message: string,
  format?: unknown,
): { type: string; text: string } {
  if (format === 'text') return { type: 'text/plain', text: message };
  const json = (value: unknown) => ({ type: 'application/json', text: JSON.stringify(value) });
  if (dialect === 'ollama') return json({ error: message });
  if (dialect === 'llama') {
    const type =
      status === 401
        ? 'authentication_error'
        : status === 404
          ? 'not_found_error'
          : status >= 500
            ? 'server_error'
            : 'invalid_request_error';
    return json({ error: { code: status, message, type } });
  }
  const type =
    status === 401
      ? 'AuthenticationError'
      : status === 404
        ? 'NotFoundError'
        : status === 429
          ? 'RateLimitError'
          : status >= 500
            ? 'InternalServerError'
            : 'BadRequestError';
  return json({ error: { message, type, param: null, code: status } });
}

let completionCount = 0;

export class UpstreamServer {
  /** Every request but preflights, in order. */
  readonly requests: UpstreamRequest[] = [];
  /** Preflights (OPTIONS), by path. */
  readonly preflights: string[] = [];
  #server: Server | undefined;

  async start(): Promise<void> {
    this.#server = createServer((request, response) => {
      void this.#handle(request, response).catch((err: unknown) => {
        if (!response.headersSent) response.writeHead(500).end(String(err));
        else response.destroy();
      });
    });
    // `localhost` may resolve to ::1 or 127.0.0.1: listen on both.
    await new Promise<void>((resolve) => this.#server!.listen(UPSTREAM_PORT, resolve));
    const port = (this.#server.address() as AddressInfo).port;
    if (port !== UPSTREAM_PORT) throw new Error(`upstream server on ${port}`);
  }

  async stop(): Promise<void> {
    this.#server?.closeAllConnections();
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }

  /** Forgets the requests of earlier tests. */
  reset(): void {
    this.requests.length = 0;
    this.preflights.length = 0;
  }

  /** The requests of `path` (e.g. `/chat/completions`), in order. */
  of(path: string): UpstreamRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** The last request of `path`. */
  last(path: string): UpstreamRequest | undefined {
    return this.of(path).at(-1);
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', UPSTREAM_ORIGIN);
    const match = /^\/([a-z]+)\/v1(\/.*)?$/.exec(url.pathname);
    const prefix = match?.[1] ?? '';
    const path = match?.[2] ?? '';
    if (prefix === 'down') {
      request.socket.destroy();
      return;
    }
    const dialect: Dialect = prefix === 'llama' || prefix === 'ollama' ? prefix : 'vllm';
    if (prefix !== 'nocors') {
      const origin = request.headers.origin;
      response.setHeader('access-control-allow-origin', origin ?? '*');
      response.setHeader('vary', 'origin');
    }
    if (request.method === 'OPTIONS') {
      this.preflights.push(url.pathname);
      if (prefix !== 'nocors') {
        response.setHeader('access-control-allow-methods', 'GET, POST, OPTIONS');
        response.setHeader('access-control-allow-headers', 'authorization, content-type');
        response.setHeader('access-control-max-age', '0');
      }
      response.writeHead(204).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body: Record<string, unknown> | undefined;
    if (chunks.length > 0) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
    }
    const record: UpstreamRequest = {
      prefix,
      method: request.method ?? 'GET',
      path,
      headers: request.headers,
      body,
      closedEarly: false,
      finished: false,
      bytesWritten: 0,
      bytesTotal: 0,
    };
    this.requests.push(record);
    response.on('close', () => {
      if (!response.writableFinished) record.closedEarly = true;
    });
    response.on('finish', () => (record.finished = true));

    const fail = (status: number, message: string, format?: unknown) => {
      const { type, text } = errorBody(dialect, status, message, format);
      response.writeHead(status, { 'content-type': type });
      response.end(text);
    };
    if (!['vllm', 'llama', 'ollama', 'keyed', 'nocors'].includes(prefix)) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found');
      return;
    }
    if (prefix === 'keyed' && request.headers.authorization !== `Bearer ${RIGHT_KEY}`) {
      fail(401, 'Unauthorized: invalid API key');
      return;
    }
    const models = UPSTREAM_MODELS[dialect];
    if (request.method === 'GET' && path === '/models') {
      this.#json(response, record, modelList(dialect));
      return;
    }
    if (request.method !== 'POST' || !body) {
      fail(request.method === 'POST' ? 400 : 405, 'Bad request');
      return;
    }
    if (body.reset === true) {
      // The connection dies before the status line.
      request.socket.destroy();
      return;
    }
    if (typeof body.fail_status === 'number') {
      fail(body.fail_status, String(body.fail_message ?? 'failed'), body.fail_format);
      return;
    }
    if (path === '/chat/completions') {
      if (body.model !== models.chat) {
        fail(404, `The model \`${String(body.model)}\` does not exist.`);
        return;
      }
      await (body.stream === true
        ? this.#stream(dialect, body, response, record)
        : this.#completion(dialect, body, response, record));
      return;
    }
    if (path === '/embeddings') {
      if (body.model !== models.embed) {
        fail(404, `The model \`${String(body.model)}\` does not exist.`);
        return;
      }
      const input = (typeof body.input === 'string' ? [body.input] : body.input) as string[];
      const prompt = input.reduce((n, text) => n + echoTokens(text).length, 0);
      this.#json(response, record, {
        object: 'list',
        data: input.map((text, index) => ({
          object: 'embedding',
          index,
          embedding: upstreamVector(text),
        })),
        model: body.model,
        ...(body.omit_usage !== true && {
          usage: { prompt_tokens: prompt, total_tokens: prompt },
        }),
      });
      return;
    }
    fail(404, `No route ${path}`);
  }

  #json(response: ServerResponse, record: UpstreamRequest, value: unknown): void {
    const text = JSON.stringify(value);
    record.bytesTotal = Buffer.byteLength(text);
    record.bytesWritten = record.bytesTotal;
    response.writeHead(200, { 'content-type': 'application/json' }).end(text);
  }

  async #completion(
    dialect: Dialect,
    body: Record<string, unknown>,
    response: ServerResponse,
    record: UpstreamRequest,
  ): Promise<void> {
    const { tokens, finish, prompt } = echo(body);
    if (typeof body.delay_ms === 'number') await sleep(body.delay_ms * tokens.length);
    if (typeof body.die_after === 'number') {
      // The status line and half the body, then the connection dies.
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"id":"chatcmpl-broken","object":"chat.completion","choices":[{"ind');
      await sleep(50);
      response.destroy();
      return;
    }
    const created = Math.floor(Date.now() / 1000);
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: tokens.length,
      total_tokens: prompt + tokens.length,
    };
    this.#json(response, record, {
      id: `chatcmpl-${dialect}-${++completionCount}`,
      object: 'chat.completion',
      ...(dialect !== 'llama' && { created }),
      model: body.model,
      ...(dialect === 'ollama' && { system_fingerprint: 'fp_ollama' }),
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: tokens.join(''),
            ...(dialect === 'vllm' && { reasoning_content: null, tool_calls: [] }),
          },
          logprobs: null,
          finish_reason: finish,
          ...(dialect === 'vllm' && { stop_reason: null }),
        },
      ],
      ...(body.omit_usage !== true && { usage }),
      ...(dialect === 'llama' && { timings: timings(prompt, tokens.length) }),
    });
  }

  async #stream(
    dialect: Dialect,
    body: Record<string, unknown>,
    response: ServerResponse,
    record: UpstreamRequest,
  ): Promise<void> {
    const flood = typeof body.flood === 'number' ? body.flood : 0;
    const pad = typeof body.flood_pad === 'number' ? body.flood_pad : 0;
    const echoed = echo(body);
    const count = flood || echoed.tokens.length;
    const token = (i: number) =>
      flood ? `x${i}${'.'.repeat(Math.max(0, pad - String(i).length - 2))} ` : echoed.tokens[i]!;
    const finish = flood ? 'stop' : echoed.finish;
    const prompt = echoed.prompt;
    const options = (body.stream_options ?? {}) as { include_usage?: boolean };
    const omitUsage = body.omit_usage === true;
    const includeUsage = !omitUsage && (dialect === 'llama' || options.include_usage === true);
    const delay = typeof body.delay_ms === 'number' ? body.delay_ms : 0;
    const dieAfter = typeof body.die_after === 'number' ? body.die_after : Infinity;
    const id = `chatcmpl-${dialect}-${++completionCount}`;
    const created = Math.floor(Date.now() / 1000);
    const base = {
      id,
      object: 'chat.completion.chunk',
      ...(dialect !== 'llama' && { created }),
      model: body.model,
      ...(dialect === 'ollama' && { system_fingerprint: 'fp_ollama' }),
    };
    const usageAt = (completion: number) => ({
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    });
    const chunk = (
      delta: Record<string, unknown>,
      finishReason: string | null,
      emitted: number,
    ): Record<string, unknown> => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      // vLLM with usage asked for: usage on every chunk (its continuous_usage_stats).
      ...(dialect === 'vllm' && includeUsage && { usage: usageAt(emitted) }),
      ...(dialect === 'llama' && { timings: timings(prompt, emitted) }),
    });
    const event = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
    /** The reply's events, in order, made as they are written (a flood can be 100 MB). */
    function* events(): Generator<{ text: string; token?: number }> {
      // vLLM opens with the role and empty content.
      if (dialect === 'vllm')
        yield { text: event(chunk({ role: 'assistant', content: '' }, null, 0)) };
      for (let i = 0; i < count; i++) {
        const last = i === count - 1;
        // llama-server and Ollama repeat the role on every delta.
        const delta: Record<string, unknown> =
          dialect === 'vllm' ? { content: token(i) } : { role: 'assistant', content: token(i) };
        // vLLM puts finish_reason on the last token's chunk; the others send a chunk of their own.
        yield {
          text: event(chunk(delta, dialect === 'vllm' && last ? finish : null, i + 1)),
          token: i,
        };
      }
      if (count === dieAfter) yield { text: '', token: count };
      if (dialect !== 'vllm' || count === 0) {
        const delta = dialect === 'ollama' ? { role: 'assistant', content: '' } : {};
        yield { text: event(chunk(delta, finish, count)) };
      }
      if (includeUsage) {
        yield {
          text: event({
            ...base,
            choices: [],
            usage: usageAt(count),
            ...(dialect === 'llama' && { timings: timings(prompt, count) }),
          }),
        };
      }
      // Ollama (some versions) ends without [DONE].
      if (dialect !== 'ollama') yield { text: 'data: [DONE]\n\n' };
    }
    // The total, known before the first byte (for the back-pressure test).
    for (const { text } of events()) record.bytesTotal += Buffer.byteLength(text);

    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    for (const { text, token: index } of events()) {
      if (index !== undefined && index < count && delay > 0) await sleep(delay);
      if (index === dieAfter) {
        // The connection dies after `die_after` tokens.
        response.destroy();
        return;
      }
      if (response.destroyed) return;
      const ok = response.write(text);
      record.bytesWritten += Buffer.byteLength(text);
      if (!ok) {
        // Back-pressure: wait until the socket takes more (or closes).
        await new Promise<void>((resolve) => {
          const done = () => {
            response.off('drain', done);
            response.off('close', done);
            resolve();
          };
          response.on('drain', done);
          response.on('close', done);
        });
      }
    }
    if (!response.destroyed) response.end();
  }
}

/** A dialect's `GET /models`. */
function modelList(dialect: Dialect): unknown {
  const { chat, embed } = UPSTREAM_MODELS[dialect];
  const created = 1_700_000_000;
  if (dialect === 'vllm') {
    return {
      object: 'list',
      data: [chat, embed].map((id) => ({
        id,
        object: 'model',
        created,
        owned_by: 'vllm',
        root: id,
        parent: null,
        max_model_len: 32768,
        permission: [{ id: `modelperm-${id}`, object: 'model_permission', allow_sampling: true }],
      })),
    };
  }
  if (dialect === 'llama') {
    return {
      models: [chat, embed].map((id) => ({ name: id, model: id, type: 'model', tags: [] })),
      object: 'list',
      data: [chat, embed].map((id) => ({
        id,
        object: 'model',
        created,
        owned_by: 'llamacpp',
        meta: { vocab_type: 2, n_vocab: 262144, n_ctx_train: 32768 },
      })),
    };
  }
  return {
    object: 'list',
    data: [chat, embed].map((id) => ({ id, object: 'model', created, owned_by: 'library' })),
  };
}

/** llama-server's `timings`. */
function timings(prompt: number, predicted: number) {
  return {
    prompt_n: prompt,
    prompt_ms: 1.5,
    prompt_per_token_ms: 0.1,
    prompt_per_second: 10000,
    predicted_n: predicted,
    predicted_ms: predicted * 2,
    predicted_per_token_ms: 2,
    predicted_per_second: 500,
  };
}

/** A port nothing listens on (taken from the system, then let go). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
