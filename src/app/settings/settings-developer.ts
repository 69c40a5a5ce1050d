/**
 * @module
 * `<settings-developer>`: Settings → Developer. The API from code (`<api-panel>`), who may call it
 * (any key, or issued keys: created, copied, revoked; switching to issued keys says first what it
 * will do), per-model prices for `usage.estimated_cost`, the Responses API's kept conversations
 * (counted, forgotten), the relay, and this device's diagnostics.
 * It renders; what it reads and changes is `developer-state.ts`, the keys' section
 * `developer-keys.ts`.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../../models/models';
import type { HostStatus } from '../../protocol/host/status';
import { appKey, type CatalogModel } from '../shared/api-client';
import './api-panel';
import { confirmStyles } from '../shared/confirm-dialog';
import type { Persistence } from '../shared/persistence';
import { relayPairing } from '../relay/relay-pairing';
import { DeveloperState, type Where } from './developer-state';
import { keysSection } from './developer-keys';
import './settings-diagnostics';
import { snippetModel } from './snippet-model';
import { formatBytes, shared } from '../shared/styles';

export class SettingsDeveloper extends LitElement {
  static override properties = {
    model: {},
    host: { attribute: false },
    catalog: { attribute: false },
    role: {},
    persistence: {},
    confirming: { state: true },
  };

  static override styles = [
    shared,
    confirmStyles,
    css`
      :host {
        display: block;
      }
      section,
      api-panel,
      settings-diagnostics {
        margin-bottom: 1.6em;
      }
      h3 {
        font-size: 1.05em;
        margin: 0 0 0.4em;
      }
      fieldset {
        border: 1px solid var(--border);
        border-radius: var(--radius);
        padding: 0.6em 0.9em;
      }
      fieldset label {
        display: block;
        padding: 0.15em 0;
      }
      table {
        border-collapse: collapse;
        width: 100%;
      }
      th,
      td {
        text-align: left;
        padding: 0.3em 0.4em;
        border-bottom: 1px solid var(--border);
      }
      /* Names and keys may break anywhere; headings, prices and buttons keep their words whole. */
      td:first-child,
      td code {
        overflow-wrap: anywhere;
      }
      td button {
        white-space: nowrap;
      }
      td input {
        width: 6em;
        max-width: 100%;
      }
      @media (max-width: 30em) {
        th,
        td {
          padding: 0.3em 0.2em;
        }
        td input {
          width: 4.5em;
        }
      }
      .row {
        display: flex;
        gap: 0.5em;
        flex-wrap: wrap;
        align-items: center;
        margin-top: 0.6em;
      }
      output {
        font: var(--mono);
        background: var(--code-bg);
        padding: 0.3em 0.5em;
        border-radius: 6px;
        overflow-wrap: anywhere;
      }
      .why {
        display: block;
        font-size: 0.85em;
        margin-top: 0.2em;
      }
      /* The question before switching to issued keys lists what it does. */
      confirm-dialog ul {
        padding-left: 1.2em;
      }
    `,
  ];

  /** The open conversation's model, which the API's snippets name (empty: none chosen). */
  declare model: string;
  declare host: HostStatus | null;
  declare catalog: CatalogModel[];
  /** This tab's part in the engine-host election. */
  declare role: string;
  declare persistence: Persistence;
  /** Switching to issued keys waits for the user's yes. */
  declare private confirming: boolean;
  readonly #state = new DeveloperState(this);

  constructor() {
    super();
    this.model = '';
    this.host = null;
    this.catalog = [];
    this.role = '';
    this.persistence = 'unknown';
    this.confirming = false;
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    void this.renderRoot.querySelector('confirm-dialog')?.show();
  }

  /** Reads the device's status, the settings and the keys again. */
  refresh(): Promise<void> {
    return this.#state.refresh();
  }

  /** The user answered the question before switching to issued keys (Esc: no). */
  async #answer(yes: boolean): Promise<void> {
    this.confirming = false;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLInputElement>(yes ? '#auth-issued' : '#auth-any')?.focus();
    if (yes) await this.#state.setAuth('issued');
  }

  /** The snippets name a model a call reaches; a newcomer's is never the echo test engine. */
  #renderApi() {
    const { id, note } = snippetModel(this.model, this.catalog);
    return html`<api-panel .model=${id} .note=${note} .key=${appKey()}></api-panel>`;
  }

  protected override render() {
    const state = this.#state;
    return html`
      ${this.#renderMessage('top')} ${this.#renderApi()}
      ${keysSection({
        auth: state.settings?.auth,
        confirming: this.confirming,
        keys: state.keys,
        issued: state.issued,
        message: this.#renderMessage('keys'),
        onAnyKey: () => void state.setAuth('any'),
        onIssuedKeys: () => (this.confirming = true),
        onAnswer: (yes) => void this.#answer(yes),
        onIssue: (form) => void state.issue(form),
        onRevoke: (id) => void state.revoke(id),
      })}
      ${this.#renderPrices()} ${this.#renderKept()} ${this.#renderRelay()}
      <settings-diagnostics
        .device=${state.device}
        .host=${this.host}
        .role=${this.role}
        .persistence=${this.persistence}
      ></settings-diagnostics>
    `;
  }

  #renderMessage(where: Where) {
    const m = this.#state.message;
    if (!m || m.where !== where) return nothing;
    return html`<p class=${m.error ? 'error' : 'muted'} role=${m.error ? 'alert' : 'status'}>
      ${m.text}
    </p>`;
  }

  /** The Responses API's conversations kept here (`store: true`), and a way to forget them. */
  #renderKept() {
    const kept = this.#state.kept;
    return html`<section aria-labelledby="kept-responses">
      <h3 id="kept-responses">Kept responses</h3>
      <p class="muted">
        Programs that call the Responses API with <code>store</code> (the default) keep their
        conversations on this device, so that <code>previous_response_id</code> can continue them:
        at most 1,000, none older than 30 days.
      </p>
      <p class="row">
        <span
          >${
            kept === null
              ? 'Reading…'
              : `${kept.count} kept ${kept.count === 1 ? 'response' : 'responses'}, ${formatBytes(kept.bytes)}.`
          }</span
        >
        <button
          class="danger"
          ?disabled=${!kept || kept.count === 0}
          @click=${() => void this.#state.forgetResponses()}
        >
          Forget kept responses
        </button>
      </p>
      ${this.#renderMessage('responses')}
    </section>`;
  }

  #renderRelay() {
    const state = relayPairing.state;
    return html`<section aria-labelledby="relay">
      <h3 id="relay">Relay</h3>
      <p>
        The relay lets programs on this computer outside the browser — curl, scripts, editors, AI
        gateways — use this app's API. Run <code>npm run relay</code> (or
        <code>npx hearth-relay</code>) and open the pairing link it prints.
      </p>
      ${
        state.status === 'paired'
          ? html`<p class="row">
              <span>This tab is paired: the relay answers at <code>${state.baseUrl}</code>.</span>
              <button class="danger" @click=${() => relayPairing.end()}>Stop sharing</button>
            </p>`
          : html`<p class="muted">
              ${state.status === 'ended' ? state.message : 'This tab is not paired with a relay.'}
            </p>`
      }
    </section>`;
  }

  #renderPrices() {
    const priced = this.catalog.filter((m) => m.downloaded || m.id === ECHO_MODEL_ID);
    const prices = this.#state.settings?.prices ?? {};
    return html`<section aria-labelledby="prices">
      <h3 id="prices">Prices</h3>
      <p class="muted">
        US dollars per million tokens, for <code>usage.estimated_cost</code> (on-device models cost
        nothing unless you say so, e.g. to compare with a hosted model).
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Prompt</th>
            <th scope="col">Completion</th>
            <th scope="col"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${priced.map((m) => {
            const p = prices[m.id];
            return html`<tr>
              <td>${m.id}</td>
              <td>
                <input
                  type="number"
                  min="0"
                  step="any"
                  aria-label="Prompt price of ${m.id}"
                  .value=${p ? String(p.prompt) : ''}
                  placeholder="0"
                />
              </td>
              <td>
                <input
                  type="number"
                  min="0"
                  step="any"
                  aria-label="Completion price of ${m.id}"
                  .value=${p ? String(p.completion) : ''}
                  placeholder="0"
                />
              </td>
              <td>
                <button
                  aria-label="Save prices of ${m.id}"
                  @click=${(e: Event) =>
                    this.#state.setPrice(
                      m.id,
                      (e.target as HTMLElement).closest('tr') as HTMLElement,
                    )}
                >
                  Save
                </button>
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
      ${this.#renderMessage('prices')}
    </section>`;
  }
}

customElements.define('settings-developer', SettingsDeveloper);

declare global {
  interface HTMLElementTagNameMap {
    'settings-developer': SettingsDeveloper;
  }
}
