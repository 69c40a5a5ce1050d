/**
 * @module
 * `<chat-message>`: one message. A user's is plain text, with Edit and Copy; a reply is rendered
 * Markdown (inert, see markdown.ts; its links open only once the user confirms their address in
 * `<link-confirm>`), its reasoning folded away, its error shown where it happened, and after it
 * the tokens, speed and estimated cost. A message edited or written again shows which of its
 * versions is on show, ‹ 2 / 3 ›, and switches between them. Its buttons say which message they
 * act on ("Copy reply 3"), for those who hear them away from the message.
 */
import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { unsafeHTML } from 'lit/directives/unsafe-html.js';
import { versionOf, type Message } from '../conversations/conversation';
import './markdown/link-confirm';
import { sourceLabel } from '../documents/citation-dialog';
import { COPIED_MS, RenderedMarkdown } from './markdown/rendered-markdown';
import { isSendKey } from '../shared/preferences';
import { statsLine } from './reply-stats';
import { shared } from '../shared/styles';
import { chatMessageStyles } from './chat-message-styles';

/**
 * @fires edit - `detail: {content}`: the user changed their message and wants a new reply.
 * @fires regenerate - the reply should be written again.
 * @fires version - `detail: {to}`: show version `to` (0-based) of this message.
 * @fires continue - the reply, stopped or cut off, should go on where it ended.
 */
export class ChatMessage extends LitElement {
  static override properties = {
    message: { attribute: false },
    ordinal: { type: Number },
    last: { type: Boolean },
    streaming: { type: Boolean },
    busy: { type: Boolean },
    editing: { state: true },
    copied: { state: true },
  };

  static override styles = [shared, chatMessageStyles];

  declare message: Message;
  /** Its place among the messages of its role, from 1: "reply 3" is the third reply. */
  declare ordinal: number;
  /** The last message of the conversation (only it may be continued). */
  declare last: boolean;
  /** Its reply is streaming in now. */
  declare streaming: boolean;
  /** A reply of the conversation is streaming in (this one or another): none is asked for now. */
  declare busy: boolean;
  declare private editing: boolean;
  declare private copied: boolean;
  /** Its Markdown, rendered, and what answers clicks in it. */
  readonly #markdown = new RenderedMarkdown(this);
  /** The version button just pressed: if it is disabled now (an end), focus goes to the other. */
  #pressed: 'previous' | 'next' | null = null;

  constructor() {
    super();
    this.ordinal = 0;
    this.last = false;
    this.streaming = false;
    this.busy = false;
    this.editing = false;
    this.copied = false;
  }

