/**
 * @module
 * src/app/models/ is the Models view: this element, a model's variants, facts and words, search
 * and order, adding a GGUF, downloads' words and failures, and what works offline. It imports
 * shared/ only.
 *
 * `<model-manager>`: the models people can choose from, one card per model (its name, family,
 * parameters and what it is good for) with its variants inside (quantisations, engines, a
 * server's copy: see model-variant.ts), found by words (every word, any order) and narrowed by
 * size, capability, engine and what this device can run, sorted, counted. What this device
 * cannot run is said once at the top, with the next step: where WebGPU is missing, a GGUF on the
 * processor through llama.cpp, one button away. When nothing this device can run matches, the
 * matches it cannot run are offered, with why. The actions are the `ModelActionsController`'s;
 * adding a GGUF is `<model-add>`'s.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import type { HostStatus } from '../../protocol/host/status';
import type { CatalogModel } from '../shared/api-client';
import { ModelActionsController } from './model-actions';
import './model-add';
import { engineLabel, llamaPlace, recommendedModel, sizeOf } from './model-facts';
import { describeModel } from './model-info';
import { CardOrder } from './model-order';
import {
  DEFAULT_FILTERS,
  ModelIndex,
  narrows,
  onDevice,
  viewModels,
  type Filters,
  type ModelCard,
  type ModelView,
} from './model-search';
import { renderVariant, type VariantContext } from './model-variant';
import { renderOfflineWays } from './offline-ways';
import { cards, shared } from '../shared/styles';

/** The choices of each filter, as the selects offer them. */
const CHOICES: { [K in keyof Filters]: [Filters[K], string][] } = {
  size: [
    ['any', 'Any size'],
    ['small', 'Under 1 GB'],
    ['medium', '1–4 GB'],
    ['large', 'Over 4 GB'],
  ],
  capability: [
    ['any', 'Anything'],
    ['chat', 'Chat'],
    ['coding', 'Coding'],
    ['reasoning', 'Reasoning'],
    ['tools', 'Tools'],
    ['maths', 'Maths'],
    ['embeddings', 'Embeddings (retrieval)'],
  ],
  engine: [
    ['any', 'Any engine'],
    ['webllm', 'WebLLM'],
    ['llama.cpp', 'llama.cpp'],
    ['server', 'Your servers'],
  ],
  show: [
    ['runnable', 'What runs here'],
    ['downloaded', 'Downloaded'],
    ['all', 'All models'],
  ],
  sort: [
    ['recommended', 'Recommended'],
    ['smallest', 'Smallest first'],
    ['largest', 'Largest first'],
    ['name', 'Name'],
  ],
};

