/**
 * @module
 * src/app/ is the chat app (Lit), which talks to the engine only over HTTP through the service
 * worker: this shell (<hearth-app>, the engine's status line, device fit; in shell/ the views'
 * addresses, the drawer, the catalogue, the conversations held for the views, the banners) and
 * its areas chat/, conversations/, documents/, models/, settings/, relay/, over shared/. It may import
 * src/protocol, src/models, src/servers and src/api for types and pure helpers, and src/relay-
 * tab; never src/engine-host, src/engines or src/bridge.
 *
 * `<hearth-app>`: the chat app. The conversations beside the chat, and the models, the documents,
 * the settings and the API panel a click away (`#/models`, `#/documents`, `#/settings`, `#/api`). It holds what several views
 * share — the catalogue, the host's status, the conversations — and talks to the engine only
 * over HTTP, like any other client of the API. The element renders; its controllers in shell/
 * hold the state and the work: the view and the drawer (view-navigation.ts), the catalogue
 * (catalog-refresh.ts), the conversations (conversations-controller.ts), the banners (banners.ts).
 */
import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../models/models';
import './api-status';
import type { TabRole } from './api-status';
import './chat/chat-view';
import { chatModels, defaultModel, NO_MODEL } from './chat/chat-models';
import type { Conversation } from './conversations/conversation';
import './conversations/conversation-list';
import { saveConversation } from './conversations/conversation-store';
import { HostStatusController } from './host-status';
import './documents/documents-view';
import './models/model-manager';
import { requestPersistence, type Persistence } from './shared/persistence';
import { relayPairing } from './relay/relay-pairing';
import './settings/settings-view';
import { shared } from './shared/styles';
import { BannersController, renderBanners } from './shell/banners';
import { CatalogRefresh } from './shell/catalog-refresh';
import { ConversationsController, type ConversationSeed } from './shell/conversations-controller';
import { hearthAppStyles } from './shell/hearth-app-styles';
import { VIEWS } from './shell/routes';
import { renderShortcuts } from './shell/shortcuts';
import { ViewNavigation } from './shell/view-navigation';

export { routeOf } from './shell/routes';

export class HearthApp extends LitElement {
  static override properties = {
    role: {},
    detail: {},
    persistence: { state: true },
    updateReady: { type: Boolean },
    updating: { state: true },
  };

  static override styles = [shared, hearthAppStyles];

