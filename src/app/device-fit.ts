/**
 * @module
 * What the app offers on this device, from each model's `fit` in the catalogue (src/models/fit.ts,
 * judged by the service worker from what the host measured). A model whose fit is `slow` — WebLLM
 * on a software adapter (SwiftShader, WARP, lavapipe: WebGPU on the processor), a GGUF too big for
 * this CPU's speed — is marked `slow_here` with the catalogue's reason: never recommended while a
 * model runs well, warned of on its card, still there to download for whoever wants it.
 */
import type { HostStatus } from '../protocol/host/status';
import type { CatalogModel } from './shared/api-client';

export { SOFTWARE_ADAPTER_REASON } from '../models/fit';

/** Whether the host found only a software (fallback) WebGPU adapter. */
export function softwareAdapter(host: HostStatus | null): boolean {
  return host?.device?.adapter?.fallback === true;
}

/**
 * The catalogue as the app offers it: a model whose fit here is `slow` is marked `slow_here`,
 * with why. The same array where there is nothing to mark, so that views keyed on it do not redo
 * their work.
 */
export function fitForDevice(catalog: CatalogModel[]): CatalogModel[] {
  if (!catalog.some((m) => m.fit === 'slow')) return catalog;
  return catalog.map((m) =>
    m.fit === 'slow' ? { ...m, slow_here: m.fit_reason ?? 'It would run slowly here.' } : m,
  );
}
