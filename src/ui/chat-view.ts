/**
 * @module
 * `<chat-view>`: one conversation. The model and its settings, the messages, the context meter,
 * and the composer: Enter sends (not while an input method is composing), Shift+Enter is a new
 * line, Esc stops. Replies stream in over the API like any client's; what the user typed is kept
 * in the conversation until it is sent, and a failed reply keeps the message that asked for it.
 * A model of a server the user added is marked, in the picker and above the messages, as leaving
 * this device for the server's host.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import type { HostStatus } from '../openai/status';
import { ApiError, leavesFor, streamChat, type CatalogModel } from './api-client';
import {
  contextTokens,
  outgoingMessages,
  titleFrom,
  type Conversation,
  type Message,
} from './conversation';
import { saveConversation } from './conversation-store';
import type { ChatMessage } from './chat-message';
import './chat-message';
import { replySpeed } from './speed';
import { typedNumber } from './typed-number';
import { shared } from './styles';

/** How often a streaming reply is written to IndexedDB (a reload keeps what had come). */
const SAVE_EVERY_MS = 1000;

/**
 * @fires conversation-changed - `detail: Conversation`, after it was saved.
 * @fires new-conversation - `detail: {model, settings, messages}`: start another from these.
 * @fires show-models - the user wants the model manager.
 */
