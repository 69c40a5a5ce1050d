/**
 * @module
 * What Hearth reads of WebLLM 0.2.86's `LLMChatPipeline` (the library exposes no other way to
 * these facts): the reply's text and its logprob entries, one per sampled token.
 */
import type { TokenLogprob } from '../../protocol/types';
import type { PipelineView } from './webllm-chunks';
import type { WebLLMRequest } from './webllm-mapping';

/** What the engine reads of WebLLM's pipeline (0.2.86 exposes no other way to these facts). */
export interface PipelineLike {
  filledKVCacheLength?: unknown;
  outputIds?: unknown;
  getMessage?: () => string;
  getTokenLogprobArray?: () => TokenLogprob[];
  tokenizer?: { encode: (text: string) => ArrayLike<number> };
}

/** The empty think block WebLLM 0.2.86 writes into the reply for `enable_thinking: false`. */
const EMPTY_THINKING = '<think>\n\n</think>\n\n';

/**
 * How many output ids WebLLM wrote into the reply itself, before sampling any: the empty think
 * block's, when thinking is turned off (0.2.86, `LLMChatPipeline.prefillStep`).
 */
export function writtenIds(body: WebLLMRequest, pipeline: PipelineLike | undefined): number {
  if (body.extra_body?.enable_thinking !== false) return 0;
  return pipeline?.tokenizer?.encode(EMPTY_THINKING).length ?? 0;
}

/**
 * What the pipeline says of the reply so far: its text, and a logprob entry per token.
 * `written` is how many of its output ids WebLLM wrote itself rather than sampled (the empty
 * think block of `enable_thinking: false`), which have no entries.
 */
export function pipelineView(
  pipeline: PipelineLike | undefined,
  written = 0,
): PipelineView | undefined {
  if (typeof pipeline?.getMessage !== 'function') return undefined;
  const ids = Array.isArray(pipeline.outputIds) ? pipeline.outputIds.length - written : undefined;
  const entries = pipeline.getTokenLogprobArray?.() ?? [];
  // The entry of a closing stop token has no token in the reply (`outputIds` leaves it out).
  return { message: pipeline.getMessage(), logprobs: entries.slice(0, ids ?? entries.length) };
}
