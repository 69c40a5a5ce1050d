/**
 * @module
 * What both engines need to answer an embeddings request well: which input a refusal is about.
 * Neither llama.cpp nor WebLLM names the input that is longer than the model takes, and neither
 * gives the engine worker a tokenizer to count first; so the inputs that may be too long (by
 * their length: a token covers at least one UTF-8 byte) are tried alone, and the first that fails
 * is named, `input[i]` as the API's `param`.
 */
import { OpenAIError } from '../protocol/errors';

/** `input[i]` of a request of `total` inputs, or `input` when it has one. */
export function inputParam(index: number, total: number): string {
  return total === 1 ? 'input' : `input[${index}]`;
}

/** The 400 for input `index`, longer than `model` embeds at once (`context` tokens). */
export function inputTooLong(
  model: string,
  context: number,
  index: number,
  total: number,
): OpenAIError {
  return new OpenAIError(
    'context_length_exceeded',
    `Input ${index} is longer than ${model} can embed at once (${context} tokens, its special tokens included); split it into shorter passages.`,
    { param: inputParam(index, total) },
  );
}

/**
 * Whether an input may have more than `context` tokens: each token covers at least one UTF-8
 * byte (byte fallback), and the tokenizer may add one at each end.
 */
export function mayExceed(input: string | number[], context: number): boolean {
  const length = typeof input === 'string' ? new TextEncoder().encode(input).length : input.length;
  return length + 2 > context;
}

/**
 * The index (within `inputs`) of the first input that `embedOne` refuses as too long, trying only
 * those that may be; null when none is (the refusal was about something else).
 */
export async function findTooLong(
  inputs: readonly (string | number[])[],
  context: number,
  embedOne: (input: string | number[]) => Promise<unknown>,
  isTooLong: (err: unknown) => boolean,
  signal: AbortSignal,
): Promise<number | null> {
  for (const [i, input] of inputs.entries()) {
    if (signal.aborted) return null;
    if (!mayExceed(input, context)) continue;
    try {
      await embedOne(input);
    } catch (err) {
      if (isTooLong(err)) return i;
    }
  }
  return null;
}
