/**
 * @module
 * src/app/chat/ is one conversation on screen: this view (its bar in chat-bar.ts, the replies it
 * streams in reply-stream.ts, the composer in composer/, the first run in first-run/), its
 * messages (markdown/ renders replies), the model picker's models, options and sampling fields,
 * the request it sends and reply stats. It imports shared/, conversations/, models/ and documents/.
 *
 * `<chat-view>`: one conversation. Its bar (title, model, Chat options), the messages, the
 * context meter, and the composer: the send key is the user's choice (Enter by default, never
 * while an input method is composing), Esc stops. Replies stream in over the API like any
 * client's; what the user typed is kept in the conversation until it is sent, and a failed reply
 * keeps the message that asked for it. Editing a message or asking for a reply again keeps the
 * old version. A model of a server the user added is marked, in the picker and above the
 * messages, as leaving this device for the server's host. An empty conversation with no real
 * model on the device shows the first-run card instead of a dead end. The element renders; the
 * replies' stream and the first run's decisions live in reactive controllers.
 */
import { html, LitElement, nothing, type PropertyValues } from 'lit';
import { ECHO_MODEL_ID } from '../../models/models';
import type { HostStatus } from '../../protocol/host/status';
import { leavesFor, type CatalogModel } from '../shared/api-client';
import { contextTokens, titleFrom, type Conversation } from '../conversations/conversation';
import './chat-message';
import './chat-options';
import { renderBar } from './chat-bar';
import { imagesBlocked, imagesNote } from './composer/image-checks';
import { NO_MODEL, rememberPicked } from './chat-models';
import { Composer } from './composer/composer';
import { FirstRunController } from './first-run/first-run-controller';
import { ReplyStreamController } from './reply-stream';
import { shared } from '../shared/styles';
import { chatViewStyles } from './chat-view-styles';

export { optionText } from './chat-bar';

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
    scrolledUp: { state: true },
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
  /** The user scrolled up from the latest message. */
  declare private scrolledUp: boolean;
  /** The replies: asking, streaming in, Stop, and saving the conversation. */
  readonly #replies = new ReplyStreamController(this, {
    echoDelay: () => this.echoDelay,
    seesImages: () => this.#model?.vision !== false,
    atEnd: () => this.#atEnd(),
    scrollToEnd: () => this.#scrollToEnd(),
  });
  /** The first-run card, and a message that waits for a model. */
  readonly #firstRun = new FirstRunController(this, this.#replies);
  readonly #composer = new Composer(this);

  constructor() {
    super();
    this.models = [];
    this.catalog = [];
    this.checking = false;
    this.host = null;
    this.echoDelay = 0;
    this.showSettings = false;
    this.scrolledUp = false;
  }

  protected override willUpdate(changed: PropertyValues<this>): void {
    // Another conversation was opened while a reply streamed into this one: it goes on, saved.
    if (changed.has('conversation') && changed.get('conversation')) this.#replies.letGo();
  }

  protected override updated(changed: PropertyValues<this>): void {
    if (changed.has('conversation')) {
      this.#composer.showDraft(this.conversation.draft);
      this.#scrollToEnd();
    }
  }

  /** The model of the conversation, as the catalogue knows it. */
  get #model(): CatalogModel | undefined {
    return this.models.find((m) => m.id === this.conversation.model);
  }

  focusComposer(): void {
    this.#composer.focus();
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

  /** Sends the composer's text as the user's next message. */
  async send(): Promise<void> {
    const content = this.#composer.element?.value.trim() ?? '';
    const images = [...this.#composer.images];
    if (content === '' && images.length === 0) return;
    const blocked = imagesBlocked(this.#model, images);
    if (this.#replies.streaming || !this.#canSend || blocked !== null) return;
    const c = this.conversation;
    if (c.messages.length === 0) c.title = titleFrom(content || 'Image');
    c.messages.push({ role: 'user', content, ...(images.length > 0 && { images }) });
    c.draft = '';
    this.#composer.clearImages();
    this.#composer.show('');
    // No model chosen yet: the message is kept, and answered once one is ready (never by the
    // echo test engine in its place).
    if (c.model === NO_MODEL) {
      await this.#replies.save();
      this.requestUpdate();
      await this.updateComplete;
      this.#scrollToEnd();
      return;
    }
    await this.#replies.reply();
  }

  /** Stops the reply that is streaming in; what came is kept, and the composer has focus. */
  stop(): void {
    this.#replies.stop();
  }

  /** The user picked `id` in the picker: new conversations start with it too. */
  #pick(id: string): void {
    rememberPicked(id);
    this.#firstRun.setModel(id);
  }

  #setSettings(patch: Partial<Conversation['settings']>) {
    Object.assign(this.conversation.settings, patch);
    void this.#replies.save();
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
    void this.#replies.save();
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
    const canSend = this.#canSend;
    return html`
      ${renderBar(
        {
          conversation: c,
          model,
          models: this.models,
          checking: this.checking,
          canSend,
          showSettings: this.showSettings,
          host: this.host,
        },
        {
          emit: (name) => this.#emit(name),
          pick: (id) => this.#pick(id),
          toggleOptions: () => this.#showOptions(!this.showSettings),
        },
      )}
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
        c.model === ECHO_MODEL_ID && !this.#firstRun.echoHintDismissed && !this.#firstRun.shown
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
                @click=${() => this.#firstRun.dismissEchoHint()}
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
              ? this.#firstRun.shown
                ? this.#firstRun.render()
                : html`<p class="empty">
                    ${remote ? `Ask anything. It goes to ${remote}.` : 'Ask anything. Nothing leaves this device.'}
                  </p>`
              : c.messages.map((m, i) => {
                  const ordinal = ++ordinals[m.role];
                  return html`<chat-message
                    .message=${m}
                    .ordinal=${ordinal}
                    ?last=${i === c.messages.length - 1}
                    ?streaming=${i === this.#replies.index}
                    ?busy=${this.#replies.streaming}
                    @edit=${(e: CustomEvent<{ content: string }>) => this.#replies.edit(i, e.detail.content)}
                    @regenerate=${() => this.#replies.regenerate(i)}
                    @version=${(e: CustomEvent<{ to: number }>) => this.#replies.showVersion(i, e.detail.to)}
                    @continue=${() => this.#replies.continue()}
                  ></chat-message>`;
                })
          }
          ${this.#firstRun.awaiting ? this.#firstRun.render() : nothing}
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
      ${this.#composer.render({
        streaming: this.#replies.streaming,
        canSend,
        window,
        used,
        blocked: imagesBlocked(model, this.#composer.images),
        note: imagesNote(model, c, this.#composer.images),
      })}
    `;
  }

  #emit(name: string): void {
    this.dispatchEvent(new CustomEvent(name, { bubbles: true, composed: true }));
  }
}

customElements.define('chat-view', ChatView);

declare global {
  interface HTMLElementTagNameMap {
    'chat-view': ChatView;
  }
}
