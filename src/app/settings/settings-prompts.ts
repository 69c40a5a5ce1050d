/**
 * @module
 * `<settings-prompts>`: Settings → Preferences → Saved system prompts. A small library of system
 * prompts, each with a name, to pick from in a conversation's Chat options: added here, renamed
 * in place (Enter keeps the name, Esc keeps the old one), deleted.
 */
import { css, html, LitElement, nothing } from 'lit';
import {
  addPrompt,
  deletePrompt,
  MAX_NAME,
  nameProblem,
  renamePrompt,
  savedPrompts,
  watchSavedPrompts,
  type SavedPrompt,
} from '../shared/saved-prompts';
import { shared } from '../shared/styles';

export class SettingsPrompts extends LitElement {
  static override properties = {
    prompts: { state: true },
    renaming: { state: true },
    error: { state: true },
    renameError: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      h3 {
        font-size: 1.05em;
        margin: 0 0 0.4em;
      }
      ul {
        list-style: none;
        padding: 0;
        margin: 0 0 0.8em;
        max-width: 36em;
      }
      li {
        display: flex;
        flex-wrap: wrap;
        gap: 0.3em 0.6em;
        align-items: baseline;
        padding: 0.4em 0;
        border-bottom: 1px solid var(--border);
      }
      .name {
        font-weight: 600;
      }
      .text {
        flex: 1 1 100%;
        font-size: 0.9em;
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .actions {
        margin-left: auto;
      }
      form {
        display: flex;
        flex-direction: column;
        gap: 0.3em;
        max-width: 36em;
      }
      textarea {
        min-height: 4em;
        resize: vertical;
      }
      form button {
        align-self: flex-start;
        margin-top: 0.3em;
      }
    `,
  ];

  declare private prompts: SavedPrompt[];
  /** The id of the prompt whose name is being changed. */
  declare private renaming: string | null;
  declare private error: string;
  declare private renameError: string;
  #unwatch: (() => void) | undefined;

  constructor() {
    super();
    this.prompts = savedPrompts();
    this.renaming = null;
    this.error = '';
    this.renameError = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.prompts = savedPrompts();
    this.#unwatch = watchSavedPrompts((prompts) => (this.prompts = prompts));
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unwatch?.();
  }

  #add(event: SubmitEvent): void {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const name = form.querySelector<HTMLInputElement>('#prompt-name')!;
    const text = form.querySelector<HTMLTextAreaElement>('#prompt-text')!;
    const problem =
      nameProblem(name.value) ?? (text.value.trim() === '' ? 'Write the prompt’s text.' : null);
    this.error = problem ?? '';
    if (problem) {
      (problem.startsWith('Write') ? text : name).focus();
      return;
    }
    addPrompt(name.value, text.value);
    form.reset();
    name.focus();
  }

  async #startRename(id: string): Promise<void> {
    this.renaming = id;
    this.renameError = '';
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLInputElement>('#rename')?.select();
  }

  async #endRename(id: string, name: string | null): Promise<void> {
    if (name !== null) {
      const problem = nameProblem(name, id);
      if (problem) {
        this.renameError = problem;
        return;
      }
      renamePrompt(id, name);
    }
    this.renaming = null;
    await this.updateComplete;
    this.renderRoot
      .querySelector<HTMLElement>(`[data-id="${CSS.escape(id)}"] .rename-button`)
      ?.focus();
  }

  protected override render() {
    return html`<section aria-labelledby="prompts-title">
      <h3 id="prompts-title">Saved system prompts</h3>
      <p class="muted">
        System prompts to pick from in a conversation's Chat options, kept in this browser.
      </p>
      ${
        this.prompts.length > 0
          ? html`<ul>
              ${this.prompts.map((p) => this.#renderPrompt(p))}
            </ul>`
          : nothing
      }
      <form @submit=${this.#add} aria-label="Save a new prompt">
        <label for="prompt-name">New prompt's name</label>
        <input
          id="prompt-name"
          maxlength=${MAX_NAME}
          autocomplete="off"
          aria-describedby=${this.error ? 'prompt-error' : nothing}
        />
        <label for="prompt-text">New prompt's text</label>
        <textarea id="prompt-text"></textarea>
        ${this.error ? html`<p class="error" id="prompt-error">${this.error}</p>` : nothing}
        <button type="submit">Save prompt</button>
      </form>
    </section>`;
  }

  #renderPrompt(p: SavedPrompt) {
    if (this.renaming === p.id) {
      return html`<li data-id=${p.id}>
        <label class="sr-only" for="rename">New name for ${p.name}</label>
        <input
          id="rename"
          maxlength=${MAX_NAME}
          .value=${p.name}
          aria-describedby=${this.renameError ? 'rename-error' : nothing}
          aria-invalid=${this.renameError ? 'true' : 'false'}
          @keydown=${(e: KeyboardEvent) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              void this.#endRename(p.id, (e.target as HTMLInputElement).value);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              void this.#endRename(p.id, null);
            }
          }}
        />
        <span class="actions">
          <button
            @click=${() =>
              this.#endRename(
                p.id,
                this.renderRoot.querySelector<HTMLInputElement>('#rename')!.value,
              )}
          >
            Save name
          </button>
          <button @click=${() => this.#endRename(p.id, null)}>Cancel</button>
        </span>
        ${
          this.renameError
            ? html`<span class="error" id="rename-error">${this.renameError}</span>`
            : nothing
        }
        <span class="text muted">${p.text}</span>
      </li>`;
    }
    return html`<li data-id=${p.id}>
      <span class="name">${p.name}</span>
      <span class="actions">
        <button
          class="rename-button"
          aria-label="Rename ${p.name}"
          @click=${() => this.#startRename(p.id)}
        >
          Rename
        </button>
        <button class="danger" aria-label="Delete ${p.name}" @click=${() => this.#delete(p)}>
          Delete
        </button>
      </span>
      <span class="text muted" title=${p.text}>${p.text}</span>
    </li>`;
  }

  /** Deletes a prompt; the focus goes to the next one's Rename, else to the new prompt's name. */
  async #delete(p: SavedPrompt): Promise<void> {
    const index = this.prompts.findIndex((x) => x.id === p.id);
    deletePrompt(p.id);
    await this.updateComplete;
    const buttons = this.renderRoot.querySelectorAll<HTMLElement>('.rename-button');
    (
      buttons[Math.min(index, buttons.length - 1)] ??
      this.renderRoot.querySelector<HTMLElement>('#prompt-name')
    )?.focus();
  }
}

customElements.define('settings-prompts', SettingsPrompts);

declare global {
  interface HTMLElementTagNameMap {
    'settings-prompts': SettingsPrompts;
  }
}
