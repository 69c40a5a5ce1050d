/**
 * @module
 * `<chat-view>`: one conversation. Its bar (title, model, Chat options), the messages, the
 * context meter, and the composer: the send key is the user's choice (Enter by default, never
 * while an input method is composing), Esc stops. Replies stream in over the API like any
 * client's; what the user typed is kept in the conversation until it is sent, and a failed reply
 * keeps the message that asked for it. Editing a message or asking for a reply again keeps the
 * old version. A model of a server the user added is marked, in the picker and above the
 * messages, as leaving this device for the server's host. An empty conversation with no real
 * model on the device shows the first-run card instead of a dead end.
 */
import { css, html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../openai/models';
import type { HostStatus } from '../openai/status';
import {
  ApiError,
  leavesFor,
  streamChat,
  type CatalogModel,
  type OutgoingMessage,
} from './api-client';
import {
  contextTokens,
  editMessage,
  outgoingMessages,
  replyAgain,
  showVersion,
  titleFrom,
  type Conversation,
  type Message,
} from './conversation';
import { saveConversation } from './conversation-store';
import type { ChatMessage } from './chat-message';
import './chat-message';
import './first-run';
import { describeModel } from './model-info';
import { isSendKey, preferences } from './preferences';
import { replySpeed } from './speed';
import { typedNumber } from './typed-number';
import { shared } from './styles';

/** How often a streaming reply is written to IndexedDB (a reload keeps what had come). */
const SAVE_EVERY_MS = 1000;
/** What asks the model to go on with a reply that was stopped or cut off. */
const CONTINUE_PROMPT =
  'Continue your last reply exactly where it stopped, without repeating anything.';
/** The composer grows with its text up to this share of the conversation's height. */
const COMPOSER_MAX_SHARE = 0.4;
/** Remembered answers to the one-line hints ("not now"). */
const ECHO_HINT_KEY = 'hearth:echo-hint-dismissed';
const FIRST_RUN_KEY = 'hearth:first-run-dismissed';

function remembered(key: string): boolean {
  try {
    return localStorage.getItem(key) === '1';
  } catch {
    return false;
  }
}

function remember(key: string): void {
  try {
    localStorage.setItem(key, '1');
  } catch {
    // Storage blocked: the hint stays away for this page only.
  }
}

/**
 * @fires conversation-changed - `detail: Conversation`, after it was saved.
 * @fires new-conversation - `detail: {model, settings, draft}`: start another from these.
 * @fires show-models - the user wants the model manager.
 * @fires open-drawer - the user wants the conversations and views (a phone's menu).
 * @fires catalog-stale - a model was downloaded here (the first-run card).
 */
export class ChatView extends LitElement {
  static override properties = {
    conversation: { attribute: false },
    models: { attribute: false },
    catalog: { attribute: false },
    checking: { type: Boolean },
    host: { attribute: false },
    echoDelay: { state: true },
    showSettings: { state: true },
    streamingIndex: { state: true },
    scrolledUp: { state: true },
    echoHintDismissed: { state: true },
    firstRunDismissed: { state: true },
  };

  static override styles = [
    shared,
    css`
      :host {
        display: flex;
        flex-direction: column;
        height: 100%;
        min-height: 0;
        position: relative;
      }
      .bar {
        display: flex;
        gap: 0.5em;
        align-items: center;
        padding: 0.45em 1em;
        border-bottom: 1px solid var(--border);
        min-width: 0;
      }
      .bar h2 {
        font-size: 1em;
        margin: 0 0.5em 0 0;
        white-space: nowrap;
        overflow: hidden;
        text-overflow: ellipsis;
        flex: 0 1 auto;
        min-width: 3em;
      }
      .bar select {
        flex: 0 1 24em;
        min-width: 0;
        max-width: 28em;
      }
      .bar .options {
        margin-left: auto;
        white-space: nowrap;
      }
      .menu {
        display: none;
      }
      /* The conversation's options float over the messages instead of pushing them down. */
      .settings {
        position: absolute;
        z-index: 5;
        right: 0.6em;
        top: 3em;
        width: min(30em, calc(100% - 1.2em));
        max-height: 70%;
        overflow: auto;
        display: grid;
        grid-template-columns: 1fr 1fr;
        gap: 0.8em;
        padding: 0.9em 1em;
        border: 1px solid var(--border);
        border-radius: var(--radius);
        background: var(--bg-raised);
        box-shadow: 0 6px 24px rgb(0 0 0 / 25%);
      }
      .settings h3 {
        grid-column: 1 / -1;
        margin: 0;
        font-size: 1em;
        display: flex;
        justify-content: space-between;
        align-items: center;
      }
      .settings .field {
        display: flex;
        flex-direction: column;
        gap: 0.2em;
        font-size: 0.9em;
      }
      .settings .help {
        color: var(--fg-soft);
        font-size: 0.85em;
      }
      .settings .wide {
        grid-column: 1 / -1;
      }
      .settings textarea {
        min-height: 4em;
      }
      .notice {
        margin: 0.5em 1em 0;
        padding: 0.4em 0.8em;
        border-radius: 8px;
        background: var(--bg-soft);
        font-size: 0.92em;
      }
      .notice.warn {
        border: 1px solid var(--danger);
      }
      .hint {
        display: flex;
        align-items: center;
        gap: 0.6em;
        white-space: nowrap;
        overflow: hidden;
      }
      .hint span {
        overflow: hidden;
        text-overflow: ellipsis;
        flex: 1;
      }
      .stage {
        flex: 1;
        min-height: 0;
        position: relative;
        display: flex;
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
      .latest {
        position: absolute;
        bottom: 0.7em;
        left: 50%;
        transform: translateX(-50%);
        border-radius: 999px;
        box-shadow: 0 2px 10px rgb(0 0 0 / 20%);
      }
      .composer {
        border-top: 1px solid var(--border);
        padding: 0.5em 1em 0.7em;
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
        overflow-y: auto;
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
      @media (max-width: 720px) {
        .bar {
          padding: 0.35em 0.5em;
          gap: 0.35em;
        }
        .menu {
          display: inline-block;
        }
        /* The title is in the tab and the conversation list; the bar's room is the model's. */
        .bar h2,
        .bar label {
          position: absolute;
          width: 1px;
          height: 1px;
          overflow: hidden;
          clip-path: inset(50%);
          white-space: nowrap;
        }
        .bar select {
          flex: 1 1 auto;
          max-width: none;
        }
        .settings {
          left: 0.5em;
          right: 0.5em;
          width: auto;
          grid-template-columns: 1fr;
        }
        .notice {
          margin: 0.35em 0.5em 0;
        }
        .log {
          padding: 0.6em 0.5em;
        }
        .composer {
          padding: 0.4em 0.5em 0.5em;
        }
      }
    `,
  ];

  declare conversation: Conversation;
  /** The models the user can pick: those that can answer now, and the echo engine. */
  declare models: CatalogModel[];
  /** The whole catalogue (the first-run card suggests a model from it). */
  declare catalog: CatalogModel[];
  /** The catalogue was not read yet: nothing is said about the model until it is. */
  declare checking: boolean;
  /** The host's status (load progress). */
  declare host: HostStatus | null;
  /** The echo engine's pause per token, for trying streaming and Stop without a GPU. */
  declare private echoDelay: number;
  declare private showSettings: boolean;
  /** The message whose reply is streaming in, or -1. */
  declare private streamingIndex: number;
  /** The user scrolled up from the latest message. */
  declare private scrolledUp: boolean;
  declare private echoHintDismissed: boolean;
  declare private firstRunDismissed: boolean;
  #abort: AbortController | undefined;
  #lastSave = 0;

  constructor() {
    super();
    this.models = [];
    this.catalog = [];
    this.checking = false;
    this.host = null;
    this.echoDelay = 0;
    this.showSettings = false;
    this.streamingIndex = -1;
    this.scrolledUp = false;
    this.echoHintDismissed = remembered(ECHO_HINT_KEY);
    this.firstRunDismissed = remembered(FIRST_RUN_KEY);
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
      const composer = this.#composer;
      if (composer) {
        composer.value = this.conversation.draft;
        this.#grow();
      }
      this.#scrollToEnd();
    }
  }

  /** Esc stops the reply that is streaming in (Shift+Esc is the app's "focus the composer"). */
  readonly #onEscape = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && !event.shiftKey && this.#abort) this.stop();
  };

  get #streaming(): boolean {
    return this.streamingIndex >= 0;
  }

  get #composer(): HTMLTextAreaElement | null {
    return this.renderRoot.querySelector<HTMLTextAreaElement>('#composer');
  }

  /** The model of the conversation, as the catalogue knows it. */
  get #model(): CatalogModel | undefined {
    return this.models.find((m) => m.id === this.conversation.model);
  }

  focusComposer(): void {
    this.#composer?.focus();
  }

  /** Gives focus back to the phone's menu button (the drawer closed). */
  focusMenu(): void {
    this.renderRoot.querySelector<HTMLElement>('.menu')?.focus();
  }

  /** Puts the last reply on the clipboard (a keyboard shortcut). */
  async copyLastReply(): Promise<void> {
    const reply = this.conversation.messages.findLast((m) => m.role === 'assistant');
    if (reply?.content) await navigator.clipboard.writeText(reply.content);
  }

  /** Whether the log shows its end (give or take a line), so that new text should keep it so. */
  #atEnd(): boolean {
    const log = this.renderRoot.querySelector('.log');
    return !log || log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }

  #scrollToEnd(): void {
    const log = this.renderRoot.querySelector('.log');
    if (log) log.scrollTop = log.scrollHeight;
    this.scrolledUp = false;
  }

  #onScroll(event: Event): void {
    const log = event.target as HTMLElement;
    this.scrolledUp = log.scrollHeight - log.scrollTop - log.clientHeight > 80;
  }

  /** The composer grows with its text, up to a share of the conversation's height. */
  #grow(): void {
    const composer = this.#composer;
    if (!composer) return;
    composer.style.height = 'auto';
    const max = Math.max(60, this.clientHeight * COMPOSER_MAX_SHARE);
    composer.style.height = `${Math.min(composer.scrollHeight + 2, max)}px`;
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
    this.#grow();
    this.requestUpdate();
  }

  #onComposerKey(event: KeyboardEvent): void {
    if (isSendKey(event)) {
      event.preventDefault();
      void this.send();
    }
  }

  /** Sends the composer's text as the user's next message. */
  async send(): Promise<void> {
    const composer = this.#composer;
    const content = composer?.value.trim() ?? '';
    if (content === '' || this.#streaming || !this.#canSend) return;
    const c = this.conversation;
    if (c.messages.length === 0) c.title = titleFrom(content);
    c.messages.push({ role: 'user', content });
    c.draft = '';
    if (composer) {
      composer.value = '';
      this.#grow();
    }
    await this.#reply();
  }

  /** Stops the reply that is streaming in; what came is kept, and the composer has focus. */
  stop(): void {
    this.#abort?.abort();
    this.focusComposer();
  }

  /** Writes reply `index` again; the old one stays as a version. */
  async #regenerate(index: number): Promise<void> {
    if (this.#streaming) return;
    await this.#reply(replyAgain(this.conversation, index));
  }

  /** The user edited message `index`: a new version of it, and a new reply. */
  async #edit(index: number, content: string): Promise<void> {
    if (this.#streaming) return;
    editMessage(this.conversation, index, content);
    await this.#reply(undefined, true);
  }

  async #showVersion(index: number, version: number): Promise<void> {
    if (this.#streaming) return;
    showVersion(this.conversation, index, version);
    await this.#save();
    this.requestUpdate();
  }

  /** Goes on with the last reply, which was stopped or cut off by the length limit. */
  async #continue(): Promise<void> {
    const c = this.conversation;
    const reply = c.messages.at(-1);
    if (this.#streaming || reply?.role !== 'assistant') return;
    const messages: OutgoingMessage[] = [
      ...outgoingMessages(c),
      { role: 'user', content: CONTINUE_PROMPT },
    ];
    delete reply.stopped;
    delete reply.finish_reason;
    delete reply.error;
    await this.#stream(reply, messages, true);
  }

  /** Asks the model for the next reply (into `reply`, when it was made already) and streams it in. */
  async #reply(reply?: Message, fromMessage = reply !== undefined): Promise<void> {
    const c = this.conversation;
    const messages = outgoingMessages(c);
    const target = reply ?? { role: 'assistant', content: '' };
    target.model = c.model;
    if (!reply) c.messages.push(target);
    await this.#stream(target, messages, fromMessage);
  }

  /** Streams the model's answer to `messages` onto the end of `reply` (the last message). */
  async #stream(reply: Message, messages: OutgoingMessage[], fromMessage: boolean): Promise<void> {
    const c = this.conversation;
    const { model, settings } = c;
    const index = c.messages.length - 1;
    const abort = new AbortController();
    this.#abort = abort;
    this.streamingIndex = index;
    // A reply asked for from a message (Regenerate, an edit's Save, Continue): that button goes
    // while the reply streams, so Stop takes the focus as it appears (and gives it to the
    // composer after).
    if (fromMessage) {
      await this.updateComplete;
      this.renderRoot.querySelector<HTMLElement>('.composer .danger')?.focus();
    }
    await this.#save();
    this.#scrollToEnd();
    const before = reply.stats?.usage.completion_tokens ?? 0;
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
          // A continued reply counts every part it was written in.
          const usage = { ...event.usage };
          usage.completion_tokens += before;
          reply.stats = {
            usage,
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
      const hadStopFocus = this.#stopHasFocus();
      const atEnd = this.#atEnd();
      if (this.#abort === abort) {
        this.#abort = undefined;
        this.streamingIndex = -1;
      }
      // The reply's last text and its actions come with the render this schedules: scrolled in
      // the same turn, so that nothing reads the page between the two.
      if (atEnd) void this.#endInView();
      c.updated = Date.now();
      await saveConversation(c);
      this.dispatchEvent(
        new CustomEvent('conversation-changed', { detail: c, bubbles: true, composed: true }),
      );
      this.requestUpdate();
      // Stop goes when the reply ends: its focus moves to the composer, not to the page.
      if (hadStopFocus || (fromMessage && this.#focusLost())) {
        await this.updateComplete;
        this.focusComposer();
      }
    }
  }

  /** Scrolls to the end once this view and its messages have rendered what changed. */
  async #endInView(): Promise<void> {
    await this.updateComplete;
    const messages = this.renderRoot.querySelectorAll<ChatMessage>('chat-message');
    await Promise.all([...messages].map((m) => m.updateComplete));
    this.#scrollToEnd();
  }

  #stopHasFocus(): boolean {
    return this.shadowRoot?.activeElement?.classList.contains('danger') === true;
  }

  /** Focus fell to the page (the element that had it was removed). */
  #focusLost(): boolean {
    return document.activeElement === document.body || document.activeElement === null;
  }

  /** Re-renders the streaming reply at most once a frame. */
  #frame = 0;
  #refreshStreaming(): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      const atEnd = this.#atEnd();
      this.requestUpdate();
      void this.updateComplete.then(async () => {
        const streaming = this.renderRoot.querySelector<ChatMessage>('chat-message[streaming]');
        streaming?.requestUpdate();
        // Scrolled once the new text is in place, not before: else it ends below the fold.
        await streaming?.updateComplete;
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

  /**
   * Whether the conversation's model can answer: known to the catalogue, or the echo engine
   * while the catalogue is still being read (it is always there).
   */
  get #canSend(): boolean {
    return (
      this.#model !== undefined || (this.checking && this.conversation.model === ECHO_MODEL_ID)
    );
  }

  /** No real model on the device: a newcomer gets the first-run card in an empty conversation. */
  get #firstRun(): boolean {
    if (this.firstRunDismissed || this.conversation.messages.length > 0) return false;
    if (this.checking) return true;
    // The user picked a server's model: they have a real one.
    if (leavesFor(this.#model)) return false;
    return !this.models.some((m) => m.id !== ECHO_MODEL_ID && !m.leaves_device);
  }

  async #closeOptions(): Promise<void> {
    this.showSettings = false;
    await this.updateComplete;
    this.renderRoot.querySelector<HTMLElement>('.options')?.focus();
  }

  protected override render() {
    const c = this.conversation;
    const model = this.#model;
    // The echo engine has no real context window: a meter against it would mean nothing.
    const window = model && model.id !== ECHO_MODEL_ID ? model.context_window : 0;
    const used = contextTokens(c, c.draft);
    const outgrown = window > 0 && used > window;
    const remote = leavesFor(model);
    const ordinals = { user: 0, assistant: 0 };
    return html`
      <div class="bar">
        <button
          class="menu"
          aria-label="Menu: conversations and views"
          @click=${() => this.#emit('open-drawer')}
        >
          ☰
        </button>
        <h2 id="title" title=${c.title}>${c.title}</h2>
        <label for="model">Model</label>
        <select
          id="model"
          aria-describedby=${this.#canSend ? nothing : 'send-why'}
          @change=${(e: Event) => this.#setModel((e.target as HTMLSelectElement).value)}
        >
          ${
            model
              ? nothing
              : this.checking
                ? html`<option value=${c.model} selected>Checking this device…</option>`
                : html`<option value=${c.model} selected>${c.model} (not on this device)</option>`
          }
          ${this.models.map(
            (m) =>
              html`<option value=${m.id} ?selected=${m.id === c.model}>${optionText(m)}</option>`,
          )}
        </select>
        ${this.#renderLoading()}
        <button
          class="options"
          aria-expanded=${this.showSettings ? 'true' : 'false'}
          aria-controls="settings"
          @click=${() => (this.showSettings ? this.#closeOptions() : (this.showSettings = true))}
        >
          Chat options
        </button>
      </div>
      ${this.showSettings ? this.#renderSettings() : nothing}
      ${
        c.model === ECHO_MODEL_ID && !this.echoHintDismissed && !this.#firstRun
          ? html`<p class="notice hint">
              <span
                ><strong>Echo</strong> is a test engine: it repeats your message, it is not a
                language model.</span
              >
              <button class="link" @click=${() => this.#emit('show-models')}>
                Get a real model
              </button>
              <button
                class="link"
                aria-label="Dismiss the test engine hint"
                @click=${() => {
                  remember(ECHO_HINT_KEY);
                  this.echoHintDismissed = true;
                  this.focusComposer();
                }}
              >
                ✕
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
        model || this.checking || this.models.length === 0
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
      <div class="stage">
        <div class="log" role="log" aria-label="Messages" tabindex="-1" @scroll=${this.#onScroll}>
          ${
            c.messages.length === 0
              ? this.#firstRun
                ? html`<first-run
                    .catalog=${this.catalog}
                    .host=${this.host}
                    ?checking=${this.checking}
                    @dismiss=${() => {
                      remember(FIRST_RUN_KEY);
                      this.firstRunDismissed = true;
                      this.focusComposer();
                    }}
                    @model-ready=${(e: CustomEvent<string>) => {
                      this.#setModel(e.detail);
                      this.#emit('catalog-stale');
                      this.focusComposer();
                    }}
                  ></first-run>`
                : html`<p class="empty">
                    ${remote ? `Ask anything. It goes to ${remote}.` : 'Ask anything. Nothing leaves this device.'}
                  </p>`
              : c.messages.map((m, i) => {
                  const ordinal = ++ordinals[m.role];
                  return html`<chat-message
                    .message=${m}
                    .ordinal=${ordinal}
                    ?last=${i === c.messages.length - 1}
                    ?streaming=${i === this.streamingIndex}
                    ?busy=${this.#streaming}
                    @edit=${(e: CustomEvent<{ content: string }>) => this.#edit(i, e.detail.content)}
                    @regenerate=${() => this.#regenerate(i)}
                    @version=${(e: CustomEvent<{ to: number }>) => this.#showVersion(i, e.detail.to)}
                    @continue=${() => this.#continue()}
                  ></chat-message>`;
                })
          }
        </div>
        ${
          this.scrolledUp
            ? html`<button
                class="latest"
                aria-label="Scroll to the latest message"
                @click=${() => this.#scrollToEnd()}
              >
                ↓ Latest
              </button>`
            : nothing
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
            rows="1"
            placeholder="Message Hearth"
            aria-describedby="send-how"
            @input=${this.#onInput}
            @keydown=${this.#onComposerKey}
          ></textarea>
          ${
            this.#streaming
              ? html`<button type="button" class="danger" @click=${() => this.stop()}>Stop</button>`
              : html`<button
                  type="submit"
                  class="primary"
                  ?disabled=${!this.#canSend}
                  aria-describedby=${this.#canSend ? nothing : 'send-why'}
                >
                  Send
                </button>`
          }
        </form>
        <div class="meter">
          <span id="send-how" class="sr-only">${sendHow()}</span>
          ${
            this.#canSend
              ? nothing
              : html`<span id="send-why">Send needs a model on this device: pick one above.</span>`
          }
          ${
            window > 0
              ? html`<label for="context">Context</label>
                  <meter
                    id="context"
                    min="0"
                    max=${window}
                    value=${Math.min(used, window)}
                    high=${window * 0.9}
                  ></meter>
                  <span>${used.toLocaleString()} of ${window.toLocaleString()} tokens</span>`
              : nothing
          }
        </div>
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
        Loading ${Math.round(loading.progress * 100)} %
      </span>`;
    }
    if (this.host?.loaded_model === this.conversation.model) {
      return html`<span class="badge ok">loaded</span>`;
    }
    return nothing;
  }

  #renderSettings() {
    const s = this.conversation.settings;
    return html`<div class="settings" id="settings" role="group" aria-labelledby="settings-title">
      <h3>
        <span id="settings-title">Chat options</span>
        <button class="link" @click=${() => this.#closeOptions()}>Close</button>
      </h3>
      <div class="field wide">
        <label for="opt-system">System prompt</label>
        <textarea
          id="opt-system"
          aria-describedby="opt-system-help"
          .value=${s.system}
          placeholder="How the model should behave in this conversation"
          @input=${(e: Event) => this.#setting('system', (e.target as HTMLTextAreaElement).value)}
        ></textarea>
        <span class="help" id="opt-system-help"
          >Sent before every message of this conversation, to set the model's role and tone.</span
        >
      </div>
      <div class="field">
        <label for="opt-temperature">Temperature</label>
        <input
          id="opt-temperature"
          aria-describedby="opt-temperature-help"
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
        <span class="help" id="opt-temperature-help"
          >0 gives the likeliest words every time; higher (up to 2) varies more.</span
        >
      </div>
      <div class="field">
        <label for="opt-max-tokens">Maximum length (tokens)</label>
        <input
          id="opt-max-tokens"
          aria-describedby="opt-max-tokens-help"
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
        <span class="help" id="opt-max-tokens-help"
          >A reply stops after this many tokens (Continue goes on); empty: no limit.</span
        >
      </div>
      ${
        this.conversation.model === ECHO_MODEL_ID
          ? html`<div class="field">
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
                  if (value !== null && value >= 0 && value <= 10000) this.echoDelay = value;
                }}
                @change=${(e: Event) =>
                  (this.echoDelay = Math.min(
                    10000,
                    Math.max(0, Number((e.target as HTMLInputElement).value) || 0),
                  ))}
              />
              <span class="help" id="opt-echo-delay-help"
                >Makes the echo engine stream slowly, like a model on a GPU.</span
              >
            </div>`
          : nothing
      }
    </div>`;
  }
}

/** How the composer sends, for screen readers (the send key is a preference). */
function sendHow(): string {
  return preferences().sendKey === 'enter'
    ? 'Enter sends, Shift+Enter starts a new line.'
    : 'Ctrl+Enter sends, Enter starts a new line.';
}

/**
 * A model as the picker lists it, by the name people know it by and its quantisation; a server's
 * model by its id, and that it leaves the device, and for where.
 */
export function optionText(m: CatalogModel): string {
  if (m.id === ECHO_MODEL_ID) return 'Echo (test engine)';
  const remote = leavesFor(m);
  if (remote) return `${m.id} — leaves this device (${remote})`;
  const info = describeModel(m);
  return info.quantisation ? `${info.name} · ${info.quantisation.label}` : info.name;
}

customElements.define('chat-view', ChatView);

declare global {
  interface HTMLElementTagNameMap {
    'chat-view': ChatView;
  }
}
