/**
 * @module
 * src/app/ is the chat app (Lit), which talks to the engine only over HTTP through the service
 * worker: this shell (<hearth-app>, the engine's status line, the drawer, device fit) and its
 * areas chat/, conversations/, models/, settings/, relay/, over shared/. It may import
 * src/protocol, src/models, src/servers and src/api for types and pure helpers, and src/relay-
 * tab; never src/engine-host, src/engines or src/bridge.
 *
 * `<hearth-app>`: the chat app. The conversations beside the chat, and the models, the settings
 * and the API panel a click away (`#/models`, `#/settings`, `#/api`). It holds what several views
 * share — the catalogue, the host's status, the conversations — and talks to the engine only
 * over HTTP, like any other client of the API.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../models/models';
import type { HostStatus } from '../protocol/host/status';
import { catalog as fetchCatalog, type CatalogModel } from './shared/api-client';
import { AddedModelsWatch } from './added-models-watch';
import { DrawerHistory } from './drawer-history';
import './api-status';
import type { TabRole } from './api-status';
import './chat/chat-view';
import { chatModels, defaultModel, NO_MODEL } from './chat/chat-models';
import { fitForDevice } from './device-fit';
import {
  newConversation,
  worthStoring,
  type Conversation,
  type ConversationSettings,
} from './conversations/conversation';
import {
  exportConversations,
  importConversations,
  mergeImported,
  mergeSummary,
} from './conversations/conversation-export';
import './conversations/conversation-list';
import { conversationMarkdown, markdownFileName } from './conversations/conversation-markdown';
import { download } from './download';
import {
  deleteConversation,
  listConversations,
  openConversationId,
  rememberOpenConversation,
  saveConversation,
} from './conversations/conversation-store';
import { HostStatusController } from './host-status';
import { newSettings, preferences } from './shared/preferences';
import './models/model-manager';
import { requestPersistence, type Persistence } from './shared/persistence';
import { relayPairing } from './relay/relay-pairing';
import './relay/relay-status';
import './settings/settings-view';
import { shared } from './shared/styles';

type View = 'chat' | 'models' | 'settings';
const VIEWS: { view: View; label: string }[] = [
  { view: 'chat', label: 'Chat' },
  { view: 'models', label: 'Models' },
  { view: 'settings', label: 'Settings' },
];

/** The view and its section of an address's hash (`#/settings/developer`, `#/models/add`). */
export function routeOf(hash: string): { view: View; section: string } {
  const [name = '', section = ''] = hash.replace(/^#\/?/, '').split('/');
  // The API panel was a view of its own; old links land where it lives now.
  if (name === 'api') return { view: 'settings', section: 'developer' };
  const view = VIEWS.find((v) => v.view === name)?.view ?? 'chat';
  if (view === 'settings') return { view, section: section || 'preferences' };
  // `#/models/add` opens "Add a model" (the first-run card links to it).
  return { view, section: view === 'models' && section === 'add' ? 'add' : '' };
}

/** How long a notice that something went right stays before it closes by itself. */
const NOTICE_MS = 6000;

export class HearthApp extends LitElement {
  static override properties = {
    role: {},
    detail: {},
    view: { state: true },
    section: { state: true },
    catalog: { state: true },
    catalogKnown: { state: true },
    conversations: { state: true },
    active: { state: true },
    persistence: { state: true },
    navOpen: { state: true },
    notice: { state: true },
    updateReady: { type: Boolean },
    updating: { state: true },
    offline: { state: true },
    offlineDismissed: { state: true },
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
        padding: 0.4em 1em;
        border-bottom: 1px solid var(--border);
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
      .end {
        margin-left: auto;
      }
      .menu,
      .drawer-top {
        display: none;
      }
      /* The first Tab stop, shown once focused: past the header and the conversations. A button,
         not a link to "#main": the address's hash holds the view, and the view is in this shadow
         root, where a link's target is not looked up. */
      .skip {
        position: absolute;
        z-index: 30;
        left: 0.5em;
        top: 0.5em;
        padding: 0.4em 0.8em;
        background: var(--bg);
        border: 1px solid var(--border);
        border-radius: 8px;
        white-space: nowrap;
        transform: translateY(calc(-100% - 1em));
      }
      .skip:focus {
        transform: none;
      }
      /* Focused by the skip link only, as where reading starts: no ring around the whole view. */
      main:focus {
        outline: none;
      }
      aside {
        grid-row: 2;
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
        min-height: 0;
      }
      /* The banners take what they need and the view the rest: a banner never pushes the
         composer off the screen, the conversation's log shrinks instead. */
      main {
        grid-row: 2;
        min-height: 0;
        min-width: 0;
        display: flex;
        flex-direction: column;
      }
      .view {
        flex: 1;
        min-height: 0;
        overflow: auto;
      }
      main.chat .view {
        overflow: hidden;
      }
      .banner {
        margin: 0.4em 1em 0;
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.3em 0.8em;
        padding: 0.35em 0.8em;
      }
      .banner button {
        margin-left: auto;
      }
      /* Notices of something done float and close by themselves: at the foot of the sidebar,
         where the import and export buttons are, covering none of the chat's controls. */
      .toast {
        position: fixed;
        left: 0.8em;
        bottom: 0.8em;
        z-index: 10;
        max-width: calc(17em - 1.6em);
        box-shadow: 0 4px 18px rgb(0 0 0 / 25%);
        display: flex;
        gap: 0.8em;
        align-items: center;
      }
      dialog {
        max-width: min(34em, 92vw);
        border: 1px solid var(--border);
        border-radius: var(--radius);
        background: var(--bg);
        color: var(--fg);
      }
      dialog::backdrop {
        background: rgb(0 0 0 / 40%);
      }
      dialog h2 {
        margin-top: 0;
        font-size: 1.15em;
      }
      dl.keys {
        display: grid;
        grid-template-columns: auto 1fr;
        gap: 0.4em 1em;
        margin: 0 0 1em;
      }
      dl.keys dt {
        white-space: nowrap;
      }
      dl.keys dd {
        margin: 0;
      }
      kbd {
        font: var(--mono);
        border: 1px solid var(--border);
        border-bottom-width: 2px;
        border-radius: 4px;
        padding: 0 0.3em;
        background: var(--bg-soft);
      }
      @media (max-width: 720px) {
        :host {
          grid-template-columns: 1fr;
        }
        /* No sidebar beside the chat: under the chat's bar (56px at most), above its log. */
        .toast {
          bottom: auto;
          top: calc(56px + 0.5em);
          left: 0.5em;
          max-width: calc(100vw - 1em);
        }
        /* One bar on a phone: the conversation's own (chat-view), which opens this drawer. The
           header stays for screen readers, as the page's heading, and for the skip link, which
           shows when focused (the header is not clipped, its heading is). */
        :host([view='chat']) header {
          position: absolute;
          width: 1px;
          height: 1px;
          padding: 0;
          border: 0;
        }
        :host([view='chat']) header h1 {
          position: absolute;
          width: 1px;
          height: 1px;
          overflow: hidden;
          clip-path: inset(50%);
          white-space: nowrap;
        }
        :host([view='chat']) header .menu {
          display: none;
        }
        :host([view='chat']) {
          grid-template-rows: 0 1fr;
        }
        .menu {
          display: inline-block;
        }
        header nav,
        header .end {
          display: none;
        }
        .drawer-top {
          display: flex;
          align-items: center;
          justify-content: space-between;
          gap: 0.5em;
        }
        aside {
          display: none;
          border-right: none;
        }
        :host([drawer-open]) aside {
          display: flex;
        }
        /* The view gives way to the drawer; its landmark stays, empty, as a page has a main part. */
        :host([drawer-open]) main {
          position: absolute;
          width: 1px;
          height: 1px;
          overflow: hidden;
          clip-path: inset(50%);
        }
        :host([drawer-open]) main > * {
          display: none;
        }
        header {
          gap: 0.5em;
          padding: 0.3em 0.6em;
        }
        .banner {
          margin: 0.3em 0.5em 0;
          font-size: 0.92em;
        }
      }
    `,
  ];

  declare role: TabRole;
  declare detail: string;
  declare private view: View;
  /** The part of a view the address names (Settings' sections). */
  declare private section: string;
  declare private catalog: CatalogModel[];
  /** The catalogue was read at least once: until then the app says it is checking. */
  declare private catalogKnown: boolean;
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
  declare private offlineDismissed: boolean;
  readonly #host = new HostStatusController(this);
  /** Back closes the phone's drawer instead of leaving the app. */
  readonly #drawerHistory = new DrawerHistory(() => void this.#closeDrawer());
  #catalogKey = '';
  #persistAsked = false;
  #pairingStarted = false;
  /** Catalogue reads started, so that only the latest one's answer is shown. */
  #catalogRequests = 0;
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    super();
    this.role = 'starting';
    this.detail = '';
    ({ view: this.view, section: this.section } = routeOf(location.hash));
    this.catalog = [];
    this.catalogKnown = false;
    this.conversations = [];
    this.active = null;
    this.persistence = 'unknown';
    this.navOpen = false;
    this.notice = null;
    this.updateReady = false;
    this.updating = false;
    this.offline = !navigator.onLine;
    this.offlineDismissed = false;
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
    addEventListener('popstate', this.#drawerHistory.onPopState);
    addEventListener('online', this.#onNetwork);
    addEventListener('offline', this.#onNetwork);
    addEventListener('keydown', this.#onKey);
    void this.#loadConversations();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('hashchange', this.#onHash);
    removeEventListener('popstate', this.#drawerHistory.onPopState);
    removeEventListener('online', this.#onNetwork);
    removeEventListener('offline', this.#onNetwork);
    removeEventListener('keydown', this.#onKey);
  }

  readonly #onNetwork = () => {
    this.offline = !navigator.onLine;
    // Going offline again is news again.
    if (this.offline) this.offlineDismissed = false;
  };

  /** The app's keyboard shortcuts (listed in the help dialog, `shortcuts()`). */
  readonly #onKey = (event: KeyboardEvent) => {
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key.toLowerCase();
    if (event.key === 'Escape' && this.navOpen) {
      event.preventDefault();
      this.#closeDrawer();
    } else if (mod && event.shiftKey && key === 'o') {
      event.preventDefault();
      void this.#new();
    } else if (mod && event.key === '/') {
      event.preventDefault();
      this.#dialog('#shortcuts')?.showModal();
    } else if (event.shiftKey && event.key === 'Escape') {
      event.preventDefault();
      void this.#focusComposer();
    } else if (mod && event.shiftKey && key === 'c' && this.view === 'chat') {
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

  protected override willUpdate(changed: PropertyValues): void {
    if (changed.has('active') || changed.has('conversations') || changed.has('view')) {
      const title =
        this.view === 'chat' ? this.active?.title : VIEWS.find((v) => v.view === this.view)?.label;
      document.title = title ? `${title} — Hearth` : 'Hearth';
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    // On a phone the conversations take the place of the view while open.
    this.toggleAttribute('drawer-open', this.navOpen);
    this.setAttribute('view', this.view);
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
    ({ view: this.view, section: this.section } = routeOf(location.hash));
    this.navOpen = false;
    this.#drawerHistory.forget();
  };

  /**
   * Shows the view at `hash`. From the phone's drawer the view takes the drawer's place in the
   * history, or, being the view already shown, only closes the drawer: Back then returns to where
   * the drawer was opened, not to the drawer.
   */
  #go(hash: string): void {
    const route = routeOf(hash);
    if (this.navOpen && route.view === this.view && route.section === this.section) {
      this.navOpen = false;
      this.#drawerHistory.closed();
    } else if (this.#drawerHistory.replaceWith(hash)) {
      this.#onHash();
    } else {
      location.hash = hash;
    }
  }

  /** Opens the phone's drawer and puts focus in it (where the list is). */
  async #openDrawer(): Promise<void> {
    this.navOpen = true;
    this.#drawerHistory.opened();
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>('aside nav a[aria-current="page"]')?.focus();
  }

  /** Closes the phone's drawer and gives focus back to what opened it. */
  async #closeDrawer(): Promise<void> {
    this.navOpen = false;
    this.#drawerHistory.closed();
    await this.updateComplete;
    const chat = this.renderRoot.querySelector('chat-view');
    if (this.view === 'chat' && chat) chat.focusMenu();
    else this.renderRoot.querySelector<HTMLElement>('header .menu')?.focus();
  }

  async #focusComposer(): Promise<void> {
    if (this.view !== 'chat') location.hash = '#/chat';
    await this.updateComplete;
    await this.renderRoot.querySelector('chat-view')?.updateComplete;
    this.renderRoot.querySelector('chat-view')?.focusComposer();
  }

  /** Says something; a success closes by itself, an error stays until dismissed. */
  #say(text: string, error = false): void {
    clearTimeout(this.#noticeTimer);
    this.notice = { text, error };
    if (!error) this.#noticeTimer = setTimeout(() => (this.notice = null), NOTICE_MS);
  }

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
    this.catalogKnown = true;
    // An empty conversation that started before the catalogue was known gets a better model.
    const a = this.active;
    if (a && a.messages.length === 0 && a.model === NO_MODEL) {
      const better = defaultModel(this.#offered);
      if (better !== NO_MODEL) {
        a.model = better;
        await saveConversation(a);
        this.requestUpdate();
      }
    }
  }

  async #loadConversations(): Promise<void> {
    this.conversations = await listConversations();
    const visible = this.conversations.filter((c) => !c.archived);
    const remembered = this.conversations.find((c) => c.id === openConversationId());
    const first = remembered ?? visible[0];
    if (first) this.#open(first, false);
    else await this.#new(undefined, false);
    await this.#focusComposerOnLoad();
  }

  /** On load, the composer has focus, as in the chat apps people know (not on a phone: the keyboard would cover the page). */
  async #focusComposerOnLoad(): Promise<void> {
    if (this.view !== 'chat' || matchMedia('(max-width: 720px)').matches) return;
    await this.updateComplete;
    await this.renderRoot.querySelector('chat-view')?.updateComplete;
    this.renderRoot.querySelector('chat-view')?.focusComposer();
  }

  /**
   * Opens a conversation: the user picked it (the chat shows it, the phone's drawer closes), or
   * the app did (at load, or after the open one was deleted or archived: the view and the drawer
   * stay as they are, so a reload keeps its view and focus stays in the list).
   */
  #open(conversation: Conversation, picked = true): void {
    this.active = conversation;
    rememberOpenConversation(conversation.id);
    if (!picked) return;
    if (this.navOpen || this.view !== 'chat') this.#go('#/chat');
  }

  /** Starts a conversation; `picked`: the user asked for it (it opens, with focus in the composer). */
  async #new(
    seed?: { model: string; settings: ConversationSettings; draft: string },
    picked = true,
  ): Promise<void> {
    const prefs = preferences();
    const c = newConversation(
      seed?.model ?? defaultModel(this.#offered, prefs.defaultModel),
      seed?.settings ?? newSettings(prefs),
    );
    if (seed) c.draft = seed.draft;
    // Stored (and listed) once it has something in it: New chat twice leaves no empties.
    await saveConversation(c);
    if (worthStoring(c)) this.conversations = [c, ...this.conversations];
    this.#open(c, picked);
    if (picked) await this.#focusComposer();
  }

  async #change(id: string, patch: Partial<Pick<Conversation, 'title' | 'pinned' | 'archived'>>) {
    const c = this.conversations.find((x) => x.id === id);
    if (!c) return;
    Object.assign(c, patch);
    // Pinning or archiving is not a change of the conversation: it keeps its place in time.
    if (patch.title !== undefined) c.updated = Date.now();
    await saveConversation(c);
    this.conversations = [...this.conversations];
    if (patch.archived && this.active?.id === id) {
      const next = this.conversations.find((x) => !x.archived);
      if (next) this.#open(next, false);
      else await this.#new(undefined, false);
    }
  }

  async #remove(id: string): Promise<void> {
    await deleteConversation(id);
    this.conversations = this.conversations.filter((c) => c.id !== id);
    if (this.active?.id === id) {
      const next = this.conversations.find((c) => !c.archived);
      // The list moves focus to its next row itself.
      if (next) this.#open(next, false);
      else await this.#new(undefined, false);
    }
  }

  #export(): void {
    const file = JSON.stringify(exportConversations(this.conversations), null, 2);
    const date = new Date().toISOString().slice(0, 10);
    download(`hearth-conversations-${date}.json`, file, 'application/json');
  }

  #exportMarkdown(id: string): void {
    const c = this.conversations.find((x) => x.id === id);
    if (c) download(markdownFileName(c.title), conversationMarkdown(c), 'text/markdown');
  }

  async #import(file: File): Promise<void> {
    try {
      const merge = mergeImported(this.conversations, importConversations(await file.text()));
      for (const c of merge.save) await saveConversation(c);
      this.conversations = await listConversations();
      // The open conversation, if the file updated it, shows what the file holds.
      const open = this.conversations.find((c) => c.id === this.active?.id);
      if (open && merge.save.some((c) => c.id === open.id)) this.#open(open, false);
      this.#say(mergeSummary(merge));
    } catch (err) {
      this.#say(`Nothing was imported: ${err instanceof Error ? err.message : String(err)}`, true);
    }
  }

  #onChanged(c: Conversation): void {
    // A conversation with nothing in it is not stored, nor listed.
    if (!worthStoring(c)) return;
    // Most recently changed first, as the store lists them.
    this.conversations = [c, ...this.conversations.filter((x) => x.id !== c.id)];
  }

  #renderNav() {
    return html`<nav aria-label="Views">
      <ul>
        ${VIEWS.map(
          (v) =>
            html`<li>
              <a
                href="#/${v.view}"
                aria-current=${this.view === v.view ? 'page' : 'false'}
                @click=${(e: MouseEvent) => {
                  // From the drawer the view takes the drawer's place in the history.
                  if (!this.navOpen || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey)
                    return;
                  e.preventDefault();
                  this.#go(`#/${v.view}`);
                }}
                >${v.label}</a
              >
            </li>`,
        )}
      </ul>
    </nav>`;
  }

  /** The catalogue judged for this device (a software GPU adapter counts as none), kept while the two are the same. */
  #fit: { catalog: CatalogModel[]; host: HostStatus | null; offered: CatalogModel[] } | null = null;
  get #offered(): CatalogModel[] {
    const host = this.#host.value;
    if (this.#fit?.catalog !== this.catalog || this.#fit.host?.device !== host?.device)
      this.#fit = { catalog: this.catalog, host, offered: fitForDevice(this.catalog, host) };
    return this.#fit.offered;
  }

  /** The top of the phone's drawer: the views, and a way out besides Back and Esc. */
  #renderDrawerTop() {
    return html`<div class="drawer-top">
      ${this.#renderNav()}
      <button @click=${() => this.#closeDrawer()}>Close</button>
    </div>`;
  }

  protected override render() {
    const usable = chatModels(this.#offered);
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
          aria-expanded=${this.navOpen ? 'true' : 'false'}
          aria-controls="sidebar"
          title="Menu"
          @click=${() => (this.navOpen ? this.#closeDrawer() : this.#openDrawer())}
        >
          ☰
        </button>
        <h1>Hearth</h1>
        ${this.navOpen ? nothing : this.#renderNav()}
        <button class="link end" @click=${() => this.#dialog('#shortcuts')?.showModal()}>
          Keyboard shortcuts
        </button>
      </header>
      <aside id="sidebar" aria-label="Conversations">
        ${this.navOpen ? this.#renderDrawerTop() : nothing}
        <conversation-list
          .conversations=${this.conversations}
          .active=${this.active?.id ?? ''}
          @open=${(e: CustomEvent<string>) => {
            const c = this.conversations.find((x) => x.id === e.detail);
            if (c) this.#open(c);
          }}
          @new=${() => this.#new()}
          @rename=${(e: CustomEvent<{ id: string; title: string }>) =>
            this.#change(e.detail.id, { title: e.detail.title })}
          @pin=${(e: CustomEvent<{ id: string; pinned: boolean }>) =>
            this.#change(e.detail.id, { pinned: e.detail.pinned })}
          @archive=${(e: CustomEvent<{ id: string; archived: boolean }>) =>
            this.#change(e.detail.id, { archived: e.detail.archived })}
          @remove=${(e: CustomEvent<string>) => this.#remove(e.detail)}
          @export=${() => this.#export()}
          @export-markdown=${(e: CustomEvent<string>) => this.#exportMarkdown(e.detail)}
          @import=${(e: CustomEvent<File>) => this.#import(e.detail)}
        ></conversation-list>
        <api-status
          .role=${this.role}
          .detail=${this.detail}
          .persistence=${this.persistence}
        ></api-status>
      </aside>
      <main id="main" tabindex="-1" class=${this.view}>
        ${this.#renderBanners()}
        <div class="view">${this.#renderView(usable)}</div>
      </main>
      ${this.#renderShortcuts()}
    `;
  }

  #renderBanners() {
    return html`
      ${
        this.offline && !this.offlineDismissed
          ? html`<p class="notice banner" role="status">
              <span
                ><strong>Offline.</strong> Chat, the models on this device and your conversations
                keep working; downloads need the network.</span
              >
              <button class="link" @click=${() => (this.offlineDismissed = true)}>Dismiss</button>
            </p>`
          : nothing
      }
      ${
        this.updateReady
          ? html`<p class="notice banner" role="status">
              ${
                this.updating
                  ? 'Updating once the replies in progress are done…'
                  : html`<span>A new version of Hearth is ready.</span>
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
              class="notice ${this.notice.error ? 'banner error' : 'toast'}"
              role=${this.notice.error ? 'alert' : 'status'}
            >
              <span>${this.notice.text}</span>
              <button
                class="link"
                @click=${() => {
                  clearTimeout(this.#noticeTimer);
                  this.notice = null;
                }}
              >
                Dismiss
              </button>
            </p>`
          : nothing
      }
    `;
  }

  #renderShortcuts() {
    const mod = /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl';
    const keys: [string[], string][] = [
      [[mod, 'Shift', 'O'], 'New conversation'],
      [['Shift', 'Esc'], 'Focus the message box'],
      [['Esc'], 'Stop the reply'],
      [[mod, 'Shift', 'C'], 'Copy the last reply'],
      [[mod, '/'], 'Show these shortcuts'],
      [
        preferences().sendKey === 'enter' ? ['Enter'] : [mod, 'Enter'],
        'Send the message (Settings → Preferences changes it)',
      ],
    ];
    return html`<dialog id="shortcuts" aria-labelledby="shortcuts-title">
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl class="keys">
        ${keys.map(
          ([combo, what]) =>
            html`<dt>${combo.map((k, i) => html`${i ? ' + ' : ''}<kbd>${k}</kbd>`)}</dt>
              <dd>${what}</dd>`,
        )}
      </dl>
      <form method="dialog"><button class="primary">Close</button></form>
    </dialog>`;
  }

  #renderView(usable: CatalogModel[]) {
    switch (this.view) {
      case 'chat':
        return this.active
          ? html`<chat-view
              .conversation=${this.active}
              .models=${usable}
              .catalog=${this.#offered}
              .checking=${!this.catalogKnown}
              .host=${this.#host.value}
              @conversation-changed=${(e: CustomEvent<Conversation>) => this.#onChanged(e.detail)}
              @new-conversation=${(
                e: CustomEvent<{ model: string; settings: ConversationSettings; draft: string }>,
              ) => this.#new(e.detail)}
              @show-models=${() => (location.hash = '#/models')}
              @open-drawer=${() => this.#openDrawer()}
              @new-chat=${() => this.#new()}
              @catalog-stale=${() => this.refreshCatalog()}
            ></chat-view>`
          : nothing;
      case 'models':
        return html`<model-manager
          .catalog=${this.#offered}
          .loading=${!this.catalogKnown}
          .adding=${this.section === 'add'}
          .host=${this.#host.value}
          @catalog-stale=${() => this.refreshCatalog()}
        ></model-manager>`;
      case 'settings':
        return html`<settings-view
          .section=${this.section}
          .model=${this.active?.model ?? NO_MODEL}
          .host=${this.#host.value}
          .catalog=${this.#offered}
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
