/**
 * @module
 * `<servers-view>`: Settings → Servers. OpenAI-compatible servers the user adds (vLLM, llama.cpp's
 * `llama-server`, Ollama, LM Studio, a hosted API) by their base URL and an optional key; Hearth
 * reads the server's `GET /models` and offers them all, unless the user unticks some. Their
 * models' requests leave this device, for that server: the section says so, and so does every
 * place the models appear. Nothing leaves the device while no server is added.
 */
import { css, html, LitElement, nothing } from 'lit';
import { live } from 'lit/directives/live.js';
import {
  addServer,
  ApiError,
  listServers,
  offerServerModels,
  removeServer,
  type ServerInfo,
} from '../../shared/api-client';
import {
  keyState,
  sessionKeyChoice,
  setServerKey,
  sharedOriginWarning,
  thisOriginShared,
} from './server-key-keeping';
import { cards, shared } from '../../shared/styles';
import { confirmPrivateNetwork } from '../../shared/private-network-confirm';

/**
 * A server's name from its address when the user gave none: `gpu-box` for
 * `http://gpu-box:8000/v1` (and for `gpu-box:8000/v1`, whose missing `http://` the API names).
 */
export function nameFromUrl(text: string): string {
  const typed = text.trim();
  for (const candidate of [typed, `http://${typed}`]) {
    let url: URL;
    try {
      url = new URL(candidate);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    const slug = url.hostname
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 40)
      .replace(/^-+|-+$/g, '');
    if (slug) return slug;
  }
  return '';
}

/** An error of the form, with the field it is about (the API's `param`). */
interface FormError {
  text: string;
  field: 'name' | 'base_url' | 'api_key' | null;
}

/** @fires catalog-stale - the servers changed, and with them the catalogue. */
export class ServersView extends LitElement {
  static override properties = {
    servers: { state: true },
    adding: { state: true },
    formError: { state: true },
    said: { state: true },
    confirming: { state: true },
    busy: { state: true },
    errors: { state: true },
  };

  static override styles = [
    shared,
    cards,
    css`
      :host {
        display: block;
      }
      h3 {
        font-size: 1.05em;
        margin: 0 0 0.4em;
      }
      h4 {
        font-size: 1em;
        margin: 0;
      }
      form {
        display: grid;
        grid-template-columns: max-content minmax(0, 1fr);
        gap: 0.4em 0.8em;
        align-items: center;
        max-width: 36em;
      }
      form .hint {
        grid-column: 2;
        margin: -0.2em 0 0;
        font-size: 0.88em;
      }
      form .actions,
      form .choice {
        grid-column: 2;
      }
      ul {
        list-style: none;
        padding: 0;
        margin: 1em 0 0;
        display: flex;
        flex-direction: column;
        gap: 0.6em;
      }
      dl {
        display: grid;
        grid-template-columns: max-content 1fr;
        gap: 0.2em 1em;
        margin: 0.4em 0;
      }
      dt {
        color: var(--fg-soft);
      }
      dd {
        margin: 0;
        overflow-wrap: anywhere;
      }
      fieldset {
        border: 1px solid var(--border);
        border-radius: var(--radius);
        padding: 0.4em 0.9em 0.6em;
        margin: 0.4em 0;
      }
      fieldset label {
        display: block;
        overflow-wrap: anywhere;
      }
      .row {
        display: flex;
        gap: 0.5em;
        flex-wrap: wrap;
        align-items: center;
        margin-top: 0.4em;
      }
    `,
  ];

  /** The servers as the API lists them; null until read. */
  declare private servers: ServerInfo[] | null;
  /** A server is being added (its `/models` read). */
  declare private adding: boolean;
  declare private formError: FormError | null;
  /** What the last action did, for the status line. */
  declare private said: string;
  /** The server whose removal waits for a yes. */
  declare private confirming: string | null;
  /** Servers with a change in flight. */
  declare private busy: ReadonlySet<string>;
  /** The last failed change of a server, by name. */
  declare private errors: ReadonlyMap<string, string>;

