/**
 * @module
 * src/engines/ is the engines, one folder each (echo/, webllm/, llama/) behind this one Engine
 * interface, with what they share: outputs to the API's tokens, seeds, embedding inputs. The top
 * folder imports src/protocol, src/models and src/api (chat-run, completion), never one engine;
 * an engine imports its folder, src/engines and those, and no engine host but the WebLLM engine's
 * device losses (src/engine-host/device-losses.ts). Only src/engines/webllm/webllm-engine.ts
 * imports WebLLM.
 *
 * The interface every engine implements. It is shaped by WebLLM's constraints: one generation at a
 * time per engine (the queue guarantees it), a model load that runs on its own and reports
 * progress, and a generation that stops when its signal aborts — which an engine over WebLLM turns
 * into `interruptGenerate()` plus `iterator.return()`, so the library's per-model lock is always
 * released.
 */
import type { ChoiceResult, EngineUsage } from '../protocol/host/backend';
import type {
  ChatRequest,
  EmbeddingRequest,
  FinishReason,
  TokenLogprob,
  ToolCall,
} from '../protocol/types';

/** What a generation yields: tokens in order (or tool calls, or whole choices), then one end. */
export type EngineOutput =
  | {
      type: 'token';
      text: string;
      /** Thinking aloud, not the answer. */
      reasoning?: boolean;
      logprobs?: TokenLogprob[];
    }
  | { type: 'tool_calls'; calls: ToolCall[] }
  | { type: 'choices'; choices: ChoiceResult[] }
  /** A sign of life while a reply that goes out whole (several choices) is generated. */
  | { type: 'progress' }
  | { type: 'end'; finish_reason: FinishReason; usage: EngineUsage };

/** What embedding yields: signs of life while a long batch runs, then every vector in order. */
export type EmbedOutput =
  { type: 'progress' } | { type: 'embeddings'; vectors: Float32Array[]; prompt_tokens: number };

/** Progress of a model load, phase by phase. */
export interface LoadProgress {
  /** 0–1 within the phase. */
  progress: number;
  /** The phase, e.g. `fetch`, `load`, `compile`. */
  phase: string;
  /** The engine's own words. */
  text: string;
}

/** An engine that serves some models. */
export interface Engine {
  /** Whether this engine serves `model`. */
  serves(model: string): boolean;
  /** The models it can answer with now (for a GPU engine: those on the device). */
  readonly models: readonly string[];
  /** The model on its GPU, if any; engines without a load step say null. */
  readonly loadedModel: string | null;
  /** Whether `generate` can run `model` without a `load` first. */
  isLoaded(model: string): boolean;
  /**
   * Puts `model` on the GPU so that `generate` can run; resolves at once when it is there. A
   * load is not cancelled by the request that caused it.
   */
  load(model: string, onProgress?: (progress: LoadProgress) => void): Promise<void>;
  /**
   * Takes its model out of memory; resolves at once when there is none. Engines with a load step
   * have it: one model is in the device's memory at a time, whichever engine runs it.
   */
  unload?(): Promise<void>;
  /**
   * Generates the reply to `request` with the loaded model. When `signal` aborts, the generation
   * stops before its next token and the iterable ends without an end event. Failures are thrown
   * (an `OpenAIError` where the cause is known).
   */
  generate(request: ChatRequest, signal: AbortSignal): AsyncIterable<EngineOutput>;
  /**
   * Embeds the request's inputs with the loaded embedding model (engines that serve embedding
   * models have it). When `signal` aborts it stops and ends without vectors.
   */
  embed?(request: EmbeddingRequest, signal: AbortSignal): AsyncIterable<EmbedOutput>;
  /**
   * Whether `model` is loaded beside whatever model is in memory instead of in its place (a small
   * embedding model kept next to the chat model, so that retrieval does not reload either).
   */
  loadsBeside?(model: string): boolean;
}
