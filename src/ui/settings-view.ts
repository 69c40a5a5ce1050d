/**
 * @module
 * `<settings-view>`: this device (WebGPU in plain words), the engine host and its queue, storage
 * and its persistence, who may call the API (any key, or issued keys: created, copied, revoked),
 * the servers the user added (`<servers-view>`), and per-model prices for `usage.estimated_cost`.
 */
import { css, html, LitElement, nothing } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import type { HostStatus } from '../openai/status';
import {
  appKey,
  appKeyId,
  call,
  callJson,
  issueKey,
  setAuthMode,
  status,
  type CatalogModel,
  type FullStatus,
  type KeyInfo,
  type SettingsBody,
} from './api-client';
import type { Persistence } from './persistence';
import { relayPairing } from './relay-pairing';
import './servers-view';
import { formatBytes, shared } from './styles';

/** @fires request-persistence - the user asks for persistent storage. */
export class SettingsView extends LitElement {
  static override properties = {
    host: { attribute: false },
    catalog: { attribute: false },
    role: {},
    persistence: {},
    device: { state: true },
    settings: { state: true },
    keys: { state: true },
    issued: { state: true },
    message: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
        padding: 1em;
        max-width: 52em;
        margin: 0 auto;
      }
      section,
      servers-view {
        margin-bottom: 1.6em;
      }
      h2 {
        font-size: 1.3em;
        margin: 0 0 0.6em;
      }
      h3 {
        font-size: 1.05em;
        margin: 0 0 0.4em;
      }
      dl {
        display: grid;
        grid-template-columns: max-content 1fr;
        gap: 0.3em 1em;
        margin: 0;
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
        padding: 0.6em 0.9em;
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
        overflow-wrap: anywhere;
      }
      td input {
        width: 7em;
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
      progress {
        width: min(20em, 100%);
      }
    `,
  ];

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
  declare private message: { text: string; error: boolean } | null;

  constructor() {
    super();
    this.host = null;
    this.catalog = [];
    this.role = '';
    this.persistence = 'unknown';
    this.device = null;
    this.settings = null;
    this.keys = [];
    this.issued = null;
    this.message = null;
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
      this.#say(err, true);
    }
  }

  #say(text: unknown, error = false): void {
    this.message = { text: text instanceof Error ? text.message : String(text), error };
  }

  async #setAuth(mode: 'any' | 'issued'): Promise<void> {
    try {
      this.settings = await setAuthMode(mode);
      this.#say(
        mode === 'issued'
          ? 'Only issued keys may call the API now.'
          : 'Any non-empty key may call the API now.',
      );
    } catch (err) {
      this.#say(err, true);
    }
    await this.refresh();
  }

  async #issue(form: HTMLFormElement): Promise<void> {
    const input = form.querySelector('input');
    const name = input?.value.trim() || 'Key';
    try {
      const key = await issueKey({ name });
      this.issued = { name: key.name, key: key.key };
      if (input) input.value = '';
    } catch (err) {
      this.#say(err, true);
    }
    await this.refresh();
  }

  async #revoke(id: string): Promise<void> {
    try {
      await call(`hearth/keys/${id}`, { method: 'DELETE' });
      this.#say('The key was revoked.');
    } catch (err) {
      this.#say(err, true);
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
      this.#say(`Prices of ${model} saved.`);
    } catch (err) {
      this.#say(err, true);
    }
  }

  protected override render() {
    return html`
      <h2>Settings and status</h2>
      ${
        this.message
          ? html`<p
              class=${this.message.error ? 'error' : 'muted'}
              role=${this.message.error ? 'alert' : 'status'}
            >
              ${this.message.text}
            </p>`
          : nothing
      }
      ${this.#renderDevice()} ${this.#renderEngine()} ${this.#renderStorage()} ${this.#renderKeys()}
      <servers-view></servers-view>
      ${this.#renderPrices()} ${this.#renderRelay()}
    `;
  }

  #renderDevice() {
    const d = this.device;
    if (!d)
      return html`<section>
        <h3>This device</h3>
        <p class="muted">Reading…</p>
      </section>`;
    const { webgpu } = d;
    let words;
    if (webgpu.available === null) {
      words = html`<p class="notice">
        ${webgpu.reason ?? 'What this GPU can do is not known yet.'}
      </p>`;
    } else if (!webgpu.available) {
      words = html`<p class="notice">
        <strong>No WebGPU here.</strong> WebLLM's models run on your graphics card through WebGPU,
        and this browser does not offer it (or offers no graphics adapter). Chrome and Edge have it
        on Windows, macOS and ChromeOS; on Linux and Android it may have to be switched on
        (<code>chrome://flags/#enable-unsafe-webgpu</code>); Safari 26 and Firefox 141 on Windows
        have it too. An outdated or blocklisted graphics driver can also hide it. Until then, GGUF
        models run on the processor through llama.cpp (more slowly), and the echo test engine works.
      </p>`;
    } else if (webgpu.adapter?.fallback) {
      words = html`<p class="notice">
        The graphics adapter is a software one: it runs on the processor. Models work, slowly.
      </p>`;
    }
    const f16 = webgpu.features.includes('shader-f16');
    const limits = webgpu.limits;
    return html`<section aria-labelledby="device">
      <h3 id="device">This device</h3>
      ${words ?? nothing}
      <dl>
        <dt>WebGPU</dt>
        <dd>
          ${webgpu.available === null ? 'not known yet' : webgpu.available ? 'available' : 'not available'}
        </dd>
        ${
          webgpu.adapter
            ? html`<dt>Graphics adapter</dt>
                <dd>${webgpu.adapter.vendor || 'unknown vendor'} ${webgpu.adapter.architecture}</dd>
                <dt>16-bit shaders</dt>
                <dd>
                  ${
                    f16
                      ? 'yes: the f16 versions of models run here'
                      : 'no (shader-f16 missing): the f32 versions of models run here'
                  }
                </dd>`
            : nothing
        }
        ${
          limits
            ? html`<dt>Limits</dt>
                <dd>
                  buffers up to ${formatBytes(limits.maxBufferSize)}, storage bindings up to
                  ${formatBytes(limits.maxStorageBufferBindingSize)},
                  ${formatBytes(limits.maxComputeWorkgroupStorageSize)} of workgroup storage,
                  ${limits.maxStorageBuffersPerShaderStage} storage buffers per shader stage
                </dd>`
            : nothing
        }
      </dl>
    </section>`;
  }

  #renderEngine() {
    const h = this.host;
    return html`<section aria-labelledby="engine">
      <h3 id="engine">Engine</h3>
      ${
        h
          ? html`<dl>
              <dt>Host tab</dt>
              <dd>
                ${this.role === 'host' ? 'this tab' : 'another tab'}
                (<code>${h.host.id.slice(0, 8)}</code>, build <code>${h.host.build}</code>)
              </dd>
              <dt>Model on the GPU</dt>
              <dd>${h.loaded_model ?? 'none'}</dd>
              <dt>Queue</dt>
              <dd>${h.queue.running} running, ${h.queue.waiting} waiting</dd>
              <dt>Open requests</dt>
              <dd>${h.open_ports}</dd>
              ${
                h.load_error
                  ? html`<dt>Last failed load</dt>
                      <dd class="error">${h.load_error.error.message}</dd>`
                  : nothing
              }
            </dl>`
          : html`<p class="muted">Waiting for the engine host…</p>`
      }
    </section>`;
  }

  #renderStorage() {
    const s = this.device?.storage;
    const persistence =
      this.persistence !== 'unknown'
        ? this.persistence
        : s?.persisted
          ? 'persisted'
          : s
            ? 'best-effort'
            : 'unknown';
    return html`<section aria-labelledby="storage">
      <h3 id="storage">Storage</h3>
      ${
        s
          ? html`<dl>
              <dt>Used</dt>
              <dd>
                ${formatBytes(s.usage_bytes)} of ${formatBytes(s.quota_bytes)}
                ${
                  s.usage_bytes !== null && s.quota_bytes
                    ? html`<br /><progress
                          max=${s.quota_bytes}
                          value=${s.usage_bytes}
                          aria-label="Storage used"
                        ></progress>`
                    : nothing
                }
              </dd>
              <dt>Persistent</dt>
              <dd>
                ${
                  persistence === 'persisted'
                    ? 'yes: the browser will not evict the models and conversations'
                    : persistence === 'unsupported'
                      ? 'this browser cannot make storage persistent'
                      : html`no: the browser may evict downloaded models when the disk runs low.
                          Installing Hearth (or bookmarking it) usually earns persistence.
                          <button
                            @click=${() =>
                              this.dispatchEvent(
                                new CustomEvent('request-persistence', {
                                  bubbles: true,
                                  composed: true,
                                }),
                              )}
                          >
                            Ask the browser again
                          </button>`
                }
              </dd>
            </dl>`
          : html`<p class="muted">Reading…</p>`
      }
    </section>`;
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
            .checked=${auth === 'any'}
            @change=${() => this.#setAuth('any')}
          />
          Any non-empty key (as local servers do)
        </label>
        <br />
        <label>
          <input
            type="radio"
            name="auth"
            .checked=${auth === 'issued'}
            @change=${() => this.#setAuth('issued')}
          />
          Only keys issued here
        </label>
      </fieldset>
      <p>
        This app sends
        ${
          mine
            ? html`its own issued key, ending in <code>${appKey().slice(-4)}</code>.`
            : html`<code>${appKey()}</code>.`
        }
      </p>
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
                ${this.keys.map(
                  (k) =>
                    html`<tr>
                      <td>
                        ${k.name}${k.id === mine ? html` <span class="badge">this app</span>` : nothing}
                      </td>
                      <td><code>${k.hint}</code></td>
                      <td>${new Date(k.created * 1000).toLocaleString()}</td>
                      <td>
                        <button
                          class="danger"
                          aria-label="Revoke ${k.name}"
                          ?disabled=${k.id === mine}
                          title=${k.id === mine ? 'This app uses this key' : ''}
                          @click=${() => this.#revoke(k.id)}
                        >
                          Revoke
                        </button>
                      </td>
                    </tr>`,
                )}
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
    </section>`;
  }
}

customElements.define('settings-view', SettingsView);

declare global {
  interface HTMLElementTagNameMap {
    'settings-view': SettingsView;
  }
}
