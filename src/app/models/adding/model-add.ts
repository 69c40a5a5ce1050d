/**
 * @module
 * `<model-add>`: "Add a model" — a GGUF for llama.cpp by URL, by Hugging Face id, or from a file
 * on this computer (chosen, or dropped anywhere on the form), with an id of the user's choosing
 * if they want one. What it says about the outcome is shown in place; the work is the
 * `AddModelController`'s.
 */
import { css, html, LitElement, nothing } from 'lit';
import type { CatalogModel } from '../../shared/api-client';
import { AddModelController } from './model-adding';
import { shared } from '../../shared/styles';

/**
 * @fires catalog-stale - a model was added.
 * @fires model-added - the same, with the model's catalogue entry (the view downloads it).
 */
export class ModelAdd extends LitElement {
  static override properties = {
    dragging: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      section {
        border: 1px dashed var(--border);
        border-radius: var(--radius);
        padding: 0.7em 0.9em;
        margin-bottom: 1em;
      }
      /* Where there is nothing to drag a file from (a touch screen, a phone), no word of dropping. */
      @media (pointer: coarse), (max-width: 720px) {
        .drop {
          display: none;
        }
      }
      section.dragging {
        border-color: var(--accent);
        background: var(--bg-soft);
      }
      h3 {
        margin: 0 0 0.3em;
        font-size: 1.05em;
      }
      p {
        margin: 0.3em 0;
      }
      form {
        display: grid;
        grid-template-columns: minmax(0, 3fr) minmax(0, 2fr) auto;
        gap: 0.4em 0.6em;
        align-items: end;
      }
      form label {
        display: flex;
        flex-direction: column;
        gap: 0.2em;
        font-size: 0.9em;
      }
      .file {
        display: flex;
        flex-wrap: wrap;
        gap: 0.5em;
        align-items: center;
        margin-top: 0.6em;
      }
      .file label.button {
        cursor: pointer;
        border: 1px solid var(--border);
        border-radius: var(--radius);
        padding: 0.3em 0.8em;
      }
      .file label.button:focus-within {
        outline: 2px solid var(--accent);
        outline-offset: 2px;
      }
      @media (max-width: 40em) {
        form {
          grid-template-columns: 1fr;
        }
      }
    `,
  ];

  declare private dragging: boolean;
  readonly #adding = new AddModelController(this);

  constructor() {
    super();
    this.dragging = false;
  }

  /** Puts the focus on "Choose a .gguf file". */
  focusFile(): void {
    this.renderRoot.querySelector<HTMLInputElement>('input[type="file"]')?.focus();
  }

  #id(): string {
    return this.renderRoot.querySelector<HTMLInputElement>('#add-id')?.value ?? '';
  }

  #submit(event: SubmitEvent): void {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const field = (id: string) =>
      this.renderRoot.querySelector<HTMLInputElement>(`#${id}`)?.value ?? '';
    void this.#adding.addSource(field('add-source'), this.#id(), field('add-mmproj')).then(() => {
      if (this.#adding.state.phase === 'added') form.reset();
    });
  }

  #chosen(event: Event): void {
    const input = event.target as HTMLInputElement;
    const files = [...(input.files ?? [])];
    // Cleared, so that choosing the same file again (after a failure) fires `change` again.
    input.value = '';
    if (files.length > 0) void this.#adding.addFiles(files, this.#id());
  }

  #dragOver(event: DragEvent): void {
    if (!event.dataTransfer?.types.includes('Files')) return;
    // Without this the browser opens the file in the tab instead of dropping it here.
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
    this.dragging = true;
  }

  #drop(event: DragEvent): void {
    event.preventDefault();
    this.dragging = false;
    if (this.#adding.busy) return;
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length === 0) {
      this.#adding.refuse('Drop a .gguf file here, or a model and its vision projector.');
      return;
    }
    void this.#adding.addFiles(files, this.#id());
  }

  protected override render() {
    const state = this.#adding.state;
    const busy = state.phase === 'busy';
    return html`<section
      class=${this.dragging ? 'dragging' : ''}
      aria-labelledby="add-heading"
      @dragover=${this.#dragOver}
      @dragleave=${() => (this.dragging = false)}
      @drop=${this.#drop}
    >
      <h3 id="add-heading">Add a model</h3>
      <p class="muted">
        A GGUF model for llama.cpp, which runs on the GPU or the CPU: the URL of a .gguf file, a
        Hugging Face id (<code>user/repo:Q4_K_M</code>), or a file from this computer.
      </p>
      <form @submit=${this.#submit}>
        <label>
          URL or Hugging Face id
          <input
            id="add-source"
            type="text"
            autocomplete="off"
            spellcheck="false"
            placeholder="https://…/model.gguf or user/repo:Q4_K_M"
            ?disabled=${busy}
          />
        </label>
        <label>
          Vision projector URL (optional)
          <input
            id="add-mmproj"
            type="text"
            autocomplete="off"
            spellcheck="false"
            placeholder="https://…/mmproj-model.gguf"
            aria-describedby="add-mmproj-hint"
            ?disabled=${busy}
          />
          <span id="add-mmproj-hint" class="muted"
            >For a model that sees images; a Hugging Face id finds its own.</span
          >
        </label>
        <label>
          Model id (optional)
          <input
            id="add-id"
            type="text"
            autocomplete="off"
            spellcheck="false"
            placeholder="user/repo:quant"
            ?disabled=${busy}
          />
        </label>
        <button class="primary" type="submit" ?disabled=${busy}>Add</button>
      </form>
      <div class="file">
        <label class="button">
          Choose a .gguf file
          <input
            class="sr-only"
            type="file"
            accept=".gguf"
            multiple
            ?disabled=${busy}
            @change=${this.#chosen}
          />
        </label>
        <span class="muted"
          ><span class="drop">or drop one here. </span>It is copied into this app's storage; choose
          a model that sees images together with its projector (mmproj-….gguf).</span
        >
      </div>
      ${
        state.phase === 'busy'
          ? html`<p role="status">
              ${state.what} <progress aria-label="Adding the model"></progress>
            </p>`
          : state.phase === 'failed'
            ? html`<p class="error" role="alert">${state.message}</p>`
            : state.phase === 'added'
              ? html`<p role="status">${addedText(state.model)}</p>`
              : nothing
      }
    </section>`;
  }
}

/** What became of a model just added: on the device, downloading, or unable to run here. */
function addedText(m: CatalogModel): string {
  if (m.available === false) {
    return `Added ${m.id}, but this device cannot run it${m.unavailable_reason ? `: ${m.unavailable_reason}` : '.'}`;
  }
  const where = 'its card is first in the list below.';
  return m.downloaded
    ? `Added ${m.id}. It is on this device: ${where}`
    : `Added ${m.id}. Downloading it now: ${where}`;
}

customElements.define('model-add', ModelAdd);

declare global {
  interface HTMLElementTagNameMap {
    'model-add': ModelAdd;
  }
}
