/**
 * @module
 * One variant of a model in the Models view (a quantisation, an engine, a server's copy): its
 * size, engine and where it runs, whether this device can run it and why not, whether it is
 * downloaded or loaded, its download's progress and its actions. Render functions for
 * `<model-manager>`, whose shadow root holds their styles and whose controller does the work.
 */
import { html, nothing } from 'lit';
import type { DownloadProgress } from '../../protocol/host/downloads';
import type { HostStatus } from '../../protocol/host/status';
import { leavesFor, type CatalogModel } from '../shared/api-client';
import { phaseWords } from './downloads/download-words';
import type { ModelActionsController } from './model-actions';
import { engineLabel, factsOf, llamaPlace } from './model-facts';
import type { Variant } from './model-search';
import { formatBytes, formatDuration } from '../shared/styles';

/** What a variant's rendering reads besides the variant. */
export interface VariantContext {
  actions: ModelActionsController;
  host: HostStatus | null;
  /** Deletes or removes a model after its confirmation (and moves the focus on). */
  remove: (id: string, added: boolean) => void;
  /**
   * What works offline, under the note of a download whose host could not be reached; nothing
   * where the view says it elsewhere (the suggestion at the top, for its model).
   */
  offlineWays: (id: string) => unknown;
}

/** A variant as a list item named by its id. */
export function renderVariant({ model: m, info }: Variant, ctx: VariantContext) {
  const remote = leavesFor(m);
  if (remote) return renderRemote(m, info.variant, remote);
  const progress = ctx.host?.downloads.find((d) => d.model === m.id);
  const loading = ctx.host?.loading?.model === m.id ? ctx.host.loading : null;
  const note = ctx.actions.notes.get(m.id);
  const echo = m.engine === 'echo';
  const engine = engineLabel(m);
  const place = m.engine === 'llama.cpp' ? llamaPlace(ctx.host) : null;
  return html`<li aria-label=${m.id} data-id=${m.id} tabindex="-1">
    <div class="about">
      <div class="head">
        <span class="variant">${info.variant || (echo ? 'built in' : 'as published')}</span>
        ${echo ? html`<span class="badge">test engine</span>` : nothing}
        ${engine ? html`<span class="badge engine" title="Runs in ${engine}">${engine}</span>` : nothing}
        ${place ? html`<span class="badge" title=${place.detail}>${place.label}</span>` : nothing}
        ${m.source === 'added' ? html`<span class="badge">added</span>` : nothing}
        ${m.source === 'self-hosted' ? html`<span class="badge">self-hosted</span>` : nothing}
        ${m.downloaded && !echo ? html`<span class="badge ok">downloaded</span>` : nothing}
        ${m.loaded ? html`<span class="badge ok">loaded</span>` : nothing}
        ${m.evicted ? html`<span class="badge warn">evicted</span>` : nothing}
        ${m.available === false ? html`<span class="badge warn">cannot run here</span>` : nothing}
        ${m.available === null ? html`<span class="badge">fit not known yet</span>` : nothing}
        ${m.slow_here ? html`<span class="badge warn">slow here</span>` : nothing}
        ${m.vision ? html`<span class="badge" title="Takes images in its messages">sees images</span>` : nothing}
        ${
          m.embedding
            ? html`<span class="badge" title="For /v1/openai/embeddings; it does not chat"
                >embeddings${m.embedding.dimensions ? ` · ${m.embedding.dimensions} dims` : ''}</span
              >`
            : nothing
        }
      </div>
      <div class="facts">
        ${echo ? 'Repeats your message: for trying the API without a GPU.' : factsOf(m, ctx.host)}
      </div>
      ${info.quantisation ? html`<div class="facts">${info.quantisation.explanation}</div>` : nothing}
      <div class="facts id">API id: <code>${m.id}</code></div>
      ${m.unavailable_reason ? html`<div class="facts error">${m.unavailable_reason}</div>` : nothing}
      ${m.slow_here ? html`<div class="facts error">${m.slow_here}</div>` : nothing}
      ${m.evicted ? html`<div class="facts error">${m.evicted}</div>` : nothing}
    </div>
    ${echo ? nothing : renderActions(m, progress, ctx, variantName(info.name, info.variant, engine))}
    ${progress ? renderProgress(progress, ctx) : nothing}
    ${
      loading
        ? html`<div role="status">
            Loading: ${loading.phase} ${Math.round(loading.progress * 100)} %
            <progress max="1" value=${loading.progress} aria-label="Loading ${m.id}"></progress>
          </div>`
        : nothing
    }
    ${
      note
        ? html`<p class=${note.error ? 'error' : 'muted'} role=${note.error ? 'alert' : 'status'}>
            ${note.text}
          </p>`
        : nothing
    }
    ${note?.unreachable ? ctx.offlineWays(m.id) : nothing}
  </li>`;
}

