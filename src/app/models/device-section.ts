/**
 * @module
 * What this device can run, said once at the top of the Models view rather than under each of
 * 180 models: what cannot run here and why (no WebGPU, no shader-f16, a software adapter), and,
 * while no language model is on the device, the one to start with, one button away.
 */
import { html, nothing } from 'lit';
import type { HostStatus } from '../../protocol/host/status';
import type { CatalogModel } from '../shared/api-client';
import type { ModelActionsController } from './model-actions';
import { engineLabel, llamaPlace, recommendedModel, sizeOf } from './model-facts';
import { describeModel } from './model-info';
import { onDevice } from './model-search';

/** What the section is drawn from. */
export interface DeviceContext {
  catalog: CatalogModel[];
  host: HostStatus | null;
  actions: ModelActionsController;
  /** What works offline, under a failed download's note (`null`: the suggestion's own). */
  offlineWays: (id: string | null) => unknown;
}

/** The model suggested at the top while no language model is on this device. */
export function suggestedModel(catalog: CatalogModel[]): CatalogModel | undefined {
  // A server's model is no model on this device: the suggestion stays.
  return catalog.some(onDevice) ? undefined : recommendedModel(catalog);
}

/**
 * What this device cannot run, said once, with the next step: the model to start with while
 * none is here (a GGUF on the processor where WebGPU is missing).
 */
export function renderDevice(ctx: DeviceContext) {
  const catalog = ctx.catalog;
  const local = catalog.filter((m) => m.engine !== 'echo' && !m.leaves_device);
  const recommended = suggestedModel(catalog);
  // What runs where, said once rather than under each of 180 models: WebLLM needs WebGPU;
  // GGUF models run in every browser, on the processor where there is no usable GPU.
  const webllm = catalog.filter((m) => m.engine === 'webllm');
  const noWebLLM = webllm.length > 0 && webllm.every((m) => m.available === false);
  const slowWebLLM = webllm.length > 0 && webllm.every((m) => m.available === false || m.slow_here);
  const nothingRuns = local.length > 0 && local.every((m) => m.available === false);
  const cannot = local.filter((m) => m.available === false && !m.downloaded);
  const reasons = new Map<string, number>();
  for (const m of cannot)
    if (m.unavailable_reason)
      reasons.set(m.unavailable_reason, (reasons.get(m.unavailable_reason) ?? 0) + 1);
  const common = [...reasons].sort((a, b) => b[1] - a[1])[0]?.[0];
  let limit: unknown = nothing;
  if (nothingRuns) {
    limit = html`<p role="note">
      This device cannot run any language model here: ${common ?? ''} Only the echo test engine
      works.
    </p>`;
  } else if (noWebLLM) {
    limit = html`<p role="note">
      WebLLM's models cannot run in this browser: ${webllm[0]?.unavailable_reason ?? ''} GGUF models
      run here through llama.cpp, on the processor where there is no usable graphics card (slower
      than a GPU; small models answer well).
    </p>`;
  } else if (cannot.length > 0) {
    const why = common?.includes('shader-f16')
      ? html`, most because this GPU lacks <code>shader-f16</code>: their f16 builds (q4f16, q0f16)
          cannot run here; the f32 builds (q4f32, q0f32) of the same models can.`
      : common
        ? html`, most for this reason: ${common}`
        : '.';
    limit = html`<p role="note">
      This device cannot run
      ${cannot.length === 1 ? 'one variant' : `${cannot.length} of the variants`}${why}
      <em>Show: All models</em> lists them too.
    </p>`;
  }
  // A software adapter: WebLLM runs, but would crawl (device-fit.ts); said once, as above.
  const slow =
    slowWebLLM && !noWebLLM && !nothingRuns
      ? html`<p role="note">${webllm.find((m) => m.slow_here)?.slow_here ?? ''}</p>`
      : nothing;
  if (limit === nothing && slow === nothing && !recommended) return nothing;
  return html`<section class="device" aria-label="What this device can run">
    ${slow} ${limit} ${recommended ? renderRecommended(recommended, ctx) : nothing}
  </section>`;
}

/** The model to start with, one button away. */
function renderRecommended(m: CatalogModel, ctx: DeviceContext) {
  const info = describeModel(m);
  const engine = engineLabel(m);
  const where = m.engine === 'llama.cpp' ? (llamaPlace(ctx.host)?.label ?? 'GPU or CPU') : 'GPU';
  const progress = ctx.host?.downloads.find((d) => d.model === m.id);
  const note = ctx.actions.notes.get(m.id);
  const failed = note?.error ? note : undefined;
  return html`<p>
      No language model is on this device yet. A good first one here:
      <strong>${info.name}</strong> (${[info.quantisation?.label, sizeOf(m)]
        .filter(Boolean)
        .join(', ')}${engine ? `, ${engine} on the ${where}` : ''}).
    </p>
    ${
      progress
        ? html`<p class="muted">Downloading ${info.name}: its progress is on its card below.</p>`
        : failed
          ? // Said here, where it was asked for (its card says it too, as the alert).
            html`<p class="error">${failed.text}</p>
              <button class="primary" @click=${() => ctx.actions.download(m)}>
                Retry downloading ${info.name}
              </button>
              ${failed.unreachable ? ctx.offlineWays(null) : nothing}`
          : html`<button class="primary" @click=${() => ctx.actions.download(m)}>
              Download ${info.name}
            </button>`
    }`;
}
