/**
 * @module
 * `<first-run>`: what a newcomer sees in an empty conversation while no real model is on the
 * device — what Hearth is, what this device can run (a small GGUF on the CPU where WebGPU has no
 * usable GPU), and one button that gets it, with its progress. While the device is still being
 * measured it says so, neutrally, instead of a verdict.
 */
import { css, html, LitElement, nothing } from 'lit';
import type { DownloadProgress } from '../openai/downloads';
import type { HostStatus } from '../openai/status';
import { ApiError, call, download, modelPath, type CatalogModel } from './api-client';
import { llamaPlace, recommendedModel, sizeOf } from './model-facts';
import { describeModel } from './model-info';
import { shared } from './styles';

/**
 * @fires model-ready - `detail: id`: the model was downloaded; the conversation can use it.
 * @fires show-models - the user wants to see every model.
 * @fires dismiss - the user does not want this card now.
 */
export class FirstRun extends LitElement {
  static override properties = {
    catalog: { attribute: false },
    host: { attribute: false },
    checking: { type: Boolean },
    progress: { state: true },
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
    `,
  ];

  declare catalog: CatalogModel[];
  declare host: HostStatus | null;
  /** The catalogue or the device is not known yet. */
  declare checking: boolean;
  declare private progress: DownloadProgress | null;
  declare private error: string | null;
  /** What became of a download the user cancelled. */
  declare private notice: string | null;
  /** The user pressed Cancel: the focus is theirs to get back when the download ends. */
  #cancelled = false;

  constructor() {
    super();
    this.catalog = [];
    this.host = null;
    this.checking = true;
    this.progress = null;
    this.error = null;
    this.notice = null;
  }

  async #get(model: CatalogModel): Promise<void> {
    this.error = null;
    this.notice = null;
    try {
      for await (const progress of download(model.id)) this.progress = progress;
      const end = this.progress?.phase;
      if (end === 'done') this.#emit('model-ready', model.id);
      else if (end === 'failed')
        this.error = this.progress?.error?.message ?? 'The download failed.';
      else if (end === 'cancelled')
        this.notice = 'Download cancelled. What came is kept: Get goes on from there.';
    } catch (err) {
      this.error = err instanceof ApiError ? err.message : String(err);
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
    const measuring = this.checking || this.host?.device == null;
    const pick = measuring ? undefined : recommendedModel(this.catalog);
    const reason = this.catalog.find((m) => m.available === false)?.unavailable_reason;
    return html`<section aria-labelledby="first-run-title">
      <h2 id="first-run-title">Welcome to Hearth</h2>
      <p>
        Hearth runs a language model in this browser, on this device. Nothing leaves this device.
        (You can add a server of your own in Settings; the app then says wherever your messages go
        to it.)
      </p>
      ${
        measuring
          ? html`<p role="status">Checking what this device can run…</p>`
          : pick
            ? this.#renderPick(pick)
            : html`<p>
                This device cannot run the models Hearth
                offers${reason ? html` (${reason})` : nothing}. You can still try the chat and the
                API with the echo test engine, or add a server of your own in Settings.
              </p>`
      }
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      ${this.notice ? html`<p role="status">${this.notice}</p>` : nothing}
      <div class="actions">
        ${
          pick && !this.progress
            ? html`<button class="primary" @click=${() => this.#get(pick)}>
                Get ${describeModel(pick).name} (${sizeOf(pick)})
              </button>`
            : nothing
        }
        ${
          pick && this.progress
            ? html`<button @click=${() => this.#cancel(pick)}>Cancel download</button>`
            : nothing
        }
        <button class="link" @click=${() => this.#emit('show-models')}>See all models</button>
        <button class="link" @click=${() => this.#emit('dismiss')}>Not now</button>
      </div>
    </section>`;
  }

  #renderPick(pick: CatalogModel) {
    const where =
      pick.engine === 'llama.cpp'
        ? llamaPlace(this.host)?.label === 'GPU'
          ? 'on its GPU with llama.cpp'
          : 'on its CPU with llama.cpp (no usable GPU here: slower, but it works)'
        : 'on its GPU with WebLLM';
    const p = this.progress;
    return html`<p>
        A good first model for this device: <strong>${describeModel(pick).name}</strong>,
        ${sizeOf(pick)}, which runs ${where}.
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