  declare role: TabRole;
  declare detail: string;
  declare private persistence: Persistence;
  /** A new version is installed and waits for the user's yes. */
  declare updateReady: boolean;
  declare private updating: boolean;
  readonly #host = new HostStatusController(this);
  /** The view the address names, and the phone's drawer. */
  readonly #nav = new ViewNavigation(this);
  /** The catalogue, read again when what is on the device changes. */
  readonly #catalog = new CatalogRefresh(this, this.#host, () => this.#catalogRead());
  readonly #banners = new BannersController(this);
  readonly #conversations = new ConversationsController(this, {
    offered: () => this.#catalog.offered,
    showChat: () => {
      if (this.#nav.drawerOpen || this.#nav.view !== 'chat') this.#nav.go('#/chat');
    },
    focusComposer: () => this.#focusComposer(),
    say: (text, error) => this.#banners.say(text, error),
  });
  #persistAsked = false;
  #pairingStarted = false;
  /** What the document's title was last written for: the conversations' changes and the view. */
  #titled: [number, string] | null = null;

  constructor() {
    super();
    this.role = 'starting';
    this.detail = '';
    this.persistence = 'unknown';
    this.updateReady = false;
    this.updating = false;
    this.#host.listen((status) => {
      // A model on the device is worth keeping: ask for persistent storage once per page load.
      if (!this.#persistAsked && status.models.some((m) => m !== ECHO_MODEL_ID)) {
        void this.askPersistence();
      }
    });
  }

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('keydown', this.#onKey);
    void this.#loadConversations();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('keydown', this.#onKey);
  }

  /** The app's keyboard shortcuts (listed in the help dialog, shell/shortcuts.ts). */
  readonly #onKey = (event: KeyboardEvent) => {
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    if (event.key === 'Escape' && this.#nav.drawerOpen) {
      event.preventDefault();
      void this.#nav.closeDrawer();
    } else if (mod && event.shiftKey && key === 'o') {
      event.preventDefault();
      void this.#conversations.create();
    } else if (mod && event.key === '/') {
      event.preventDefault();
      this.#dialog('#shortcuts')?.showModal();
    } else if (event.shiftKey && event.key === 'Escape') {
      event.preventDefault();
      void this.#focusComposer();
    } else if (mod && event.shiftKey && key === 'c' && this.#nav.view === 'chat') {
      event.preventDefault();
      void this.renderRoot.querySelector('chat-view')?.copyLastReply();
    }
  };

  #dialog(selector: string): HTMLDialogElement | null {
    return this.renderRoot.querySelector<HTMLDialogElement>(selector);
  }

  #acceptUpdate(): void {
    this.updating = true;
    this.dispatchEvent(new CustomEvent('update-accepted'));
  }

  protected override willUpdate(): void {
    const view = this.#nav.view;
    const changes = this.#conversations.changes;
    if (this.#titled?.[0] !== changes || this.#titled[1] !== view) {
      this.#titled = [changes, view];
      const active = this.#conversations.active;
      const title = view === 'chat' ? active?.title : VIEWS.find((v) => v.view === view)?.label;
      document.title = title ? `${title} — Hearth` : 'Hearth';
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    // On a phone the conversations take the place of the view while open.
    this.toggleAttribute('drawer-open', this.#nav.drawerOpen);
    this.setAttribute('view', this.#nav.view);
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

  async #focusComposer(): Promise<void> {
    if (this.#nav.view !== 'chat') location.hash = '#/chat';
    await this.updateComplete;
    await this.renderRoot.querySelector('chat-view')?.updateComplete;
    this.renderRoot.querySelector('chat-view')?.focusComposer();
  }

  /** Asks the browser for persistent storage (after a download, and after installation). */
  async askPersistence(): Promise<void> {
    this.#persistAsked = true;
    this.persistence = await requestPersistence();
  }

  /** Reads the catalogue again (a view's action changed it, or the host can answer now). */
  async refreshCatalog(): Promise<void> {
    await this.#catalog.refresh();
  }

  /** A new catalogue is shown: an empty conversation started before it was known gets a better model. */
  async #catalogRead(): Promise<void> {
    const a = this.#conversations.active;
    if (a && a.messages.length === 0 && a.model === NO_MODEL) {
      const better = defaultModel(this.#catalog.offered);
      if (better !== NO_MODEL) {
        a.model = better;
        await saveConversation(a);
        this.requestUpdate();
      }
    }
  }

  async #loadConversations(): Promise<void> {
    await this.#conversations.load();
    // On load, the composer has focus, as in the chat apps people know (not on a phone: the
    // keyboard would cover the page).
    if (this.#nav.view !== 'chat' || matchMedia('(max-width: 720px)').matches) return;
    await this.updateComplete;
    await this.renderRoot.querySelector('chat-view')?.updateComplete;
    this.renderRoot.querySelector('chat-view')?.focusComposer();
  }

  #renderNav() {
    return html`<nav aria-label="Views">
      <ul>
        ${VIEWS.map(
          (v) =>
            html`<li>
              <a
                href="#/${v.view}"
                aria-current=${this.#nav.view === v.view ? 'page' : 'false'}
                @click=${(e: MouseEvent) => {
                  // From the drawer the view takes the drawer's place in the history.
                  if (
                    !this.#nav.drawerOpen ||
                    e.button !== 0 ||
                    e.ctrlKey ||
                    e.metaKey ||
                    e.shiftKey
                  )
                    return;
                  e.preventDefault();
                  this.#nav.go(`#/${v.view}`);
                }}
                >${v.label}</a
              >
            </li>`,
        )}
      </ul>
    </nav>`;
  }

  /** The top of the phone's drawer: the views, and a way out besides Back and Esc. */
  #renderDrawerTop() {
    return html`<div class="drawer-top">
      ${this.#renderNav()}
      <button @click=${() => this.#nav.closeDrawer()}>Close</button>
    </div>`;
  }

  protected override render() {
    const nav = this.#nav;
    const conversations = this.#conversations;
    return html`
      <header>
        <button
          class="skip"
          @click=${() => this.renderRoot.querySelector<HTMLElement>('main')?.focus()}
        >
          Skip to main content
        </button>
        <button
          class="menu"
          aria-label="Menu"
          aria-expanded=${nav.drawerOpen ? 'true' : 'false'}
          aria-controls="sidebar"
          title="Menu"
          @click=${() => (nav.drawerOpen ? nav.closeDrawer() : nav.openDrawer())}
        >
          ☰
        </button>
        <h1>Hearth</h1>
        ${nav.drawerOpen ? nothing : this.#renderNav()}
        <button class="link end" @click=${() => this.#dialog('#shortcuts')?.showModal()}>
          Keyboard shortcuts
        </button>
      </header>
      <aside id="sidebar" aria-label="Conversations">
        ${nav.drawerOpen ? this.#renderDrawerTop() : nothing}
        <conversation-list
          .conversations=${conversations.list}
          .active=${conversations.active?.id ?? ''}
          @open=${(e: CustomEvent<string>) => conversations.pick(e.detail)}
          @new=${() => conversations.create()}
          @rename=${(e: CustomEvent<{ id: string; title: string }>) =>
            conversations.change(e.detail.id, { title: e.detail.title })}
          @pin=${(e: CustomEvent<{ id: string; pinned: boolean }>) =>
            conversations.change(e.detail.id, { pinned: e.detail.pinned })}
          @archive=${(e: CustomEvent<{ id: string; archived: boolean }>) =>
            conversations.change(e.detail.id, { archived: e.detail.archived })}
          @remove=${(e: CustomEvent<string>) => conversations.remove(e.detail)}
          @export=${() => conversations.export()}
          @export-markdown=${(e: CustomEvent<string>) => conversations.exportMarkdown(e.detail)}
          @import=${(e: CustomEvent<File>) => conversations.import(e.detail)}
        ></conversation-list>
        <api-status
          .role=${this.role}
          .detail=${this.detail}
          .persistence=${this.persistence}
        ></api-status>
      </aside>
      <main id="main" tabindex="-1" class=${nav.view}>
        ${renderBanners(this.#banners, {
          ready: this.updateReady,
          updating: this.updating,
          accept: () => this.#acceptUpdate(),
        })}
        <div class="view">${this.#renderView()}</div>
      </main>
      ${renderShortcuts()}
    `;
  }

  #renderView() {
    const active = this.#conversations.active;
    switch (this.#nav.view) {
      case 'chat':
        return active
          ? html`<chat-view
              .conversation=${active}
              .models=${chatModels(this.#catalog.offered)}
              .catalog=${this.#catalog.offered}
              .checking=${!this.#catalog.known}
              .host=${this.#host.value}
              @conversation-changed=${(e: CustomEvent<Conversation>) =>
                this.#conversations.changed(e.detail)}
              @new-conversation=${(e: CustomEvent<ConversationSeed>) =>
                this.#conversations.create(e.detail)}
              @show-models=${() => (location.hash = '#/models')}
              @open-drawer=${() => this.#nav.openDrawer()}
              @new-chat=${() => this.#conversations.create()}
              @catalog-stale=${() => this.refreshCatalog()}
            ></chat-view>`
          : nothing;
      case 'models':
        return html`<model-manager
          .catalog=${this.#catalog.offered}
          .loading=${!this.#catalog.known}
          .adding=${this.#nav.section === 'add'}
          .host=${this.#host.value}
          @catalog-stale=${() => this.refreshCatalog()}
        ></model-manager>`;
      case 'documents':
        return html`<documents-view
          @vector-store-deleted=${(e: CustomEvent<string>) =>
            void this.#conversations.forgetStore(e.detail)}
        ></documents-view>`;
      case 'settings':
        return html`<settings-view
          .section=${this.#nav.section}
          .model=${active?.model ?? NO_MODEL}
          .host=${this.#host.value}
          .catalog=${this.#catalog.offered}
          .role=${this.role}
          .persistence=${this.persistence}
          @request-persistence=${() => this.askPersistence()}
          @catalog-stale=${() => this.refreshCatalog()}
        ></settings-view>`;
    }
  }
}

customElements.define('hearth-app', HearthApp);

declare global {
  interface HTMLElementTagNameMap {
    'hearth-app': HearthApp;
  }
}
