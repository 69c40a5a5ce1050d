/**
 * @module
 * src/app/chat/ is one conversation on screen: this view, its messages (markdown/ renders
 * replies), the model picker's models, options and sampling fields, the request it sends, reply
 * stats and the first run. It imports shared/, conversations/ and models/.
 *
 * `<chat-view>`: one conversation. Its bar (title, model, Chat options), the messages, the
 * context meter, and the composer: the send key is the user's choice (Enter by default, never
 * while an input method is composing), Esc stops. Replies stream in over the API like any
 * client's; what the user typed is kept in the conversation until it is sent, and a failed reply
 * keeps the message that asked for it. Editing a message or asking for a reply again keeps the
 * old version. A model of a server the user added is marked, in the picker and above the
 * messages, as leaving this device for the server's host. An empty conversation with no real
 * model on the device shows the first-run card instead of a dead end.
 */
import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../../models/models';
import type { HostStatus } from '../../protocol/host/status';
import {
  ApiError,
  leavesFor,
  streamChat,
  type CatalogModel,
  type OutgoingMessage,
} from '../shared/api-client';
import {
  contextTokens,
  editMessage,
  outgoingMessages,
  replyAgain,
  showVersion,
  titleFrom,
  type Conversation,
  type Message,
} from '../conversations/conversation';
import { saveConversation } from '../conversations/conversation-store';
import type { ChatMessage } from './chat-message';
import './chat-message';
import './chat-options';
import { chatRequest } from './chat-request';
import { defaultModel, NO_MODEL, rememberPicked } from './chat-models';
import './first-run';
import { describeModel } from '../models/model-info';
import { isSendKey, preferences } from '../shared/preferences';
import { replyStats } from './reply-stats';
import { shared } from '../shared/styles';
import { chatViewStyles } from './chat-view-styles';

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
 * @fires new-chat - the user wants a new conversation (a phone's bar: the list is in the drawer).
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

  static override styles = [shared, chatViewStyles];

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
    if (changed.has('models') || changed.has('checking')) this.#answerWaiting();
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
    // No model chosen yet: the message is kept, and answered once one is ready (never by the
    // echo test engine in its place).
    if (c.model === NO_MODEL) {
      await this.#save();
      this.requestUpdate();
      await this.updateComplete;
      this.#scrollToEnd();
      return;
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
    // A continued reply's stats so far: its new part adds to them.
    const earlier = reply.stats;
    let tokens = 0;
    let reported = false;
    let first: number | null = null;
    let last = 0;
    try {
      const events = streamChat(
        chatRequest(model, settings, messages, this.echoDelay),
        abort.signal,
      );
      for await (const event of events) {
        if (event.type === 'content' || event.type === 'reasoning') {
          first ??= performance.now();
          last = performance.now();
          tokens += 1;
          if (event.type === 'content') reply.content += event.text;
          else reply.reasoning = (reply.reasoning ?? '') + event.text;
        } else if (event.type === 'finish') {
          reply.finish_reason = event.reason;
        } else {
          // A continued reply counts every part it was written in.
          reply.stats = replyStats(earlier, { tokens, first, last, usage: event.usage });
          reported = true;
        }
        if (this.conversation === c) this.#refreshStreaming();
        if (Date.now() - this.#lastSave > SAVE_EVERY_MS) void saveConversation(c);
      }
    } catch (err) {
      if (abort.signal.aborted) {
        reply.stopped = true;
        // The model's count never comes for a reply stopped before its end: what came is
        // counted here, and said to be (so that Continue adds to it, not starts from nothing).
        if (!reported && tokens > 0) {
          reply.stats = replyStats(earlier, { tokens, first, last, usage: null });
        }
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

  /** The user picked `id` in the picker: new conversations start with it too. */
  #pick(id: string): void {
    rememberPicked(id);
    this.#setModel(id);
  }

  /** The first-run card: in an empty conversation, or under a message that waits for a model. */
  #renderFirstRun() {
    return html`<first-run
      .catalog=${this.catalog}
      .host=${this.host}
      .checking=${this.checking}
      .waiting=${this.#awaiting}
      @dismiss=${() => {
        remember(FIRST_RUN_KEY);
        this.firstRunDismissed = true;
        this.focusComposer();
      }}
      @model-ready=${(e: CustomEvent<string>) => {
        // A waiting message takes the model once the catalogue lists it as downloaded.
        if (this.#awaiting) this.#ready = e.detail;
        else this.#setModel(e.detail);
        this.#emit('catalog-stale');
        this.focusComposer();
      }}
    ></first-run>`;
  }

  /** The conversation's model is now `id`; a message that waited for one is answered with it. */
  #setModel(id: string): void {
    const waited = this.#awaiting;
    this.conversation.model = id;
    void this.#save();
    this.requestUpdate();
    if (waited && this.#model) void this.#reply();
  }

  /** A message was sent before there was a model: the last one, with no reply yet. */
  get #awaiting(): boolean {
    const c = this.conversation;
    return c.model === NO_MODEL && c.messages.at(-1)?.role === 'user';
  }

  /**
   * A model the first-run card got: the conversation takes it once the catalogue lists it as
   * downloaded, and a waiting message is answered.
   */
  #ready: string | null = null;

  /** Gives a waiting message the model that became ready (the one got, or one on the device). */
  #answerWaiting(): void {
    if (!this.#awaiting || this.#streaming || this.checking) return;
    const ready = this.#ready ?? defaultModel(this.models);
    if (ready === NO_MODEL || !this.models.some((m) => m.id === ready)) return;
    this.#ready = null;
    this.#setModel(ready);
  }

  #setSettings(patch: Partial<Conversation['settings']>) {
    Object.assign(this.conversation.settings, patch);
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
    const { model } = this.conversation;
    // No model yet: a message can still be sent; it waits for one.
    return (
      this.#model !== undefined || model === NO_MODEL || (this.checking && model === ECHO_MODEL_ID)
    );
  }

  /** No real model on the device: a newcomer gets the first-run card in an empty conversation. */
  get #firstRun(): boolean {
    if (this.#awaiting) return true;
    if (this.firstRunDismissed || this.conversation.messages.length > 0) return false;
    if (this.checking) return true;
    // The user picked a server's model: they have a real one.
    if (leavesFor(this.#model)) return false;
    return !this.models.some((m) => m.id !== ECHO_MODEL_ID && !m.leaves_device);
  }

  /**
   * Opens or closes Chat options (it takes the focus as it opens). It pushes the messages down: a
   * log that showed its end still does. `restoreFocus`: back to its button (Esc, Close).
   */
  async #showOptions(open: boolean, restoreFocus = true): Promise<void> {
    const atEnd = this.#atEnd();
    this.showSettings = open;
    await this.updateComplete;
    if (atEnd) this.#scrollToEnd();
    if (!open && restoreFocus) this.renderRoot.querySelector<HTMLElement>('.options')?.focus();
  }

  protected override render() {
    const c = this.conversation;
    const model = this.#model;
    // The echo engine has no real context window: a meter against it would mean nothing.
    const window = model && model.id !== ECHO_MODEL_ID ? model.context_window : 0;
    const used = contextTokens(c, c.draft);
    // A context limit under the window keeps what is sent within it: nothing would fail.
    const limit = c.settings.context_tokens;
    const outgrown = window > 0 && used > window && !(limit !== null && limit < window);
    const remote = leavesFor(model);
    const ordinals = { user: 0, assistant: 0 };
    return html`
      <div class="bar">
        <button
          class="menu"
          aria-label="Menu"
          aria-expanded="false"
          title="Menu"
          @click=${() => this.#emit('open-drawer')}
        >
          ☰
        </button>
        <h2 id="title" title=${c.title}>${c.title}</h2>
        <label for="model">Model</label>
        <select
          id="model"
          aria-describedby=${this.#canSend ? nothing : 'send-why'}
          @change=${(e: Event) => this.#pick((e.target as HTMLSelectElement).value)}
        >
          ${
            model
              ? nothing
              : c.model === NO_MODEL
                ? html`<option value="" selected>
                    ${this.checking ? 'Checking this device…' : 'Choose a model'}
                  </option>`
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
          aria-label="Chat options"
          aria-expanded=${this.showSettings ? 'true' : 'false'}
          aria-controls="settings"
          @click=${() => this.#showOptions(!this.showSettings)}
        >
          <span class="long">Chat options</span><span class="short">Options</span>
        </button>
        <button
          class="new"
          aria-label="New chat"
          title="New chat"
          @click=${() => this.#emit('new-chat')}
        >
          +
        </button>
      </div>
      ${
        this.showSettings
          ? html`<chat-options
              id="settings"
              .settings=${c.settings}
              .conversationId=${c.id}
              .model=${c.model}
              .echoDelay=${this.echoDelay}
              .anchor=${this.renderRoot.querySelector<HTMLElement>('.options')}
              @settings-change=${(e: CustomEvent<Partial<Conversation['settings']>>) =>
                this.#setSettings(e.detail)}
              @echo-delay=${(e: CustomEvent<number>) => (this.echoDelay = e.detail)}
              @close=${(e: CustomEvent<{ restoreFocus: boolean }>) =>
                this.#showOptions(false, e.detail.restoreFocus)}
            ></chat-options>`
          : nothing
      }
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
        model || this.checking || this.models.length === 0 || c.model === NO_MODEL
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
                ? this.#renderFirstRun()
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
          ${this.#awaiting ? this.#renderFirstRun() : nothing}
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
