/**
 * @module
 * Embeddings with a loaded WebLLM embedding model: all inputs in one call (WebLLM batches them
 * itself and cannot be interrupted meanwhile), the vectors normalised (WebLLM returns the first
 * token's state as the model computes it, and Hearth's vectors have length 1), and an input too
 * long found and named. It calls WebLLM through `embedAll`, so it needs no import of the library.
 */
import type { OpenAIError } from '../../protocol/errors';
import type { EmbeddingRequest } from '../../protocol/types';
import { normalizeInPlace } from '../../protocol/vectors';
import { findTooLong, inputTooLong } from '../embed-inputs';
import type { EmbedOutput } from '../engine';
import { errorParts } from './webllm-errors';

/** The part of WebLLM's `CreateEmbeddingResponse` Hearth reads. */
export interface EmbeddingsLike {
  data: { index: number; embedding: number[] }[];
  usage: { prompt_tokens: number };
}

/** One embeddings request, and what it needs of the engine. */
export interface EmbedRun {
  request: EmbeddingRequest;
  /** The model's context window, in tokens. */
  context: number;
  /** WebLLM's embeddings of `input`, in one call (rejects when the device is lost). */
  embedAll: (input: string[] | number[][]) => Promise<EmbeddingsLike>;
  /** A failure of WebLLM's, as the API's. */
  failure: (err: unknown) => OpenAIError;
  /** Told when the embeddings came through. */
  succeeded: () => void;
}

/** Embeds the inputs of `run.request`, normalised. */
export async function* embedReply(run: EmbedRun, signal: AbortSignal): AsyncGenerator<EmbedOutput> {
  let response: EmbeddingsLike;
  try {
    response = await run.embedAll(run.request.input);
  } catch (err) {
    throw await embedFailure(run, err, signal);
  }
  if (signal.aborted) return;
  const data = [...response.data].sort((a, b) => a.index - b.index);
  const vectors = data.map(({ embedding }) => normalizeInPlace(Float32Array.from(embedding)));
  run.succeeded();
  yield { type: 'embeddings', vectors, prompt_tokens: response.usage.prompt_tokens };
}

/** Why WebLLM refused an embeddings request, naming the input that was too long. */
async function embedFailure(
  run: EmbedRun,
  err: unknown,
  signal: AbortSignal,
): Promise<OpenAIError> {
  const { request, context, embedAll } = run;
  const error = run.failure(err);
  const isTooLong = (e: unknown) => errorParts(e).name === 'EmbeddingExceedContextWindowSizeError';
  if (!isTooLong(err)) return error;
  const { input } = request;
  const embedOne = (one: string | number[]) => embedAll([one] as string[] | number[][]);
  const i = await findTooLong(input, context, embedOne, isTooLong, signal);
  return i === null ? error : inputTooLong(request.model, context, i, input.length);
}
