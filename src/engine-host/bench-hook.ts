/**
 * @module
 * `npm run bench` only: the engine worker's own llama.cpp engine, reached by the bench page on a
 * `BroadcastChannel`, so that the bench compares the API with the same engine called directly in
 * the same worker, in the same run (bench/run.mjs): chat generations and embeddings. It also sets
 * how many threads llama.cpp gets at its next load. The worker installs it only in a bench build
 * (`HEARTH_BENCH=1`, which sets `VITE_HEARTH_BENCH`); other builds leave this module out.
 */
import { parseChatRequest } from '../protocol/validate';
import { llamaNeedsCompat } from '../models/llama-compat';
import type { LlamaEngine } from '../engines/llama/llama-engine';
import type { LlamaPlatform } from '../engines/llama/llama-runtime';

/** The channel the bench page and the engine worker talk on. */
export const BENCH_CHANNEL = 'hearth:bench';

/** What the bench page asks. */
export type BenchCall =
  /** Threads llama.cpp gets from its next load on (at most what `llamaThreads` allows). */
  | { id: number; type: 'threads'; threads: number }
  /**
   * One chat request (the API's JSON body, `stream` or not) given to the engine directly; with
   * `first_only`, stopped after its first token, and with `max_ms`, after the first token that
   * comes that long after the call, as a client that aborts.
   */
  | { id: number; type: 'generate'; body: unknown; first_only?: boolean; max_ms?: number }
  /**
   * Embeddings requests given to the engine directly, one after another, each of one batch of
   * `batches` (the model must be loaded already, as the API loads it).
   */
  | { id: number; type: 'embed'; model: string; batches: string[][] };

/** What one direct generation took, timed in the worker. */
export interface DirectRun {
  /** From the call to the first token, ms. */
  ttft_ms: number;
  /** When each token came (content pieces, as the API streams them), ms after the first. */
  times: number[];
  /** llama.cpp's own decode tokens/s, from its timings, when it gave them. */
  engine_tps: number | null;
}

/** What direct embeddings requests took, timed in the worker. */
export interface DirectEmbed {
  /** From the first call to the last vector, ms. */
  ms: number;
  /** Vectors received, all requests together. */
  vectors: number;
  /** The length of the last vector. */
  dimensions: number;
  /** Tokens llama.cpp counted, all requests together. */
  prompt_tokens: number;
}

/** What the worker answers: the call's id and its result or error. */
export type BenchReply = { id: number; reply: true } & (
  { result: DirectRun | DirectEmbed | { threads: number } } | { error: string }
);

/** The bench's hook into the engine worker. */
export interface BenchHook {
  /** This worker's isolation and cores, with the threads the bench set (for `LlamaEngineOptions.platform`). */
  platform(): LlamaPlatform;
  /** Answers the bench page's calls with `llama`. */
  serve(llama: LlamaEngine): void;
}

/**
 * Runs `body` on `llama` itself, as the queue would, and times its tokens. It bypasses the queue:
 * the bench calls it only while no request runs.
 */
async function direct(
  llama: LlamaEngine,
  body: unknown,
  { firstOnly, maxMs }: { firstOnly: boolean; maxMs: number },
): Promise<DirectRun> {
  const request = parseChatRequest(body);
  const abort = new AbortController();
  const started = performance.now();
  let first = 0;
  const times: number[] = [];
  let engineTps: number | null = null;
  for await (const output of llama.generate(request, abort.signal)) {
    if (output.type === 'end') engineTps = output.usage.speed?.decode_tokens_per_s ?? null;
    if (output.type !== 'token') continue;
    const now = performance.now();
    if (times.length === 0) first = now;
    times.push(now - first);
    if (firstOnly || now - started > maxMs) {
      abort.abort();
      break;
    }
  }
  return { ttft_ms: first - started, times, engine_tps: engineTps };
}

/**
 * Runs each batch on `llama.embed` itself, one request after another, as the queue would, and
 * times them all. It bypasses the queue: the bench calls it only while no request runs.
 */
async function directEmbed(
  llama: LlamaEngine,
  model: string,
  batches: string[][],
): Promise<DirectEmbed> {
  const signal = new AbortController().signal;
  let vectors = 0;
  let dimensions = 0;
  let tokens = 0;
  const started = performance.now();
  for (const input of batches) {
    for await (const output of llama.embed({ model, input }, signal)) {
      if (output.type !== 'embeddings') continue;
      vectors += output.vectors.length;
      dimensions = output.vectors.at(-1)?.length ?? 0;
      tokens += output.prompt_tokens;
    }
  }
  return { ms: performance.now() - started, vectors, dimensions, prompt_tokens: tokens };
}

/** The hook; `serve` starts answering. */
export function benchHook(): BenchHook {
  let threads: number | undefined;
  return {
    platform: () => ({
      isolated: globalThis.crossOriginIsolated === true,
      cores: navigator.hardwareConcurrency,
      compat: llamaNeedsCompat(),
      ...(threads !== undefined && { threads }),
    }),
    serve(llama) {
      const channel = new BroadcastChannel(BENCH_CHANNEL);
      channel.onmessage = async ({ data }: MessageEvent<BenchCall | BenchReply>) => {
        if ('reply' in data) return;
        try {
          if (data.type === 'threads') {
            threads = data.threads;
            channel.postMessage({ id: data.id, reply: true, result: { threads } });
            return;
          }
          const result =
            data.type === 'embed'
              ? await directEmbed(llama, data.model, data.batches)
              : await direct(llama, data.body, {
                  firstOnly: data.first_only === true,
                  maxMs: data.max_ms ?? Infinity,
                });
          channel.postMessage({ id: data.id, reply: true, result } satisfies BenchReply);
        } catch (err) {
          const error = err instanceof Error ? err.message : String(err);
          channel.postMessage({ id: data.id, reply: true, error } satisfies BenchReply);
        }
      };
    },
  };
}
