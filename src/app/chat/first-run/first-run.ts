/**
 * @module
 * `<first-run>`: what a newcomer sees in an empty conversation while no real model is on the
 * device, and under a message sent before there was one (it waits, and is answered once a model
 * is ready) — what Hearth is, what this device can run (a small GGUF on the CPU where WebGPU has
 * no usable GPU, or only a software adapter), one button that gets it, with its progress, and the
 * other ways to a model: a file or a URL, a server of the user's. While the device is still being
 * measured it says so, neutrally, instead of a verdict; where the model hosts cannot be reached
 * (offline, a firewall) it says so, and what works here.
 */
import { css, html, LitElement, nothing } from 'lit';
import type { DownloadProgress } from '../../../protocol/host/downloads';
import type { HostStatus } from '../../../protocol/host/status';
import { ApiError, call, download, modelPath, type CatalogModel } from '../../shared/api-client';
import { softwareAdapter } from '../../device-fit';
import { describeDownloadFailure } from '../../models/downloads/download-failure';
import { llamaPlace, recommendedModel, sizeOf } from '../../models/model-facts';
import { describeModel } from '../../models/model-info';
import { shared } from '../../shared/styles';

/**
 * @fires model-ready - `detail: id`: the model was downloaded; the conversation can use it.
 * @fires show-models - the user wants to see every model.
 * @fires dismiss - the user does not want this card now (not offered while a message waits).
 */
