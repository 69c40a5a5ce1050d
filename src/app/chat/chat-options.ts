/**
 * @module
 * `<chat-options>`: a conversation's options (its system prompt, a saved one to start from, its
 * parameters, the echo engine's pace) as a non-modal popover under the chat's bar. It takes the
 * focus when it opens; Esc closes it and gives the focus back to its button, and so does a click
 * anywhere outside it (the focus then stays where the click put it). It pushes the messages down
 * instead of lying over them, so that none of their actions is hidden while a chat goes on.
 */
import { css, html, LitElement, nothing } from 'lit';
import { live } from 'lit/directives/live.js';
import { ECHO_MODEL_ID } from '../../models/models';
import type { Sampling } from '../shared/chat-settings';
import type { ConversationSettings } from '../conversations/conversation';
import { savedPrompts, watchSavedPrompts, type SavedPrompt } from '../shared/saved-prompts';
import './sampling-fields';
import { shared } from '../shared/styles';
import { typedNumber } from '../shared/typed-number';

/**
 * @fires settings-change - `detail: Partial<ConversationSettings>`: apply it to the conversation.
 * @fires echo-delay - `detail: number`: the echo engine's pause per token, in ms.
 * @fires close - `detail: {restoreFocus}`: Esc or Close (focus back to the button), or a click
 *   outside (focus where it went).
 */
