/**
 * @module
 * `<link-confirm>`: asks before a reply's link opens. A link's text may say anything and its
 * address may carry the conversation (`https://elsewhere.example/?d=…`), so the dialog shows the
 * exact address that will open, host first, and nothing of the text. Open opens it in a new tab
 * with neither referrer nor opener; Cancel (focused first), Esc or closing the dialog opens
 * nothing, and the focus goes back to the link.
 */
import { css, html, LitElement, nothing } from 'lit';
import { shared } from '../../shared/styles';
import { confirmStyles } from '../../shared/confirm-dialog';

export class LinkConfirm extends LitElement {
  static override properties = { url: { state: true } };

  static override styles = [
    shared,
    confirmStyles,
    css`
      .address {
        max-height: 12em;
        overflow: auto;
        overflow-wrap: anywhere;
        user-select: all;
      }
    `,
  ];

  /** The address asked about, or null while nothing is. */
  declare private url: URL | null;
  /** The link asked about, focused again when the dialog closes. */
  #from: HTMLElement | null = null;

  constructor() {
    super();
    this.url = null;
  }

  /** Shows the dialog for `href` (an absolute http(s) address), asked from the link `from`. */
  async ask(href: string, from: HTMLElement | null = null): Promise<void> {
    this.url = new URL(href);
    this.#from = from;
    await this.updateComplete;
    await this.renderRoot.querySelector('confirm-dialog')?.show({ focus: 'cancel' });
  }

  #answered(open: boolean): void {
    const url = this.url;
    // A new tab that cannot reach this one, and is not told where it was opened from.
    if (open && url) window.open(url.href, '_blank', 'noopener,noreferrer');
    this.url = null;
    this.#from?.focus();
    this.#from = null;
  }

  protected override render() {
    const url = this.url;
    if (url === null) return nothing;
    return html`<confirm-dialog
      heading="Open this link?"
      confirm="Open"
      .content=${html`<p>
          It opens <strong>${url.host}</strong> in a new tab, at this address (everything in it is
          sent there):
        </p>
        <p class="address"><code>${url.href}</code></p>`}
      @answer=${(event: CustomEvent<boolean>) => this.#answered(event.detail)}
    ></confirm-dialog>`;
  }
}

customElements.define('link-confirm', LinkConfirm);

declare global {
  interface HTMLElementTagNameMap {
    'link-confirm': LinkConfirm;
  }
}
