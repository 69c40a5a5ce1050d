/**
 * @module
 * `<conversation-list>`: the conversations in date groups (Pinned first), each row with a "⋯"
 * menu (rename, pin, archive, delete); word-by-word search with a snippet of where it matched;
 * the archived conversations behind a toggle; export and import of all of them as one JSON file.
 * The rows are one Tab stop: the arrow keys move between them, Right arrow to a row's "⋯", and the
 * Menu key or Shift+F10 opens its menu.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { repeat } from 'lit/directives/repeat.js';
import type { Conversation } from './conversation';
import { groupConversations } from './conversation-groups';
import {
  ConversationSearch,
  conversationSnippet,
  queryWords,
  snippet,
  type SnippetPart,
} from './conversation-search';
import { asksForMenu, rowAfterKey, tabStop } from './roving-focus';
import { shared } from '../shared/styles';

/** The open "⋯" menu: whose, and where it shows (fixed, beside its button). */
interface Menu {
  id: string;
  top?: number;
  bottom?: number;
  right: number;
}

/** What a row's menu does. */
type Action = 'rename' | 'pin' | 'archive' | 'markdown' | 'delete';

/** Where focus goes once the list has changed after an action. */
type FocusTarget = { id: string; part: 'open' | 'more' } | 'new' | 'archived';

/**
 * @fires open - `detail: id`.
 * @fires new - a new conversation.
 * @fires rename - `detail: {id, title}`.
 * @fires remove - `detail: id`.
 * @fires pin - `detail: {id, pinned}`.
 * @fires archive - `detail: {id, archived}`.
 * @fires export - all conversations to a file.
 * @fires export-markdown - `detail: id`: that conversation to a Markdown file.
 * @fires import - `detail: File`.
 */