export class ChatView extends LitElement {
  static override properties = {
    conversation: { attribute: false },
    models: { attribute: false },
    host: { attribute: false },
    echoDelay: { state: true },
    showSettings: { state: true },
    streamingIndex: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: flex;
        flex-direction: column;
        height: 100%;
        min-height: 0;
      }
      .bar {
        display: flex;
        flex-wrap: wrap;
        gap: 0.5em;
        align-items: center;
        padding: 0.6em 1em;
        border-bottom: 1px solid var(--border);
      }
      .bar select {
        max-width: min(28em, 70vw);
      }
      .settings {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(14em, 1fr));
        gap: 0.8em;
        padding: 0.8em 1em;
        border-bottom: 1px solid var(--border);
        background: var(--bg-soft);
      }
      .settings label {
        display: flex;
        flex-direction: column;
        gap: 0.2em;
        font-size: 0.9em;
      }
      .settings .wide {
        grid-column: 1 / -1;
      }
      .settings textarea {
        min-height: 4em;
      }
      .notice {
        margin: 0.6em 1em 0;
        padding: 0.5em 0.8em;
        border-radius: 8px;
        background: var(--bg-soft);
        font-size: 0.92em;
      }
      .notice.warn {
        border: 1px solid var(--danger);
      }
      .log {
        flex: 1;
        overflow-y: auto;
        padding: 1em;
        display: flex;
        flex-direction: column;
        gap: 0.9em;
      }
      .log > * {
        max-width: 48em;
        width: 100%;
        margin: 0 auto;
      }
      .empty {
        margin: auto;
        text-align: center;
        color: var(--fg-soft);
      }
      .composer {
        border-top: 1px solid var(--border);
        padding: 0.6em 1em 0.9em;
      }
      .composer form {
        display: flex;
        gap: 0.5em;
        align-items: flex-end;
        max-width: 48em;
        margin: 0 auto;
      }
      .composer textarea {
        flex: 1;
        resize: none;
        min-height: 2.6em;
        max-height: 40vh;
      }
      .meter {
        max-width: 48em;
        margin: 0.35em auto 0;
        display: flex;
        align-items: center;
        gap: 0.5em;
        font-size: 0.8em;
        color: var(--fg-soft);
      }
      meter {
        flex: 0 1 10em;
      }
    `,
  ];

  declare conversation: Conversation;
  /** The models the user can pick: those that can answer now, and the echo engine. */
  declare models: CatalogModel[];
  /** The host's status (load progress). */
  declare host: HostStatus | null;
  /** The echo engine's pause per token, for trying streaming and Stop without a GPU. */
  declare private echoDelay: number;
  declare private showSettings: boolean;
  /** The message whose reply is streaming in, or -1. */
  declare private streamingIndex: number;
  #abort: AbortController | undefined;
  #lastSave = 0;

  constructor() {
    super();
    this.models = [];
    this.host = null;
    this.echoDelay = 0;
    this.showSettings = false;
    this.streamingIndex = -1;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('keydown', this.#onEscape);
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    removeEventListener('keydown', this.#onEscape);
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Another conversation was opened while a reply streamed into this one: it goes on, saved.
    if (changed.has('conversation') && changed.get('conversation') && this.#abort) {
      this.#abort = undefined;
      this.streamingIndex = -1;
    }
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('conversation')) {
      const composer = this.renderRoot.querySelector<HTMLTextAreaElement>('#composer');
      if (composer) composer.value = this.conversation.draft;
      this.#scrollToEnd();
    }
  }

  /** Esc stops the reply that is streaming in. */
  readonly #onEscape = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && this.#abort) this.stop();
  };

  get #streaming(): boolean {
    return this.streamingIndex >= 0;
  }

  /** The model of the conversation, as the catalogue knows it. */
  get #model(): CatalogModel | undefined {
    return this.models.find((m) => m.id === this.conversation.model);
  }

  #scrollToEnd(): void {
    const log = this.renderRoot.querySelector('.log');
    if (log) log.scrollTop = log.scrollHeight;
  }

  async #save(): Promise<void> {
    this.conversation.updated = Date.now();
    this.#lastSave = Date.now();
    await saveConversation(this.conversation);
    this.dispatchEvent(
      new CustomEvent('conversation-changed', {
        detail: this.conversation,
        bubbles: true,
        composed: true,
      }),
    );
  }

  /** Keeps what the user is typing (a reload must not lose it). */
  #onInput(event: Event): void {
    this.conversation.draft = (event.target as HTMLTextAreaElement).value;
    void saveConversation(this.conversation);
    this.requestUpdate();
  }

  #onComposerKey(event: KeyboardEvent): void {
    // An input method composing (Japanese, Chinese…) uses Enter to pick its text: not to send.
    if (event.isComposing || event.keyCode === 229) return;
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void this.send();
    }
  }

  /** Sends the composer's text as the user's next message. */
  async send(): Promise<void> {
    const composer = this.renderRoot.querySelector<HTMLTextAreaElement>('#composer');
    const content = composer?.value.trim() ?? '';
    if (content === '' || this.#streaming) return;
    const c = this.conversation;
    if (c.messages.length === 0) c.title = titleFrom(content);
    c.messages.push({ role: 'user', content });
    c.draft = '';
    if (composer) composer.value = '';
    await this.#reply();
  }

  /** Stops the reply that is streaming in; what came is kept. */
  stop(): void {
    this.#abort?.abort();
  }

  /** Writes the last reply again. */
  async #regenerate(): Promise<void> {
    const c = this.conversation;
    if (c.messages.at(-1)?.role === 'assistant') c.messages.pop();
    await this.#reply();
  }

  /** The user edited message `index`: what followed it goes, and a new reply comes. */
  async #edit(index: number, content: string): Promise<void> {
    const c = this.conversation;
    c.messages = [...c.messages.slice(0, index), { role: 'user', content }];
    if (index === 0) c.title = titleFrom(content);
    await this.#reply();
  }

  /** Asks the model for the next reply and streams it in. */
  async #reply(): Promise<void> {
    const c = this.conversation;
    const { model, settings } = c;
    const messages = outgoingMessages(c);
    const reply: Message = { role: 'assistant', content: '', model };
    c.messages.push(reply);
    const index = c.messages.length - 1;
    const abort = new AbortController();
    this.#abort = abort;
    this.streamingIndex = index;
    await this.#save();
    this.#scrollToEnd();
    let first: number | null = null;
    let last = 0;
    try {
      const events = streamChat(
        {
          model,
          messages,
          temperature: settings.temperature,
          ...(settings.max_tokens !== null && { max_completion_tokens: settings.max_tokens }),
          ...(model === ECHO_MODEL_ID && this.echoDelay > 0 && { echo_delay_ms: this.echoDelay }),
        },
        abort.signal,
      );
      for await (const event of events) {
        if (event.type === 'content' || event.type === 'reasoning') {
          first ??= performance.now();
          last = performance.now();
          if (event.type === 'content') reply.content += event.text;
          else reply.reasoning = (reply.reasoning ?? '') + event.text;
        } else if (event.type === 'finish') {
          reply.finish_reason = event.reason;
        } else {
          reply.stats = {
            usage: event.usage,
            tokens_per_s: replySpeed(event.usage.completion_tokens, first, last),
          };
        }
        if (this.conversation === c) this.#refreshStreaming();
        if (Date.now() - this.#lastSave > SAVE_EVERY_MS) void saveConversation(c);
      }
    } catch (err) {
      if (abort.signal.aborted) {
        reply.stopped = true;
      } else {
        const error = err instanceof ApiError ? err : new ApiError(0, null, String(err));
        reply.error = {
          message: error.message || 'The request failed.',
          code: error.code,
        };
      }
    } finally {
      if (this.#abort === abort) {
        this.#abort = undefined;
        this.streamingIndex = -1;
      }
      c.updated = Date.now();
      await saveConversation(c);
      this.dispatchEvent(
        new CustomEvent('conversation-changed', { detail: c, bubbles: true, composed: true }),
      );
      this.requestUpdate();
    }
  }

  /** Re-renders the streaming reply at most once a frame. */
  #frame = 0;
  #refreshStreaming(): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      const log = this.renderRoot.querySelector('.log');
      const atEnd = !log || log.scrollHeight - log.scrollTop - log.clientHeight < 80;
      this.requestUpdate();
      void this.updateComplete.then(() => {
        this.renderRoot.querySelector<ChatMessage>('chat-message[streaming]')?.requestUpdate();
        if (atEnd) this.#scrollToEnd();
      });
    });
  }

  #setModel(id: string): void {
    this.conversation.model = id;
    void this.#save();
    this.requestUpdate();
  }

  #setting<K extends keyof Conversation['settings']>(key: K, value: Conversation['settings'][K]) {
    this.conversation.settings[key] = value;
    void this.#save();
    this.requestUpdate();
  }

  /** Drops the oldest messages until the conversation fits in three quarters of the window. */
  #dropOldest(window: number): void {
    const c = this.conversation;
    while (c.messages.length > 1 && contextTokens(c) > window * 0.75) {
      c.messages.shift();
      // Keep the conversation starting with the user.
      while (c.messages[0]?.role === 'assistant') c.messages.shift();
      // The exact count of a kept reply includes what was dropped: it no longer holds.
      for (const m of c.messages) delete m.stats;
    }
    void this.#save();
    this.requestUpdate();
  }

  #startFromLast(): void {
    const c = this.conversation;
    const lastUser = [...c.messages].reverse().find((m) => m.role === 'user');
    this.dispatchEvent(
      new CustomEvent('new-conversation', {
        detail: {
          model: c.model,
          settings: { ...c.settings },
          draft: lastUser?.content ?? '',
        },
        bubbles: true,
        composed: true,
      }),
    );
  }

  protected override render() {
    const c = this.conversation;
    const model = this.#model;
    const window = model?.context_window ?? 0;
    const used = contextTokens(c, c.draft);
    const outgrown = window > 0 && used > window;
    const remote = leavesFor(model);
    return html`
      <div class="bar">
        <label for="model">Model</label>
        <select
          id="model"
          @change=${(e: Event) => this.#setModel((e.target as HTMLSelectElement).value)}
        >
          ${
            model
              ? nothing
              : html`<option value=${c.model} selected>${c.model} (not on this device)</option>`
          }
          ${this.models.map(
            (m) =>
              html`<option value=${m.id} ?selected=${m.id === c.model}>${optionText(m)}</option>`,
          )}
        </select>
        <button
          aria-expanded=${this.showSettings ? 'true' : 'false'}
          aria-controls="settings"
          @click=${() => (this.showSettings = !this.showSettings)}
        >
          Settings
        </button>
        ${this.#renderLoading()}
      </div>
      ${this.showSettings ? this.#renderSettings() : nothing}
      ${
        c.model === ECHO_MODEL_ID
          ? html`<p class="notice">
              <strong>Test engine.</strong> The echo engine repeats your message; it is not a
              language model.
              <button class="link" @click=${() => this.#emit('show-models')}>
                Get a real model
              </button>
            </p>`
          : nothing
      }
      ${
        remote
          ? html`<p class="notice leaves" role="note">
              <strong>Messages in this conversation go to ${remote}.</strong> They leave this device
              for the server ${model?.server?.name ?? ''} you added in Settings.
            </p>`
          : nothing
      }
      ${
        model || this.models.length === 0
          ? nothing
          : html`<p class="notice warn" role="alert">
              ${c.model} is not on this device: pick another model, or download it.
            </p>`
      }
      ${
        outgrown
          ? html`<div class="notice warn" role="alert">
              This conversation is longer than the model's context window (about
              ${used.toLocaleString()} of ${window.toLocaleString()} tokens): the next reply would
              fail.
              <button @click=${() => this.#dropOldest(window)}>Drop the oldest messages</button>
              <button @click=${() => this.#startFromLast()}>
                New conversation from the last message
              </button>
            </div>`
          : nothing
      }
      <div class="log" role="log" aria-label="Messages">
        ${
          c.messages.length === 0
            ? html`<p class="empty">
                ${remote ? `Ask anything. It goes to ${remote}.` : 'Ask anything. Nothing leaves this device.'}
              </p>`
            : c.messages.map(
                (m, i) =>
                  html`<chat-message
                    .message=${m}
                    ?last=${i === c.messages.length - 1}
                    ?streaming=${i === this.streamingIndex}
                    @edit=${(e: CustomEvent<{ content: string }>) => this.#edit(i, e.detail.content)}
                    @regenerate=${() => this.#regenerate()}
                  ></chat-message>`,
              )
        }
      </div>
      <div class="composer">
        <form
          @submit=${(e: Event) => {
            e.preventDefault();
            void this.send();
          }}
        >
          <label class="sr-only" for="composer">Message</label>
          <textarea
            id="composer"
            rows="2"
            placeholder="Message (Enter sends, Shift+Enter for a new line)"
            @input=${this.#onInput}
            @keydown=${this.#onComposerKey}
          ></textarea>
          ${
            this.#streaming
              ? html`<button type="button" class="danger" @click=${() => this.stop()}>Stop</button>`
              : html`<button type="submit" class="primary" ?disabled=${!model}>Send</button>`
          }
        </form>
        ${
          window > 0
            ? html`<div class="meter">
                <label for="context">Context</label>
                <meter
                  id="context"
                  min="0"
                  max=${window}
                  value=${Math.min(used, window)}
                  high=${window * 0.9}
                ></meter>
                <span>${used.toLocaleString()} of ${window.toLocaleString()} tokens</span>
              </div>`
            : nothing
        }
      </div>
    `;
  }

  #emit(name: string): void {
    this.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true }));
  }

  #renderLoading() {
    const loading = this.host?.loading;
    if (loading && loading.model === this.conversation.model) {
      return html`<span class="muted" role="status">
        Loading: ${loading.phase} ${Math.round(loading.progress * 100)} %
      </span>`;
    }
    if (this.host?.loaded_model === this.conversation.model) {
      return html`<span class="badge ok">loaded</span>`;
    }
    return nothing;
  }

  #renderSettings() {
    const s = this.conversation.settings;
    return html`<div class="settings" id="settings">
      <label class="wide"
        >System prompt
        <textarea
          .value=${s.system}
          placeholder="How the model should behave in this conversation"
          @input=${(e: Event) => this.#setting('system', (e.target as HTMLTextAreaElement).value)}
        ></textarea>
      </label>
      <label
        >Temperature
        <input
          type="number"
          min="0"
          max="2"
          step="0.1"
          .value=${String(s.temperature)}
          @input=${(e: Event) => {
            const value = typedNumber((e.target as HTMLInputElement).value);
            if (value !== null && value >= 0 && value <= 2) this.#setting('temperature', value);
          }}
          @change=${(e: Event) => {
            const value = Number((e.target as HTMLInputElement).value);
            if (Number.isFinite(value))
              this.#setting('temperature', Math.min(2, Math.max(0, value)));
          }}
        />
      </label>
      <label
        >Maximum length (tokens)
        <input
          type="number"
          min="1"
          step="1"
          placeholder="the model's limit"
          .value=${s.max_tokens === null ? '' : String(s.max_tokens)}
          @input=${(e: Event) => {
            const raw = (e.target as HTMLInputElement).value;
            const value = typedNumber(raw);
            if (raw === '') this.#setting('max_tokens', null);
            else if (value !== null && Number.isInteger(value) && value >= 1)
              this.#setting('max_tokens', value);
          }}
          @change=${(e: Event) => {
            const raw = (e.target as HTMLInputElement).value;
            const value = Math.floor(Number(raw));
            this.#setting('max_tokens', raw === '' || !(value >= 1) ? null : value);
          }}
        />
      </label>
      ${
        this.conversation.model === ECHO_MODEL_ID
          ? html`<label
              >Delay per token, ms (test engine)
              <input
                type="number"
                min="0"
                max="10000"
                step="10"
                .value=${String(this.echoDelay)}
                @input=${(e: Event) => {
                  const value = typedNumber((e.target as HTMLInputElement).value);
                  if (value !== null && value >= 0 && value <= 10000) this.echoDelay = value;
                }}
                @change=${(e: Event) =>
                  (this.echoDelay = Math.min(
                    10000,
                    Math.max(0, Number((e.target as HTMLInputElement).value) || 0),
                  ))}
              />
            </label>`
          : nothing
      }
    </div>`;
  }
}

/** A model as the picker lists it: a server's model says that it leaves the device, and for where. */
export function optionText(m: CatalogModel): string {
  if (m.id === ECHO_MODEL_ID) return 'Echo — a test engine, not a language model';
  const remote = leavesFor(m);
  return remote ? `${m.id} — leaves this device (${remote})` : m.id;
}

customElements.define('chat-view', ChatView);

declare global {
  interface HTMLElementTagNameMap {
    'chat-view': ChatView;
  }
}
