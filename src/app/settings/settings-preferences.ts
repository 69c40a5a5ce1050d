/**
 * @module
 * `<settings-preferences>`: Settings → Preferences. The theme (applied at once, in every tab), and
 * where a new conversation starts: its model, its system prompt and parameters, and which key
 * sends a message; and the saved system prompts to pick from in a conversation.
 * Each choice is kept as it is made (`setPreferences`); conversations already started keep theirs.
 */
import { css, html, LitElement, nothing } from 'lit';
import { leavesFor, type CatalogModel } from '../shared/api-client';
import { chatModels } from '../chat/chat-models';
import {
  preferences,
  PREFERENCES_EVENT,
  setPreferences,
  type Preferences,
  type SendKey,
  type Theme,
} from '../shared/preferences';
import type { Sampling } from '../shared/chat-settings';
import '../chat/sampling-fields';
import './settings-prompts';
import { shared } from '../shared/styles';

const THEMES: { theme: Theme; label: string }[] = [
  { theme: 'system', label: 'System' },
  { theme: 'light', label: 'Light' },
  { theme: 'dark', label: 'Dark' },
];

const SEND_KEYS: { key: SendKey; label: string }[] = [
  { key: 'enter', label: 'Enter sends; Shift+Enter starts a new line' },
  { key: 'mod-enter', label: 'Ctrl+Enter (⌘+Enter on a Mac) sends; Enter starts a new line' },
];

/** A model as the picker names it: server models say where their messages go. */
function modelLabel(m: CatalogModel): string {
  const remote = leavesFor(m);
  return remote ? `${m.id} — leaves this device (${remote})` : m.id;
}

export class SettingsPreferences extends LitElement {
  static override properties = {
    catalog: { attribute: false },
    prefs: { state: true },
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
      .group {
        margin: 0 0 1.4em;
      }
      fieldset {
        border: 1px solid var(--border);
        border-radius: var(--radius);
        padding: 0.5em 0.9em 0.7em;
        margin: 0;
      }
      legend,
      .label {
        font-weight: 600;
        padding: 0 0.2em;
      }
      .label {
        display: block;
        padding: 0;
        margin-bottom: 0.3em;
      }
      fieldset label {
        display: block;
        padding: 0.15em 0;
      }
      .inline label {
        display: inline-block;
        margin-right: 1.2em;
      }
      select,
      textarea {
        width: 100%;
        max-width: 36em;
      }
      textarea {
        min-height: 6em;
        resize: vertical;
      }
      .hint {
        margin: 0.3em 0 0;
        font-size: 0.9em;
      }
    `,
  ];

  /** The catalogue: the default model is one of its chat models. */
  declare catalog: CatalogModel[];
  declare private prefs: Preferences;

  constructor() {
    super();
    this.catalog = [];
    this.prefs = preferences();
  }

  /** Another tab (or this one) changed the preferences: show them. */
  readonly #onChange = () => (this.prefs = preferences());

  override connectedCallback(): void {
    super.connectedCallback();
    this.prefs = preferences();
    addEventListener(PREFERENCES_EVENT, this.#onChange);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener(PREFERENCES_EVENT, this.#onChange);
  }

  #set(patch: Partial<Preferences>): void {
    this.prefs = setPreferences(patch);
  }

  protected override render() {
    const p = this.prefs;
    return html`
      <h3>Preferences</h3>
      <p class="muted">
        Kept in this browser. The model, system prompt, parameters and send key apply to new
        conversations; a conversation keeps the model, prompt and parameters it has.
      </p>
      <div class="group">
        <fieldset class="inline" aria-describedby="theme-hint">
          <legend>Theme</legend>
          ${THEMES.map(
            (t) =>
              html`<label>
                <input
                  type="radio"
                  name="theme"
                  .checked=${p.theme === t.theme}
                  @change=${() => this.#set({ theme: t.theme })}
                />
                ${t.label}
              </label>`,
          )}
        </fieldset>
        <p class="hint muted" id="theme-hint">
          System follows your device's light or dark setting. A change applies at once, in every
          tab.
        </p>
      </div>
      <div class="group">${this.#renderModel(p)}</div>
      <div class="group">
        <label class="label" for="default-system"
          >Default system prompt for new conversations</label
        >
        <textarea
          id="default-system"
          aria-describedby="system-hint"
          .value=${p.defaultSystem}
          @input=${(e: Event) =>
            this.#set({ defaultSystem: (e.target as HTMLTextAreaElement).value })}
        ></textarea>
        <p class="hint muted" id="system-hint">
          Instructions every new conversation starts with, such as “Answer briefly.” Each
          conversation can change its own in its options.
        </p>
      </div>
      <div class="group">
        <fieldset aria-describedby="defaults-hint">
          <legend>Defaults for new conversations</legend>
          <sampling-fields
            .settings=${p.defaultSampling}
            source="defaults"
            @sampling-change=${(e: CustomEvent<Partial<Sampling>>) =>
              this.#set({ defaultSampling: { ...this.prefs.defaultSampling, ...e.detail } })}
          ></sampling-fields>
        </fieldset>
        <p class="hint muted" id="defaults-hint">
          The parameters each new conversation starts with; each can change its own in Chat options.
        </p>
      </div>
      <div class="group"><settings-prompts></settings-prompts></div>
      <div class="group">
        <fieldset aria-describedby="send-hint">
          <legend>Send key</legend>
          ${SEND_KEYS.map(
            (k) =>
              html`<label>
                <input
                  type="radio"
                  name="send-key"
                  .checked=${p.sendKey === k.key}
                  @change=${() => this.#set({ sendKey: k.key })}
                />
                ${k.label}
              </label>`,
          )}
        </fieldset>
        <p class="hint muted" id="send-hint">
          Which key sends a message from the composer and from the box where you edit one.
        </p>
      </div>
    `;
  }

  #renderModel(p: Preferences) {
    const models = chatModels(this.catalog);
    const chosen = p.defaultModel;
    // A chosen model that is gone (deleted, or its server removed) is still shown, as what it is.
    const missing = chosen !== null && !models.some((m) => m.id === chosen);
    return html`<label class="label" for="default-model">Default model for new conversations</label>
      <select
        id="default-model"
        aria-describedby="model-hint"
        @change=${(e: Event) => {
          const value = (e.target as HTMLSelectElement).value;
          this.#set({ defaultModel: value === '' ? null : value });
        }}
      >
        <option value="" ?selected=${chosen === null}>
          Automatic (the loaded model, else one on this device)
        </option>
        ${models.map(
          (m) => html`<option value=${m.id} ?selected=${m.id === chosen}>${modelLabel(m)}</option>`,
        )}
        ${
          missing
            ? html`<option value=${chosen} selected>
                ${chosen}${this.catalog.length > 0 ? ' (not on this device now: automatic until it is)' : ''}
              </option>`
            : nothing
        }
      </select>
      <p class="hint muted" id="model-hint">
        The model a new conversation starts with; each conversation can change it. Only models on
        this device are listed (and those of servers you added, whose messages leave it).
      </p>`;
  }
}

customElements.define('settings-preferences', SettingsPreferences);

declare global {
  interface HTMLElementTagNameMap {
    'settings-preferences': SettingsPreferences;
  }
}
