/**
 * @module
 * Embeddings with llama.cpp: the inputs checked against the embedding model, sent in chunks the
 * engine can be cancelled between, and llama.cpp's refusals said as the API says them (which
 * input is too long, when llama.cpp does not say).
 */
import { OpenAIError } from '../../protocol/errors';
import type { EmbeddingRequest } from '../../protocol/types';
import { MAX_EMBEDDING_TOKENS } from '../../protocol/vectors';
import { findTooLong, inputParam, inputTooLong } from '../embed-inputs';
import type { EmbedOutput } from '../engine';
import type { LlamaEmbeddingResponse, WllamaLike } from './llama-library';
import { fromLlamaError, isFatal } from './llama-errors';

/** An embedding model in memory. */
export interface Embedder {
  model: string;
  wllama: WllamaLike;
  /** Tokens one input may have: llama.cpp embeds each input in one batch of the context. */
  context: number;
  vocab: number;
}

/**
 * Inputs given to llama.cpp at a time: between them the engine can be cancelled and say it is
 * still working, and a batch of the API's largest (2,048) does not sit in one task.
 */
const EMBED_CHUNK = 32;

/**
 * Embeds the inputs with the loaded embedding model, `EMBED_CHUNK` at a time; `onFatal` is told
 * when the instance failed for good.
 */
export async function* embedInputs(
  embedder: Embedder,
  request: EmbeddingRequest,
  signal: AbortSignal,
  onFatal: () => void,
): AsyncGenerator<EmbedOutput> {
  const { input } = request;
  assertEmbeddable(input, embedder);
  const vectors: Float32Array[] = [];
  let tokens = 0;
  for (let start = 0; start < input.length; start += EMBED_CHUNK) {
    if (start > 0) yield { type: 'progress' };
    if (signal.aborted) return;
    const chunk = input.slice(start, start + EMBED_CHUNK) as string[] | number[][];
    let response: LlamaEmbeddingResponse;
    try {
      response = await embedder.wllama.createEmbedding({
        input: chunk,
        embd_normalize: 2,
        abortSignal: signal,
      });
    } catch (err) {
      if (signal.aborted) return;
      if (isFatal(err)) onFatal();
      throw await embedError(err, embedder, chunk, start, input.length, signal);
    }
    const data = [...response.data].sort((a, b) => a.index - b.index);
    if (data.length !== chunk.length) {
      throw new OpenAIError(
        'engine_error',
        `llama.cpp returned ${data.length} vectors for ${chunk.length} inputs.`,
      );
    }
    for (const { embedding } of data) {
      if (typeof embedding === 'string') {
        throw new OpenAIError('engine_error', 'llama.cpp returned a vector as text.');
      }
      vectors.push(Float32Array.from(embedding));
    }
    tokens += response.usage.prompt_tokens;
    if (tokens > MAX_EMBEDDING_TOKENS) {
      throw new OpenAIError(
        'context_length_exceeded',
        `This request has more than ${MAX_EMBEDDING_TOKENS} tokens in all (${tokens} in its first ${start + chunk.length} inputs); send fewer inputs at a time.`,
        { param: 'input' },
      );
    }
  }
  if (signal.aborted) return;
  yield { type: 'embeddings', vectors, prompt_tokens: tokens };
}

/**
 * Why llama.cpp refused a chunk. When an input is longer than the context, llama.cpp does not
 * say which: the inputs that may be (by their length) are tried alone, and the first that fails
 * is named.
 */
async function embedError(
  err: unknown,
  embedder: Embedder,
  chunk: string[] | number[][],
  start: number,
  total: number,
  signal: AbortSignal,
): Promise<OpenAIError> {
  const error = fromLlamaError(err, { model: embedder.model });
  if (!isTooLong(err)) return error;
  const embedOne = (one: string | number[]) =>
    embedder.wllama.createEmbedding({
      input: [one] as string[] | number[][],
      embd_normalize: 2,
      abortSignal: signal,
    });
  const i = await findTooLong(chunk, embedder.context, embedOne, isTooLong, signal);
  return i === null ? error : inputTooLong(embedder.model, embedder.context, start + i, total);
}

/** Throws 400 for a token id the embedding model does not have, or a token input too long. */
function assertEmbeddable(input: string[] | number[][], embedder: Embedder): void {
  for (const [i, one] of input.entries()) {
    if (typeof one === 'string') continue;
    const bad = one.find((id) => id >= embedder.vocab);
    if (bad !== undefined) {
      const param = inputParam(i, input.length);
      throw new OpenAIError(
        'invalid_value',
        `Invalid value for '${param}': token id ${bad} is not in ${embedder.model}'s vocabulary (ids 0 to ${embedder.vocab - 1}).`,
        { param },
      );
    }
    if (one.length > embedder.context)
      throw inputTooLong(embedder.model, embedder.context, i, input.length);
  }
}

/** llama-server's refusal of an input longer than its batch: "input (513 tokens) is too large…". */
function isTooLong(err: unknown): boolean {
  const message = err instanceof Error ? err.message : String(err);
  return /too large to process/i.test(message);
}
