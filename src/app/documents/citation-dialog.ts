/**
 * @module
 * src/app/documents/ is documents in the app: those attached to a conversation (uploaded to the
 * API's Files, indexed in the conversation's own vector store, with their progress), the passages
 * a reply cites, the embedding model documents need, and the Documents view of every file and
 * store. It imports shared/, conversations/ and models/, and reaches the API over HTTP only.
 *
 * `<citation-dialog>`: the passage a reply's citation points to — its file, its page or heading,
 * and the text the search found — in a modal dialog: Esc or Close shuts it, and the focus goes
 * back to the citation that opened it.
 */
import { css, html, LitElement, nothing } from 'lit';
import type { Source } from '../conversations/conversation';
import { shared } from '../shared/styles';

/** Where in its file a passage is: "page 3", "“Installing”", or nothing. */
export function placeOf(source: Pick<Source, 'page' | 'heading'>): string {
  if (source.page !== undefined) return `page ${source.page}`;
  if (source.heading) return `“${source.heading}”`;
  return '';
}

/** A citation's name after its number: "guide.pdf, page 3". */
export function sourceLabel(source: Source): string {
  const place = placeOf(source);
  return place ? `${source.filename}, ${place}` : source.filename;
}

export class CitationDialog extends LitElement {
  static override properties = { shown: { state: true } };

  static override styles = [
    shared,
    css`
      dialog {
        max-width: min(44em, 92vw);
        max-height: 80vh;
        border: 1px solid var(--border);
        border-radius: 8px;
        background: var(--bg);
        color: var(--fg);
      }
      dialog::backdrop {
        background: light-dark(rgb(0 0 0 / 40%), rgb(0 0 0 / 60%));
      }
      h2 {
        margin: 0 0 0.25em;
        font-size: 1.1em;
        overflow-wrap: anywhere;
      }
      blockquote {
        margin: 0.75em 0;
        padding: 0.5em 0.75em;
        border-left: 3px solid var(--border);
        white-space: pre-wrap;
        overflow-wrap: anywhere;
      }
      .actions {
        display: flex;
        justify-content: flex-end;
      }
    `,
  ];

  declare private shown: { n: number; source: Source } | null;
  #opener: HTMLElement | null = null;

  constructor() {
    super();
    this.shown = null;
  }

  /** Shows passage `n`; the focus goes back to `opener` when it closes. */
  async open(n: number, source: Source, opener: HTMLElement): Promise<void> {
    this.#opener = opener;
    this.shown = { n, source };
    await this.updateComplete;
    const dialog = this.renderRoot.querySelector('dialog');
    if (dialog && !dialog.open) dialog.showModal();
    this.renderRoot.querySelector<HTMLElement>('.close')?.focus();
  }

  #closed(): void {
    this.shown = null;
    this.#opener?.focus();
    this.#opener = null;
  }

  protected override render() {
    const shown = this.shown;
    if (!shown) return html`<dialog aria-label="Source"></dialog>`;
    const { n, source } = shown;
    const place = placeOf(source);
    return html`<dialog aria-labelledby="source-title" @close=${() => this.#closed()}>
      <h2 id="source-title">Source ${n}: ${source.filename}</h2>
      ${place ? html`<p class="muted">${place[0]?.toUpperCase()}${place.slice(1)}</p>` : nothing}
      <blockquote>${source.text}</blockquote>
      <div class="actions">
        <button class="close" @click=${() => this.renderRoot.querySelector('dialog')?.close()}>
          Close
        </button>
      </div>
    </dialog>`;
  }
}

customElements.define('citation-dialog', CitationDialog);

declare global {
  interface HTMLElementTagNameMap {
    'citation-dialog': CitationDialog;
  }
}