const LABELS: Record<keyof Filters, string> = {
  size: 'Size',
  capability: 'Good for',
  engine: 'Engine',
  show: 'Show',
  sort: 'Sort by',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** @fires catalog-stale - something changed what the catalogue says. */
export class ModelManager extends LitElement {
  static override properties = {
    catalog: { attribute: false },
    host: { attribute: false },
    loading: { type: Boolean },
    query: { state: true },
    filters: { state: true },
    adding: { type: Boolean },
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
      .title {
        display: flex;
        flex-wrap: wrap;
        gap: 0.5em;
        align-items: center;
        justify-content: space-between;
        margin: 0 0 0.6em;
      }
      h2 {
        margin: 0;
        font-size: 1.3em;
      }
      .device {
        border: 1px solid var(--accent);
        border-radius: var(--radius);
        padding: 0.8em 1em;
        margin-bottom: 1em;
      }
      .device p {
        margin: 0 0 0.5em;
      }
      .filters {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(10em, 1fr));
        gap: 0.5em 0.8em;
        margin-bottom: 0.6em;
      }
      .filter {
        display: flex;
        flex-direction: column;
        gap: 0.15em;
      }
      .filter label {
        font-size: 0.9em;
        color: var(--fg-soft);
      }
      .filters select {
        color: var(--fg);
      }
      .search {
        display: flex;
        margin-bottom: 0.6em;
      }
      .search input {
        flex: 1;
      }
      .count {
        margin: 0 0 0.6em;
      }
      ul {
        list-style: none;
        padding: 0;
        margin: 0;
        display: flex;
        flex-direction: column;
        gap: 0.6em;
      }
      .card h3 {
        margin: 0;
        font-size: 1.08em;
        overflow-wrap: anywhere;
      }
      .card > p {
        margin: 0.15em 0 0.3em;
        font-size: 0.9em;
      }
      ul.variants {
        gap: 0;
      }
      ul.variants > li {
        border: none;
        border-top: 1px solid var(--border);
        border-radius: 0;
        background: none;
        padding: 0.5em 0 0.4em;
        display: flex;
        flex-wrap: wrap;
        column-gap: 1em;
        align-items: flex-start;
      }
      ul.variants > li > * {
        flex: 1 1 100%;
      }
      ul.variants > li > .about {
        flex: 1 1 24em;
        min-width: 0;
      }
      ul.variants > li > .actions {
        flex: 0 1 auto;
      }
      .variant {
        font-weight: 600;
        font-family: var(--mono);
        font-size: 0.92em;
      }
      .facts {
        font-size: 0.88em;
        color: var(--fg-soft);
        margin: 0.2em 0;
        overflow-wrap: anywhere;
      }
      .facts.error {
        color: var(--danger);
      }
      .actions {
        display: flex;
        flex-wrap: wrap;
        gap: 0.4em;
        margin-top: 0.4em;
        align-items: center;
      }
      progress {
        width: 100%;
      }
      .empty {
        margin: 0.5em 0 1em;
      }
    `,
  ];

  /** The catalogue, as `GET /v1/hearth/catalog` gives it. */
  declare catalog: CatalogModel[];
  /** The engine host's last status (downloads, loading, where llama.cpp runs). */
  declare host: HostStatus | null;
  /** The catalogue is not known yet: the list says it is loading, not that nothing matches. */
  declare loading: boolean;
  declare private query: string;
  declare private filters: Filters;
  /** Whether "Add a model" is open (the app opens it for `#/models/add`). */
  declare adding: boolean;
  /** The order held while the user acts on the list, so that no card moves from under them. */
  readonly #order = new CardOrder();
  /** The cards as last shown, in their order. */
  #shown: ModelCard[] = [];
  readonly #actions = new ModelActionsController(this, () => this.#order.hold(this.#shown));
  /** The index of the catalogue it was made of: made again only when that changes. */
  #index = new ModelIndex([]);
  #view: { index: ModelIndex; query: string; filters: Filters; result: ModelView } | null = null;
  /** A model the user removed: once it leaves the catalogue, the focus goes to the search. */
  #removed: string | null = null;

  constructor() {
    super();
    this.catalog = [];
    this.host = null;
    this.loading = false;
    this.query = '';
    this.filters = DEFAULT_FILTERS;
    this.adding = false;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('catalog')) this.#index = new ModelIndex(this.catalog);
    // A new search or filter is a new list: sorted afresh.
    // (Private reactive properties are not in `PropertyValues<this>`'s keys.)
    const mine = changed as Map<PropertyKey, unknown>;
    if (mine.has('query') || mine.has('filters')) this.#order.release();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (
      changed.has('catalog') &&
      this.#removed &&
      !this.catalog.some((m) => m.id === this.#removed)
    ) {
      this.#removed = null;
      this.renderRoot.querySelector<HTMLInputElement>('#search')?.focus();
    }
  }

  /** The cards for the query and filters, computed again only when one of them changed. */
  #result(): ModelView {
    const v = this.#view;
    if (v && v.index === this.#index && v.query === this.query && v.filters === this.filters)
      return v.result;
    const result = viewModels(this.#index, this.query, this.filters);
    this.#view = { index: this.#index, query: this.query, filters: this.filters, result };
    return result;
  }

  /** Deletes or removes `id`, then puts the focus where the person was (WCAG 2.4.3). */
  async #remove(id: string, added: boolean): Promise<void> {
    if (added) this.#removed = id;
    const done = this.#actions.delete(id, added);
    await this.updateComplete;
    // The model stays (its files gone): the focus stays on it, not on the vanished buttons.
    if (!added)
      this.renderRoot.querySelector<HTMLElement>(`li[data-id="${CSS.escape(id)}"]`)?.focus();
    await done;
  }

  /** A model added by the user: its card first, and its download started where it needs one. */
  #added(m: CatalogModel): void {
    this.#order.pin(m.id, this.#shown);
    if (!m.downloaded && m.available !== false) void this.#actions.download(m);
    this.requestUpdate();
  }

  /** Opens "Add a model" at its file chooser: a GGUF from this computer works offline. */
  async #addFile(): Promise<void> {
    this.adding = true;
    await this.updateComplete;
    const add = this.renderRoot.querySelector('model-add');
    await add?.updateComplete;
    add?.focusFile();
  }

  /** What works offline, under a failed download's note; `id`'s is said at the top if shown there. */
  #offlineWays(id: string | null) {
    if (id !== null && id === this.#suggested()?.id) return nothing;
    return renderOfflineWays({
      addFile: () => void this.#addFile(),
      downloaded: this.catalog.filter(onDevice).length,
      showDownloaded: () => (this.filters = { ...this.filters, show: 'downloaded' }),
    });
  }

  protected override render() {
    const sorted = this.#result();
    this.#shown = this.#order.apply(sorted.cards);
    const result = { ...sorted, cards: this.#shown };
    const context: VariantContext = {
      actions: this.#actions,
      host: this.host,
      remove: (id, added) => void this.#remove(id, added),
      offlineWays: (id) => this.#offlineWays(id),
    };
    return html`
      <div class="title">
        <h2>Models</h2>
        <button
          aria-expanded=${this.adding ? 'true' : 'false'}
          aria-controls="adding"
          @click=${() => (this.adding = !this.adding)}
        >
          Add a model
        </button>
      </div>
      <div id="adding">
        ${
          this.adding
            ? html`<model-add
                @model-added=${(e: CustomEvent<CatalogModel>) => this.#added(e.detail)}
              ></model-add>`
            : nothing
        }
      </div>
      ${this.#renderDevice()} ${this.#renderGone()}
      <div class="search" role="search">
        <label class="sr-only" for="search">Search models</label>
        <input
          id="search"
          type="search"
          placeholder="Search models: llama 3.2, qwen coder, Q4_K_M…"
          .value=${this.query}
          @input=${(e: Event) => (this.query = (e.target as HTMLInputElement).value)}
        />
      </div>
      <div class="filters">
        ${(Object.keys(CHOICES) as (keyof Filters)[]).map(
          (key) =>
            html`<div class="filter">
              <label for="filter-${key}">${LABELS[key]}</label>
              <select
                id="filter-${key}"
                .value=${this.filters[key]}
                @change=${(e: Event) =>
                  (this.filters = {
                    ...this.filters,
                    [key]: (e.target as HTMLSelectElement).value,
                  })}
              >
                ${CHOICES[key].map(
                  ([value, label]) =>
                    html`<option value=${value} ?selected=${this.filters[key] === value}>
                      ${label}
                    </option>`,
                )}
              </select>
            </div>`,
        )}
      </div>
      <p class="count" role="status">${this.#countText(result)}</p>
      ${
        result.cards.length > 0
          ? html`<ul aria-label="Models">
              ${repeat(
                result.cards,
                (c) => c.key,
                (c) => this.#renderCard(c, context),
              )}
            </ul>`
          : this.#renderEmpty(result, context)
      }
    `;
  }

  #countText(result: ModelView): string {
    const hidden = result.hidden
      ? ` · ${plural(result.hidden, 'more variant')} this device cannot run`
      : '';
    if (result.cards.length === 0) {
      if (this.loading) return 'Loading the models…';
      return `No models${narrows(this.query, this.filters) ? ' match' : ''}${hidden}.`;
    }
    const models = plural(result.cards.length, 'model');
    const variants =
      result.variants === result.cards.length ? '' : ` (${plural(result.variants, 'variant')})`;
    return `${models}${variants}${hidden}`;
  }

  #renderCard(card: ModelCard, context: VariantContext) {
    const about = [
      card.family !== card.name ? card.family : null,
      card.parameters && `${card.parameters} parameters`,
    ]
      .filter(Boolean)
      .join(' · ');
    return html`<li class="card" aria-label=${card.name}>
      <h3>${card.name}</h3>
      ${about ? html`<p class="muted">${about}</p>` : nothing}
      ${card.goodFor.length ? html`<p>Good for ${card.goodFor.join(', ')}</p>` : nothing}
      <ul class="variants" aria-label="Variants of ${card.name}">
        ${repeat(
          card.variants,
          (v) => v.model.id,
          (v) => renderVariant(v, context),
        )}
      </ul>
    </li>`;
  }

  /** Nothing to show: what this device cannot run that matches, or a way back to everything. */
  #renderEmpty(result: ModelView, context: VariantContext) {
    // Not known yet is no empty result: the list is there, busy, and the count says it loads.
    if (this.loading) return html`<ul aria-label="Models" aria-busy="true"></ul>`;
    if (result.elsewhere.length > 0) {
      return html`<p class="empty">
          Nothing this device can run matches. ${plural(result.elsewhere.length, 'model')} that
          ${result.elsewhere.length === 1 ? 'matches' : 'match'} cannot run here; each says why:
        </p>
        <ul aria-label="Models this device cannot run">
          ${repeat(
            result.elsewhere,
            (c) => c.key,
            (c) => this.#renderCard(c, context),
          )}
        </ul>`;
    }
    if (!narrows(this.query, this.filters)) return html`<p class="empty">No models are listed.</p>`;
    return html`<p class="empty">
      No model matches these words and filters.
      <button
        @click=${() => {
          this.query = '';
          this.filters = DEFAULT_FILTERS;
        }}
      >
        Clear the search and filters
      </button>
    </p>`;
  }

  /**
   * What this device cannot run, said once, with the next step: the model to start with while
   * none is here (a GGUF on the processor where WebGPU is missing).
   */
  #renderDevice() {
    const catalog = this.catalog;
    const local = catalog.filter((m) => m.engine !== 'echo' && !m.leaves_device);
    const recommended = this.#suggested();
    // What runs where, said once rather than under each of 180 models: WebLLM needs WebGPU;
    // GGUF models run in every browser, on the processor where there is no usable GPU.
    const webllm = catalog.filter((m) => m.engine === 'webllm');
    const noWebLLM = webllm.length > 0 && webllm.every((m) => m.available === false);
    const slowWebLLM =
      webllm.length > 0 && webllm.every((m) => m.available === false || m.slow_here);
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
        WebLLM's models cannot run in this browser: ${webllm[0]?.unavailable_reason ?? ''} GGUF
        models run here through llama.cpp, on the processor where there is no usable graphics card
        (slower than a GPU; small models answer well).
      </p>`;
    } else if (cannot.length > 0) {
      const why = common?.includes('shader-f16')
        ? html`, most because this GPU lacks <code>shader-f16</code>: their f16 builds (q4f16,
            q0f16) cannot run here; the f32 builds (q4f32, q0f32) of the same models can.`
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
      ${slow} ${limit} ${recommended ? this.#renderRecommended(recommended) : nothing}
    </section>`;
  }

  /** The model to start with, one button away. */
  /** The model suggested at the top while no language model is on this device. */
  #suggested(): CatalogModel | undefined {
    // A server's model is no model on this device: the suggestion stays.
    return this.catalog.some(onDevice) ? undefined : recommendedModel(this.catalog);
  }

  #renderRecommended(m: CatalogModel) {
    const info = describeModel(m);
    const engine = engineLabel(m);
    const where = m.engine === 'llama.cpp' ? (llamaPlace(this.host)?.label ?? 'GPU or CPU') : 'GPU';
    const progress = this.host?.downloads.find((d) => d.model === m.id);
    const note = this.#actions.notes.get(m.id);
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
                <button class="primary" @click=${() => this.#actions.download(m)}>
                  Retry downloading ${info.name}
                </button>
                ${failed.unreachable ? this.#offlineWays(null) : nothing}`
            : html`<button class="primary" @click=${() => this.#actions.download(m)}>
                Download ${info.name}
              </button>`
      }`;
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
}

customElements.define('model-manager', ModelManager);

declare global {
  interface HTMLElementTagNameMap {
    'model-manager': ModelManager;
  }
}
