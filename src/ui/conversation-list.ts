/**
 * @module
 * `<conversation-list>`: the conversations, newest first, with search, new, rename, delete, and
 * export and import of all of them as one JSON file.
 */
import { css, html, LitElement, nothing } from 'lit';
import type { Conversation } from './conversation';
import { shared } from './styles';

/**
 * @fires open - `detail: id`.
 * @fires new - a new conversation.
 * @fires rename - `detail: {id, title}`.
 * @fires remove - `detail: id`.
 * @fires export - all conversations to a file.
 * @fires import - `detail: File`.
 */
export class ConversationList extends LitElement {
  static override properties = {
    conversations: { attribute: false },
    active: {},
    query: { state: true },
    renaming: { state: true },
    confirming: { state: true },
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
      ul {
        list-style: none;
        margin: 0;
        padding: 0;
        overflow-y: auto;
        flex: 1;
        min-height: 0;
      }
      li {
        display: flex;
        align-items: center;
        gap: 0.2em;
        border-radius: 8px;
      }
      li[data-active] {
        background: var(--bg-raised);
        outline: 1px solid var(--border);
      }
      .open {
        flex: 1;
        text-align: left;
        border: none;
        background: none;
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
        min-width: 0;
      }
      li .link {
        font-size: 0.8em;
        flex: none;
        display: none;
      }
      /* Rename and Delete show where they are wanted: on the open conversation, under the
         pointer, and wherever the keyboard is. */
      li[data-active] .link,
      li:hover .link,
      li:focus-within .link {
        display: inline-block;
      }
      li input {
        flex: 1;
        min-width: 0;
      }
      .files {
        display: flex;
        gap: 0.4em;
        flex-wrap: wrap;
      }
      .files label {
        border: 1px solid var(--border);
        border-radius: 8px;
        padding: 0.35em 0.8em;
        cursor: pointer;
        background: var(--bg-raised);
      }
      .files label:focus-within {
        outline: 2px solid var(--focus);
      }
      .confirm {
        flex-wrap: wrap;
        padding: 0.3em;
        font-size: 0.9em;
      }
    `,
  ];

  declare conversations: Conversation[];
  declare active: string;
  declare private query: string;
  declare private renaming: string | null;
  declare private confirming: string | null;

  constructor() {
    super();
    this.conversations = [];
    this.active = '';
    this.query = '';
    this.renaming = null;
    this.confirming = null;
  }

  #emit(name: string, detail?: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  /** Conversations whose title or messages hold the query. */
  get #shown(): Conversation[] {
    const q = this.query.trim().toLowerCase();
    if (q === '') return this.conversations;
    return this.conversations.filter(
      (c) =>
        c.title.toLowerCase().includes(q) ||
        c.messages.some((m) => m.content.toLowerCase().includes(q)),
    );
  }

  #finishRename(id: string, input: HTMLInputElement): void {
    const title = input.value.trim();
    this.renaming = null;
    if (title) this.#emit('rename', { id, title });
  }

  protected override render() {
    const shown = this.#shown;
    return html`
      <div class="top">
        <button class="primary" @click=${() => this.#emit('new')}>New chat</button>
        <label class="sr-only" for="search">Search conversations</label>
        <input
          id="search"
          type="search"
          placeholder="Search conversations"
          .value=${this.query}
          @input=${(e: Event) => (this.query = (e.target as HTMLInputElement).value)}
        />
      </div>
      <ul aria-label="Conversations">
        ${shown.map((c) => this.#renderItem(c))}
        ${
          shown.length === 0 && this.query
            ? html`<li class="muted">No conversation matches.</li>`
            : nothing
        }
      </ul>
      <div class="files">
        <button @click=${() => this.#emit('export')} ?disabled=${this.conversations.length === 0}>
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
    `;
  }

  #renderItem(c: Conversation) {
    const active = c.id === this.active;
    if (this.renaming === c.id) {
      return html`<li ?data-active=${active}>
        <label class="sr-only" for="rename">New title</label>
        <input
          id="rename"
          .value=${c.title}
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Enter') this.#finishRename(c.id, e.target as HTMLInputElement);
            if (e.key === 'Escape') this.renaming = null;
          }}
          @blur=${(e: FocusEvent) => this.#finishRename(c.id, e.target as HTMLInputElement)}
        />
      </li>`;
    }
    if (this.confirming === c.id) {
      return html`<li class="confirm" role="group" aria-label="Confirm deletion">
        <span>Delete “${c.title}”?</span>
        <button
          class="danger"
          @click=${() => ((this.confirming = null), this.#emit('remove', c.id))}
        >
          Yes, delete
        </button>
        <button @click=${() => (this.confirming = null)}>Keep it</button>
      </li>`;
    }
    return html`<li ?data-active=${active}>
      <button
        class="open"
        aria-current=${active ? 'true' : 'false'}
        title=${c.title}
        @click=${() => this.#emit('open', c.id)}
      >
        ${c.title}
      </button>
      <button
        class="link"
        aria-label="Rename ${c.title}"
        @click=${async () => {
          this.renaming = c.id;
          await this.updateComplete;
          this.renderRoot.querySelector<HTMLInputElement>('#rename')?.select();
        }}
      >
        Rename
      </button>
      <button class="link" aria-label="Delete ${c.title}" @click=${() => (this.confirming = c.id)}>
        Delete
      </button>
    </li>`;
  }
}

customElements.define('conversation-list', ConversationList);

declare global {
  interface HTMLElementTagNameMap {
    'conversation-list': ConversationList;
  }
}