/** A server's model: where its requests go; nothing to download, load or delete here. */
function renderRemote(m: CatalogModel, variant: string, host: string) {
  const server = m.server?.name ?? m.owned_by;
  return html`<li aria-label=${m.id} data-id=${m.id} tabindex="-1">
    <div class="head">
      <span class="variant">${variant || `on ${server}`}</span>
      <span class="badge" title="Requests for it go to ${host}">leaves this device · ${host}</span>
      ${m.available === false ? html`<span class="badge warn">unavailable</span>` : nothing}
    </div>
    <div class="facts">
      Served by ${server} (added in Settings →
      Servers)${m.server ? html`, as <code>${m.server.upstream_id}</code>` : nothing}: messages to
      it leave this device for ${host}.
    </div>
    <div class="facts id">API id: <code>${m.id}</code></div>
    ${m.unavailable_reason ? html`<div class="facts error">${m.unavailable_reason}</div>` : nothing}
  </li>`;
}

/** A download's progress: bytes, speed, time left, phase. */
export function renderProgress(p: DownloadProgress, ctx: VariantContext) {
  const speed = ctx.actions.speed.speed(p);
  const left =
    speed && p.bytes_total ? formatDuration((p.bytes_total - p.bytes_done) / speed) : null;
  return html`<div role="status" aria-label="Download of ${p.model}">
    <progress
      max=${p.bytes_total ?? 1}
      value=${p.bytes_total ? p.bytes_done : 0}
      aria-label="Downloaded of ${p.model}"
    ></progress>
    <span class="muted">
      ${formatBytes(p.bytes_done)} of ${p.bytes_total === null ? '…' : formatBytes(p.bytes_total)}
      ${speed ? html` · ${formatBytes(speed)}/s` : nothing}
      ${left ? html` · ${left} left` : nothing} · ${phaseWords(p)}
    </span>
  </div>`;
}

/**
 * A variant in words, for its buttons' names: `Qwen3 0.6B, q4f16_1 (WebLLM)`. Each card has a
 * Download button per variant, and a list of buttons (a screen reader's) shows them out of the
 * card: "Download" alone, dozens of times, tells none apart.
 */
export function variantName(name: string, variant: string, engine: string | null): string {
  return `${name}${variant ? `, ${variant}` : ''}${engine ? ` (${engine})` : ''}`;
}

/** The variant's actions, each button named with the variant (`name`) after what it does. */
function renderActions(
  m: CatalogModel,
  progress: DownloadProgress | undefined,
  ctx: VariantContext,
  name: string,
) {
  const { actions, host } = ctx;
  const added = m.source === 'added';
  if (progress) {
    return html`<div class="actions">
      <button aria-label="Cancel download of ${name}" @click=${() => actions.cancel(m.id)}>
        Cancel download
      </button>
    </div>`;
  }
  if (actions.confirming === m.id) {
    return html`<div class="actions" role="group" aria-label="Confirm deletion">
      <span>
        ${added ? `Remove ${m.id} and its files from this device?` : `Delete ${m.id} from this device?`}
      </span>
      <button class="danger" @click=${() => ctx.remove(m.id, added)}>
        ${added ? 'Yes, remove' : 'Yes, delete'}
      </button>
      <button @click=${() => actions.confirm(null)}>Keep it</button>
    </div>`;
  }
  const downloadLabel = actions.empty.has(m.id)
    ? 'Retry'
    : actions.stopped.has(m.id) || m.evicted
      ? 'Resume download'
      : 'Download';
  return html`<div class="actions">
    ${
      !m.downloaded && m.available
        ? html`<button
            class="primary"
            aria-label="${downloadLabel} ${name}"
            @click=${() => actions.download(m)}
          >
            ${downloadLabel}
          </button>`
        : nothing
    }
    ${
      m.downloaded && !m.loaded && m.available
        ? html`<button aria-label="Load ${name}" @click=${() => actions.load(m.id)}>Load</button>`
        : nothing
    }
    ${
      // Loading it lifts the mark (the GPU device was lost twice): the user decides to retry.
      host?.failing_models[m.id]
        ? html`<button aria-label="Try again to load ${name}" @click=${() => actions.load(m.id)}>
            Try again
          </button>`
        : nothing
    }
    ${
      m.loaded
        ? html`<button aria-label="Unload ${name}" @click=${() => actions.unload(m.id)}>
            Unload
          </button>`
        : nothing
    }
    ${
      // A model the user added can always go; others once something of them is here.
      added
        ? html`<button
            class="danger"
            aria-label="Remove ${name}"
            @click=${() => actions.confirm(m.id)}
          >
            Remove
          </button>`
        : m.downloaded || m.evicted || actions.stopped.has(m.id)
          ? html`<button
              class="danger"
              aria-label="Delete ${name}"
              @click=${() => actions.confirm(m.id)}
            >
              Delete
            </button>`
          : nothing
    }
  </div>`;
}
