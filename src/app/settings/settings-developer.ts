/**
 * @module
 * `<settings-developer>`: Settings → Developer. The API from code (`<api-panel>`), who may call it
 * (any key, or issued keys: created, copied, revoked; switching to issued keys says first what it
 * will do), per-model prices for `usage.estimated_cost`, the relay, and this device's diagnostics.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { live } from 'lit/directives/live.js';
import { ECHO_MODEL_ID } from '../../models/models';
import type { HostStatus } from '../../protocol/host/status';
import {
  appKey,
  appKeyId,
  call,
  callJson,
  DEFAULT_APP_KEY,
  issueKey,
  setAuthMode,
  status,
  type CatalogModel,
  type FullStatus,
  type KeyInfo,
  type SettingsBody,
} from '../shared/api-client';
import './api-panel';
import type { Persistence } from '../shared/persistence';
import { relayPairing } from '../relay/relay-pairing';
import './settings-diagnostics';
import { snippetModel } from './snippet-model';
import { shared } from '../shared/styles';

/** Where a message about the last action is shown: beside the control that made it. */
type Where = 'top' | 'keys' | 'prices';

export class SettingsDeveloper extends LitElement {
  static override properties = {
    model: {},
    host: { attribute: false },
    catalog: { attribute: false },
    role: {},
    persistence: {},
    device: { state: true },
    settings: { state: true },
    keys: { state: true },
    issued: { state: true },
    message: { state: true },
    confirming: { state: true },
  };

  static override styles = [
    shared,
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
      dialog {
        max-width: min(34em, 92vw);
        border: 1px solid var(--border);
        border-radius: var(--radius);
        background: var(--bg-raised);
        color: var(--fg);
      }
      dialog::backdrop {
        background: light-dark(rgb(0 0 0 / 40%), rgb(0 0 0 / 60%));
      }
      dialog h4 {
        margin: 0 0 0.5em;
        font-size: 1.1em;
      }
      dialog ul {
        padding-left: 1.2em;
      }
      dialog .actions {
        display: flex;
        justify-content: flex-end;
        gap: 0.5em;
        margin-top: 1em;
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
  declare private device: FullStatus | null;
  declare private settings: SettingsBody | null;
  declare private keys: KeyInfo[];
  /** A key just issued: shown this once. */
  declare private issued: { name: string; key: string } | null;
  declare private message: { text: string; error: boolean; where: Where } | null;
  /** Switching to issued keys waits for the user's yes. */
  declare private confirming: boolean;

  constructor() {
    super();
    this.model = '';
    this.host = null;
    this.catalog = [];
    this.role = '';
    this.persistence = 'unknown';
    this.device = null;
    this.settings = null;
    this.keys = [];
    this.issued = null;
    this.message = null;
    this.confirming = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    relayPairing.addEventListener('change', this.#onRelay);
    void this.refresh();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    relayPairing.removeEventListener('change', this.#onRelay);
  }

  protected override updated(changed: PropertyValues<this>): void {
    super.updated(changed);
    const dialog = this.renderRoot.querySelector('dialog');
    if (dialog && !dialog.open) dialog.showModal();
  }

  /** The pairing changed: show it at once, and the keys (a pairing registers one) once read. */
  readonly #onRelay = () => {
    this.requestUpdate();
    void this.refresh();
  };

  /** Reads the device's status, the settings and the keys again. */
  async refresh(): Promise<void> {
    try {
      const [device, settings, keys] = await Promise.all([
        status(),
        callJson<SettingsBody>('hearth/settings'),
        callJson<{ data: KeyInfo[] }>('hearth/keys'),
      ]);
      this.device = device;
      this.settings = settings;
      this.keys = keys.data;
    } catch (err) {
      this.#say(err, 'top', true);
    }
  }

  #say(text: unknown, where: Where, error = false): void {
    this.message = { text: text instanceof Error ? text.message : String(text), error, where };
  }

  async #setAuth(mode: 'any' | 'issued'): Promise<void> {
    try {
      this.settings = await setAuthMode(mode);
      this.#say(
        mode === 'issued'
          ? 'Only issued keys may call the API now.'
          : 'Any non-empty key may call the API now.',
        'keys',
      );
    } catch (err) {
      this.#say(err, 'keys', true);
    }
    await this.refresh();
  }

