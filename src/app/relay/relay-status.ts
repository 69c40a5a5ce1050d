/**
 * @module
 * `<relay-status>`: the relay pairing as the app shows it on every view. A pairing link opens a
 * dialog that asks first (the fingerprint of the relay's key, a warning when another site opened
 * the link); while the tab is paired a banner says so and ends it on request (as a
 * browser shows that a tab shares the screen); a refused or lost pairing says why. The words are
 * the loader's too (src/relay-tab/pairing-words.ts).
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { PAIRING_WORDS as WORDS } from '../../relay-tab/pairing-words';
import { relayPairing, type PairingState } from './relay-pairing';
import { shared } from '../shared/styles';
import { confirmStyles } from '../shared/confirm-dialog';

export class RelayStatus extends LitElement {
  static override properties = {
    state: { state: true },
    dismissed: { state: true },
  };

  static override styles = [
    shared,
    confirmStyles,
    css`
      :host {
        display: contents;
      }
      .banner {
        margin: 0.5em 1em 0;
      }
      .warning {
        border-left: 4px solid var(--danger);
        padding-left: 0.6em;
        font-weight: 600;
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
    // Sharing cannot be taken back from the relay's callers: the focus starts on "Don't share".
    void this.renderRoot.querySelector('confirm-dialog')?.show({ focus: 'cancel' });
  }

  #answered(share: boolean): void {
    if (!share) return relayPairing.decline();
    const requireKeys = this.renderRoot.querySelector<HTMLInputElement>('#require-keys');
    relayPairing.accept({ requireKeys: requireKeys?.checked ?? true });
  }

  protected override render() {
    const state = this.state;
    switch (state.status) {
      case 'none':
        return nothing;
      case 'asking':
        return html`<confirm-dialog
          heading=${WORDS.title}
          confirm=${WORDS.accept}
          cancel=${WORDS.decline}
          .content=${html`<p>${WORDS.question[0]}<code>${state.relay}</code>${WORDS.question[1]}</p>
            <p class="muted">${WORDS.detail}</p>
            <p class="fingerprint">
              ${WORDS.fingerprint[0]}<code>${state.fingerprint}</code>${WORDS.fingerprint[1]}
            </p>
            ${
              state.from === null
                ? nothing
                : html`<p class="warning">
                    ${WORDS.fromSite[0]}<code>${state.from}</code>${WORDS.fromSite[1]}
                  </p>`
            }
            <label>
              <input type="checkbox" id="require-keys" checked />
              ${WORDS.requireKeys}
            </label>`}
          @answer=${(event: CustomEvent<boolean>) => this.#answered(event.detail)}
        ></confirm-dialog>`;
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