  constructor() {
    super();
    this.servers = null;
    this.adding = false;
    this.formError = null;
    this.said = '';
    this.confirming = null;
    this.busy = new Set();
    this.errors = new Map();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.refresh();
  }

  /** Reads the servers again. */
  async refresh(): Promise<void> {
    try {
      this.servers = await listServers();
    } catch (err) {
      this.servers ??= [];
      this.said = `The servers could not be read: ${messageOf(err)}`;
    }
  }

  /** Tells the app to read the catalogue again: the servers' models changed. */
  #stale(): void {
    this.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
  }

  #field(id: string): HTMLInputElement | null {
    return this.renderRoot.querySelector<HTMLInputElement>(`#${id}`);
  }

  async #add(form: HTMLFormElement): Promise<void> {
    if (this.adding) return;
    const data = new FormData(form);
    const baseUrl = String(data.get('base_url') ?? '').trim();
    const name = String(data.get('name') ?? '').trim() || nameFromUrl(baseUrl);
    const key = String(data.get('api_key') ?? '').trim();
    const session = data.get('keep_key') === 'session';
    const allow = confirmPrivateNetwork(baseUrl);
    if (!allow) return;
    this.adding = true;
    this.formError = null;
    this.said = '';
    let added: ServerInfo | undefined;
    try {
      added = await addServer({
        name,
        base_url: baseUrl,
        ...allow,
        ...(key && { api_key: key, ...(session && { keep_key: 'session' as const }) }),
      });
    } catch (err) {
      const param = err instanceof ApiError ? err.param : null;
      const field =
        param === 'name' || param === 'base_url' || param === 'api_key'
          ? param
          : // No name typed: the one made from the address is the user's only by that address.
            !baseUrl
            ? 'base_url'
            : null;
      this.formError = { text: messageOf(err), field };
    } finally {
      this.adding = false;
    }
    await this.updateComplete;
    if (!added) {
      if (this.formError?.field) this.#field(fieldId(this.formError.field))?.focus();
      return;
    }
    form.reset();
    const count = added.models.length;
    this.said = `Added ${added.name}: ${count} model${count === 1 ? '' : 's'} found, all offered.`;
    await this.refresh();
    this.#stale();
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>(`#${headingId(added.name)}`)?.focus();
  }

  /** Offers the models whose boxes are ticked now (several quick clicks: the last one wins). */
  async #offer(server: ServerInfo, box: HTMLInputElement, model: string): Promise<void> {
    const boxes = [...(box.closest('fieldset')?.querySelectorAll('input') ?? [])];
    const next = server.models.filter((_, i) => boxes[i]?.checked);
    const offered = box.checked;
    // Shown at once (renders meanwhile keep the boxes as ticked); a failure reads them back.
    this.servers = (this.servers ?? []).map((s) =>
      s.name === server.name ? { ...s, offered: next } : s,
    );
    await this.#change(server.name, async () => {
      const updated = await offerServerModels(server.name, next);
      this.servers = (this.servers ?? []).map((s) => (s.name === updated.name ? updated : s));
      this.said = `${server.name}/${model} is ${offered ? 'offered' : 'no longer offered'}.`;
    });
  }

  /** Takes a server's key again (one kept for the session only, gone with the worker). */
  async #keyAgain(name: string, key: string): Promise<void> {
    await this.#change(name, async () => {
      const updated = await setServerKey(name, key);
      this.servers = (this.servers ?? []).map((s) => (s.name === updated.name ? updated : s));
      this.said = `${name} has its key again, for this session only.`;
    });
  }

  async #remove(name: string): Promise<void> {
    this.confirming = null;
    const removed = await this.#change(name, async () => {
      await removeServer(name);
      this.said = `Removed ${name}: its models are no longer offered.`;
    });
    await this.refresh();
    await this.updateComplete;
    if (removed) this.#field('server-name')?.focus();
  }

  /** Runs a change of one server: busy meanwhile, its error shown with it; the catalogue after. */
  async #change(name: string, action: () => Promise<void>): Promise<boolean> {
    this.busy = new Set([...this.busy, name]);
    const errors = new Map(this.errors);
    errors.delete(name);
    this.errors = errors;
    let ok = false;
    try {
      await action();
      ok = true;
    } catch (err) {
      this.errors = new Map([...this.errors, [name, messageOf(err)]]);
      await this.refresh();
    } finally {
      const busy = new Set(this.busy);
      busy.delete(name);
      this.busy = busy;
      this.#stale();
    }
    return ok;
  }

  protected override render() {
    const error = this.formError;
    const invalid = (field: FormError['field']) =>
      error && error.field === field ? 'true' : 'false';
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
        aria-busy=${this.adding ? 'true' : 'false'}
        @submit=${(e: Event) => {
          e.preventDefault();
          void this.#add(e.target as HTMLFormElement);
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
          aria-invalid=${invalid('name')}
          aria-describedby=${described(error?.field === 'name' ? 'server-name-hint server-error' : 'server-name-hint', this.adding)}
          ?disabled=${this.adding}
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
          aria-invalid=${invalid('base_url')}
          aria-describedby=${described(error?.field === 'base_url' ? 'server-error' : '', this.adding) || nothing}
          ?disabled=${this.adding}
        />
        <label for="server-key">Key (optional)</label>
        <input
          id="server-key"
          name="api_key"
          type="password"
          autocomplete="off"
          aria-invalid=${invalid('api_key')}
          aria-describedby=${described(error?.field === 'api_key' ? 'server-key-hint server-error' : 'server-key-hint', this.adding)}
          ?disabled=${this.adding}
        />
        <p class="hint muted" id="server-key-hint">
          Kept in this browser and sent only to this server; never shown again.
        </p>
        ${sessionKeyChoice(this.adding)}
        <div class="actions row">
          <button
            type="submit"
            class="primary"
            ?disabled=${this.adding}
            aria-describedby=${this.adding ? ADDING : nothing}
          >
            ${this.adding ? 'Adding…' : 'Add'}
          </button>
          ${
            this.adding
              ? html`<span class="muted" role="status" id=${ADDING}
                  >Reading the server's models: the form waits for them.</span
                >`
              : nothing
          }
        </div>
      </form>
      ${error ? html`<p class="error" role="alert" id="server-error">${error.text}</p>` : nothing}
      ${this.said ? html`<p class="muted" role="status">${this.said}</p>` : nothing}
      ${this.#renderList()}
    </section>`;
  }

  #renderList() {
    if (this.servers === null) return html`<p class="muted">Reading…</p>`;
    if (this.servers.length === 0) {
      return html`<p class="muted">No server added: everything runs on this device.</p>`;
    }
    return html`<ul aria-label="Servers added">
      ${this.servers.map((s) => this.#renderServer(s))}
    </ul>`;
  }

  #renderServer(s: ServerInfo) {
    const busy = this.busy.has(s.name);
    const error = this.errors.get(s.name);
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
        <dd>${keyState(s, (key) => void this.#keyAgain(s.name, key), busy)}</dd>
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
                      @change=${(e: Event) => this.#offer(s, e.target as HTMLInputElement, m)}
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

/** The id of the line that says why the form is disabled while a server is being added. */
const ADDING = 'server-adding';

/** A field's `aria-describedby`: its own hints, and while adding, why it is disabled. */
function described(ids: string, adding: boolean): string {
  return adding ? `${ids} ${ADDING}`.trim() : ids;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The id of a server's heading (names are slugs: safe in an id). */
const headingId = (name: string) => `server-heading-${name}`;

/** The id of the form's field for the API's `param`. */
function fieldId(field: 'name' | 'base_url' | 'api_key'): string {
  return field === 'name' ? 'server-name' : field === 'base_url' ? 'server-url' : 'server-key';
}

customElements.define('servers-view', ServersView);

declare global {
  interface HTMLElementTagNameMap {
    'servers-view': ServersView;
  }
}
