/**
 * @module
 * What the app offers a device whose WebGPU adapter is a software one (SwiftShader, WARP, lavapipe:
 * WebGPU on the processor). The API still runs WebLLM's models there, for whoever asks by name;
 * the app judges such a device as having no GPU — what it recommends is what the CPU runs well, a
 * GGUF model through llama.cpp, and each WebLLM model's card warns that it would crawl here.
 */
import type { HostStatus } from '../protocol/host/status';
import type { CatalogModel } from './shared/api-client';

/** Why a WebLLM model is not offered on a software adapter, in the user's words. */
export const SOFTWARE_ADAPTER_REASON =
  "This device's graphics adapter is a software one, which runs on the processor: WebLLM's models would crawl. GGUF models run on the CPU with llama.cpp instead.";

/** Whether the host found only a software (fallback) WebGPU adapter. */
export function softwareAdapter(host: HostStatus | null): boolean {
  return host?.device?.adapter?.fallback === true;
}

/**
 * The catalogue as the app offers it on this device: on a software adapter, WebLLM's models are
 * marked `slow_here` (never recommended, warned of on their cards; still there to download for
 * whoever wants them). The same array where there is nothing to mark, so that views keyed on it
 * do not redo their work.
 */
export function fitForDevice(catalog: CatalogModel[], host: HostStatus | null): CatalogModel[] {
  if (!softwareAdapter(host)) return catalog;
  return catalog.map((m) =>
    m.engine === 'webllm' && m.available ? { ...m, slow_here: SOFTWARE_ADAPTER_REASON } : m,
  );
}
