/**
 * @module
 * What both real engines do alike with their outputs: tokens to and from the API's `Token`,
 * stop strings held back through `StopFilter`, and several choices run as one stream each.
 */
import type { ChoiceResult, Token } from '../protocol/host/backend';
import { ReplyAccumulator } from '../api/completion';
import type { StopFilter } from '../protocol/host/stop';
import type { ChatRequest } from '../protocol/types';
import type { EngineOutput } from './engine';
import { choiceSeed } from './seeds';

/** How often a reply that sends nothing yet says it is alive (the stall limit is 60 s). */
export const PROGRESS_EVERY_MS = 1000;

/** An engine token as the API carries it: plain text in the common case (the hot path). */
export function tokenOf(output: Extract<EngineOutput, { type: 'token' }>): Token {
  const { text, reasoning, logprobs } = output;
  return reasoning || logprobs
    ? { text, ...(reasoning && { reasoning }), ...(logprobs && { logprobs }) }
    : text;
}

/** A token back as an engine output. */
export function outputOf(token: Token): EngineOutput {
  if (typeof token === 'string') return { type: 'token', text: token };
  return { type: 'token', ...token };
}

/**
 * Token outputs through the stop filter; other outputs pass, and so does every output of a
 * request without stop strings, untouched (this is the per-token path).
 */
export function* filtered(
  stops: StopFilter,
  outputs: readonly EngineOutput[],
): Generator<EngineOutput> {
  for (const output of outputs) {
    if (output.type === 'token' && stops.holds) {
      yield* stops.push([tokenOf(output)]).map(outputOf);
    } else yield output;
  }
}

/**
 * Several choices, one stream each, one after another: each can be stopped, choice i is seeded
 * with a hash of the seed and i (so they differ, even on WebLLM's linear congruential generator,
 * and the same request gives them again), and usage counts the
 * prompt once. Nothing of the reply goes out before the last choice, so progress says the
 * generation runs.
 */
export async function* choicesOneByOne(
  request: ChatRequest,
  signal: AbortSignal,
  stream: (one: ChatRequest) => AsyncIterable<EngineOutput>,
): AsyncGenerator<EngineOutput> {
  const choices: ChoiceResult[] = [];
  let promptTokens = 0;
  let completionTokens = 0;
  let lastProgress = 0;
  for (let i = 0; i < request.n; i += 1) {
    const reply = new ReplyAccumulator();
    let finish: EngineOutput | undefined;
    const seed = request.seed === undefined ? undefined : choiceSeed(request.seed, i);
    const one: ChatRequest = { ...request, n: 1, ...(seed !== undefined && { seed }) };
    for await (const output of stream(one)) {
      if (output.type === 'token') reply.tokens([tokenOf(output)]);
      else if (output.type === 'tool_calls') reply.toolCalls(output.calls);
      else if (output.type === 'end') finish = output;
      if (Date.now() - lastProgress >= PROGRESS_EVERY_MS) {
        lastProgress = Date.now();
        yield { type: 'progress' };
      }
    }
    if (signal.aborted || finish?.type !== 'end') return;
    if (i === 0) promptTokens = finish.usage.prompt_tokens;
    completionTokens += finish.usage.completion_tokens;
    choices.push(...reply.result(finish.finish_reason));
  }
  yield { type: 'choices', choices };
  yield {
    type: 'end',
    finish_reason: choices[0]?.finish_reason ?? 'stop',
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens },
  };
}
