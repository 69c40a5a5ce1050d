/**
 * @module
 * src/app/models/ is the Models view: this element (its styles, filters and device section
 * beside it), a model's variants, facts and words, search and order; adding a GGUF (adding/);
 * downloads' words and failures, and what works offline (downloads/). It imports shared/ only.
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
import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import type { HostStatus } from '../../protocol/host/status';
import type { CatalogModel } from '../shared/api-client';
import { ModelActionsController } from './model-actions';
import './adding/model-add';
import { renderDevice, suggestedModel } from './device-section';
import { renderFilters } from './model-filters';
import { modelManagerStyles } from './model-manager-styles';
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
import { renderOfflineWays } from './downloads/offline-ways';
import { cards, shared } from '../shared/styles';

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

  static override styles = [shared, cards, modelManagerStyles];

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
    if (id !== null && id === suggestedModel(this.catalog)?.id) return nothing;
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
    const device = renderDevice({
      catalog: this.catalog,
      host: this.host,
      actions: this.#actions,
      offlineWays: (id) => this.#offlineWays(id),
    });
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
      ${device} ${this.#renderGone()}
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
      ${renderFilters(this.filters, (key, value) => {
        this.filters = { ...this.filters, [key]: value };
      })}
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
