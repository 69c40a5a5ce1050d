/**
 * @module
 * `<hearth-app>`: the chat app. The conversations beside the chat, and the models, the settings
 * and the API panel a click away (`#/models`, `#/settings`, `#/api`). It holds what several views
 * share — the catalogue, the host's status, the conversations — and talks to the engine only
 * over HTTP, like any other client of the API.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import { catalog as fetchCatalog, type CatalogModel } from './api-client';
import { AddedModelsWatch } from './added-models-watch';
import './api-panel';
import './api-status';
import type { TabRole } from './api-status';
import './chat-view';
import { chatModels, defaultModel } from './chat-models';
import {
  exportConversations,
  importConversations,
  newConversation,
  type Conversation,
  type ConversationSettings,
} from './conversation';
import './conversation-list';
import {
  deleteConversation,
  listConversations,
  openConversationId,
  rememberOpenConversation,
  saveConversation,
} from './conversation-store';
import { HostStatusController } from './host-status';
import './model-manager';
import { requestPersistence, type Persistence } from './persistence';
import { relayPairing } from './relay-pairing';
import './relay-status';
import './settings-view';
import { shared } from './styles';

type View = 'chat' | 'models' | 'settings' | 'api';
const VIEWS: { view: View; label: string }[] = [
  { view: 'chat', label: 'Chat' },
  { view: 'models', label: 'Models' },
  { view: 'settings', label: 'Settings' },
  { view: 'api', label: 'API' },
];

function viewOf(hash: string): View {
  const name = hash.replace(/^#\/?/, '');
  return VIEWS.some((v) => v.view === name) ? (name as View) : 'chat';
}

export class HearthApp extends LitElement {
  static override properties = {
    role: {},
    detail: {},
    view: { state: true },
    catalog: { state: true },
    conversations: { state: true },
    active: { state: true },
    persistence: { state: true },
    navOpen: { state: true },
    notice: { state: true },
    updateReady: { type: Boolean },
    updating: { state: true },
    offline: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: grid;
        grid-template-columns: 17em 1fr;
        grid-template-rows: auto 1fr;
        height: 100vh;
        height: 100dvh;
      }
      header {
        grid-column: 1 / -1;
        display: flex;
        align-items: center;
        gap: 1em;
        padding: 0.5em 1em;
        border-bottom: 1px solid var(--border);
        flex-wrap: wrap;
      }
      h1 {
        font-size: 1.2em;
        margin: 0;
      }
      nav ul {
        display: flex;
        gap: 0.2em;
        list-style: none;
        margin: 0;
        padding: 0;
      }
      nav a {
        color: inherit;
        text-decoration: none;
        padding: 0.3em 0.7em;
        border-radius: 8px;
        display: inline-block;
      }
      nav a[aria-current='page'] {
        background: var(--bg-soft);
        font-weight: 600;
      }
      .menu {
        display: none;
      }
      aside {
        border-right: 1px solid var(--border);
        padding: 0.8em;
        display: flex;
        flex-direction: column;
        gap: 0.8em;
        min-height: 0;
        overflow: hidden;
        background: var(--bg-soft);
      }
      aside conversation-list {
        flex: 1;
      }
      main {
        min-height: 0;
        min-width: 0;
        overflow: auto;
      }
      main.chat {
        overflow: hidden;
      }
      .banner {
        margin: 0.5em 1em 0;
      }
      @media (max-width: 720px) {
        :host {
          grid-template-columns: 1fr;
        }
        .menu {
          display: inline-block;
        }
        aside {
          display: none;
          border-right: none;
        }
        :host([drawer-open]) aside {
          display: flex;
        }
        :host([drawer-open]) main {
          display: none;
        }
        header {
          gap: 0.5em;
          padding: 0.4em 0.6em;
        }
        nav a {
          padding: 0.3em 0.45em;
        }
      }
    `,
  ];

  declare role: TabRole;
  declare detail: string;
  declare private view: View;
  declare private catalog: CatalogModel[];
  declare private conversations: Conversation[];
  declare private active: Conversation | null;
  declare private persistence: Persistence;
  /** The conversation list, on a phone, is a drawer. */
  declare private navOpen: boolean;
  declare private notice: { text: string; error: boolean } | null;
  /** A new version is installed and waits for the user's yes. */
  declare updateReady: boolean;
  declare private updating: boolean;
  declare private offline: boolean;
  readonly #host = new HostStatusController(this);
  #catalogKey = '';
  #persistAsked = false;
  #pairingStarted = false;
  /** Catalogue reads started, so that only the latest one's answer is shown. */
  #catalogRequests = 0;

  constructor() {
    super();
    this.role = 'starting';
    this.detail = '';
    this.view = viewOf(location.hash);
    this.catalog = [];
    this.conversations = [];
    this.active = null;
    this.persistence = 'unknown';
    this.navOpen = false;
    this.notice = null;
    this.updateReady = false;
    this.updating = false;
    this.offline = !navigator.onLine;
    // A model added or removed in any tab changes the catalogue.
    new AddedModelsWatch(this, () => void this.refreshCatalog());
    this.#host.listen((status) => {
      // The catalogue says what is on the device and loaded: read it again when that changes.
      const key = JSON.stringify([
        // A new host, or its device facts measured: what can run here may be known now.
        status.host.id,
        status.device !== null,
        status.models,
        status.loaded_model,
        status.downloads.length,
        status.evicted_models,
        status.failing_models,
      ]);
      if (key !== this.#catalogKey) {
        this.#catalogKey = key;
        void this.refreshCatalog();
      }
      // A model on the device is worth keeping: ask for persistent storage once per page load.
      if (!this.#persistAsked && status.models.some((m) => m !== ECHO_MODEL_ID)) {
        void this.askPersistence();
      }
    });
  }

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('hashchange', this.#onHash);
    addEventListener('online', this.#onNetwork);
    addEventListener('offline', this.#onNetwork);
    void this.#loadConversations();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('hashchange', this.#onHash);
    removeEventListener('online', this.#onNetwork);
    removeEventListener('offline', this.#onNetwork);
  }

  readonly #onNetwork = () => {
    this.offline = !navigator.onLine;
  };

  #acceptUpdate(): void {
    this.updating = true;
    this.dispatchEvent(new CustomEvent('update-accepted'));
  }

  protected override updated(changed: PropertyValues<this>): void {
    // On a phone the conversations take the place of the view while open.
    this.toggleAttribute('drawer-open', this.navOpen);
    if (changed.has('role') && (this.role === 'host' || this.role === 'waiting')) {
      void this.refreshCatalog();
    }
    // A pairing link (`?relay=…&pair=…`), or the pairing this tab had before a reload: read once
    // the boot is done with reloads (a first visit reloads for isolation, and the link's code
    // leaves the address as it is read).
    if (changed.has('role') && this.role !== 'starting' && !this.#pairingStarted) {
      this.#pairingStarted = true;
      relayPairing.start();
    }
  }

  readonly #onHash = () => {
    this.view = viewOf(location.hash);
    this.navOpen = false;
  };

  /** Asks the browser for persistent storage (after a download, and after installation). */
  async askPersistence(): Promise<void> {
    this.#persistAsked = true;
    this.persistence = await requestPersistence();
  }

  async refreshCatalog(): Promise<void> {
    const request = ++this.#catalogRequests;
    let catalog: CatalogModel[];
    try {
      catalog = await fetchCatalog();
    } catch {
      return; // the status line says why the API does not answer
    }
    // Reads overlap (a status change, an action's end): one that answers after a later one
    // would put back what the later one saw change.
    if (request !== this.#catalogRequests) return;
    this.catalog = catalog;
    // An empty conversation that started before the catalogue was known gets a better model.
    const a = this.active;
    if (a && a.messages.length === 0 && a.model === ECHO_MODEL_ID) {
      const better = defaultModel(this.catalog);
      if (better !== ECHO_MODEL_ID) {
        a.model = better;
        await saveConversation(a);
        this.requestUpdate();
      }
    }
  }

  async #loadConversations(): Promise<void> {
    this.conversations = await listConversations();
    const remembered = this.conversations.find((c) => c.id === openConversationId());
    if (remembered ?? this.conversations[0]) this.#open((remembered ?? this.conversations[0])!);
    else await this.#new();
  }

  #open(conversation: Conversation): void {
    this.active = conversation;
    rememberOpenConversation(conversation.id);
    this.navOpen = false;
    if (this.view !== 'chat') location.hash = '#/chat';
  }

  async #new(seed?: {
    model: string;
    settings: ConversationSettings;
    draft: string;
  }): Promise<void> {
    const c = newConversation(seed?.model ?? defaultModel(this.catalog), seed?.settings);
    if (seed) c.draft = seed.draft;
    await saveConversation(c);
    this.conversations = [c, ...this.conversations];
    this.#open(c);
    await this.updateComplete;
    this.renderRoot
      .querySelector('chat-view')
      ?.shadowRoot?.querySelector<HTMLElement>('#composer')
      ?.focus();
  }

  async #rename(id: string, title: string): Promise<void> {
    const c = this.conversations.find((x) => x.id === id);
    if (!c) return;
    c.title = title;
    c.updated = Date.now();
    await saveConversation(c);
    this.conversations = [...this.conversations];
  }

  async #remove(id: string): Promise<void> {
    await deleteConversation(id);
    this.conversations = this.conversations.filter((c) => c.id !== id);
    if (this.active?.id === id) {
      const next = this.conversations[0];
      if (next) this.#open(next);
      else await this.#new();
    }
  }

  #export(): void {
    const file = JSON.stringify(exportConversations(this.conversations), null, 2);
    const url = URL.createObjectURL(new Blob([file], { type: 'application/json' }));
    const link = document.createElement('a');
    link.href = url;
    link.download = `hearth-conversations-${new Date().toISOString().slice(0, 10)}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }

  async #import(file: File): Promise<void> {
    try {
      const imported = importConversations(await file.text());
      for (const c of imported) await saveConversation(c);
      this.conversations = await listConversations();
      this.notice = {
        text: `Imported ${imported.length} conversation${imported.length === 1 ? '' : 's'}.`,
        error: false,
      };
    } catch (err) {
      this.notice = {
        text: `Nothing was imported: ${err instanceof Error ? err.message : String(err)}`,
        error: true,
      };
    }
  }

  #onChanged(c: Conversation): void {
    // Most recently changed first, as the store lists them.
    this.conversations = [c, ...this.conversations.filter((x) => x.id !== c.id)];
  }

  protected override render() {
    const usable = chatModels(this.catalog);
    return html`
      <header>
        <button
          class="menu"
          aria-expanded=${this.navOpen ? 'true' : 'false'}
          aria-controls="sidebar"
          @click=${() => (this.navOpen = !this.navOpen)}
        >
          Conversations
        </button>
        <h1>Hearth</h1>
        <nav aria-label="Views">
          <ul>
            ${VIEWS.map(
              (v) =>
                html`<li>
                  <a href="#/${v.view}" aria-current=${this.view === v.view ? 'page' : 'false'}
                    >${v.label}</a
                  >
                </li>`,
            )}
          </ul>
        </nav>
      </header>
      <aside id="sidebar" aria-label="Conversations">
        <conversation-list
          .conversations=${this.conversations}
          .active=${this.active?.id ?? ''}
          @open=${(e: CustomEvent<string>) => {
            const c = this.conversations.find((x) => x.id === e.detail);
            if (c) this.#open(c);
          }}
          @new=${() => this.#new()}
          @rename=${(e: CustomEvent<{ id: string; title: string }>) =>
            this.#rename(e.detail.id, e.detail.title)}
          @remove=${(e: CustomEvent<string>) => this.#remove(e.detail)}
          @export=${() => this.#export()}
          @import=${(e: CustomEvent<File>) => this.#import(e.detail)}
        ></conversation-list>
        <api-status
          .role=${this.role}
          .detail=${this.detail}
          .persistence=${this.persistence}
        ></api-status>
      </aside>
      <main class=${this.view}>
        ${
          this.offline
            ? html`<p class="notice banner" role="status">
                Offline. Hearth keeps working: chat, the models on this device and your
                conversations. Downloading a model needs the network.
              </p>`
            : nothing
        }
        ${
          this.updateReady
            ? html`<p class="notice banner" role="status">
                ${
                  this.updating
                    ? 'Updating once the replies in progress are done…'
                    : html`A new version of Hearth is ready.
                        <button class="primary" @click=${() => this.#acceptUpdate()}>
                          Reload to update
                        </button>`
                }
              </p>`
            : nothing
        }
        <relay-status></relay-status>
        ${
          this.notice
            ? html`<p
                class="notice banner ${this.notice.error ? 'error' : ''}"
                role=${this.notice.error ? 'alert' : 'status'}
              >
                ${this.notice.text}
                <button class="link" @click=${() => (this.notice = null)}>Dismiss</button>
              </p>`
            : nothing
        }
        ${this.#renderView(usable)}
      </main>
    `;
  }

  #renderView(usable: CatalogModel[]) {
    switch (this.view) {
      case 'chat':
        return this.active
          ? html`<chat-view
              .conversation=${this.active}
              .models=${usable}
              .host=${this.#host.value}
              @conversation-changed=${(e: CustomEvent<Conversation>) => this.#onChanged(e.detail)}
              @new-conversation=${(
                e: CustomEvent<{ model: string; settings: ConversationSettings; draft: string }>,
              ) => this.#new(e.detail)}
              @show-models=${() => (location.hash = '#/models')}
            ></chat-view>`
          : nothing;
      case 'models':
        return html`<model-manager
          .catalog=${this.catalog}
          .host=${this.#host.value}
          @catalog-stale=${() => this.refreshCatalog()}
        ></model-manager>`;
      case 'settings':
        return html`<settings-view
          .host=${this.#host.value}
          .catalog=${this.catalog}
          .role=${this.role}
          .persistence=${this.persistence}
          @request-persistence=${() => this.askPersistence()}
          @catalog-stale=${() => this.refreshCatalog()}
        ></settings-view>`;
      case 'api':
        return html`<api-panel .model=${this.active?.model ?? ECHO_MODEL_ID}></api-panel>`;
    }
  }
}

customElements.define('hearth-app', HearthApp);

declare global {
  interface HTMLElementTagNameMap {
    'hearth-app': HearthApp;
  }
}
