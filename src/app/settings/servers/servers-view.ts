/**
 * @module
 * `<servers-view>`: Settings → Servers. OpenAI-compatible servers the user adds (vLLM, llama.cpp's
 * `llama-server`, Ollama, LM Studio, a hosted API) by their base URL and an optional key; Hearth
 * reads the server's `GET /models` and offers them all, unless the user unticks some. Their
 * models' requests leave this device, for that server: the section says so, and so does every
 * place the models appear. Nothing leaves the device while no server is added. It renders; what
 * it reads and changes is `servers-state.ts`, the form's rules `server-form.ts`.
 */
import { html, LitElement, nothing } from 'lit';
import { live } from 'lit/directives/live.js';
import type { ServerInfo } from '../../shared/api-client';
import {
  keyState,
  sessionKeyChoice,
  sharedOriginWarning,
  thisOriginShared,
} from './server-key-keeping';
import { ADDING, fieldAria, FORM_ERROR, headingId } from './server-form';
import { ServersState } from './servers-state';
import { serversStyles } from './servers-styles';
import { cards, shared } from '../../shared/styles';

/** @fires catalog-stale - the servers changed, and with them the catalogue. */
export class ServersView extends LitElement {
  static override properties = {
    confirming: { state: true },
  };

  static override styles = [shared, cards, serversStyles];

  /** The server whose removal waits for a yes. */
  declare private confirming: string | null;
  readonly #state = new ServersState(this);

  constructor() {
    super();
    this.confirming = null;
  }

  /** Reads the servers again. */
  refresh(): Promise<void> {
    return this.#state.refresh();
  }