export class ConversationList extends LitElement {
  static override properties = {
    conversations: { attribute: false },
    active: {},
    query: { state: true },
    renaming: { state: true },
    confirming: { state: true },
    menu: { state: true },
    showArchived: { state: true },
    lastFocused: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: flex;
        flex-direction: column;
        gap: 0.6em;
        min-height: 0;
      }
      .top {
        display: flex;
        flex-direction: column;
        gap: 0.5em;
      }
      .scroll {
        overflow-y: auto;
        flex: 1;
        min-height: 0;
        /* Room for the focus rings. */
        padding: 2px;
        margin: -2px;
      }
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
      }
      h2 {
        font-size: 0.75em;
        font-weight: 600;
        color: var(--fg-soft);
        margin: 0.9em 0.6em 0.25em;
      }
      .group:first-child h2 {
        margin-top: 0.2em;
      }
      .row {
        position: relative;
        border-radius: 8px;
      }
      .row:hover,
      .row[data-menu] {
        background: var(--bg-raised);
      }
      .row[data-active] {
        background: var(--bg-raised);
        outline: 1px solid var(--border);
      }
      .open {
        display: block;
        width: 100%;
        text-align: left;
        border: none;
        background: none;
        padding: 0.4em 0.6em;
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .open:focus-visible {
        outline-offset: -2px;
      }
      /* The whole row opens the conversation, its snippet too. */
      .open::after {
        content: '';
        position: absolute;
        inset: 0;
      }
      .more {
        position: absolute;
        z-index: 1;
        top: 0.15em;
        right: 0.2em;
        border: none;
        background: var(--bg-raised);
        color: var(--fg-soft);
        padding: 0.2em 0.5em;
        line-height: 1.2;
        opacity: 0;
      }
      .more:hover:not(:disabled) {
        color: var(--fg);
      }
      /* The "⋯" shows where it is wanted (the open conversation, under the pointer, wherever the
         keyboard is), and always on a touch screen; the title gives way to it only then. */
      .row:is(:hover, :focus-within, [data-active], [data-menu]) .more {
        opacity: 1;
      }
      .row:is(:hover, :focus-within, [data-active], [data-menu]) .open {
        padding-right: 2.4em;
      }
      @media (hover: none) {
        .more {
          opacity: 1;
        }
        .open {
          padding-right: 2.4em;
        }
      }
      .snippet {
        margin: -0.2em 0.6em 0.4em;
        font-size: 0.85em;
        color: var(--fg-soft);
        overflow-wrap: anywhere;
        display: -webkit-box;
        -webkit-line-clamp: 2;
        line-clamp: 2;
        -webkit-box-orient: vertical;
        overflow: hidden;
      }
      mark {
        background: light-dark(#fde68a, #713f12);
        color: var(--fg);
        border-radius: 2px;
      }
      .row input {
        width: 100%;
      }
      .confirm {
        display: flex;
        flex-wrap: wrap;
        align-items: center;
        gap: 0.3em;
        padding: 0.3em;
        font-size: 0.9em;
      }
      .confirm span {
        overflow-wrap: anywhere;
        min-width: 0;
      }
      .none {
        padding: 0.4em 0.6em;
      }
      .archive-toggle {
        margin-top: 0.6em;
        font-size: 0.85em;
      }
      .archive-toggle::before {
        content: '▸ ';
      }
      .archive-toggle[aria-expanded='true']::before {
        content: '▾ ';
      }
      /* A popover, in the top layer: nothing clips it, and it is placed in the viewport. */
      [role='menu'] {
        position: fixed;
        inset: auto;
        margin: 0;
        color: var(--fg);
        display: flex;
        flex-direction: column;
        min-width: 10em;
        padding: 0.25em;
        background: var(--bg-raised);
        border: 1px solid var(--border);
        border-radius: var(--radius);
        box-shadow: 0 4px 16px light-dark(rgb(0 0 0 / 0.15), rgb(0 0 0 / 0.5));
      }
      [role='menuitem'] {
        border: none;
        background: none;
        text-align: left;
        padding: 0.45em 0.8em;
      }
      [role='menuitem']:hover,
      [role='menuitem']:focus {
        background: var(--bg-soft);
      }
      .files {
        display: flex;
        gap: 0.2em;
        font-size: 0.85em;
      }
      .files label {
        border-radius: 8px;
        padding: 0.2em 0.4em;
        cursor: pointer;
        color: var(--fg-soft);
      }
      .files label:hover {
        color: var(--fg);
      }
      .files label:focus-within {
        outline: 2px solid var(--focus);
      }
    `,
  ];

  declare conversations: Conversation[];
  declare active: string;
  declare private query: string;
  declare private renaming: string | null;
  declare private confirming: string | null;
  declare private menu: Menu | null;
  declare private showArchived: boolean;
  /** The row focused last: it keeps the list's Tab stop while it is shown. */
  declare private lastFocused: string | null;
  /** The row that takes Tab, in this render. */
  #tabStop = '';
  /** Built on the first search, then kept up to date. */
  #search: ConversationSearch | undefined;
  /** The rows as shown, in order: the list's, and the archive's. */
  #order: string[] = [];
  #archivedOrder: string[] = [];
  /** Where focus goes when the app next changes the list, until when (a change may not come). */
  #focusTarget: { target: FocusTarget; until: number } | null = null;

  constructor() {
    super();
    this.conversations = [];
    this.active = '';
    this.query = '';
    this.renaming = null;
    this.confirming = null;
    this.menu = null;
    this.showArchived = false;
    this.lastFocused = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    document.addEventListener('pointerdown', this.#onPointerDown, true);
    window.addEventListener('resize', this.#closeMenu);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    document.removeEventListener('pointerdown', this.#onPointerDown, true);
    window.removeEventListener('resize', this.#closeMenu);
  }

  /** A click outside the menu closes it (and leaves focus where the click puts it). */
  readonly #onPointerDown = (e: PointerEvent) => {
    if (!this.menu) return;
    const path = e.composedPath();
    const menu = this.renderRoot.querySelector('[role="menu"]');
    const button = this.#element({ id: this.menu.id, part: 'more' });
    if ((menu && path.includes(menu)) || (button && path.includes(button))) return;
    this.menu = null;
  };

  readonly #closeMenu = () => {
    this.menu = null;
  };

  #emit(name: string, detail?: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  #element(target: FocusTarget): HTMLElement | null {
    const root = this.shadowRoot;
    if (!root) return null;
    if (target === 'new') return root.getElementById('new');
    if (target === 'archived') return root.getElementById('archive-toggle');
    return root.getElementById(`${target.part}-${target.id}`);
  }

  /** Moves focus to `target` now, and again once the app has changed the list, if it was lost. */
  #focusSoon(target: FocusTarget): void {
    this.#focusTarget = { target, until: Date.now() + 5000 };
    this.#element(target)?.focus();
  }

  /** Whether focus is in this list, or nowhere (dropped to the body by a removed element). */
  #focusIsOurs(): boolean {
    const active = document.activeElement;
    return active === null || active === document.body || this.shadowRoot?.activeElement != null;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('conversations') && this.menu) {
      const id = this.menu.id;
      if (!this.conversations.some((c) => c.id === id)) this.menu = null;
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    const pending = this.#focusTarget;
    if (pending && changed.has('conversations')) {
      this.#focusTarget = null;
      if (Date.now() < pending.until && this.#focusIsOurs()) this.#element(pending.target)?.focus();
    }
  }

  /** The row after `id` in `order`, else the one before, else `fallback`. */
  #neighbour(id: string, fallback: FocusTarget): FocusTarget {
    const order = this.#archivedOrder.includes(id) ? this.#archivedOrder : this.#order;
    const i = order.indexOf(id);
    const next = order[i + 1] ?? order[i - 1];
    return next ? { id: next, part: 'open' } : fallback;
  }

  #fallback(id: string): FocusTarget {
    return this.#archivedOrder.includes(id) ? 'archived' : 'new';
  }

  #finishRename(id: string, input: HTMLInputElement, refocus: boolean): void {
    if (this.renaming !== id) return;
    const title = input.value.trim();
    this.renaming = null;
    if (title) {
      if (refocus) this.#focusSoon({ id, part: 'more' });
      this.#emit('rename', { id, title });
    } else if (refocus) {
      void this.updateComplete.then(() => this.#element({ id, part: 'more' })?.focus());
    }
  }

  async #openMenu(c: Conversation, button: HTMLElement, item: 'first' | 'last'): Promise<void> {
    const r = button.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    const height = document.documentElement.clientHeight;
    // Below the button where there is room for it, else above.
    const below = height - r.bottom > 190;
    this.menu = {
      id: c.id,
      right: Math.max(4, width - r.right),
      ...(below ? { top: r.bottom + 2 } : { bottom: height - r.top + 2 }),
    };
    await this.updateComplete;
    const menu = this.renderRoot.querySelector<HTMLElement>('[role="menu"]');
    const place = this.menu;
    if (menu && place) {
      // Through the CSSOM: the page's CSP allows no style attribute.
      menu.style.right = `${place.right}px`;
      menu.style.top = place.top === undefined ? 'auto' : `${place.top}px`;
      menu.style.bottom = place.bottom === undefined ? 'auto' : `${place.bottom}px`;
      if (!menu.matches(':popover-open')) menu.showPopover();
    }
    const items = this.#menuItems();
    (item === 'first' ? items[0] : items.at(-1))?.focus();
  }

  #menuItems(): HTMLElement[] {
    return [...this.renderRoot.querySelectorAll<HTMLElement>('[role="menuitem"]')];
  }

  /** Closes the menu and gives focus back to its button. */
  #dismissMenu(): void {
    const id = this.menu?.id;
    this.menu = null;
    if (id) this.#element({ id, part: 'more' })?.focus();
  }

  #onMenuKey(e: KeyboardEvent): void {
    const items = this.#menuItems();
    const at = items.indexOf(this.shadowRoot?.activeElement as HTMLElement);
    const go = (i: number) => items[(i + items.length) % items.length]?.focus();
    switch (e.key) {
      case 'ArrowDown':
        go(at + 1);
        break;
      case 'ArrowUp':
        go(at - 1);
        break;
      case 'Home':
        go(0);
        break;
      case 'End':
        go(-1);
        break;
      case 'Escape':
        // Only the menu closes, not the drawer it is in.
        e.stopPropagation();
        this.#dismissMenu();
        break;
      case 'Tab':
        // Tab leaves the menu from its button, on to what follows it.
        this.#dismissMenu();
        return;
      default:
        return;
    }
    e.preventDefault();
  }

  async #menuAction(c: Conversation, action: Action): Promise<void> {
    this.menu = null;
    switch (action) {
      case 'rename':
        this.renaming = c.id;
        await this.updateComplete;
        this.renderRoot.querySelector<HTMLInputElement>('#rename')?.select();
        break;
      case 'pin':
        this.#focusSoon({ id: c.id, part: 'more' });
        this.#emit('pin', { id: c.id, pinned: !c.pinned });
        break;
      case 'archive':
        this.#focusSoon(this.#neighbour(c.id, this.#fallback(c.id)));
        this.#emit('archive', { id: c.id, archived: !c.archived });
        break;
      case 'markdown':
        this.#focusSoon({ id: c.id, part: 'more' });
        this.#emit('export-markdown', c.id);
        break;
      case 'delete':
        this.confirming = c.id;
        await this.updateComplete;
        this.renderRoot.querySelector<HTMLElement>('.confirm .keep')?.focus();
        break;
    }
  }

  /** A row's keys: Up, Down, Home and End move between rows, Right goes to the row's "⋯". */
  #onRowKey(e: KeyboardEvent, c: Conversation): void {
    const more = this.#element({ id: c.id, part: 'more' });
    if (asksForMenu(e)) {
      if (more) void this.#openMenu(c, more, 'first');
    } else if (e.key === 'ArrowRight') {
      more?.focus();
    } else {
      const rows = [...this.renderRoot.querySelectorAll<HTMLElement>('button.open')];
      const to = rowAfterKey(e.key, rows.indexOf(e.currentTarget as HTMLElement), rows.length);
      if (to === null) return;
      rows[to]?.focus();
    }
    e.preventDefault();
  }

  /** The "⋯" keys: Up and Down, the Menu key and Shift+F10 open the menu; Left goes back to the row. */
  #onMoreKey(e: KeyboardEvent, c: Conversation): void {
    const button = e.currentTarget as HTMLElement;
    if (e.key === 'ArrowLeft') this.#element({ id: c.id, part: 'open' })?.focus();
    else if (e.key === 'ArrowDown' || asksForMenu(e)) void this.#openMenu(c, button, 'first');
    else if (e.key === 'ArrowUp') void this.#openMenu(c, button, 'last');
    else return;
    e.preventDefault();
  }

  #confirmDelete(id: string): void {
    this.#focusSoon(this.#neighbour(id, this.#fallback(id)));
    this.confirming = null;
    this.#emit('remove', id);
  }

  async #keep(id: string): Promise<void> {
    this.confirming = null;
    await this.updateComplete;
    this.#element({ id, part: 'more' })?.focus();
  }

  protected override render() {
    const words = queryWords(this.query);
    let found: Set<string> | null = null;
    if (words.length > 0) {
      this.#search ??= new ConversationSearch();
      this.#search.update(this.conversations);
      found = new Set(this.#search.search(this.query));
    }
    const matches = (c: Conversation) => found === null || found.has(c.id);
    const archived = this.conversations.filter((c) => c.archived);
    const groups = groupConversations(
      this.conversations.filter((c) => !c.archived && matches(c)),
      Date.now(),
    );
    const shownArchived = this.showArchived ? archived.filter(matches) : [];
    this.#order = groups.flatMap((g) => g.conversations.map((c) => c.id));
    this.#archivedOrder = shownArchived.map((c) => c.id);
    this.#tabStop = tabStop(
      [...this.#order, ...this.#archivedOrder],
      this.lastFocused,
      this.active,
    );
    const menuFor = this.menu && this.conversations.find((c) => c.id === this.menu?.id);
    return html`
      <div class="top">
        <button id="new" class="primary" @click=${() => this.#emit('new')}>New chat</button>
        <label class="sr-only" for="search">Search conversations</label>
        <input
          id="search"
          type="search"
          placeholder="Search conversations"
          .value=${this.query}
          @input=${(e: Event) => (this.query = (e.target as HTMLInputElement).value)}
        />
      </div>
      <div
        class="scroll"
        @scroll=${this.#closeMenu}
        @focusin=${(e: FocusEvent) => {
          // The row focused keeps the Tab stop, so that Shift+Tab comes back to it.
          const id = /^(?:open|more)-(.+)$/.exec((e.target as HTMLElement).id)?.[1];
          if (id) this.lastFocused = id;
        }}
      >
        <ul aria-label="Conversations">
          ${repeat(
            groups,
            (g) => g.label,
            (g, i) =>
              html`<li class="group">
                <h2 id="group-${i}">${g.label}</h2>
                <ul aria-labelledby="group-${i}">
                  ${repeat(
                    g.conversations,
                    (c) => c.id,
                    (c) => this.#renderItem(c, words),
                  )}
                </ul>
              </li>`,
          )}
          ${
            groups.length === 0 && found
              ? html`<li class="muted none">No conversation matches.</li>`
              : nothing
          }
        </ul>
        ${
          archived.length > 0 || this.showArchived
            ? html`<button
                  id="archive-toggle"
                  class="link archive-toggle"
                  aria-expanded=${this.showArchived ? 'true' : 'false'}
                  aria-controls="archived"
                  @click=${() => (this.showArchived = !this.showArchived)}
                >
                  Archived (${archived.length})
                </button>
                <ul id="archived" aria-label="Archived conversations" ?hidden=${!this.showArchived}>
                  ${repeat(
                    shownArchived,
                    (c) => c.id,
                    (c) => this.#renderItem(c, words),
                  )}
                  ${
                    this.showArchived && shownArchived.length === 0
                      ? html`<li class="muted none">
                          ${found ? 'No archived conversation matches.' : 'None.'}
                        </li>`
                      : nothing
                  }
                </ul>`
            : nothing
        }
      </div>
      <div class="files">
        <button
          class="link"
          @click=${() => this.#emit('export')}
          ?disabled=${this.conversations.length === 0}
        >
          Export
        </button>
        <label
          >Import
          <input
            class="sr-only"
            type="file"
            accept="application/json,.json"
            @change=${(e: Event) => {
              const input = e.target as HTMLInputElement;
              const file = input.files?.[0];
              if (file) this.#emit('import', file);
              input.value = '';
            }}
        /></label>
      </div>
      ${menuFor ? this.#renderMenu(menuFor) : nothing}
    `;
  }

  #renderMenu(c: Conversation) {
    const item = (label: string, action: Action, danger = false) =>
      html`<button
        role="menuitem"
        tabindex="-1"
        class=${danger ? 'danger' : ''}
        @click=${() => this.#menuAction(c, action)}
      >
        ${label}
      </button>`;
    return html`<div
      role="menu"
      popover="manual"
      aria-labelledby="more-${c.id}"
      @keydown=${(e: KeyboardEvent) => this.#onMenuKey(e)}
    >
      ${item('Rename', 'rename')} ${c.archived ? nothing : item(c.pinned ? 'Unpin' : 'Pin', 'pin')}
      ${item(c.archived ? 'Unarchive' : 'Archive', 'archive')}
      ${item('Export as Markdown', 'markdown')} ${item('Delete', 'delete', true)}
    </div>`;
  }

  /** The title, its matching words marked. */
  #renderTitle(title: string, words: string[]) {
    const parts = words.length > 0 ? snippet(title, words, Infinity) : null;
    return parts ? this.#renderParts(parts) : title;
  }

  #renderParts(parts: SnippetPart[]) {
    // Text nodes only: a message is the model's words, never markup.
    return parts.map((p) => (p.mark ? html`<mark>${p.text}</mark>` : p.text));
  }

  #renderItem(c: Conversation, words: string[]) {
    const active = c.id === this.active;
    if (this.renaming === c.id) {
      return html`<li class="row" ?data-active=${active}>
        <label class="sr-only" for="rename">New title</label>
        <input
          id="rename"
          .value=${c.title}
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Enter') this.#finishRename(c.id, e.target as HTMLInputElement, true);
            if (e.key === 'Escape') {
              e.stopPropagation();
              this.renaming = null;
              void this.updateComplete.then(() =>
                this.#element({ id: c.id, part: 'more' })?.focus(),
              );
            }
          }}
          @blur=${(e: FocusEvent) => this.#finishRename(c.id, e.target as HTMLInputElement, false)}
        />
      </li>`;
    }
    if (this.confirming === c.id) {
      return html`<li
        class="row confirm"
        role="group"
        aria-label="Confirm deletion"
        @keydown=${(e: KeyboardEvent) => {
          if (e.key !== 'Escape') return;
          e.stopPropagation();
          void this.#keep(c.id);
        }}
      >
        <span>Delete “${c.title}”?</span>
        <button class="danger" @click=${() => this.#confirmDelete(c.id)}>Yes, delete</button>
        <button class="keep" @click=${() => this.#keep(c.id)}>Keep it</button>
      </li>`;
    }
    const found = words.length > 0 ? conversationSnippet(c, words) : null;
    const menuOpen = this.menu?.id === c.id;
    return html`<li class="row" ?data-active=${active} ?data-menu=${menuOpen}>
      <button
        id="open-${c.id}"
        class="open"
        aria-current=${active ? 'true' : 'false'}
        aria-describedby=${found ? `snippet-${c.id}` : nothing}
        title=${c.title}
        tabindex=${c.id === this.#tabStop ? '0' : '-1'}
        @click=${() => this.#emit('open', c.id)}
        @keydown=${(e: KeyboardEvent) => this.#onRowKey(e, c)}
      >
        ${this.#renderTitle(c.title, words)}
      </button>
      <button
        id="more-${c.id}"
        class="more"
        aria-label="Options for ${c.title}"
        aria-haspopup="menu"
        aria-expanded=${menuOpen ? 'true' : 'false'}
        title="Options"
        tabindex="-1"
        @click=${(e: Event) => {
          if (menuOpen) this.menu = null;
          else void this.#openMenu(c, e.currentTarget as HTMLElement, 'first');
        }}
        @keydown=${(e: KeyboardEvent) => this.#onMoreKey(e, c)}
      >
        ⋯
      </button>
      ${found ? html`<p class="snippet" id="snippet-${c.id}">${this.#renderParts(found)}</p>` : nothing}
    </li>`;
  }
}

customElements.define('conversation-list', ConversationList);

declare global {
  interface HTMLElementTagNameMap {
    'conversation-list': ConversationList;
  }
}
