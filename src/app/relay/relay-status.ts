/**
 * @module
 * `<relay-status>`: the relay pairing as the app shows it on every view. A pairing link opens a
 * dialog that asks first; while the tab is paired a banner says so and ends it on request (as a
 * browser shows that a tab shares the screen); a refused or lost pairing says why. The words are
 * the loader's too (src/relay-tab/pairing-words.ts).
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { PAIRING_WORDS as WORDS } from '../../relay-tab/pairing-words';
import { relayPairing, type PairingState } from './relay-pairing';
import { shared } from '../shared/styles';

export class RelayStatus extends LitElement {
  static override properties = {
    state: { state: true },
    dismissed: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: contents;
      }
      .banner {
        margin: 0.5em 1em 0;
      }
      dialog {
        max-width: min(34em, 92vw);
        border: 1px solid var(--border);
        border-radius: 8px;
        background: var(--bg);
        color: var(--fg);
      }
      dialog::backdrop {
        background: light-dark(rgb(0 0 0 / 40%), rgb(0 0 0 / 60%));
      }
      dialog h2 {
        margin-top: 0;
        font-size: 1.15em;
      }
      .actions {
        display: flex;
        justify-content: flex-end;
        gap: 0.5em;
        margin-top: 1em;
      }
    `,
  ];

  declare private state: PairingState;
  declare private dismissed: PairingState | null;

  constructor() {
    super();
    this.state = relayPairing.state;
    this.dismissed = null;
  }

  readonly #onChange = () => (this.state = relayPairing.state);

  override connectedCallback(): void {
    super.connectedCallback();
    relayPairing.addEventListener('change', this.#onChange);
    this.state = relayPairing.state;
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    relayPairing.removeEventListener('change', this.#onChange);
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    const dialog = this.renderRoot.querySelector('dialog');
    if (dialog && !dialog.open) dialog.showModal();
  }

  #accept(): void {
    const requireKeys = this.renderRoot.querySelector<HTMLInputElement>('#require-keys');
    relayPairing.accept({ requireKeys: requireKeys?.checked ?? true });
  }

  protected override render() {
    const state = this.state;
    switch (state.status) {
      case 'none':
        return nothing;
      case 'asking':
        return html`<dialog aria-labelledby="relay-title" @cancel=${() => relayPairing.decline()}>
          <h2 id="relay-title">${WORDS.title}</h2>
          <p>${WORDS.question[0]}<code>${state.relay}</code>${WORDS.question[1]}</p>
          <p class="muted">${WORDS.detail}</p>
          <label>
            <input type="checkbox" id="require-keys" checked />
            ${WORDS.requireKeys}
          </label>
          <div class="actions">
            <button @click=${() => relayPairing.decline()}>${WORDS.decline}</button>
            <button class="primary" @click=${() => this.#accept()}>${WORDS.accept}</button>
          </div>
        </dialog>`;
      case 'connecting':
        return html`<p class="notice banner" role="status">
          ${WORDS.connecting[0]}<code>${state.relay}</code>${WORDS.connecting[1]}
        </p>`;
      case 'paired':
        return html`<p class="notice banner relay-paired" role="status">
          ${WORDS.paired[0]}<code>${state.baseUrl}</code>${WORDS.paired[1]}
          <button class="link" @click=${() => relayPairing.end()}>${WORDS.stop}</button>
        </p>`;
      case 'ended':
        if (this.dismissed === state) return nothing;
        return html`<p
          class="notice banner ${state.error ? 'error' : ''}"
          role=${state.error ? 'alert' : 'status'}
        >
          ${state.message}
          <button class="link" @click=${() => (this.dismissed = state)}>${WORDS.dismiss}</button>
        </p>`;
    }
  }
}

customElements.define('relay-status', RelayStatus);

declare global {
  interface HTMLElementTagNameMap {
    'relay-status': RelayStatus;
  }
}
