/**
 * @module
 * `<model-manager>`: the catalogue with what each model needs and whether this device can run
 * it, and the models on the device: download (with progress, speed and time left, also for
 * downloads another tab started), cancel, resume, delete, load and unload, and trying again a
 * model marked as failing on this device.
 */
import { css, html, LitElement, nothing } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import type { DownloadProgress } from '../openai/downloads';
import type { HostStatus } from '../openai/status';
import { ApiError, call, download, modelPath, type CatalogModel } from './api-client';
import { formatBytes, formatDuration, shared } from './styles';

/** Models worth starting with, smallest first; the first this device can run is recommended. */
const RECOMMENDED = [
  'Qwen3-0.6B',
  'Llama-3.2-1B-Instruct',
  'SmolLM2-360M-Instruct',
  'Qwen2.5-0.5B-Instruct',
  'gemma-2-2b-it',
];

/** The model to suggest to someone who has none: a small one this device can run. */
export function recommendedModel(models: readonly CatalogModel[]): CatalogModel | undefined {
  const runnable = models.filter((m) => m.available && m.id !== ECHO_MODEL_ID);
  for (const name of RECOMMENDED) {
    const candidates = runnable.filter((m) => m.id.includes(name));
    // f16 where the GPU has it (faster, smaller), else f32.
    const pick =
      candidates.find((m) => m.required_features.includes('shader-f16')) ?? candidates[0];
    if (pick) return pick;
  }
  return undefined;
}

