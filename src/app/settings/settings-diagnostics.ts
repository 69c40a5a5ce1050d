/**
 * @module
 * `<settings-diagnostics>`: Settings → Developer's diagnostics. This device (WebGPU in plain
 * words, its adapter and limits), the engine host and its queue, and storage with its persistence.
 */
import { css, html, LitElement, nothing } from 'lit';
import type { HostStatus } from '../../protocol/host/status';
import type { FullStatus } from '../shared/api-client';
import type { Persistence } from '../shared/persistence';
import { formatBytes, shared } from '../shared/styles';

/** @fires request-persistence - the user asks for persistent storage. */
export class SettingsDiagnostics extends LitElement {
  static override properties = {
    device: { attribute: false },
    host: { attribute: false },
    role: {},
    persistence: {},
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      section {
        margin-bottom: 1.6em;
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
        min-width: 0;
      }
      progress {
        width: min(20em, 100%);
      }
      @media (max-width: 32em) {
        dl {
          grid-template-columns: 1fr;
        }
        dd {
          margin-bottom: 0.4em;
        }
      }
    `,
  ];

  /** The API's status (`/v1/hearth/status`); null until read. */
  declare device: FullStatus | null;
  declare host: HostStatus | null;
  /** This tab's part in the engine-host election. */
  declare role: string;
  declare persistence: Persistence;

  constructor() {
    super();
    this.device = null;
    this.host = null;
    this.role = '';
    this.persistence = 'unknown';
  }

  protected override render() {
    return html`${this.#renderDevice()} ${this.#renderEngine()} ${this.#renderStorage()}`;
  }

  #renderDevice() {
    const d = this.device;
    if (!d)
      return html`<section aria-labelledby="device">
        <h3 id="device">This device</h3>
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
}

customElements.define('settings-diagnostics', SettingsDiagnostics);

declare global {
  interface HTMLElementTagNameMap {
    'settings-diagnostics': SettingsDiagnostics;
  }
}
