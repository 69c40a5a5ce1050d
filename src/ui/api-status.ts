/**
 * @module
 * `<api-status>`: whether the API answers, which tab hosts the engine, and the base URL to give
 * an SDK. A placeholder for the chat UI, which is its own piece of work.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import { STATUS_CHANNEL, type HostStatus, type StatusMessage } from '../openai/status';
import { listModels, sdkBaseUrl } from './api-client';

/** This tab's part in the engine-host election, as the page reports it. */
export type TabRole = 'starting' | 'waiting' | 'host' | 'refused' | 'unsupported' | 'uncontrolled';

type ApiState = 'checking' | 'ready' | 'failed';

/** Whether the origin's storage is persistent: `unknown` until asked. */
type Persistence = 'unknown' | 'persisted' | 'best-effort' | 'unsupported';

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
 */
export class ApiStatus extends LitElement {
  static override properties = {
    role: {},
    detail: {},
    state: { reflect: true },
    models: { state: true },
    error: { state: true },
    host: { state: true },
    persistence: { reflect: true },
  };

  static override styles = css`
    :host {
      display: block;
      font:
        16px/1.5 system-ui,
        sans-serif;
    }
    code {
      background: #0001;
      padding: 0 0.25em;
    }
    .failed {
      color: #b00020;
    }
  `;

  /** This tab's role in the engine-host election. */
  declare role: TabRole;
  /** Why the role is what it is, when there is more to say. */
  declare detail: string;
  /** Whether the API answered. */
  declare state: ApiState;
  declare private models: string[];
  declare private error: string;
  /** The host's status as it last published it. */
  declare private host: HostStatus | null;
  /** Whether downloaded models are safe from eviction; reflected for tests and styling. */
  declare persistence: Persistence;
  #channel: BroadcastChannel | undefined;
  #persistRequested = false;

  constructor() {
    super();
    this.role = 'starting';
    this.detail = '';
    this.state = 'checking';
    this.models = [];
    this.error = '';
    this.host = null;
    this.persistence = 'unknown';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.#channel = new BroadcastChannel(STATUS_CHANNEL);
    this.#channel.addEventListener('message', (event: MessageEvent<StatusMessage>) => {
      if (event.data.type !== 'status') return;
      this.host = event.data.status;
      // Once a model is on the device, it is worth keeping: ask once per page load.
      const hasModel = this.host.models.some((m) => m !== ECHO_MODEL_ID);
      if (hasModel && !this.#persistRequested) void this.requestPersistence();
    });
    this.#channel.postMessage({ type: 'status/wanted' } satisfies StatusMessage);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#channel?.close();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('role') && (this.role === 'host' || this.role === 'waiting')) {
      void this.check();
    }
  }

  /**
   * Asks the browser not to evict the origin's storage (the downloaded models). Only a page can
   * ask; Chromium answers from its heuristics (an installed app, a bookmark, engagement), Firefox
   * asks the user. Asked when a model is on the device and again after installation.
   */
  async requestPersistence(): Promise<void> {
    this.#persistRequested = true;
    const storage = navigator.storage as StorageManager | undefined;
    if (!storage?.persist) {
      this.persistence = 'unsupported';
      return;
    }
    const persisted = (await storage.persisted()) || (await storage.persist());
    this.persistence = persisted ? 'persisted' : 'best-effort';
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
    const api =
      this.state === 'ready'
        ? html`<p>The API is ready. Models: ${this.models.map((m) => html`<code>${m}</code> `)}</p>`
        : this.state === 'failed'
          ? html`<p class="failed">The API did not answer: ${this.error}</p>`
          : html`<p>Checking the API…</p>`;
    return html`
      <p>${ROLE_TEXT[this.role]} ${this.detail}</p>
      ${api} ${this.renderHost()} ${this.renderStorage()}
      <p>SDK base URL: <code>${sdkBaseUrl()}</code></p>
    `;
  }

  private renderStorage() {
    switch (this.persistence) {
      case 'unknown':
        return nothing;
      case 'persisted':
        return html`<p class="storage">
          Storage is persistent: the browser will not evict the downloaded models.
        </p>`;
      case 'best-effort':
        return html`<p class="storage">
          Storage is best-effort: the browser may evict downloaded models when the disk runs low.
          Installing Hearth (or bookmarking it) usually makes it persistent.
        </p>`;
      case 'unsupported':
        return html`<p class="storage">This browser cannot make storage persistent.</p>`;
    }
  }

  private renderHost() {
    const host = this.host;
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
