/**
 * @module
 * One streamed WebLLM generation as engine outputs: its chunks read (./webllm-chunks.ts), its
 * stop strings held back, its text settled against the pipeline's own at the end, its signs of
 * life taken from the engine's steps, and WebLLM's per-model lock released however the stream
 * ends (WebLLM holds it from a generation's start until its iterator finishes or is returned). It
 * drives WebLLM's engine through `ChatEngineLike`, so it needs no import of the library; the
 * engine (./webllm-engine.ts) hands it the model, the device and the failures.
 */
import type { OpenAIError } from '../../protocol/errors';
import { StopFilter } from '../../protocol/host/stop';
import type { ChatRequest } from '../../protocol/types';
import type { EngineOutput } from '../engine';
import { PROGRESS_EVERY_MS, filtered, outputOf } from '../engine-outputs';
import { Pulse, beatOnSteps } from './pulse';
import { ChunkReader, type WebLLMChunk } from './webllm-chunks';
import type { MappedModel, WebLLMRequest } from './webllm-mapping';
import { pipelineView, writtenIds, type PipelineLike } from './webllm-pipeline';

/** The part of WebLLM's `MLCEngine` a stream drives. */
export interface ChatEngineLike {
  chat: { completions: { create(request: never): Promise<unknown> } };
  interruptGenerate(): Promise<void>;
}

/** One generation to stream, and what it needs of the engine. */
export interface StreamRun {
  request: ChatRequest;
  model: MappedModel;
  /** WebLLM's request for it (`toWebLLMRequest`). */
  body: WebLLMRequest;
  engine: ChatEngineLike;
  /** Rejects when the device is lost. */
  lost: Promise<never>;
  /** WebLLM's pipeline of the model, when it is loaded. */
  pipeline: () => Promise<PipelineLike | undefined>;
  /** A failure of WebLLM's, as the API's. */
  failure: (err: unknown) => OpenAIError;
  /** Told of a reply that came through, with its end. */
  ended: (end: EngineOutput) => void;
}

/** One streamed generation, its stop strings held back and its text settled at the end. */
export async function* streamReply(
  run: StreamRun,
  signal: AbortSignal,
): AsyncGenerator<EngineOutput> {
  const { request, model, body, engine, lost } = run;
  let chunks: AsyncIterable<WebLLMChunk>;
  try {
    // Field errors are thrown here; the context window only at the first `next()`.
    const created: unknown = await engine.chat.completions.create(body as never);
    chunks = created as AsyncIterable<WebLLMChunk>;
  } catch (err) {
    throw run.failure(err);
  }
  const iterator = chunks[Symbol.asyncIterator]();
  const reader = new ChunkReader({
    model,
    tools: body.tools !== undefined,
    ...(request.logprobs && { topLogprobs: request.top_logprobs ?? 0 }),
  });
  // The stop strings WebLLM was given (none beside offered tools: see `toWebLLMRequest`).
  const stops = new StopFilter(body.stop);
  // Engine-wide, but the queue runs one request at a time: this one holds the model's lock.
  const interrupt = () => void engine.interruptGenerate();
  signal.addEventListener('abort', interrupt);
  let promptTokens: number | undefined;
  let pipeline = await run.pipeline();
  let written: number | undefined;
  // The request lives by the engine's steps (prefill chunks, decoded tokens), not by its text:
  // a long prefill, or a reply to tools held back whole, sends none for a long time.
  const pulse = new Pulse(PROGRESS_EVERY_MS);
  const unwatch = beatOnSteps(pipeline, pulse);
  /** Whether WebLLM is computing a chunk that nobody will read now. */
  let waiting = false;
  try {
    for (;;) {
      let result: IteratorResult<WebLLMChunk>;
      try {
        waiting = true;
        result = yield* pulse.during(Promise.race([iterator.next(), lost]));
        waiting = false;
      } catch (err) {
        throw run.failure(err);
      }
      if (result.done) break;
      pipeline ??= await run.pipeline();
      // The first chunk comes right after prefill: the KV cache holds the whole prompt.
      if (promptTokens === undefined && typeof pipeline?.filledKVCacheLength === 'number') {
        promptTokens = pipeline.filledKVCacheLength;
      }
      if (signal.aborted || stops.stopped) continue; // drain to WebLLM's end and its lock
      written ??= writtenIds(body, pipeline);
      for (const output of filtered(
        stops,
        reader.read(result.value, pipelineView(pipeline, written)),
      )) {
        pulse.sent();
        yield output;
      }
      if (stops.stopped) interrupt();
    }
    if (signal.aborted || (reader.aborted && !stops.stopped)) return;
    const { outputs, retract } = reader.finish(
      promptTokens,
      pipelineView(pipeline, written ?? writtenIds(body, pipeline)),
    );
    for (const output of outputs) {
      if (output.type === 'token') {
        yield* filtered(stops, [output]);
        continue;
      }
      if (output.type === 'end') {
        yield* stops.end(retract).map(outputOf);
        const end = stops.stopped ? { ...output, finish_reason: 'stop' as const } : output;
        run.ended(end);
        yield end;
        continue;
      }
      yield output;
    }
  } finally {
    unwatch();
    // Closed while a sign of life was out: stop WebLLM rather than wait for its whole reply.
    if (waiting) interrupt();
    signal.removeEventListener('abort', interrupt);
    // Releases WebLLM's per-model lock even when the loop ended early (an iterator left open keeps
    // it).
    await iterator.return?.();
  }
}