  /** The user answered the question before switching to issued keys (Esc: no). */
  async #answer(yes: boolean): Promise<void> {
    this.confirming = false;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLInputElement>(yes ? '#auth-issued' : '#auth-any')?.focus();
    if (yes) await this.#setAuth('issued');
  }

  async #issue(form: HTMLFormElement): Promise<void> {
    const input = form.querySelector('input');
    const name = input?.value.trim() || 'Key';
    try {
      const key = await issueKey({ name });
      this.issued = { name: key.name, key: key.key };
      if (input) input.value = '';
    } catch (err) {
      this.#say(err, 'keys', true);
    }
    await this.refresh();
  }

  async #revoke(id: string): Promise<void> {
    try {
      await call(`hearth/keys/${id}`, { method: 'DELETE' });
      this.#say('The key was revoked.', 'keys');
    } catch (err) {
      this.#say(err, 'keys', true);
    }
    await this.refresh();
  }

  async #setPrice(model: string, row: HTMLElement): Promise<void> {
    const [prompt, completion] = [...row.querySelectorAll('input')].map((i) => i.value.trim());
    const price =
      prompt === '' && completion === ''
        ? null
        : { prompt: Number(prompt || 0), completion: Number(completion || 0) };
    try {
      this.settings = await callJson<SettingsBody>('hearth/settings', {
        method: 'PATCH',
        body: { prices: { [model]: price } },
      });
      this.#say(`Prices of ${model} saved.`, 'prices');
    } catch (err) {
      this.#say(err, 'prices', true);
    }
  }

  /** The snippets name a model a call reaches; a newcomer's is never the echo test engine. */
  #renderApi() {
    const { id, note } = snippetModel(this.model, this.catalog);
    return html`<api-panel .model=${id} .note=${note} .key=${appKey()}></api-panel>`;
  }

  protected override render() {
    return html`
      ${this.#renderMessage('top')} ${this.#renderApi()} ${this.#renderKeys()}
      ${this.#renderPrices()} ${this.#renderRelay()}
      <settings-diagnostics
        .device=${this.device}
        .host=${this.host}
        .role=${this.role}
        .persistence=${this.persistence}
      ></settings-diagnostics>
    `;
  }

  #renderMessage(where: Where) {
    const m = this.message;
    if (!m || m.where !== where) return nothing;
    return html`<p class=${m.error ? 'error' : 'muted'} role=${m.error ? 'alert' : 'status'}>
      ${m.text}
    </p>`;
  }

  #renderKeys() {
    const auth = this.settings?.auth;
    const mine = appKeyId();
    return html`<section aria-labelledby="keys">
      <h3 id="keys">API keys</h3>
      <fieldset>
        <legend>Who may call the API</legend>
        <label>
          <input
            type="radio"
            name="auth"
            id="auth-any"
            .checked=${live(auth === 'any' && !this.confirming)}
            @change=${() => this.#setAuth('any')}
          />
          Any non-empty key (as local servers do)
        </label>
        <label>
          <input
            type="radio"
            name="auth"
            id="auth-issued"
            .checked=${live(auth === 'issued' || this.confirming)}
            @change=${() => (this.confirming = true)}
          />
          Only keys issued here
        </label>
      </fieldset>
      ${this.#renderMessage('keys')}
      <p>
        This app sends
        ${
          mine
            ? html`its own issued key, ending in <code>${appKey().slice(-4)}</code>.`
            : html`<code>${appKey()}</code>.`
        }
      </p>
      ${this.confirming ? this.#renderConfirm(mine) : nothing}
      ${
        this.keys.length > 0
          ? html`<table>
              <caption class="sr-only">
                Issued keys
              </caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Ends in</th>
                  <th scope="col">Issued</th>
                  <th scope="col"><span class="sr-only">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                ${this.keys.map((k) => this.#renderKey(k, k.id === mine))}
              </tbody>
            </table>`
          : html`<p class="muted">No key issued yet.</p>`
      }
      <form
        class="row"
        @submit=${(e: Event) => {
          e.preventDefault();
          void this.#issue(e.target as HTMLFormElement);
        }}
      >
        <label for="key-name">Name of a new key</label>
        <input id="key-name" placeholder="e.g. my gateway" maxlength="100" />
        <button type="submit">Issue a key</button>
      </form>
      ${
        this.issued
          ? html`<div class="row" role="status">
              <span>Key “${this.issued.name}” (shown this once):</span>
              <output aria-label="New key">${this.issued.key}</output>
              <button @click=${() => navigator.clipboard.writeText(this.issued?.key ?? '')}>
                Copy key
              </button>
            </div>`
          : nothing
      }
    </section>`;
  }

  #renderKey(k: KeyInfo, mine: boolean) {
    const why = `revoke-why-${k.id}`;
    return html`<tr>
      <td>${k.name}${mine ? html` <span class="badge">this app</span>` : nothing}</td>
      <td><code>${k.hint}</code></td>
      <td>${new Date(k.created * 1000).toLocaleString()}</td>
      <td>
        <button
          class="danger"
          aria-label="Revoke ${k.name}"
          ?disabled=${mine}
          aria-describedby=${mine ? why : nothing}
          @click=${() => this.#revoke(k.id)}
        >
          Revoke
        </button>
        ${mine ? html`<span class="why muted" id=${why}>This app sends it.</span>` : nothing}
      </td>
    </tr>`;
  }

  /** What switching to issued keys does (src/app/shared/api-client.ts `setAuthMode`), asked first. */
  #renderConfirm(mine: string | null) {
    const paired = relayPairing.state.status === 'paired';
    return html`<dialog
      aria-labelledby="confirm-title"
      aria-describedby="confirm-what"
      @close=${() => {
        if (this.confirming) void this.#answer(false);
      }}
    >
      <h4 id="confirm-title">Only keys issued here?</h4>
      <div id="confirm-what">
        <p>
          Every caller of this app's API will need a key issued here. Requests with any other key —
          scripts and pages on this origin, code that sends <code>${DEFAULT_APP_KEY}</code>,
          programs you gave a made-up key — will be refused (401).
        </p>
        <ul>
          <li>
            ${
              mine
                ? html`This app keeps sending its own issued key, ending in
                    <code>${appKey().slice(-4)}</code>.`
                : html`This app gets a key of its own automatically (“This app”), kept in this
                  browser: its tabs here use it and go on working.`
            }
          </li>
          <li>
            ${
              paired
                ? 'The relay paired with this tab goes on working: its key is an issued one.'
                : 'A relay paired later is given an issued key when you pair it.'
            }
          </li>
          <li>You can switch back to any key at any time.</li>
        </ul>
      </div>
      <div class="actions">
        <button @click=${() => this.#answer(false)}>Cancel</button>
        <button class="primary" @click=${() => this.#answer(true)}>Switch to issued keys</button>
      </div>
    </dialog>`;
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
    const prices = this.settings?.prices ?? {};
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
                    this.#setPrice(m.id, (e.target as HTMLElement).closest('tr') as HTMLElement)}
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
