/**
 * @module
 * `<confirm-dialog>`: the app's one way to ask before it acts — a modal dialog named by its
 * heading, what is asked (`content`), and two buttons. Every answer comes once, as an `answer`
 * event whose `detail` is true for the confirming button and false for the other, for Esc, and
 * for a dialog closed any other way; the dialog closes first. The page behind it cannot be used
 * meanwhile (`showModal`).
 *
 * It renders into the element that uses it, with no shadow root of its own: what is asked is
 * that element's, in its styles, and its controls (a checkbox, say) are found where it renders
 * them; the dialog's own look is `confirmStyles`, which that element adds to its styles.
 */
import { css, html, LitElement, nothing, type TemplateResult } from 'lit';

/** The dialog's look, for the styles of an element that renders a `<confirm-dialog>`. */
export const confirmStyles = css`
  confirm-dialog dialog {
    max-width: min(40em, 92vw);
    border: 1px solid var(--border);
    border-radius: 8px;
    background: var(--bg);
    color: var(--fg);
  }
  confirm-dialog dialog::backdrop {
    background: light-dark(rgb(0 0 0 / 40%), rgb(0 0 0 / 60%));
  }
  confirm-dialog h2 {
    margin-top: 0;
    font-size: 1.15em;
  }
  confirm-dialog .actions {
    display: flex;
    justify-content: flex-end;
    gap: 0.5em;
    margin-top: 1em;
  }
`;
export class ConfirmDialog extends LitElement {
  static override properties = {
    heading: {},
    confirm: {},
    cancel: {},
    describedBy: { attribute: 'described-by' },
    content: { attribute: false },
  };

  /** The dialog's name. */
  declare heading: string;
  /** The label of the button that says yes. */
  declare confirm: string;
  /** The label of the button that says no. */
  declare cancel: string;
  /** The id of what describes the question, in `content`, for the dialog's description. */
  declare describedBy: string;
  /** What is asked, between the heading and the buttons. */
  declare content: TemplateResult | typeof nothing;
  /** Whether the question on show now has had its answer. */
  #answered = true;

  constructor() {
    super();
    this.heading = '';
    this.confirm = 'OK';
    this.cancel = 'Cancel';
    this.describedBy = '';
    this.content = nothing;
  }

  protected override createRenderRoot(): HTMLElement {
    return this;
  }

  /**
   * Shows the dialog, modal. `focus: 'cancel'` puts the focus on the button that says no, for a
   * question whose yes cannot be taken back; otherwise the browser focuses the first control.
   */
  async show({ focus }: { focus?: 'cancel' } = {}): Promise<void> {
    await this.updateComplete;
    const dialog = this.querySelector('dialog');
    if (!dialog || dialog.open) return;
    this.#answered = false;
    dialog.showModal();
    if (focus === 'cancel') this.querySelector<HTMLButtonElement>('.confirm-cancel')?.focus();
  }

  #answer(yes: boolean): void {
    if (this.#answered) return;
    this.#answered = true;
    this.querySelector('dialog')?.close();
    this.dispatchEvent(new CustomEvent<boolean>('answer', { detail: yes }));
  }

  protected override render() {
    return html`<dialog
      aria-labelledby="confirm-title"
      aria-describedby=${this.describedBy || nothing}
      @close=${() => this.#answer(false)}
    >
      <h2 id="confirm-title">${this.heading}</h2>
      ${this.content}
      <div class="actions">
        <button class="confirm-cancel" @click=${() => this.#answer(false)}>${this.cancel}</button>
        <button class="primary" @click=${() => this.#answer(true)}>${this.confirm}</button>
      </div>
    </dialog>`;
  }
}

customElements.define('confirm-dialog', ConfirmDialog);

declare global {
  interface HTMLElementTagNameMap {
    'confirm-dialog': ConfirmDialog;
  }
  interface HTMLElementEventMap {
    answer: CustomEvent<boolean>;
  }
}
