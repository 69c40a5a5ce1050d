/**
 * @module
 * `<chat-message>`: one message. A user's is plain text, with Edit and Copy; a reply is rendered
 * Markdown (inert, see markdown.ts; its links open only once the user confirms their address in
 * `<link-confirm>`), its reasoning folded away, its error shown where it happened, and after it
 * the tokens, speed and estimated cost.
 */
import { css, html, LitElement, nothing } from 'lit';
import { unsafeHTML } from 'lit/directives/unsafe-html.js';
import type { Message } from './conversation';
import './link-confirm';
import { renderMarkdown } from './markdown';
import { shared } from './styles';

/**
 * @fires edit - `detail: {content}`: the user changed their message and wants a new reply.
 * @fires regenerate - the reply should be written again.
 */
export class ChatMessage extends LitElement {
  static override properties = {
    message: { attribute: false },
    last: { type: Boolean },
    streaming: { type: Boolean },
    editing: { state: true },
    copied: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      article {
        padding: 0.6em 0.9em;
        border-radius: var(--radius);
        max-width: 100%;
        overflow-wrap: anywhere;
      }
      article.user {
        background: var(--user-bubble);
        margin-left: auto;
        width: fit-content;
        max-width: min(100%, 42em);
      }
      .text {
        white-space: pre-wrap;
      }
      .md :first-child {
        margin-top: 0;
      }
      .md :last-child {
        margin-bottom: 0;
      }
      .md pre {
        background: var(--code-bg);
        padding: 0.7em;
        border-radius: 8px;
        overflow-x: auto;
        margin: 0;
      }
      .md pre code {
        background: none;
        padding: 0;
      }
      .md .code {
        position: relative;
        margin: 0.8em 0;
      }
      .md .copy-code {
        position: absolute;
        top: 0.3em;
        right: 0.3em;
        font-size: 0.8em;
        padding: 0.1em 0.5em;
      }
      .md table {
        border-collapse: collapse;
      }
      .md td,
      .md th {
        border: 1px solid var(--border);
        padding: 0.2em 0.5em;
      }
      .md img {
        max-width: 100%;
      }
      .md a[data-href] {
        color: var(--accent);
        text-decoration: underline;
        cursor: pointer;
      }
      .md .destination {
        color: var(--fg-soft);
        font-size: 0.9em;
      }
      details {
        color: var(--fg-soft);
        margin-bottom: 0.5em;
        border-left: 3px solid var(--border);
        padding-left: 0.7em;
      }
      .actions {
        display: flex;
        gap: 0.2em;
        flex-wrap: wrap;
        align-items: center;
        font-size: 0.85em;
      }
      .user + .actions {
        justify-content: flex-end;
      }
      .stats {
        color: var(--fg-soft);
        margin-right: 0.5em;
      }
      textarea {
        width: 100%;
        min-height: 5em;
      }
      .cursor::after {
        content: '▍';
        animation: blink 1s steps(1) infinite;
      }
      @keyframes blink {
        50% {
          opacity: 0;
        }
      }
      @media (prefers-reduced-motion: reduce) {
        .cursor::after {
          animation: none;
        }
      }
    `,
  ];

  declare message: Message;
  /** The last message of the conversation (only it may be regenerated). */
  declare last: boolean;
  /** Its reply is streaming in now. */
  declare streaming: boolean;
  declare private editing: boolean;
  declare private copied: boolean;
  /** The last Markdown rendered, and its HTML: a re-render of the same text costs nothing. */
  #rendered = new Map<string, string>();

  constructor() {
    super();
    this.last = false;
    this.streaming = false;
    this.editing = false;
    this.copied = false;
  }

  #markdown(text: string): string {
    let html = this.#rendered.get(text);
    if (html === undefined) {
      html = renderMarkdown(text);
      if (this.#rendered.size > 4) this.#rendered.clear();
      this.#rendered.set(text, html);
    }
    return html;
  }

  async #copy(text: string): Promise<void> {
    await navigator.clipboard.writeText(text);
    this.copied = true;
    setTimeout(() => (this.copied = false), 1500);
  }

  /**
   * Copies a code block, or asks before a link opens (the buttons and links are part of the
   * rendered Markdown).
   */
  #onMarkdownClick(event: Event): void {
    const target = event.target as HTMLElement;
    const link = target.closest<HTMLElement>('a[data-href]');
    if (link) {
      event.preventDefault();
      void this.renderRoot.querySelector('link-confirm')?.ask(link.dataset.href!, link);
      return;
    }
    const button = target.closest('button.copy-code');
    const code = button?.parentElement?.querySelector('pre')?.textContent;
    if (button && code !== undefined && code !== null) {
      void navigator.clipboard.writeText(code).then(() => {
        button.textContent = 'Copied';
        setTimeout(() => (button.textContent = 'Copy code'), 1500);
      });
    }
  }

  /** Enter on a link asks, as a click does (links without `href` get no Enter of their own). */
  #onMarkdownKey(event: KeyboardEvent): void {
    const link = (event.target as HTMLElement).closest<HTMLElement>('a[data-href]');
    if (link && event.key === 'Enter') this.#onMarkdownClick(event);
  }

  #saveEdit(): void {
    const textarea = this.renderRoot.querySelector('textarea');
    const content = textarea?.value.trim() ?? '';
    if (content === '') return;
    this.editing = false;
    this.dispatchEvent(
      new CustomEvent('edit', { detail: { content }, bubbles: true, composed: true }),
    );
  }

  protected override render() {
    return this.message.role === 'user' ? this.#renderUser() : this.#renderReply();
  }

  #renderUser() {
    const { content } = this.message;
    if (this.editing) {
      return html`<article class="user">
        <label class="sr-only" for="edit">Edit your message</label>
        <textarea
          id="edit"
          .value=${content}
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Escape') this.editing = false;
          }}
        ></textarea>
        <div class="actions">
          <button class="primary" @click=${this.#saveEdit}>Save and send</button>
          <button @click=${() => (this.editing = false)}>Cancel</button>
        </div>
      </article>`;
    }
    return html`<article class="user" aria-label="You">
        <div class="text">${content}</div>
      </article>
      <div class="actions">
        <button
          class="link"
          ?disabled=${this.streaming}
          @click=${async () => {
            this.editing = true;
            await this.updateComplete;
            this.renderRoot.querySelector('textarea')?.focus();
          }}
        >
          Edit
        </button>
        <button class="link" @click=${() => this.#copy(content)}>
          ${this.copied ? 'Copied' : 'Copy'}
        </button>
      </div>`;
  }

  #renderReply() {
    const m = this.message;
    const stats = m.stats;
    return html`<article
        aria-label="Reply"
        aria-busy=${this.streaming ? 'true' : 'false'}
        @click=${(e: Event) => this.#onMarkdownClick(e)}
        @keydown=${(e: KeyboardEvent) => this.#onMarkdownKey(e)}
      >
        ${
          m.reasoning
            ? html`<details>
                <summary>Reasoning</summary>
                <div class="md">${unsafeHTML(this.#markdown(m.reasoning))}</div>
              </details>`
            : nothing
        }
        <div class="md ${this.streaming ? 'cursor' : ''}">
          ${unsafeHTML(this.#markdown(m.content))}
        </div>
        ${
          m.error
            ? html`<p class="error" role="alert">
                <strong>The reply failed:</strong> ${m.error.message}
              </p>`
            : nothing
        }
        ${m.stopped ? html`<p class="muted">Stopped.</p>` : nothing}
        <link-confirm></link-confirm>
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
              ${stats ? html`<span class="stats">${statsLine(stats)}</span>` : nothing}
              ${
                m.content
                  ? html`<button class="link" @click=${() => this.#copy(m.content)}>
                      ${this.copied ? 'Copied' : 'Copy'}
                    </button>`
                  : nothing
              }
              ${
                this.last
                  ? html`<button
                      class="link"
                      @click=${() =>
                        this.dispatchEvent(
                          new CustomEvent('regenerate', { bubbles: true, composed: true }),
                        )}
                    >
                      ${m.error ? 'Retry' : 'Regenerate'}
                    </button>`
                  : nothing
              }
            </div>`
      }`;
  }
}

/** `12 tokens · 34.5 tokens/s · $0.0001`. */
function statsLine(stats: NonNullable<Message['stats']>): string {
  const parts = [`${stats.usage.completion_tokens} tokens`];
  if (stats.tokens_per_s !== null) parts.push(`${stats.tokens_per_s.toFixed(1)} tokens/s`);
  parts.push(`$${formatCost(stats.usage.estimated_cost)}`);
  return parts.join(' · ');
}

/** Dollars with the precision small sums need. */
export function formatCost(dollars: number): string {
  if (dollars === 0) return '0';
  if (dollars < 0.01) return dollars.toPrecision(2);
  return dollars.toFixed(2);
}

customElements.define('chat-message', ChatMessage);

declare global {
  interface HTMLElementTagNameMap {
    'chat-message': ChatMessage;
  }
}
