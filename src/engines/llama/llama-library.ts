/**
 * @module
 * The seam to wllama: the part of its API the engine drives (tests give fakes of it) and the
 * instance made from the library, which is imported lazily here, so that a host that never runs a
 * GGUF never loads it.
 */
import wasmUrl from '@wllama/wllama/esm/wasm/wllama.wasm?url';
import type { LlamaRuntime } from '../../protocol/host/status';
import { llamaCompatUrls } from '../../models/llama-compat';
import type { LlamaChunk } from './llama-chunks';

/** What `loadModel` is given (the fields Hearth sets of wllama's `LoadModelParams`). */
export interface LlamaLoadParams {
  n_ctx: number;
  n_threads: number;
  n_gpu_layers: number;
  n_parallel: number;
  /** An embedding model: llama.cpp pools its states into vectors instead of sampling. */
  embeddings?: boolean;
  n_batch?: number;
  n_ubatch?: number;
}

/** What llama-server answers an embeddings request with (the fields Hearth reads). */
export interface LlamaEmbeddingResponse {
  data: { index: number; embedding: number[] | string }[];
  usage: { prompt_tokens: number };
}

/** The part of wllama's `Wllama` this engine drives (tests give a fake one). */
export interface WllamaLike {
  loadModel(blobs: Blob[], params: LlamaLoadParams): Promise<void>;
  getLoadedContextInfo(): { n_vocab: number; n_ctx: number };
  isMultithread(): boolean;
  getNumThreads(): number;
  createChatCompletion(
    options: Record<string, unknown> & { stream: true; abortSignal: AbortSignal },
  ): Promise<AsyncIterable<LlamaChunk>>;
  createEmbedding(options: {
    input: string[] | number[][];
    /** 2: L2 (Euclidean), llama-server's default, said aloud. */
    embd_normalize: number;
    abortSignal: AbortSignal;
  }): Promise<LlamaEmbeddingResponse>;
  exit(): Promise<void>;
}

/**
 * wllama's own, with its logs kept quiet (a failure is thrown, and the API reports it), running
 * the build chosen here: wllama's own choice would fetch the compatibility build from a CDN, and
 * never use it in Firefox.
 */
export async function createWllama(
  build: LlamaRuntime['build'],
  filesUrl: string,
): Promise<WllamaLike> {
  const { Wllama } = await import('@wllama/wllama');
  const quiet = () => undefined;
  const wllama = new Wllama(
    { default: wasmUrl },
    {
      suppressNativeLog: true,
      logger: { debug: quiet, log: quiet, warn: quiet, error: console.error },
    },
  );
  // wllama runs the compatibility build exactly where it finds no JSPI or no 64-bit memory, as
  // llamaNeedsCompat decides; 'firefox_safari' lets it do so in Firefox too.
  wllama.setCompat(build === 'compat' ? llamaCompatUrls(filesUrl) : null, 'firefox_safari');
  return wllama as unknown as WllamaLike;
}
