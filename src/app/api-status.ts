/**
 * @module
 * `<api-status>`: one line on the engine — a dot and a word or three ("Ready", "Loading model
 * 42 %") — that opens, as a disclosure, on the details: whether the API answers, which tab hosts
 * the engine, the queue, the downloads under way, and the base URL to give an SDK.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { HostStatusController } from './host-status';
import { listModels, sdkBaseUrl } from './shared/api-client';
import { summarize, type ApiState, type TabRole } from './engine-summary';
import type { Persistence } from './shared/persistence';
import { shared } from './shared/styles';

export type { TabRole } from './engine-summary';

const ROLE_TEXT: Record<TabRole, string> = {
  starting: 'Starting…',
  waiting: 'Another tab hosts the engine.',
  host: 'This tab hosts the engine.',
  refused: 'This tab runs an older version of Hearth: reload it.',
  unsupported: 'This browser has no service workers, so Hearth cannot run here.',
  uncontrolled:
    'Hearth’s service worker does not control this page: reload it (not a forced reload).',
};

/**
 * Shows whether the API is ready.
 * @attr state - `checking`, `ready` or `failed`, reflected for tests and styling.
 * @attr persistence - whether storage is persistent, as the app last heard.
 */
export class ApiStatus extends LitElement {
  static override properties = {
    role: {},
    detail: {},
    state: { reflect: true },
    persistence: { reflect: true },
    models: { state: true },
    error: { state: true },
    open: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
        font-size: 0.8em;
        color: var(--fg-soft);
        min-width: 0;
      }
      .summary {
        display: flex;
        align-items: center;
        gap: 0.5em;
        width: 100%;
        border: none;
        background: none;
        color: inherit;
        font: inherit;
        padding: 0.3em 0.4em;
        text-align: left;
        white-space: nowrap;
        overflow: hidden;
        text-overflow: ellipsis;
      }
      .summary:hover {
        color: var(--fg);
      }
      .state {
        overflow: hidden;
        text-overflow: ellipsis;
        min-width: 0;
      }
      .dot {
        flex: none;
        width: 0.7em;
        height: 0.7em;
        border-radius: 50%;
        background: var(--ok);
      }
      .dot[data-tone='busy'] {
        background: none;
        border: 2px solid var(--accent);
      }
      .dot[data-tone='bad'] {
        background: var(--danger);
      }
      .chevron {
        margin-left: auto;
        flex: none;
        transition: transform 0.15s;
      }
      [aria-expanded='true'] .chevron {
        transform: rotate(90deg);
      }
      @media (prefers-reduced-motion: reduce) {
        .chevron {
          transition: none;
        }
      }
      .details {
        padding: 0 0.4em;
      }
      p {
        margin: 0.2em 0;
        overflow-wrap: anywhere;
      }
      .failed {
        color: var(--danger);
      }
    `,
  ];

  /** This tab's role in the engine-host election. */
  declare role: TabRole;
  /** Why the role is what it is, when there is more to say. */
  declare detail: string;
  /** Whether the API answered. */
  declare state: ApiState;
  declare persistence: Persistence;
  declare private models: string[];
  declare private error: string;
  /** Whether the details show. */
  declare private open: boolean;
  readonly #host = new HostStatusController(this);

  constructor() {
    super();
    this.role = 'starting';
    this.detail = '';
    this.state = 'checking';
    this.persistence = 'unknown';
    this.models = [];
    this.error = '';
    this.open = false;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('role') && (this.role === 'host' || this.role === 'waiting')) {
      void this.check();
    }
  }

  /** Asks the API for its models. */
  async check(): Promise<void> {
    try {
      this.models = (await listModels()).map((m) => m.id);
      this.state = 'ready';
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
      this.state = 'failed';
    }
  }

  protected override render() {
    const summary = summarize(this.role, this.state, this.#host.value);
    const api =
      this.state === 'ready'
        ? html`<p>The API is ready. Models: ${this.models.map((m) => html`<code>${m}</code> `)}</p>`
        : this.state === 'failed'
          ? html`<p class="failed">The API did not answer: ${this.error}</p>`
          : html`<p>Checking the API…</p>`;
    // What needs the user is said aloud at once, even with the details closed.
    const alert =
      this.state === 'failed'
        ? `The API did not answer: ${this.error}`
        : summary.tone === 'bad'
          ? ROLE_TEXT[this.role]
          : '';
    return html`
      <button
        class="summary"
        aria-expanded=${this.open ? 'true' : 'false'}
        aria-controls="details"
        title="Engine: ${summary.text}"
        @click=${() => (this.open = !this.open)}
      >
        <span class="dot" data-tone=${summary.tone}></span>
        <span class="state"><span class="sr-only">Engine: </span>${summary.text}</span>
        <span class="chevron" aria-hidden="true">›</span>
      </button>
      ${alert ? html`<p class="sr-only" role="alert">${alert}</p>` : nothing}
      <div id="details" class="details" ?hidden=${!this.open}>
        <p>${ROLE_TEXT[this.role]} ${this.detail}</p>
        ${api} ${this.#renderHost()}
        <p>SDK base URL: <code>${sdkBaseUrl()}</code></p>
      </div>
    `;
  }

  #renderHost() {
    const host = this.#host.value;
    if (!host) return nothing;
    const { running, waiting } = host.queue;
    return html`<p class="host">
      Engine host: tab <code>${host.host.id.slice(0, 8)}</code> (build
      <code>${host.host.build}</code>) · loaded model: ${host.loaded_model ?? 'none'} · queue:
      <span class="queue">${running} running, ${waiting} waiting</span> ·
      <span class="ports">${host.open_ports} open requests</span>
      ${host.downloads.map(
        (d) =>
          html`<br /><span class="download"
              >Downloading <code>${d.model}</code>:
              ${d.phase}${
                d.bytes_total ? ` ${Math.floor((100 * d.bytes_done) / d.bytes_total)} %` : ''
              }</span
            >`,
      )}
      ${Object.keys(host.evicted_models).map(
        (model) =>
          html`<br /><span class="evicted"
              ><code>${model}</code> lost files to the browser's eviction: download it again.</span
            >`,
      )}
    </p>`;
  }
}

customElements.define('api-status', ApiStatus);

declare global {
  interface HTMLElementTagNameMap {
    'api-status': ApiStatus;
  }
}
