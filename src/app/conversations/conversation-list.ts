/**
 * @module
 * `<conversation-list>`: the conversations in date groups (Pinned first), each row with a "⋯"
 * menu (rename, pin, archive, delete); word-by-word search with a snippet of where it matched;
 * the archived conversations behind a toggle; export and import of all of them as one JSON file.
 * The rows are one Tab stop: the arrow keys move between them, Right arrow to a row's "⋯", and the
 * Menu key or Shift+F10 opens its menu. This file renders; where focus goes is
 * `conversation-list-focus.ts`, the row menu's state `conversation-menu.ts` (a controller).
 */
import { html, LitElement, nothing, type PropertyValues } from 'lit';
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
import { ListFocus } from './conversation-list-focus';
import { conversationListStyles } from './conversation-list-styles';
import { RowMenu } from './conversation-menu';
import { shared } from '../shared/styles';

/** What a row's menu does. */
type Action = 'rename' | 'pin' | 'archive' | 'markdown' | 'delete';

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
    showArchived: { state: true },
    lastFocused: { state: true },
  };

  static override styles = [shared, conversationListStyles];

  declare conversations: Conversation[];
  declare active: string;
  declare private query: string;
  declare private renaming: string | null;
  declare private confirming: string | null;
  declare private showArchived: boolean;
  /** The row focused last: it keeps the list's Tab stop while it is shown. */
  declare private lastFocused: string | null;
  /** Built on the first search, then kept up to date. */
  #search: ConversationSearch | undefined;
  readonly #menu: RowMenu = new RowMenu(this, (id) => this.#focus.element({ id, part: 'more' }));
  readonly #focus: ListFocus = new ListFocus(this, this.#menu);

  constructor() {
    super();
    this.conversations = [];
    this.active = '';
    this.query = '';
    this.renaming = null;
    this.confirming = null;
    this.showArchived = false;
    this.lastFocused = null;
  }

  #emit(name: string, detail?: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('conversations')) this.#menu.closeIfGone(this.conversations);
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('conversations')) this.#focus.listChanged();
  }

  #finishRename(id: string, input: HTMLInputElement, refocus: boolean): void {
    if (this.renaming !== id) return;
    const title = input.value.trim();
    this.renaming = null;
    if (title) {
      if (refocus) this.#focus.focusSoon({ id, part: 'more' });
      this.#emit('rename', { id, title });
    } else if (refocus) {
      void this.updateComplete.then(() => this.#focus.element({ id, part: 'more' })?.focus());
    }
  }

  async #menuAction(c: Conversation, action: Action): Promise<void> {
    this.#menu.close();
    switch (action) {
      case 'rename':
        this.renaming = c.id;
        await this.updateComplete;
        this.renderRoot.querySelector<HTMLInputElement>('#rename')?.select();
        break;
      case 'pin':
        this.#focus.focusSoon({ id: c.id, part: 'more' });
        this.#emit('pin', { id: c.id, pinned: !c.pinned });
        break;
      case 'archive':
        this.#focus.focusSoon(this.#focus.afterLeaving(c.id));
        this.#emit('archive', { id: c.id, archived: !c.archived });
        break;
      case 'markdown':
        this.#focus.focusSoon({ id: c.id, part: 'more' });
        this.#emit('export-markdown', c.id);
        break;
      case 'delete':
        this.confirming = c.id;
        await this.updateComplete;
        this.renderRoot.querySelector<HTMLElement>('.confirm .keep')?.focus();
        break;
    }
  }

  #confirmDelete(id: string): void {
    this.#focus.focusSoon(this.#focus.afterLeaving(id));
    this.confirming = null;
    this.#emit('remove', id);
  }

  async #keep(id: string): Promise<void> {
    this.confirming = null;
    await this.updateComplete;
    this.#focus.element({ id, part: 'more' })?.focus();
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
    this.#focus.setRows(
      groups.flatMap((g) => g.conversations.map((c) => c.id)),
      shownArchived.map((c) => c.id),
      this.lastFocused,
      this.active,
    );
    const menuOf = this.#menu.openFor;
    const menuFor = menuOf !== null && this.conversations.find((c) => c.id === menuOf);
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
        @scroll=${this.#menu.close}
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
      @keydown=${(e: KeyboardEvent) => this.#menu.onKey(e)}
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
                this.#focus.element({ id: c.id, part: 'more' })?.focus(),
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
    const menuOpen = this.#menu.openFor === c.id;
    return html`<li class="row" ?data-active=${active} ?data-menu=${menuOpen}>
      <button
        id="open-${c.id}"
        class="open"
        aria-current=${active ? 'true' : 'false'}
        aria-describedby=${found ? `snippet-${c.id}` : nothing}
        title=${c.title}
        tabindex=${c.id === this.#focus.tabStop ? '0' : '-1'}
        @click=${() => this.#emit('open', c.id)}
        @keydown=${(e: KeyboardEvent) => this.#focus.onRowKey(e, c.id)}
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
          if (menuOpen) this.#menu.close();
          else void this.#menu.open(c.id, e.currentTarget as HTMLElement, 'first');
        }}
        @keydown=${(e: KeyboardEvent) => this.#focus.onMoreKey(e, c.id)}
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
