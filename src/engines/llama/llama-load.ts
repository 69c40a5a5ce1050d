/**
 * @module
 * A GGUF model into a new wllama instance: its files read from the device (or fetched, and not
 * kept, when the load comes before the download), llama.cpp started within a deadline, and the
 * load checked after, for wllama's traps (notes/wllama-3.13.md): `loadModel` never settles when
 * the CSP blocks its wasm or worker, and resolves even when llama.cpp failed to load.
 */
import type { GgufEntry } from '../../models/catalog';
import { ggufFiles } from '../../models/on-device';
import { OpenAIError } from '../../protocol/errors';
import type { LlamaRuntime } from '../../protocol/host/status';
import type { LoadProgress } from '../engine';
import { createWllama, type LlamaLoadParams, type WllamaLike } from './llama-library';
import { defaultLoadDeadlineMs, type LlamaPlan } from './llama-runtime';

/** What a load needs from the worker (part of `LlamaEngineOptions`). */
export interface LlamaLoadOptions {
  /** The app's address, against which relative file URLs resolve. */
  appUrl: string;
  /** Where Hearth's own files are served (the compatibility build); `appUrl` if not given. */
  filesUrl?: string;
  /** Fetches what is not on the device; by default, `fetch`. */
  fetch?: (url: string) => Promise<Response>;
  /** Makes a wllama instance; by default, the library's, imported on first use. */
  createWllama?: (build: LlamaRuntime['build']) => Promise<WllamaLike>;
  /** How long a load of `bytes` may take before it counts as hung. */
  loadDeadlineMs?: (bytes: number) => number;
}

/** Where a GGUF's files are read from. */
export interface GgufFiles {
  /** Its files as Blobs in order, or null when one is missing. */
  blobs(entry: GgufEntry): Promise<Blob[] | null>;
  /** Whether every file is on the device. */
  present(entry: GgufEntry): Promise<boolean>;
}

/** What a load sets itself; the runtime sets the threads and GPU layers. */
export type StartParams = Omit<LlamaLoadParams, 'n_threads' | 'n_gpu_layers'>;

/** Rejects after `ms` with `error`; the timer is cleared when `settled` settles. */
function deadline(ms: number, settled: Promise<unknown>, error: () => Error): Promise<never> {
  return new Promise<never>((_, reject) => {
    const timer = setTimeout(() => reject(error()), ms);
    void settled.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
  });
}

/** Starts a wllama instance with the model of `entry`, within the load's deadline. */
export async function startWllama(
  options: LlamaLoadOptions,
  files: GgufFiles,
  plan: () => LlamaPlan,
  entry: GgufEntry,
  report: (progress: LoadProgress) => void,
  params: StartParams,
): Promise<{ wllama: WllamaLike; runtime: LlamaRuntime; vocab: number }> {
  const model = entry.id;
  report({ phase: 'load', progress: 0, text: `Reading ${model} from the device` });
  const blobs = await readBlobs(options, files, entry, report);
  const bytes = blobs.reduce((n, b) => n + b.size, 0);
  const { runtime, gpuLayers } = plan();
  report({
    phase: 'compile',
    progress: 0,
    text: `Starting llama.cpp (${runtime.backend === 'webgpu' ? 'WebGPU' : `CPU, ${runtime.threads} thread${runtime.threads === 1 ? '' : 's'}`}${runtime.build === 'compat' ? ', compatibility build' : ''})`,
  });
  const wllama = await (
    options.createWllama ?? ((build) => createWllama(build, options.filesUrl ?? options.appUrl))
  )(runtime.build);
  const limitMs = (options.loadDeadlineMs ?? defaultLoadDeadlineMs)(bytes);
  const loading = wllama.loadModel(blobs, {
    ...params,
    n_threads: runtime.threads,
    n_gpu_layers: gpuLayers,
  });
  try {
    await Promise.race([
      loading,
      deadline(
        limitMs,
        loading,
        () =>
          new OpenAIError(
            'engine_error',
            `Loading ${model} did not finish within ${Math.round(limitMs / 1000)} s. If the page's Content-Security-Policy lacks 'wasm-unsafe-eval' (script-src) or blob: (worker-src), llama.cpp cannot start.`,
          ),
      ),
    ]);
  } catch (err) {
    // An instance that hangs or failed is not reused; its exit may hang too.
    void wllama.exit().catch(() => undefined);
    if (err instanceof OpenAIError) throw err;
    const { message } = err instanceof Error ? err : { message: String(err) };
    throw new OpenAIError('engine_error', `Loading ${model} failed: ${message}`);
  }
  // wllama resolves even when llama.cpp could not load the file: only the context tells.
  const info = wllama.getLoadedContextInfo();
  if (!(info.n_vocab > 0)) {
    void wllama.exit().catch(() => undefined);
    throw new OpenAIError(
      'engine_error',
      `llama.cpp could not load ${model}: its file is cut short, or not a GGUF that llama.cpp reads. Delete it and download it again.`,
    );
  }
  return {
    wllama,
    vocab: info.n_vocab,
    runtime: { ...runtime, threads: wllama.isMultithread() ? wllama.getNumThreads() : 1 },
  };
}

/**
 * The model's files as Blobs, from the device; what is missing is fetched and not kept (a
 * download keeps files, a load only uses them).
 */
async function readBlobs(
  options: LlamaLoadOptions,
  files: GgufFiles,
  entry: GgufEntry,
  report: (progress: LoadProgress) => void,
): Promise<Blob[]> {
  const stored = await files.blobs(entry);
  if (stored) {
    report({ phase: 'load', progress: 1, text: `Read ${entry.id} from the device` });
    return stored;
  }
  // Not all on the device (a load asked for before the download): fetch every file.
  const fetchFile = options.fetch ?? ((url: string) => fetch(url));
  const blobs: Blob[] = [];
  const modelFiles = ggufFiles(entry, options.appUrl);
  for (const [i, file] of modelFiles.entries()) {
    report({
      phase: 'fetch',
      progress: i / modelFiles.length,
      text: `Fetching ${file.url} (not on the device)`,
    });
    let response: Response;
    try {
      response = await fetchFile(file.url);
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new OpenAIError('engine_error', `Fetching ${file.url} failed: ${detail}`);
    }
    if (!response.ok) {
      throw new OpenAIError(
        'engine_error',
        `Fetching ${file.url} failed: HTTP ${response.status}; download ${entry.id} first.`,
      );
    }
    blobs.push(await response.blob());
  }
  report({ phase: 'fetch', progress: 1, text: `Fetched ${entry.id}` });
  return blobs;
}
