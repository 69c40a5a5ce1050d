/**
 * @module
 * `POST /v1/openai/embeddings`: the checks in docs/api.md's Order of checks (content type, body,
 * model, device, queue), then one vector per input in the input's order. The engine returns each
 * vector whole, as llama.cpp or WebLLM computed it (L2-normalised); this module only cuts a
 * Matryoshka model's vectors to `dimensions` (and normalises them again) and writes them as JSON
 * numbers or, for `encoding_format: "base64"` (what the `openai` SDK asks for unless told
 * otherwise), as the base64 of their little-endian float32 bytes.
 */
import * as v from 'valibot';
import type { ChatBackend, ChatEvent } from '../protocol/host/backend';
import { assertJsonContentType, readJsonBody } from '../protocol/body';
import { ChatRun, type Output } from './chat-run';
import type { ChatDeps, ChatContext } from './chat-deps';
import { OpenAIError } from '../protocol/errors';
import { estimateCost, resolveModel, type ModelInfo } from '../models/models';
import { jsonHeaders } from '../protocol/respond';
import { noArray } from '../protocol/schema';
import type { EmbeddingRequest } from '../protocol/types';
import { issueToError } from '../protocol/validate';
import { base64Vector, MAX_EMBEDDING_INPUTS, shorten } from '../protocol/vectors';

const int = v.pipe(v.number(), v.integer());
const tokenId = v.pipe(int, v.minValue(0, 'expected a token id (a whole number, 0 or more)'));
const nonEmpty = 'must not be empty: there is nothing to embed';

/** One input: text, or token ids. */
const oneText = v.pipe(v.string(), v.minLength(1, nonEmpty));
const oneTokens = v.pipe(v.array(tokenId), v.minLength(1, nonEmpty));

/** `input`: a string, token ids, or a list of either (not mixed). */
const input = v.lazy((value) => {
  if (!Array.isArray(value)) return oneText;
  const first: unknown = value[0];
  if (typeof first === 'number') return oneTokens;
  const list = Array.isArray(first) ? oneTokens : oneText;
  return v.pipe(
    v.array(list),
    v.minLength(1, nonEmpty),
    v.maxLength(MAX_EMBEDDING_INPUTS, `must hold at most ${MAX_EMBEDDING_INPUTS} inputs`),
  );
});

/** The body, as docs/api.md's Request fields has it: unknown fields pass, `null` is absent. */
const embeddingSchema = noArray(
  v.looseObject({
    model: v.pipe(v.string(), v.minLength(1, 'must name a model')),
    input,
    encoding_format: v.nullish(v.picklist(['float', 'base64'])),
    dimensions: v.nullish(v.pipe(int, v.minValue(1, 'expected at least 1'))),
    user: v.nullish(v.string()),
  }),
);

/** A validated request: what the engine gets, and what the reply is shaped by. */
export interface EmbeddingCall {
  request: EmbeddingRequest;
  encoding: 'float' | 'base64';
  dimensions: number | undefined;
}

/** Validates an embeddings body; throws a 400 `OpenAIError` naming the field. */
export function parseEmbeddingRequest(body: unknown): EmbeddingCall {
  const parsed = v.safeParse(embeddingSchema, body, { abortEarly: true });
  if (!parsed.success) throw issueToError(parsed.issues[0]);
  const { model, encoding_format, dimensions } = parsed.output;
  const raw = parsed.output.input;
  const inputs: string[] | number[][] =
    typeof raw === 'string'
      ? [raw]
      : typeof raw[0] === 'number'
        ? [raw as number[]]
        : (raw as string[] | number[][]);
  return {
    request: { model, input: inputs },
    encoding: encoding_format ?? 'float',
    dimensions: dimensions ?? undefined,
  };
}