  /** What its buttons call it: "message 2", "reply 3". */
  get #name(): string {
    const noun = this.message.role === 'user' ? 'message' : 'reply';
    return this.ordinal > 0 ? `${noun} ${this.ordinal}` : noun;
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('message') && this.#pressed) {
      const pressed = this.#versionButton(this.#pressed);
      const other = this.#versionButton(this.#pressed === 'next' ? 'previous' : 'next');
      if (pressed?.disabled) other?.focus();
      this.#pressed = null;
    }
  }

  #versionButton(which: 'previous' | 'next'): HTMLButtonElement | null {
    return this.renderRoot.querySelector<HTMLButtonElement>(`.versions button.${which}`);
  }

  #emit(name: string, detail?: unknown): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  async #copy(text: string): Promise<void> {
    await navigator.clipboard.writeText(text);
    this.copied = true;
    setTimeout(() => (this.copied = false), COPIED_MS);
  }

  async #startEdit(): Promise<void> {
    this.editing = true;
    await this.updateComplete;
    const textarea = this.renderRoot.querySelector('textarea');
    if (!textarea) return;
    fitHeight(textarea);
    textarea.focus();
    textarea.setSelectionRange(textarea.value.length, textarea.value.length);
  }

  /** Leaves the edit box; the focus goes back to Edit, where the user was. */
  async #cancelEdit(): Promise<void> {
    this.editing = false;
    await this.updateComplete;
    // Edit is not offered while a reply streams in: then the message's first action has it.
    const edit = this.renderRoot.querySelector<HTMLButtonElement>('button.edit');
    (edit ?? this.renderRoot.querySelector<HTMLButtonElement>('.actions button'))?.focus();
  }

  #saveEdit(): void {
    const textarea = this.renderRoot.querySelector('textarea');
    const content = textarea?.value.trim() ?? '';
    // While a reply streams in nothing can be asked: the box stays open, the text in it.
    if (content === '' || this.busy) return;
    this.editing = false;
    this.#emit('edit', { content });
  }

  /** The same keys as the composer's: the send key saves, Esc cancels. */
  #onEditKey(event: KeyboardEvent): void {
    if (isSendKey(event)) {
      event.preventDefault();
      this.#saveEdit();
    } else if (event.key === 'Escape') {
      // Esc here leaves the edit box, and nothing else (it does not stop a reply streaming in).
      event.preventDefault();
      event.stopPropagation();
      void this.#cancelEdit();
    }
  }

  /** Opens the passage of the citation clicked (or pressed), if that is what it was. */
  #cite(event: Event): boolean {
    const button = (event.target as HTMLElement).closest<HTMLElement>('button.cite');
    const n = Number(button?.dataset.cite);
    const source = this.message.sources?.[n - 1];
    if (!button || !source) return false;
    void this.renderRoot.querySelector('citation-dialog')?.open(n, source, button);
    return true;
  }

  protected override render() {
    return this.message.role === 'user' ? this.#renderUser() : this.#renderReply();
  }

  /** ‹ 2 / 3 ›, where the message has versions. */
  #renderVersions() {
    const version = versionOf(this.message);
    if (!version) return nothing;
    const { current, count } = version;
    const go = (which: 'previous' | 'next', to: number) => {
      this.#pressed = which;
      this.#emit('version', { to });
    };
    return html`<span class="versions" role="group" aria-label="Versions of ${this.#name}">
      <button
        class="link previous"
        aria-label="Previous version"
        ?disabled=${current === 0 || this.streaming}
        @click=${() => go('previous', current - 1)}
      >
        ‹
      </button>
      <span aria-hidden="true">${current + 1} / ${count}</span>
      <span class="sr-only">Version ${current + 1} of ${count}</span>
      <button
        class="link next"
        aria-label="Next version"
        ?disabled=${current === count - 1 || this.streaming}
        @click=${() => go('next', current + 1)}
      >
        ›
      </button>
    </span>`;
  }

  #renderCopy(text: string) {
    return html`<button
      class="link"
      aria-label="${this.copied ? 'Copied' : 'Copy'} ${this.#name}"
      @click=${() => this.#copy(text)}
    >
      ${this.copied ? 'Copied' : 'Copy'}
    </button>`;
  }

  #renderUser() {
    const { content } = this.message;
    if (this.editing) {
      return html`<article class="user editing edit" aria-label="You">
        <label class="sr-only" for="edit">Edit your message</label>
        <textarea
          id="edit"
          rows="2"
          .value=${content}
          @input=${(e: Event) => fitHeight(e.target as HTMLTextAreaElement)}
          @keydown=${(e: KeyboardEvent) => this.#onEditKey(e)}
        ></textarea>
        <div class="actions">
          <button @click=${() => this.#cancelEdit()}>Cancel</button>
          <button
            class="primary"
            ?disabled=${this.busy}
            aria-describedby=${this.busy ? 'edit-wait' : nothing}
            @click=${() => this.#saveEdit()}
          >
            Save and send
          </button>
          ${
            this.busy
              ? html`<span class="muted" id="edit-wait"
                  >A reply is coming in: save when it ends, or stop it.</span
                >`
              : nothing
          }
        </div>
      </article>`;
    }
    const images = this.message.images ?? [];
    return html`<article class="user" aria-label="You">
        ${
          images.length > 0
            ? html`<div class="images">
                ${images.map((url, i) => html`<img src=${url} alt="Image ${i + 1} you sent" />`)}
              </div>`
            : nothing
        }
        ${content ? html`<div class="text">${content}</div>` : nothing}
      </article>
      <div class="actions">
        ${this.#renderVersions()}
        ${
          // Nothing can be asked while a reply streams in (an edit box already open stays).
          this.busy
            ? nothing
            : html`<button
                class="link edit"
                aria-label="Edit ${this.#name}"
                @click=${() => this.#startEdit()}
              >
                Edit
              </button>`
        }
        ${this.#renderCopy(content)}
      </div>`;
  }

  #renderReply() {
    const m = this.message;
    const stats = m.stats;
    const where = this.#name;
    // A reply stopped before anything came has nothing to go on from: Regenerate asks again.
    const empty = !m.content && !m.reasoning;
    const canContinue =
      this.last &&
      !this.streaming &&
      !m.error &&
      !empty &&
      (m.stopped || m.finish_reason === 'length');
    return html`<article
        aria-label="Reply"
        aria-busy=${this.streaming ? 'true' : 'false'}
        @click=${(e: Event) => this.#cite(e) || this.#markdown.click(e)}
        @keydown=${(e: KeyboardEvent) => this.#markdown.key(e)}
      >
        ${
          m.reasoning
            ? html`<details>
                <summary>Reasoning</summary>
                <div class="md">
                  ${unsafeHTML(this.#markdown.html(m.reasoning, `the reasoning of ${where}`))}
                </div>
              </details>`
            : nothing
        }
        <div class="md ${this.streaming ? 'cursor' : ''}">
          ${unsafeHTML(this.#markdown.html(m.content, where, m.sources?.map(sourceLabel)))}
        </div>
        ${
          m.error
            ? html`<p class="error" role="alert">
                <strong>The reply failed:</strong> ${m.error.message}
              </p>`
            : nothing
        }
        ${
          m.stopped
            ? html`<p class="muted">
                ${empty ? 'Stopped before anything was written.' : 'Stopped.'}
              </p>`
            : nothing
        }
        <link-confirm></link-confirm>
        ${m.sources?.length ? html`<citation-dialog></citation-dialog>` : nothing}
        ${
          m.finish_reason === 'length'
            ? html`<p class="muted">Cut off at the maximum length.</p>`
            : nothing
        }
      </article>
      ${
        this.streaming
          ? nothing
          : html`<div class="actions">
              ${this.#renderVersions()}
              ${stats ? html`<span class="stats">${statsLine(stats, m.model)}</span>` : nothing}
              ${m.content ? this.#renderCopy(m.content) : nothing}
              ${
                canContinue
                  ? html`<button
                      class="link"
                      aria-label="Continue ${where}"
                      @click=${() => this.#emit('continue')}
                    >
                      Continue
                    </button>`
                  : nothing
              }
              ${
                // Any reply may be written again: what followed it stays with its old version.
                !this.busy
                  ? html`<button
                      class="link"
                      aria-label="${m.error ? 'Retry' : 'Regenerate'} ${where}"
                      @click=${() => this.#emit('regenerate')}
                    >
                      ${m.error ? 'Retry' : 'Regenerate'}
                    </button>`
                  : nothing
              }
            </div>`
      }`;
  }
}

/** A text box as tall as its text (up to its CSS max-height, then it scrolls). */
function fitHeight(textarea: HTMLTextAreaElement): void {
  textarea.style.height = 'auto';
  const borders = textarea.offsetHeight - textarea.clientHeight;
  textarea.style.height = `${textarea.scrollHeight + borders}px`;
}

customElements.define('chat-message', ChatMessage);

declare global {
  interface HTMLElementTagNameMap {
    'chat-message': ChatMessage;
  }
}
