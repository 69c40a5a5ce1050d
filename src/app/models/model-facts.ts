/**
 * @module
 * What the Models view says about a model, as plain functions: the one to suggest first, its
 * facts line, which engine runs it and on what, a download's speed, and what the user typed in
 * "Add a model" as the API's `source`.
 */
import { llamaOnGpu } from '../../models/catalog';
import type { DownloadProgress } from '../../protocol/host/downloads';
import { recommendModel } from '../../models/recommend';
import type { HostStatus } from '../../protocol/host/status';
import type { CatalogModel } from '../shared/api-client';
import { formatBytes } from '../shared/styles';

export { recommendedRank } from '../../models/recommend';

/**
 * The model to suggest to someone who has none: the shared rule (src/models/recommend.ts), which
 * `hearth.models.recommend()` gives sites too — a small chat model whose fit here is `good`, else
 * `slow`; WebLLM where it runs well, f16 where the GPU has it, else the smallest GGUF worth
 * starting with.
 */
export function recommendedModel(models: readonly CatalogModel[]): CatalogModel | undefined {
  return recommendModel(models) ?? undefined;
}

/** The engine's name as the badge shows it. */
export function engineLabel(m: CatalogModel): string | null {
  if (m.engine === 'webllm') return 'WebLLM';
  if (m.engine === 'llama.cpp') return 'llama.cpp';
  return null;
}

/** Where llama.cpp runs here, as the host measured it. */
export interface LlamaPlace {
  /** `GPU` (WebGPU) or `CPU`. */
  label: 'GPU' | 'CPU';
  /** In words, for the facts line. */
  detail: string;
}

/**
 * Where llama.cpp runs a GGUF on this device: the host's own word when it gives one, else what
 * its device facts imply (WebGPU needs `shader-f16`); null until a host has measured.
 */
export function llamaPlace(host: HostStatus | null): LlamaPlace | null {
  if (!host) return null;
  const runtime = host.llama;
  if (runtime) {
    // The compatibility build is slower: say so, as the reason a model runs slower here.
    const compat = runtime.build === 'compat' ? ', compatibility build' : '';
    if (runtime.backend === 'webgpu')
      return { label: 'GPU', detail: `runs on the GPU${compat ? ` (${compat.slice(2)})` : ''}` };
    const threads = `${runtime.threads} thread${runtime.threads === 1 ? '' : 's'}`;
    return { label: 'CPU', detail: `runs on the CPU (${threads}${compat})` };
  }
  if (!host.device) return null;
  return llamaOnGpu(host.device)
    ? { label: 'GPU', detail: 'runs on the GPU' }
    : { label: 'CPU', detail: 'runs on the CPU' };
}

/** `about 200 MB`, or that the size is not known. */
export function sizeOf(m: CatalogModel): string {
  return m.size_mb === null ? 'size unknown' : `about ${formatBytes(m.size_mb * 1024 ** 2)}`;
}

/**
 * `Download about 200 MB · GPU memory 580 MB · context 4,096 tokens`; for a GGUF, where it runs
 * instead of the GPU memory (llama.cpp needs no GPU).
 */
export function factsOf(m: CatalogModel, host: HostStatus | null): string {
  const context = `context ${m.context_window.toLocaleString()} tokens`;
  const size = m.downloaded ? `Size ${sizeOf(m)}` : `Download ${sizeOf(m)}`;
  if (m.engine === 'llama.cpp') {
    const place = llamaPlace(host)?.detail ?? 'runs on the GPU or the CPU';
    return `${size} · ${place} · ${context}`;
  }
  const vram =
    m.vram_required_mb === null ? 'unknown' : formatBytes(m.vram_required_mb * 1024 ** 2);
  return `Download ${sizeOf(m)} · GPU memory ${vram} · ${context}`;
}

/** `user/repo` or `user/repo:quant`, as Hugging Face and llama.cpp's `-hf` name a GGUF. */
const HF_ID = /^[\w.-]+\/[\w.-]+(?::[\w.-]+)?$/;

/**
 * What the user typed as the `source` of `POST /v1/hearth/models`: a URL or a path of the app as
 * it is, a Hugging Face id (`user/repo:quant`) with `hf:` before it. Anything else goes as typed,
 * and the API says what is wrong with it.
 */
export function sourceOf(typed: string): string {
  const text = typed.trim();
  if (/^hf:/i.test(text)) return `hf:${text.slice(3)}`;
  if (HF_ID.test(text) && !/\.gguf$/i.test(text)) return `hf:${text}`;
  return text;
}

/** Download speed from the progress seen over the last seconds. */
export class SpeedMeter {
  readonly #samples = new Map<string, { t: number; bytes: number }[]>();

  /** Bytes per second of `progress` (null until there are two samples). */
  speed(progress: DownloadProgress): number | null {
    const now = performance.now();
    const samples = this.#samples.get(progress.model) ?? [];
    if (samples.at(-1)?.bytes !== progress.bytes_done)
      samples.push({ t: now, bytes: progress.bytes_done });
    while (samples.length > 2 && now - samples[0]!.t > 8000) samples.shift();
    this.#samples.set(progress.model, samples);
    const first = samples[0];
    const last = samples.at(-1);
    if (!first || !last || last.t - first.t < 500) return null;
    return (last.bytes - first.bytes) / ((last.t - first.t) / 1000);
  }

  forget(model: string): void {
    this.#samples.delete(model);
  }
}