/** Throws 400 unless `model` makes embeddings and can give vectors of `dimensions`. */
export function assertEmbeddingModel(model: ModelInfo, dimensions: number | undefined): void {
  // A server's model: the server says what it embeds, and how long its vectors may be.
  if (model.remote) return;
  const facts = model.embedding;
  if (!facts) {
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'model': ${model.id} is a chat model and makes no embeddings; use an embedding model (GET /v1/hearth/catalog lists them with "embedding").`,
      { param: 'model' },
    );
  }
  if (dimensions === undefined || dimensions === facts.dimensions) return;
  if (facts.matryoshka.length === 0) {
    throw new OpenAIError(
      'unsupported_parameter',
      `Unsupported parameter: 'dimensions': ${model.id} was not trained to give shorter vectors (Matryoshka)${facts.dimensions === null ? '' : `; its vectors have ${facts.dimensions} dimensions`}.`,
      { param: 'dimensions' },
    );
  }
  if (!facts.matryoshka.includes(dimensions)) {
    throw new OpenAIError(
      'invalid_value',
      `Invalid value for 'dimensions': ${model.id} was trained for ${[facts.dimensions, ...facts.matryoshka].filter((d) => d !== null).join(', ')} dimensions, not ${dimensions}.`,
      { param: 'dimensions' },
    );
  }
}

/** The response body for `vectors`, shaped by the call. */
export function embeddingBody(
  call: EmbeddingCall,
  model: ModelInfo,
  result: Extract<ChatEvent, { type: 'embeddings' }>,
): unknown {
  const { dimensions, encoding } = call;
  return {
    object: 'list',
    data: result.vectors.map((vector, index) => {
      const cut =
        dimensions !== undefined && dimensions < vector.length
          ? shorten(vector, dimensions)
          : vector;
      return {
        object: 'embedding',
        index,
        embedding: encoding === 'base64' ? base64Vector(cut) : Array.from(cut),
      };
    }),
    model: model.id,
    // Null where the backend could not count (a server that sends no usage).
    usage:
      result.prompt_tokens === null
        ? null
        : {
            prompt_tokens: result.prompt_tokens,
            total_tokens: result.prompt_tokens,
            estimated_cost: estimateCost(model.price, result.prompt_tokens, 0),
          },
  };
}

/** Validates a request up to the point where the engine is asked (every 4xx but 429). */
async function acceptEmbeddingRequest(
  request: Request,
  deps: ChatDeps,
): Promise<{
  call: EmbeddingCall;
  model: ModelInfo;
  backend: ChatBackend;
  body: Record<string, unknown>;
}> {
  assertJsonContentType(request);
  const body = (await readJsonBody(request, deps.bodyLimit)) as Record<string, unknown>;
  const call = parseEmbeddingRequest(body);
  // One lookup answers which model, which backend and whether it can answer now.
  const resolved = await resolveModel(deps.models, call.request.model);
  assertEmbeddingModel(resolved.model, call.dimensions);
  await resolved.ready();
  const backend = resolved.backend ?? deps.backend;
  return { call, model: resolved.model, backend, body };
}

function embedder(backend: ChatBackend): NonNullable<ChatBackend['embed']> {
  const embed = backend.embed?.bind(backend);
  if (!embed) throw new OpenAIError('engine_error', 'Nothing here makes embeddings.');
  return embed;
}

/**
 * Reads a run to its vectors; a host lost meanwhile runs it again once, as a non-streamed chat
 * reply does.
 */
async function readVectors(
  run: ChatRun,
  first: Output,
): Promise<Extract<Output, { type: 'embeddings' }>> {
  let output = first;
  for (;;) {
    try {
      while (output.type !== 'embeddings') output = await run.next();
      return output;
    } catch (err) {
      output = await run.restart(err);
    }
  }
}

/**
 * The endpoint. The status line waits for the vectors, or for the engine to say a long batch is
 * under way (then the body follows when it is done, and a host lost meanwhile runs it again once,
 * as a non-streamed chat reply does).
 */
export async function handleEmbeddings(
  request: Request,
  deps: ChatDeps,
  context: ChatContext,
): Promise<Response> {
  const { call, model, backend, body } = await acceptEmbeddingRequest(request, deps);
  const embed = embedder(backend);
  const run = new ChatRun((options) => embed(call.request, { ...options, body }), {
    requestId: context.requestId,
    alive: context.alive,
    firstTokenTimeoutMs: deps.firstTokenTimeoutMs,
    stallTimeoutMs: deps.stallTimeoutMs,
  });
  const first = await run.first();
  if (first.type === 'embeddings') {
    // The common case: the vectors came before anything else, the body is whole at once.
    return new Response(JSON.stringify(embeddingBody(call, model, first)), {
      headers: jsonHeaders(context.requestId),
    });
  }
  const encoder = new TextEncoder();
  const reply = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let output: Extract<Output, { type: 'embeddings' }>;
      try {
        output = await readVectors(run, first);
      } catch (err) {
        if (run.cancelled) return;
        controller.error(OpenAIError.from(err));
        return;
      }
      controller.enqueue(encoder.encode(JSON.stringify(embeddingBody(call, model, output))));
      controller.close();
    },
    cancel() {
      run.cancel();
    },
  });
  return new Response(reply, { headers: jsonHeaders(context.requestId) });
}

/**
 * Embeds `texts` with `model`, as an embeddings request would, for the API's own use (a vector
 * store's chunks, a search's query): in batches of at most `MAX_EMBEDDING_INPUTS`, each run as
 * the endpoint runs one (the queue, the limits, a second try on the next host).
 */
export async function embedTexts(
  deps: ChatDeps,
  model: string,
  texts: readonly string[],
  context: ChatContext & { signal?: AbortSignal },
): Promise<Float32Array[]> {
  const resolved = await resolveModel(deps.models, model);
  assertEmbeddingModel(resolved.model, undefined);
  await resolved.ready();
  const embed = embedder(resolved.backend ?? deps.backend);
  const vectors: Float32Array[] = [];
  for (let at = 0; at < texts.length; at += MAX_EMBEDDING_INPUTS) {
    const request = { model, input: texts.slice(at, at + MAX_EMBEDDING_INPUTS) };
    const run = new ChatRun((options) => embed(request, options), {
      requestId: context.requestId,
      alive: context.alive,
      firstTokenTimeoutMs: deps.firstTokenTimeoutMs,
      stallTimeoutMs: deps.stallTimeoutMs,
    });
    const stop = () => run.cancel();
    context.signal?.addEventListener('abort', stop);
    try {
      vectors.push(...(await readVectors(run, await run.first())).vectors);
    } finally {
      context.signal?.removeEventListener('abort', stop);
    }
    if (context.signal?.aborted) throw new DOMException('The indexing was stopped.', 'AbortError');
  }
  return vectors;
}