  async #remove(name: string): Promise<void> {
    this.confirming = null;
    await this.#state.remove(name);
  }

  protected override render() {
    const error = this.#state.formError;
    const { adding } = this.#state;
    const name = fieldAria('name', 'server-name-hint', error, adding);
    const url = fieldAria('base_url', null, error, adding);
    const key = fieldAria('api_key', 'server-key-hint', error, adding);
    return html`<section aria-labelledby="servers">
      <h3 id="servers">Servers</h3>
      <p>
        Chat with the models of an OpenAI-compatible server — vLLM, llama.cpp's
        <code>llama-server</code>, Ollama, LM Studio, a hosted API — from this app and its API.
        Nothing leaves this device unless you add one: then messages to its models go to that
        server.
      </p>
      ${sharedOriginWarning(thisOriginShared())}
      <form
        aria-label="Add a server"
        aria-busy=${this.#state.adding ? 'true' : 'false'}
        @submit=${(e: Event) => {
          e.preventDefault();
          void this.#state.add(e.target as HTMLFormElement);
        }}
      >
        <label for="server-name">Name</label>
        <input
          id="server-name"
          name="name"
          autocomplete="off"
          spellcheck="false"
          maxlength="40"
          placeholder="gpu-box"
          aria-invalid=${name.invalid}
          aria-describedby=${name.describedBy}
          ?disabled=${this.#state.adding}
        />
        <p class="hint muted" id="server-name-hint">
          Its models are named <code>name/model</code>; left empty, the server's host name.
        </p>
        <label for="server-url">Base URL</label>
        <input
          id="server-url"
          name="base_url"
          inputmode="url"
          autocomplete="off"
          spellcheck="false"
          placeholder="http://gpu-box:8000/v1"
          aria-invalid=${url.invalid}
          aria-describedby=${url.describedBy || nothing}
          ?disabled=${this.#state.adding}
        />
        <label for="server-key">Key (optional)</label>
        <input
          id="server-key"
          name="api_key"
          type="password"
          autocomplete="off"
          aria-invalid=${key.invalid}
          aria-describedby=${key.describedBy}
          ?disabled=${this.#state.adding}
        />
        <p class="hint muted" id="server-key-hint">
          Kept in this browser and sent only to this server; never shown again.
        </p>
        ${sessionKeyChoice(this.#state.adding)}
        <div class="actions row">
          <button
            type="submit"
            class="primary"
            ?disabled=${this.#state.adding}
            aria-describedby=${this.#state.adding ? ADDING : nothing}
          >
            ${this.#state.adding ? 'Adding…' : 'Add'}
          </button>
          ${
            this.#state.adding
              ? html`<span class="muted" role="status" id=${ADDING}
                  >Reading the server's models: the form waits for them.</span
                >`
              : nothing
          }
        </div>
      </form>
      ${error ? html`<p class="error" role="alert" id=${FORM_ERROR}>${error.text}</p>` : nothing}
      ${this.#state.said ? html`<p class="muted" role="status">${this.#state.said}</p>` : nothing}
      ${this.#renderList()}
    </section>`;
  }

  #renderList() {
    if (this.#state.servers === null) return html`<p class="muted">Reading…</p>`;
    if (this.#state.servers.length === 0) {
      return html`<p class="muted">No server added: everything runs on this device.</p>`;
    }
    return html`<ul aria-label="Servers added">
      ${this.#state.servers.map((s) => this.#renderServer(s))}
    </ul>`;
  }

  #renderServer(s: ServerInfo) {
    const busy = this.#state.busy.has(s.name);
    const error = this.#state.errors.get(s.name);
    const heading = headingId(s.name);
    const why = `server-busy-${s.name}`;
    return html`<li aria-labelledby=${heading}>
      <div class="head">
        <h4 id=${heading} tabindex="-1">${s.name}</h4>
        <span class="badge">leaves this device · ${s.host}</span>
      </div>
      <dl>
        <dt>Address</dt>
        <dd><code>${s.base_url}</code></dd>
        <dt>Key</dt>
        <dd>${keyState(s, (key) => void this.#state.keyAgain(s.name, key), busy)}</dd>
      </dl>
      <p>Messages to its models leave this device: they go to ${s.host}.</p>
      <fieldset aria-busy=${busy ? 'true' : 'false'}>
        <legend>Models offered from ${s.name}</legend>
        ${
          s.models.length === 0
            ? html`<p class="muted">Its <code>/models</code> listed none.</p>`
            : s.models.map(
                (m) =>
                  html`<label>
                    <input
                      type="checkbox"
                      .checked=${live(s.offered.includes(m))}
                      @change=${(e: Event) => this.#state.offer(s, e.target as HTMLInputElement, m)}
                    />
                    ${m}
                  </label>`,
              )
        }
      </fieldset>
      ${error ? html`<p class="error" role="alert">${error}</p>` : nothing}
      ${busy ? html`<p class="muted" id=${why}>Saving a change to ${s.name}…</p>` : nothing}
      ${
        this.confirming === s.name
          ? html`<div class="row" role="group" aria-label="Confirm removal of ${s.name}">
              <span>Remove ${s.name}? Its models leave the model picker.</span>
              <button
                class="danger"
                ?disabled=${busy}
                aria-describedby=${busy ? why : nothing}
                @click=${() => this.#remove(s.name)}
              >
                Yes, remove
              </button>
              <button @click=${() => this.#confirm(null, s.name)}>Keep it</button>
            </div>`
          : html`<div class="row">
              <button
                class="danger"
                aria-label="Remove ${s.name}"
                ?disabled=${busy}
                aria-describedby=${busy ? why : nothing}
                @click=${() => this.#confirm(s.name, s.name)}
              >
                Remove
              </button>
            </div>`
      }
    </li>`;
  }

  /** Asks for (or drops) the confirmation of a removal, keeping the focus in the server's card. */
  async #confirm(name: string | null, of: string): Promise<void> {
    this.confirming = name;
    await this.updateComplete;
    const card = this.renderRoot.querySelector(`#${headingId(of)}`)?.closest('li');
    const target = name
      ? card?.querySelector<HTMLElement>('[role="group"] button.danger')
      : card?.querySelector<HTMLElement>('button.danger');
    target?.focus();
  }
}

customElements.define('servers-view', ServersView);

declare global {
  interface HTMLElementTagNameMap {
    'servers-view': ServersView;
  }
}
