/**
 * @module
 * `<model-manager>`: the catalogue with what each model needs, which engine runs it (WebLLM, or
 * llama.cpp on the GPU or the CPU) and whether this device can run it, and the models on the
 * device: download (with progress, speed and time left, also for downloads another tab
 * started), cancel, resume, delete, load and unload, trying again a model marked as failing on
 * this device; adding a GGUF (`<model-add>`) and removing one the user added. The actions are
 * the `ModelActionsController`'s. A server's model (Settings → Servers) is marked as leaving this
 * device for its host, with nothing to download, load or delete.
 */
import { css, html, LitElement, nothing } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import type { DownloadProgress } from '../openai/downloads';
import type { HostStatus } from '../openai/status';
import { leavesFor, type CatalogModel } from './api-client';
import { ModelActionsController } from './model-actions';
import './model-add';
import { engineLabel, factsOf, llamaPlace, recommendedModel, sizeOf } from './model-facts';
import { cards, formatBytes, formatDuration, shared } from './styles';

/** @fires catalog-stale - something changed what the catalogue says. */
export class ModelManager extends LitElement {
  static override properties = {
    catalog: { attribute: false },
    host: { attribute: false },
    query: { state: true },
    showUnavailable: { state: true },
  };

  static override styles = [
    shared,
    cards,
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

  /** The catalogue, as `GET /v1/hearth/catalog` gives it. */
  declare catalog: CatalogModel[];
  /** The engine host's last status (downloads, loading, where llama.cpp runs). */
  declare host: HostStatus | null;
  declare private query: string;
  declare private showUnavailable: boolean;
  readonly #actions = new ModelActionsController(this);

  constructor() {
    super();
    this.catalog = [];
    this.host = null;
    this.query = '';
    this.showUnavailable = false;
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
    // A server's model is no model on this device: the suggestion stays.
    const hasReal = this.catalog.some(
      (m) => m.downloaded && m.id !== ECHO_MODEL_ID && !m.leaves_device,
    );
    const recommended = hasReal ? undefined : recommendedModel(this.catalog);
    const hidden = this.catalog.filter((m) => m.available === false && !m.downloaded).length;
    // What runs where, said once rather than under each of 159 models: WebLLM needs WebGPU;
    // GGUF models run in every browser, on the processor where there is no usable GPU.
    const webllm = this.catalog.filter((m) => m.engine === 'webllm');
    const noWebLLM = webllm.length > 0 && webllm.every((m) => m.available === false);
    return html`
      <h2>Models</h2>
      ${
        recommended
          ? html`<div class="recommend">
              <p>
                No language model is on this device yet. A good first one here:
                <strong>${recommended.id}</strong> (${sizeOf(recommended)}).
              </p>
              <button class="primary" @click=${() => this.#actions.download(recommended.id)}>
                Download ${recommended.id}
              </button>
            </div>`
          : nothing
      }
      ${
        this.catalog.length > 0 &&
        this.catalog.every(
          (m) => m.available === false || m.id === ECHO_MODEL_ID || m.leaves_device,
        )
          ? html`<p class="notice" role="note">
              This device cannot run any language model here:
              ${this.catalog.find((m) => m.available === false)?.unavailable_reason ?? ''} Only the
              echo test engine works.
            </p>`
          : nothing
      }
      ${
        noWebLLM
          ? html`<p class="notice" role="note">
              WebLLM's models cannot run in this browser: ${webllm[0]?.unavailable_reason ?? ''}
              GGUF models run here through llama.cpp, on the processor where there is no usable
              graphics card.
            </p>`
          : nothing
      }
      <model-add></model-add>
      ${this.#renderGone()}
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

  /** What became of models no longer in the catalogue (an added one, removed). */
  #renderGone() {
    const gone = [...this.#actions.notes].filter(([id]) => !this.catalog.some((m) => m.id === id));
    return gone.map(
      ([id, note]) =>
        html`<p class=${note.error ? 'error' : 'muted'} role=${note.error ? 'alert' : 'status'}>
          ${id}: ${note.text}
        </p>`,
    );
  }

  #renderModel(m: CatalogModel) {
    const progress = this.host?.downloads.find((d) => d.model === m.id);
    const loading = this.host?.loading?.model === m.id ? this.host.loading : null;
    const note = this.#actions.notes.get(m.id);
    const echo = m.id === ECHO_MODEL_ID;
    const engine = engineLabel(m);
    const place = m.engine === 'llama.cpp' ? llamaPlace(this.host) : null;
    const remote = leavesFor(m);
    if (remote) return this.#renderRemote(m, remote);
    return html`<li aria-label=${m.id}>
      <div class="head">
        <span class="name">${m.id}</span>
        ${echo ? html`<span class="badge">test engine</span>` : nothing}
        ${engine ? html`<span class="badge engine" title="Runs in ${engine}">${engine}</span>` : nothing}
        ${place ? html`<span class="badge" title=${place.detail}>${place.label}</span>` : nothing}
        ${m.source === 'added' ? html`<span class="badge">added</span>` : nothing}
        ${m.downloaded && !echo ? html`<span class="badge ok">downloaded</span>` : nothing}
        ${m.loaded ? html`<span class="badge ok">loaded</span>` : nothing}
        ${m.evicted ? html`<span class="badge warn">evicted</span>` : nothing}
        ${m.available === false ? html`<span class="badge warn">cannot run here</span>` : nothing}
        ${m.available === null ? html`<span class="badge">fit not known yet</span>` : nothing}
        ${m.tools ? html`<span class="badge">tools</span>` : nothing}
        ${m.reasoning ? html`<span class="badge">reasoning</span>` : nothing}
        ${
          m.embedding
            ? html`<span class="badge" title="For /v1/openai/embeddings; it does not chat"
                >embeddings${m.embedding.dimensions ? ` · ${m.embedding.dimensions} dims` : ''}</span
              >`
            : nothing
        }
        ${m.source === 'self-hosted' ? html`<span class="badge">self-hosted</span>` : nothing}
      </div>
      <div class="facts">
        ${echo ? 'Repeats your message: for trying the API without a GPU.' : factsOf(m, this.host)}
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

  /** A server's model: where its requests go; nothing to download, load or delete here. */
  #renderRemote(m: CatalogModel, host: string) {
    const server = m.server?.name ?? m.owned_by;
    return html`<li aria-label=${m.id}>
      <div class="head">
        <span class="name">${m.id}</span>
        <span class="badge" title="Requests for it go to ${host}"
          >leaves this device · ${host}</span
        >
        ${m.available === false ? html`<span class="badge warn">unavailable</span>` : nothing}
      </div>
      <div class="facts">
        Served by ${server} (added in Settings →
        Servers)${m.server ? html`, as <code>${m.server.upstream_id}</code>` : nothing}: messages to
        it leave this device for ${host}.
      </div>
      ${m.unavailable_reason ? html`<div class="facts error">${m.unavailable_reason}</div>` : nothing}
    </li>`;
  }

  #renderProgress(p: DownloadProgress) {
    const speed = this.#actions.speed.speed(p);
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
    const actions = this.#actions;
    const added = m.source === 'added';
    if (progress) {
      return html`<div class="actions">
        <button @click=${() => actions.cancel(m.id)}>Cancel download</button>
      </div>`;
    }
    if (actions.confirming === m.id) {
      return html`<div class="actions" role="group" aria-label="Confirm deletion">
        <span>
          ${added ? `Remove ${m.id} and its files from this device?` : `Delete ${m.id} from this device?`}
        </span>
        <button class="danger" @click=${() => actions.delete(m.id, added)}>
          ${added ? 'Yes, remove' : 'Yes, delete'}
        </button>
        <button @click=${() => actions.confirm(null)}>Keep it</button>
      </div>`;
    }
    return html`<div class="actions">
      ${
        !m.downloaded && m.available
          ? html`<button class="primary" @click=${() => actions.download(m.id)}>
              ${actions.stopped.has(m.id) || m.evicted ? 'Resume download' : 'Download'}
            </button>`
          : nothing
      }
      ${
        m.downloaded && !m.loaded && m.available
          ? html`<button @click=${() => actions.load(m.id)}>Load</button>`
          : nothing
      }
      ${
        // Loading it lifts the mark (the GPU device was lost twice): the user decides to retry.
        this.host?.failing_models[m.id]
          ? html`<button @click=${() => actions.load(m.id)}>Try again</button>`
          : nothing
      }
      ${m.loaded ? html`<button @click=${() => actions.unload(m.id)}>Unload</button>` : nothing}
      ${
        // A model the user added can always go; others once something of them is here.
        added
          ? html`<button class="danger" @click=${() => actions.confirm(m.id)}>Remove</button>`
          : m.downloaded || m.evicted || actions.stopped.has(m.id)
            ? html`<button class="danger" @click=${() => actions.confirm(m.id)}>Delete</button>`
            : nothing
      }
    </div>`;
  }
}

customElements.define('model-manager', ModelManager);

declare global {
  interface HTMLElementTagNameMap {
    'model-manager': ModelManager;
  }
}