export class FirstRun extends LitElement {
  static override properties = {
    catalog: { attribute: false },
    host: { attribute: false },
    checking: { type: Boolean },
    waiting: { type: Boolean },
    progress: { state: true },
    unreachable: { state: true },
    online: { state: true },
    error: { state: true },
    notice: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      section {
        border: 1px solid var(--border);
        border-radius: var(--radius);
        background: var(--bg-raised);
        padding: 1em 1.2em;
        max-width: 36em;
        margin: 0 auto;
      }
      h2 {
        margin: 0 0 0.4em;
        font-size: 1.2em;
      }
      p {
        margin: 0.5em 0;
      }
      .actions {
        display: flex;
        flex-wrap: wrap;
        gap: 0.5em;
        align-items: center;
        margin-top: 0.8em;
      }
      progress {
        width: 100%;
      }
      .waiting {
        font-weight: 600;
      }
      ul {
        margin: 0.3em 0;
        padding-left: 1.2em;
      }
    `,
  ];

  declare catalog: CatalogModel[];
  declare host: HostStatus | null;
  /** The catalogue or the device is not known yet. */
  declare checking: boolean;
  /** A message was sent before there was a model: it waits, and is answered once one is ready. */
  declare waiting: boolean;
  declare private progress: DownloadProgress | null;
  declare private error: string | null;
  /** What became of a download the user cancelled. */
  declare private notice: string | null;
  /** The last download could not reach the model's host. */
  declare private unreachable: boolean;
  /** What the browser knows of the network (`navigator.onLine`: false is sure, true is hope). */
  declare private online: boolean;
  /** The user pressed Cancel: the focus is theirs to get back when the download ends. */
  #cancelled = false;

  constructor() {
    super();
    this.catalog = [];
    this.host = null;
    this.checking = true;
    this.waiting = false;
    this.progress = null;
    this.error = null;
    this.notice = null;
    this.unreachable = false;
    this.online = navigator.onLine;
  }

  /** The device facts last measured: they hold for the page's life. */
  #device: HostStatus['device'] = null;

  /**
   * The host's status, with the device as last measured: a host that starts again (another tab
   * takes over, the page before a first visit's reload) publishes no facts until it measures, and
   * the card must not fall back to "Checking…" meanwhile.
   */
  get #host(): HostStatus | null {
    if (this.host?.device) this.#device = this.host.device;
    return this.host && { ...this.host, device: this.host.device ?? this.#device };
  }

  readonly #onNetwork = () => {
    this.online = navigator.onLine;
  };

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('online', this.#onNetwork);
    addEventListener('offline', this.#onNetwork);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('online', this.#onNetwork);
    removeEventListener('offline', this.#onNetwork);
  }

  async #get(model: CatalogModel): Promise<void> {
    this.error = null;
    this.notice = null;
    this.unreachable = false;
    try {
      for await (const progress of download(model.id)) this.progress = progress;
      const end = this.progress?.phase;
      if (end === 'done') this.#emit('model-ready', model.id);
      else if (end === 'failed') this.#failed(model, this.progress?.error ?? null);
      else if (end === 'cancelled')
        this.notice = 'Download cancelled. What came is kept: Get goes on from there.';
    } catch (err) {
      this.#failed(
        model,
        err instanceof ApiError
          ? { code: err.code, message: err.message }
          : { message: String(err) },
      );
    } finally {
      if (this.progress?.phase !== 'done') this.progress = null;
    }
    // Cancel, which had the focus, is gone with the progress: Get, in its place, takes it.
    if (this.#cancelled) {
      this.#cancelled = false;
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLButtonElement>('.actions .primary')?.focus();
    }
  }

  /** Says why the download of `model` failed, in words; an unreachable host turns the card to what works offline. */
  #failed(model: CatalogModel, error: { code?: string | null; message: string } | null): void {
    const failure = describeDownloadFailure(model, error ?? { message: '' });
    this.unreachable = failure.unreachable;
    this.error = failure.unreachable ? null : failure.text;
  }

  /** Stops the download; what came stays in the caches, and the next one resumes from there. */
  async #cancel(model: CatalogModel): Promise<void> {
    this.#cancelled = true;
    try {
      await call(`${modelPath(model.id)}/download`, { method: 'DELETE' });
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : String(err);
    }
  }

  #emit(name: string, detail?: string): void {
    this.dispatchEvent(new CustomEvent(name, { detail, bubbles: true, composed: true }));
  }

  protected override render() {
    // Measured once every model's fit is known (the host measures its GPU, then its processor).
    const measuring =
      this.checking || this.#host?.device == null || this.catalog.some((m) => m.fit === null);
    const pick = measuring ? undefined : recommendedModel(this.catalog);
    const reason = this.catalog.find((m) => m.available === false)?.unavailable_reason;
    const offline = this.unreachable || !this.online;
    return html`<section aria-labelledby="first-run-title">
      <h2 id="first-run-title">Welcome to Hearth</h2>
      ${
        this.waiting
          ? html`<p class="waiting" role="status">
              Your message is kept. Hearth answers it once a model is ready on this device.
            </p>`
          : nothing
      }
      <p>
        Hearth runs a language model in this browser, on this device. Nothing leaves this device.
        (You can add a server of your own in Settings; the app then says wherever your messages go
        to it.)
      </p>
      ${
        measuring
          ? html`<p role="status">Checking what this device can run…</p>`
          : offline && !this.progress
            ? this.#renderOffline(pick)
            : pick
              ? this.#renderPick(pick)
              : html`<p>
                  This device cannot run the models Hearth
                  offers${reason ? html` (${reason})` : nothing}. A server of your own can answer
                  instead.
                </p>`
      }
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.notice ? html`<p role="status">${this.notice}</p>` : nothing}
      <div class="actions">
        ${
          pick && !this.progress
            ? html`<button class="primary" @click=${() => this.#get(pick)}>
                ${offline ? 'Try again: get' : 'Get'} ${describeModel(pick).name} (${sizeOf(pick)})
              </button>`
            : nothing
        }
        ${
          pick && this.progress
            ? html`<button @click=${() => this.#cancel(pick)}>Cancel download</button>`
            : nothing
        }
      </div>
      <p>Or another way to a model:</p>
      <ul>
        <li><a href="#/models/add">A GGUF file from this computer, or one by its URL</a></li>
        <li><a href="#/settings/servers">A server of yours</a> (Ollama, LM Studio, llama.cpp…)</li>
        <li>
          <button class="link" @click=${() => this.#emit('show-models')}>Every model</button>
        </li>
      </ul>
      ${
        this.waiting
          ? nothing
          : html`<div class="actions">
              <button class="link" @click=${() => this.#emit('dismiss')}>Not now</button>
            </div>`
      }
    </section>`;
  }

  /** The model hosts cannot be reached: what works here, plainly. */
  #renderOffline(pick: CatalogModel | undefined) {
    return html`<p role="alert">
        ${
          pick && this.unreachable
            ? `${describeModel(pick).name} could not be downloaded: the model hosts can't be reached from here (offline, or behind a firewall).`
            : "This device is offline: the model hosts can't be reached."
        }
      </p>
      <p>
        What works here without them: a GGUF file from this computer, a server of yours on this
        network, and any model already downloaded.
      </p>`;
  }

  #renderPick(pick: CatalogModel) {
    const where =
      pick.engine === 'llama.cpp'
        ? llamaPlace(this.#host)?.label === 'GPU'
          ? 'on its GPU with llama.cpp'
          : softwareAdapter(this.#host)
            ? "on its CPU with llama.cpp. This device's graphics adapter is a software one, which runs on the processor: there is no usable GPU here, so a small model on the CPU is the fastest (slower than a GPU, but it works)"
            : 'on its CPU with llama.cpp (no usable GPU here: slower, but it works)'
        : 'on its GPU with WebLLM';
    const p = this.progress;
    // Slow is the best there is here (recommend prefers a good fit): say so, and how slow.
    const slow = pick.fit === 'slow';
    return html`<p>
        ${slow ? 'The best first model for this device' : 'A good first model for this device'}:
        <strong>${describeModel(pick).name}</strong>, ${sizeOf(pick)}, which runs ${where}.
        ${slow && pick.fit_reason ? `Expect it to be slow: ${pick.fit_reason}` : nothing}
      </p>
      ${
        p
          ? html`<label
              >Downloading ${describeModel(pick).name}
              <progress
                max=${p.bytes_total ?? 1}
                value=${p.bytes_total ? p.bytes_done : 0}
              ></progress>
            </label>`
          : nothing
      }`;
  }
}

customElements.define('first-run', FirstRun);

declare global {
  interface HTMLElementTagNameMap {
    'first-run': FirstRun;
  }
}