export class ChatOptions extends LitElement {
  static override properties = {
    settings: { attribute: false },
    conversationId: { attribute: false },
    model: { attribute: false },
    echoDelay: { attribute: false },
    anchor: { attribute: false },
    prompts: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
        flex: 0 1 auto;
        min-height: 0;
        max-height: 55%;
        overflow-y: auto;
        border-bottom: 1px solid var(--border);
        background: var(--bg-raised);
        box-shadow: 0 4px 12px rgb(0 0 0 / 12%);
      }
      .panel {
        max-width: 48em;
        margin: 0 auto;
        padding: 0.6em 1em 0.9em;
        display: flex;
        flex-direction: column;
        gap: 0.8em;
      }
      .head {
        display: flex;
        justify-content: space-between;
        align-items: center;
      }
      h3 {
        margin: 0;
        font-size: 1em;
      }
      .field {
        display: flex;
        flex-direction: column;
        gap: 0.2em;
        font-size: 0.9em;
      }
      .help {
        color: var(--fg-soft);
        font-size: 0.85em;
      }
      textarea {
        min-height: 4em;
        resize: vertical;
      }
      select {
        max-width: 24em;
      }
      @media (max-width: 720px) {
        .panel {
          padding: 0.5em 0.5em 0.7em;
        }
      }
    `,
  ];

  declare settings: ConversationSettings;
  /** Whose options these are: fields typed for another conversation start afresh. */
  declare conversationId: string;
  declare model: string;
  declare echoDelay: number;
  /** The button that opens and closes this: a click on it is not a click outside. */
  declare anchor: HTMLElement | null;
  declare private prompts: SavedPrompt[];
  #unwatch: (() => void) | undefined;

  constructor() {
    super();
    this.conversationId = '';
    this.model = '';
    this.echoDelay = 0;
    this.anchor = null;
    this.prompts = savedPrompts();
  }

  override connectedCallback(): void {
    super.connectedCallback();
    // A popover that leaves the page usable: a dialog, not a modal one.
    this.setAttribute('role', 'dialog');
    this.setAttribute('aria-label', 'Chat options');
    this.prompts = savedPrompts();
    this.#unwatch = watchSavedPrompts((prompts) => (this.prompts = prompts));
    // Capture: the click is seen even where something under it stops its propagation.
    addEventListener('click', this.#onClick, true);
    this.addEventListener('keydown', this.#onKey);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    this.#unwatch?.();
    removeEventListener('click', this.#onClick, true);
    this.removeEventListener('keydown', this.#onKey);
  }

  protected override firstUpdated(): void {
    this.renderRoot.querySelector<HTMLElement>('select, textarea')?.focus();
  }

  /**
   * A click outside closes it. The click is not taken from what it landed on: it goes on to it,
   * and the messages move up only after it (closing on `pointerdown` would move them under it).
   */
  readonly #onClick = (event: MouseEvent) => {
    const path = event.composedPath();
    if (path.includes(this) || (this.anchor && path.includes(this.anchor))) return;
    this.#close(false);
  };

  /** Esc closes it, and only it: a reply streaming in goes on (Esc again stops it). */
  readonly #onKey = (event: KeyboardEvent) => {
    if (event.key !== 'Escape' || event.shiftKey) return;
    event.stopPropagation();
    event.preventDefault();
    this.#close(true);
  };

  #close(restoreFocus: boolean): void {
    this.dispatchEvent(new CustomEvent('close', { detail: { restoreFocus } }));
  }

  #change(patch: Partial<ConversationSettings>): void {
    this.dispatchEvent(new CustomEvent('settings-change', { detail: patch }));
    this.requestUpdate();
  }

  protected override render() {
    const s = this.settings;
    // The saved prompt the system prompt is now, if it is one.
    const picked = this.prompts.find((p) => p.text === s.system)?.id ?? '';
    return html`<div class="panel">
      <div class="head">
        <h3>Chat options</h3>
        <button class="link" @click=${() => this.#close(true)}>Close</button>
      </div>
      ${
        this.prompts.length > 0
          ? html`<div class="field">
              <label for="opt-saved">Use a saved prompt</label>
              <select
                id="opt-saved"
                aria-describedby="opt-saved-help"
                @change=${(e: Event) => {
                  const chosen = this.prompts.find(
                    (p) => p.id === (e.target as HTMLSelectElement).value,
                  );
                  if (chosen) this.#change({ system: chosen.text });
                }}
              >
                <option value="" ?selected=${picked === ''}>None picked</option>
                ${this.prompts.map(
                  (p) =>
                    html`<option value=${p.id} ?selected=${p.id === picked}>${p.name}</option>`,
                )}
              </select>
              <span class="help" id="opt-saved-help"
                >Puts its text in the system prompt below (Settings → Preferences keeps them).</span
              >
            </div>`
          : nothing
      }
      <div class="field">
        <label for="opt-system">System prompt</label>
        <textarea
          id="opt-system"
          aria-describedby="opt-system-help"
          .value=${live(s.system)}
          placeholder="How the model should behave in this conversation"
          @input=${(e: Event) => this.#change({ system: (e.target as HTMLTextAreaElement).value })}
        ></textarea>
        <span class="help" id="opt-system-help"
          >Sent before every message of this conversation, to set the model's role and
          tone.${this.prompts.length > 0 ? '' : ' Prompts saved in Settings → Preferences can be picked here.'}</span
        >
      </div>
      <sampling-fields
        .settings=${s}
        .source=${this.conversationId}
        @sampling-change=${(e: CustomEvent<Partial<Sampling>>) => this.#change(e.detail)}
      >
        ${this.model === ECHO_MODEL_ID ? this.#renderEchoDelay() : nothing}
      </sampling-fields>
    </div>`;
  }

  #renderEchoDelay() {
    const set = (value: number) =>
      this.dispatchEvent(new CustomEvent('echo-delay', { detail: value }));
    return html`<div class="field">
      <label for="opt-echo-delay">Delay per token, ms (test engine)</label>
      <input
        id="opt-echo-delay"
        aria-describedby="opt-echo-delay-help"
        type="number"
        min="0"
        max="10000"
        step="10"
        .value=${String(this.echoDelay)}
        @input=${(e: Event) => {
          const value = typedNumber((e.target as HTMLInputElement).value);
          if (value !== null && value >= 0 && value <= 10000) set(Math.round(value));
        }}
        @change=${(e: Event) =>
          set(
            Math.min(
              10000,
              Math.max(0, Math.round(Number((e.target as HTMLInputElement).value)) || 0),
            ),
          )}
      />
      <span class="help" id="opt-echo-delay-help"
        >Makes the echo engine stream slowly, like a model on a GPU.</span
      >
    </div>`;
  }
}

customElements.define('chat-options', ChatOptions);

declare global {
  interface HTMLElementTagNameMap {
    'chat-options': ChatOptions;
  }
}
