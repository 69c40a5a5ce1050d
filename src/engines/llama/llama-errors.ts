/**
 * @module
 * llama.cpp's failures (through wllama 3.13) as the API's errors, and which of them leave the
 * wasm instance unusable. Both the chat engine and embeddings map their failures here, so the
 * wording of an error is the same whichever call met it.
 */
import { OpenAIError } from '../../protocol/errors';
import type { ChatRequest } from '../../protocol/types';

/** What an error from wllama looks like: its name, message and, for a `WllamaError`, its type. */
export function errorParts(err: unknown): { name: string; message: string; type?: string } {
  if (err instanceof Error) {
    const type = (err as { type?: unknown }).type;
    return {
      name: err.name,
      message: err.message,
      ...(typeof type === 'string' && { type }),
    };
  }
  return { name: 'Error', message: String(err) };
}

/** "request (N tokens) exceeds the available context size (M tokens)". */
const CONTEXT_EXCEEDED =
  /request \((\d+) tokens\) exceeds the available context size \((\d+) tokens\)/;
/** The sampler could not take the grammar llama.cpp made for `response_format` or `tools`. */
const SAMPLER_FAILED = /^Failed to (?:initialize samplers|parse grammar)/;
/**
 * wllama 3.13 answers any request llama-server refuses while reading it (a schema it cannot turn
 * into a grammar, for one) with this, from a glue message it misreads; the model stays usable.
 */
const GLUE_MISREAD = /^Invalid typed array length/;

/** What the error mapping needs to know of the request that failed. */
export interface FailedRequest {
  model: string;
  /** A chat request; absent for embeddings. */
  request?: ChatRequest;
}

/** A failure of llama.cpp's (through wllama), as the API's. */
export function fromLlamaError(err: unknown, { model, request }: FailedRequest): OpenAIError {
  if (err instanceof OpenAIError) return err;
  const { name, message, type } = errorParts(err);
  const context = CONTEXT_EXCEEDED.exec(message);
  if (context) {
    return new OpenAIError(
      'context_length_exceeded',
      `This model's context is ${context[2]} tokens, and the messages take ${context[1]}; shorten the conversation.`,
      { param: 'messages' },
    );
  }
  if (type === 'kv_cache_full') {
    return new OpenAIError(
      'context_length_exceeded',
      `The messages and the reply do not fit ${model}'s context: ${message}`,
      { param: 'messages' },
    );
  }
  if (request && SAMPLER_FAILED.test(message)) {
    const param = request.response_format ? 'response_format' : request.tools ? 'tools' : null;
    const what = param === 'tools' ? 'tool calls' : 'JSON';
    return new OpenAIError(
      'unsupported_parameter',
      `llama.cpp cannot constrain ${model}'s reply to ${what}: the grammar it made was refused (${message}). Models with a SentencePiece tokenizer meet this most.`,
      { param },
    );
  }
  if (request && name === 'RuntimeError' && GLUE_MISREAD.test(message)) {
    const schema = request.response_format?.type === 'json_schema';
    return schema
      ? new OpenAIError(
          'invalid_value',
          'llama.cpp could not turn this JSON schema into a grammar; simplify it (llama.cpp supports most of JSON Schema, not all).',
          { param: 'response_format.json_schema.schema' },
        )
      : new OpenAIError(
          'engine_error',
          `llama.cpp refused the request while reading it (${message}).`,
        );
  }
  return new OpenAIError('engine_error', `llama.cpp failed: ${type ?? name}: ${message}`);
}

/** Whether a failure leaves the wasm instance unusable, so the model must load again. */
export function isFatal(err: unknown): boolean {
  const { name, message } = errorParts(err);
  return name === 'RuntimeError' && !GLUE_MISREAD.test(message);
}
