/**
 * @module
 * `<sampling-fields>`: a conversation's parameters as fields (temperature, top P, maximum length,
 * context limit, seed, stop sequences), in its Chat options and, as the defaults of new
 * conversations, in Settings. A value out of range is said beside its field and never kept: the
 * replies go on with the last valid one, and the error says which.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { live } from 'lit/directives/live.js';
import {
  checkNumber,
  NUMBER_RULES,
  parseStops,
  stopsText,
  type NumberSetting,
  type Sampling,
} from '../shared/chat-settings';
import { shared } from '../shared/styles';
import { typedNumber } from '../shared/typed-number';

interface NumberField {
  key: NumberSetting;
  id: string;
  label: string;
  help: string;
  step: string;
  /** What an empty field means. */
  empty?: string;
}

const NUMBER_FIELDS: NumberField[] = [
  {
    key: 'temperature',
    id: 'opt-temperature',
    label: 'Temperature',
    help: '0 gives the likeliest words every time; higher (up to 2) varies more.',
    step: '0.1',
  },
  {
    key: 'top_p',
    id: 'opt-top-p',
    label: 'Top P',
    help: 'Picks only among the likeliest words that together make up this share (0 to 1); empty: the model’s own.',
    step: '0.05',
    empty: 'the model’s own',
  },
  {
    key: 'max_tokens',
    id: 'opt-max-tokens',
    label: 'Maximum length (tokens)',
    help: 'A reply stops after this many tokens (Continue goes on); empty: no limit.',
    step: '1',
    empty: 'no limit',
  },
  {
    key: 'context_tokens',
    id: 'opt-context',
    label: 'Context limit (tokens)',
    help: 'Sends only the latest messages that fit in this many tokens (estimated), and the system prompt: older ones stay here, unseen by the model. The model’s own window is fixed when it loads; empty: send everything.',
    step: '1',
    empty: 'everything',
  },
  {
    key: 'seed',
    id: 'opt-seed',
    label: 'Seed',
    help: 'The same seed, settings and messages give the same reply again; empty: a new random one each time.',
    step: '1',
    empty: 'random',
  },
];

/**
 * @fires sampling-change - `detail: Partial<Sampling>`: a field now holds a valid value.
 */
export class SamplingFields extends LitElement {
  static override properties = {
    settings: { attribute: false },
    source: {},
    errors: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: block;
      }
      .grid {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(13em, 1fr));
        gap: 0.8em;
      }
      .field {
        display: flex;
        flex-direction: column;
        gap: 0.2em;
        font-size: 0.9em;
      }
      .wide {
        grid-column: 1 / -1;
      }
      .help {
        color: var(--fg-soft);
        font-size: 0.85em;
      }
      .error {
        font-size: 0.85em;
      }
      textarea {
        min-height: 3.2em;
        resize: vertical;
      }
    `,
  ];

  declare settings: Sampling;
  /** Whose settings these are (a conversation's id): another's start with none typed. */
  declare source: string;
  /** What is wrong with each field whose text is not kept. */
  declare private errors: Partial<Record<NumberSetting | 'stop', string>>;
  /**
   * The text typed in each field, shown as typed: a re-render must not rewrite it with the value
   * it spells (`END` and a new line is `END`), nor drop what is wrong in it. (`live`: a browser
   * may read an unfinished `0.` as empty; what it reads is what was typed, and is left alone.)
   */
  #typed: Partial<Record<NumberSetting | 'stop', string>> = {};

  constructor() {
    super();
    this.source = '';
    this.errors = {};
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    if (changed.has('source')) {
      this.#typed = {};
      this.errors = {};
    }
  }

  #emit(patch: Partial<Sampling>): void {
    this.dispatchEvent(new CustomEvent('sampling-change', { detail: patch }));
  }

  #setError(key: NumberSetting | 'stop', error: string | undefined): void {
    if (this.errors[key] === error) return;
    const next = { ...this.errors };
    if (error === undefined) delete next[key];
    else next[key] = error;
    this.errors = next;
  }

  /** What the replies use while a field's text is wrong: its last valid value. */
  #kept(field: NumberField): string {
    const value = this.settings[field.key];
    return value === null ? (field.empty ?? '') : String(value);
  }

  /**
   * Takes the field's text: kept when valid; said wrong when not. While typing (`final` false),
   * an unfinished number (`0.`, `-`) waits for more instead.
   */
  #onNumber(field: NumberField, input: HTMLInputElement, final: boolean): void {
    const raw = input.value;
    this.#typed[field.key] = raw;
    const unfinished = input.validity.badInput || (raw.trim() !== '' && typedNumber(raw) === null);
    if (!final && unfinished) return;
    const checked = checkNumber(field.key, raw, input.validity.badInput);
    if (checked.ok) {
      this.#setError(field.key, undefined);
      if (checked.value !== this.settings[field.key]) this.#emit({ [field.key]: checked.value });
    } else {
      this.#setError(field.key, `${checked.error} Until then replies use ${this.#kept(field)}.`);
    }
  }

  #onStops(text: string): void {
    this.#typed.stop = text;
    const checked = parseStops(text);
    if (checked.ok) {
      this.#setError('stop', undefined);
      this.#emit({ stop: checked.value });
    } else {
      this.#setError('stop', `${checked.error} Until then replies use the ones before.`);
    }
  }

  protected override render() {
    const s = this.settings;
    const stopError = this.errors.stop;
    return html`<div class="grid">
      ${NUMBER_FIELDS.map((f) => this.#renderNumber(f))}
      <div class="field wide">
        <label for="opt-stop">Stop sequences</label>
        <textarea
          id="opt-stop"
          rows="2"
          aria-describedby=${stopError ? 'opt-stop-help opt-stop-error' : 'opt-stop-help'}
          aria-invalid=${stopError ? 'true' : 'false'}
          .value=${live(this.#typed.stop ?? stopsText(s.stop))}
          @input=${(e: Event) => this.#onStops((e.target as HTMLTextAreaElement).value)}
        ></textarea>
        <span class="help" id="opt-stop-help"
          >The reply ends before any of these: up to 4, one a line (\\n for a line break).</span
        >
        ${stopError ? html`<span class="error" id="opt-stop-error">${stopError}</span>` : nothing}
      </div>
      <slot></slot>
    </div>`;
  }

  #renderNumber(f: NumberField) {
    const value = this.settings[f.key];
    const error = this.errors[f.key];
    const rule = NUMBER_RULES[f.key];
    return html`<div class="field">
      <label for=${f.id}>${f.label}</label>
      <input
        id=${f.id}
        type="number"
        min=${rule.min}
        max=${rule.max}
        step=${f.step}
        placeholder=${f.empty ?? nothing}
        aria-describedby=${error ? `${f.id}-help ${f.id}-error` : `${f.id}-help`}
        aria-invalid=${error ? 'true' : 'false'}
        .value=${live(this.#typed[f.key] ?? (value === null ? '' : String(value)))}
        @input=${(e: Event) => this.#onNumber(f, e.target as HTMLInputElement, false)}
        @change=${(e: Event) => this.#onNumber(f, e.target as HTMLInputElement, true)}
      />
      <span class="help" id="${f.id}-help">${f.help}</span>
      ${error ? html`<span class="error" id="${f.id}-error">${error}</span>` : nothing}
    </div>`;
  }
}

customElements.define('sampling-fields', SamplingFields);

declare global {
  interface HTMLElementTagNameMap {
    'sampling-fields': SamplingFields;
  }
}