/** Download speed from the progress seen over the last seconds. */
class SpeedMeter {
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

/** @fires catalog-stale - something changed what the catalogue says. */
export class ModelManager extends LitElement {
  static override properties = {
    catalog: { attribute: false },
    host: { attribute: false },
    query: { state: true },
    showUnavailable: { state: true },
    notes: { state: true },
    confirming: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
        padding: 1em;
        max-width: 60em;
        margin: 0 auto;
      }
      h2 {
        margin: 0 0 0.5em;
        font-size: 1.3em;
      }
      .filters {
        display: flex;
        flex-wrap: wrap;
        gap: 1em;
        align-items: center;
        margin-bottom: 1em;
      }
      .filters input[type='search'] {
        flex: 1 1 16em;
      }
      ul {
        list-style: none;
        padding: 0;
        margin: 0;
        display: flex;
        flex-direction: column;
        gap: 0.6em;
      }
      li {
        border: 1px solid var(--border);
        border-radius: var(--radius);
        padding: 0.7em 0.9em;
        background: var(--bg-raised);
      }
      .head {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4em;
        align-items: baseline;
      }
      .name {
        font-weight: 600;
        overflow-wrap: anywhere;
        margin-right: 0.3em;
      }
      .facts {
        font-size: 0.88em;
        color: var(--fg-soft);
        margin: 0.2em 0;
      }
      .actions {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4em;
        margin-top: 0.4em;
      }
      progress {
        width: 100%;
      }
      .recommend {
        border: 1px solid var(--accent);
        border-radius: var(--radius);
        padding: 0.8em 1em;
        margin-bottom: 1em;
      }
    `,
  ];

  declare catalog: CatalogModel[];
  declare host: HostStatus | null;
  declare private query: string;
  declare private showUnavailable: boolean;
  /** What happened to a model's last action, by id: an error, or a note. */
  declare private notes: Map<string, { text: string; error: boolean }>;
  /** The model whose deletion waits for a confirmation. */
  declare private confirming: string | null;
  /** Models whose download stopped before the end (a later one resumes). */
  readonly #stopped = new Set<string>();
  readonly #speed = new SpeedMeter();

  constructor() {
    super();
    this.catalog = [];
    this.host = null;
    this.query = '';
    this.showUnavailable = false;
    this.notes = new Map();
    this.confirming = null;
  }

  #note(id: string, text: string | null, error = false): void {
    const notes = new Map(this.notes);
    if (text === null) notes.delete(id);
    else notes.set(id, { text, error });
    this.notes = notes;
  }

  #stale(): void {
    this.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
  }

  async #act(id: string, action: () => Promise<unknown>, done?: string): Promise<void> {
    this.#note(id, null);
    try {
      await action();
      if (done) this.#note(id, done);
    } catch (err) {
      this.#note(id, err instanceof Error ? err.message : String(err), true);
    } finally {
      this.#stale();
    }
  }

  async #download(id: string): Promise<void> {
    this.#note(id, null);
    this.#stopped.delete(id);
    try {
      let last: DownloadProgress | undefined;
      for await (const progress of download(id)) last = progress;
      if (last?.phase === 'failed') {
        this.#stopped.add(id);
        this.#note(id, last.error?.message ?? 'The download failed.', true);
      } else if (last?.phase === 'cancelled') {
        this.#stopped.add(id);
      }
    } catch (err) {
      this.#stopped.add(id);
      this.#note(id, err instanceof ApiError ? err.message : String(err), true);
    } finally {
      this.#speed.forget(id);
      this.#stale();
    }
  }

  #cancel(id: string): Promise<void> {
    this.#stopped.add(id);
    return this.#act(id, () => call(`${modelPath(id)}/download`, { method: 'DELETE' }));
  }

  #delete(id: string): Promise<void> {
    this.confirming = null;
    this.#stopped.delete(id);
    return this.#act(id, () => call(modelPath(id), { method: 'DELETE' }), 'Deleted.');
  }

  #load(id: string): Promise<void> {
    return this.#act(id, () => call(`${modelPath(id)}/load`, { method: 'POST' }));
  }

  #unload(id: string): Promise<void> {
    return this.#act(id, () => call('hearth/unload', { method: 'POST' }));
  }

  protected override render() {
    const q = this.query.trim().toLowerCase();
    const shown = this.catalog
      // A model whose fit is not known yet is shown: hiding it would say it cannot run.
      .filter((m) => this.showUnavailable || m.available !== false || m.downloaded)
      .filter((m) => q === '' || m.id.toLowerCase().includes(q))
      .sort(
        (a, b) =>
          Number(b.loaded) - Number(a.loaded) ||
          Number(b.downloaded) - Number(a.downloaded) ||
          (a.size_mb ?? Infinity) - (b.size_mb ?? Infinity),
      );
    const hasReal = this.catalog.some((m) => m.downloaded && m.id !== ECHO_MODEL_ID);
    const recommended = hasReal ? undefined : recommendedModel(this.catalog);
    const hidden = this.catalog.filter((m) => m.available === false && !m.downloaded).length;
    return html`
      <h2>Models</h2>
      ${
        recommended
          ? html`<div class="recommend">
              <p>
                No language model is on this device yet. A good first one here:
                <strong>${recommended.id}</strong> (${sizeOf(recommended)}).
              </p>
              <button class="primary" @click=${() => this.#download(recommended.id)}>
                Download ${recommended.id}
              </button>
            </div>`
          : nothing
      }
      ${
        this.catalog.length > 0 &&
        this.catalog.every((m) => m.available === false || m.id === ECHO_MODEL_ID)
          ? html`<p class="notice" role="note">
              This device cannot run any language model here:
              ${this.catalog.find((m) => m.available === false)?.unavailable_reason ?? ''} Only the
              echo test engine works.
            </p>`
          : nothing
      }
      <div class="filters">
        <label class="sr-only" for="search">Search models</label>
        <input
          id="search"
          type="search"
          placeholder="Search models"
          .value=${this.query}
          @input=${(e: Event) => (this.query = (e.target as HTMLInputElement).value)}
        />
        <label>
          <input
            type="checkbox"
            .checked=${this.showUnavailable}
            @change=${(e: Event) => (this.showUnavailable = (e.target as HTMLInputElement).checked)}
          />
          Show the ${hidden} models this device cannot run
        </label>
      </div>
      <ul aria-label="Models">
        ${shown.map((m) => this.#renderModel(m))}
      </ul>
    `;
  }

  #renderModel(m: CatalogModel) {
    const progress = this.host?.downloads.find((d) => d.model === m.id);
    const loading = this.host?.loading?.model === m.id ? this.host.loading : null;
    const note = this.notes.get(m.id);
    const echo = m.id === ECHO_MODEL_ID;
    return html`<li aria-label=${m.id}>
      <div class="head">
        <span class="name">${m.id}</span>
        ${echo ? html`<span class="badge">test engine</span>` : nothing}
        ${m.downloaded && !echo ? html`<span class="badge ok">downloaded</span>` : nothing}
        ${m.loaded ? html`<span class="badge ok">loaded</span>` : nothing}
        ${m.evicted ? html`<span class="badge warn">evicted</span>` : nothing}
        ${m.available === false ? html`<span class="badge warn">cannot run here</span>` : nothing}
        ${m.available === null ? html`<span class="badge">fit not known yet</span>` : nothing}
        ${m.tools ? html`<span class="badge">tools</span>` : nothing}
        ${m.reasoning ? html`<span class="badge">reasoning</span>` : nothing}
        ${m.source === 'self-hosted' ? html`<span class="badge">self-hosted</span>` : nothing}
      </div>
      <div class="facts">
        ${echo ? 'Repeats your message: for trying the API without a GPU.' : factsOf(m)}
      </div>
      ${m.unavailable_reason ? html`<div class="facts error">${m.unavailable_reason}</div>` : nothing}
      ${m.evicted ? html`<div class="facts error">${m.evicted}</div>` : nothing}
      ${progress ? this.#renderProgress(progress) : nothing}
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
      ${echo ? nothing : this.#renderActions(m, progress)}
    </li>`;
  }

  #renderProgress(p: DownloadProgress) {
    const speed = this.#speed.speed(p);
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
        ${left ? html` · ${left} left` : nothing} · ${p.phase}
      </span>
    </div>`;
  }

  #renderActions(m: CatalogModel, progress: DownloadProgress | undefined) {
    if (progress) {
      return html`<div class="actions">
        <button @click=${() => this.#cancel(m.id)}>Cancel download</button>
      </div>`;
    }
    if (this.confirming === m.id) {
      return html`<div class="actions" role="group" aria-label="Confirm deletion">
        <span>Delete ${m.id} from this device?</span>
        <button class="danger" @click=${() => this.#delete(m.id)}>Yes, delete</button>
        <button @click=${() => (this.confirming = null)}>Keep it</button>
      </div>`;
    }
    return html`<div class="actions">
      ${
        !m.downloaded && m.available
          ? html`<button class="primary" @click=${() => this.#download(m.id)}>
              ${this.#stopped.has(m.id) || m.evicted ? 'Resume download' : 'Download'}
            </button>`
          : nothing
      }
      ${
        m.downloaded && !m.loaded && m.available
          ? html`<button @click=${() => this.#load(m.id)}>Load</button>`
          : nothing
      }
      ${
        // Loading it lifts the mark (the GPU device was lost twice): the user decides to retry.
        this.host?.failing_models[m.id]
          ? html`<button @click=${() => this.#load(m.id)}>Try again</button>`
          : nothing
      }
      ${m.loaded ? html`<button @click=${() => this.#unload(m.id)}>Unload</button>` : nothing}
      ${
        m.downloaded || m.evicted || this.#stopped.has(m.id)
          ? html`<button class="danger" @click=${() => (this.confirming = m.id)}>Delete</button>`
          : nothing
      }
    </div>`;
  }
}

/** `Download about 200 MB · GPU memory 580 MB · context 4,096 tokens`. */
function factsOf(m: CatalogModel): string {
  const vram =
    m.vram_required_mb === null ? 'unknown' : formatBytes(m.vram_required_mb * 1024 ** 2);
  return `Download ${sizeOf(m)} · GPU memory ${vram} · context ${m.context_window.toLocaleString()} tokens`;
}

function sizeOf(m: CatalogModel): string {
  return m.size_mb === null ? 'size unknown' : `about ${formatBytes(m.size_mb * 1024 ** 2)}`;
}

customElements.define('model-manager', ModelManager);

declare global {
  interface HTMLElementTagNameMap {
    'model-manager': ModelManager;
  }
}
