/**
 * @module
 * The replies of `<chat-view>`'s conversation: asking the model (a new reply, Regenerate, an
 * edit's Save, Continue), streaming its answer in over the API like any client, Stop (and Esc),
 * and saving as it comes (a reload keeps what had come). A reply that fails keeps its error,
 * one that is stopped keeps what came and is counted; the focus and the scroll follow the reply
 * without leaving the user stranded when Stop goes. The view renders; this holds the stream.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { ApiError, streamChat, type OutgoingMessage } from '../shared/api-client';
import {
  editMessage,
  fileSearchOf,
  outgoingMessages,
  replyAgain,
  showVersion,
  type Conversation,
  type Message,
} from '../conversations/conversation';
import { saveConversation } from '../conversations/conversation-store';
import type { ChatMessage } from './chat-message';
import { chatRequest, withoutImages } from './chat-request';
import { replyStats } from './reply-stats';

/** How often a streaming reply is written to IndexedDB (a reload keeps what had come). */
const SAVE_EVERY_MS = 1000;
/** What asks the model to go on with a reply that was stopped or cut off. */
const CONTINUE_PROMPT =
  'Continue your last reply exactly where it stopped, without repeating anything.';

/** The view the replies stream into. */
export interface ReplyView extends ReactiveControllerHost, EventTarget {
  readonly conversation: Conversation;
  readonly renderRoot: ParentNode;
  readonly shadowRoot: ShadowRoot | null;
  focusComposer(): void;
}

/** The view's own parts the stream needs: the echo engine's pause, its log's scroll. */
export interface ReplyViewParts {
  /** The echo engine's pause per token (Chat options). */
  echoDelay(): number;
  /** Whether the conversation's model sees images (else it is sent the messages without them). */
  seesImages(): boolean;
  /** Whether the log shows its end, so that new text should keep it so. */
  atEnd(): boolean;
  scrollToEnd(): void;
}

/** Streams the replies of the view's conversation and keeps it saved. */
export class ReplyStreamController implements ReactiveController {
  /** The message whose reply is streaming in, or -1. */
  index = -1;
  #abort: AbortController | undefined;
  #lastSave = 0;
  /** The frame that will re-render the streaming reply, or 0. */
  #frame = 0;

  constructor(
    private readonly view: ReplyView,
    private readonly parts: ReplyViewParts,
  ) {
    view.addController(this);
  }

  hostConnected(): void {
    addEventListener('keydown', this.#onEscape);
  }

  hostDisconnected(): void {
    removeEventListener('keydown', this.#onEscape);
  }

  /** Esc stops the reply that is streaming in (Shift+Esc is the app's "focus the composer"). */
  readonly #onEscape = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && !event.shiftKey && this.#abort) this.stop();
  };

  get streaming(): boolean {
    return this.index >= 0;
  }

  /** Another conversation was opened while a reply streamed into this one: it goes on, saved. */
  letGo(): void {
    if (!this.#abort) return;
    this.#abort = undefined;
    this.index = -1;
  }

  /** Stops the reply that is streaming in; what came is kept, and the composer has focus. */
  stop(): void {
    this.#abort?.abort();
    this.view.focusComposer();
  }

  /** Saves the conversation and tells the app (`conversation-changed`). */
  async save(): Promise<void> {
    this.view.conversation.updated = Date.now();
    this.#lastSave = Date.now();
    await saveConversation(this.view.conversation);
    this.view.dispatchEvent(
      new CustomEvent('conversation-changed', {
        detail: this.view.conversation,
        bubbles: true,
        composed: true,
      }),
    );
  }

  /** Writes reply `index` again; the old one stays as a version. */
  async regenerate(index: number): Promise<void> {
    if (this.streaming) return;
    await this.reply(replyAgain(this.view.conversation, index));
  }

  /** The user edited message `index`: a new version of it, and a new reply. */
  async edit(index: number, content: string): Promise<void> {
    if (this.streaming) return;
    editMessage(this.view.conversation, index, content);
    await this.reply(undefined, true);
  }

  async showVersion(index: number, version: number): Promise<void> {
    if (this.streaming) return;
    showVersion(this.view.conversation, index, version);
    await this.save();
    this.view.requestUpdate();
  }

  /** Goes on with the last reply, which was stopped or cut off by the length limit. */
  async continue(): Promise<void> {
    const c = this.view.conversation;
    const reply = c.messages.at(-1);
    if (this.streaming || reply?.role !== 'assistant') return;
    const messages: OutgoingMessage[] = [
      ...outgoingMessages(c),
      { role: 'user', content: CONTINUE_PROMPT },
    ];
    delete reply.stopped;
    delete reply.finish_reason;
    delete reply.error;
    // Not searched again: the continue prompt is no question, and the reply keeps its sources.
    await this.#stream(reply, messages, true, false);
  }

  /** Asks the model for the next reply (into `reply`, when it was made already) and streams it in. */
  async reply(reply?: Message, fromMessage = reply !== undefined): Promise<void> {
    const c = this.view.conversation;
    const messages = outgoingMessages(c);
    const target = reply ?? { role: 'assistant', content: '' };
    target.model = c.model;
    if (!reply) c.messages.push(target);
    await this.#stream(target, messages, fromMessage);
  }

  /** Streams the model's answer to `messages` onto the end of `reply` (the last message). */
  async #stream(
    reply: Message,
    messages: OutgoingMessage[],
    fromMessage: boolean,
    search = true,
  ): Promise<void> {
    const view = this.view;
    const c = view.conversation;
    const { model, settings } = c;
    const index = c.messages.length - 1;
    const abort = new AbortController();
    this.#abort = abort;
    this.index = index;
    view.requestUpdate();
    // A reply asked for from a message (Regenerate, an edit's Save, Continue): that button goes
    // while the reply streams, so Stop takes the focus as it appears (and gives it to the
    // composer after).
    if (fromMessage) {
      await view.updateComplete;
      view.renderRoot.querySelector<HTMLElement>('.composer .danger')?.focus();
    }
    await this.save();
    this.parts.scrollToEnd();
    // A continued reply's stats so far: its new part adds to them.
    const earlier = reply.stats;
    let tokens = 0;
    let reported = false;
    let first: number | null = null;
    let last = 0;
    try {
      const events = streamChat(
        chatRequest(
          model,
          settings,
          this.parts.seesImages() ? messages : withoutImages(messages),
          this.parts.echoDelay(),
          search ? fileSearchOf(c) : undefined,
        ),
        abort.signal,
      );
      for await (const event of events) {
        if (event.type === 'file_search') {
          reply.sources = event.search.results.map(
            ({ file_id, filename, text, page, heading }) => ({
              file_id,
              filename,
              text,
              ...(page !== undefined && { page }),
              ...(heading !== undefined && { heading }),
            }),
          );
        } else if (event.type === 'content' || event.type === 'reasoning') {
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
        if (view.conversation === c) this.#refreshStreaming();
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
      const atEnd = this.parts.atEnd();
      if (this.#abort === abort) {
        this.#abort = undefined;
        this.index = -1;
        view.requestUpdate();
      }
      // The reply's last text and its actions come with the render this schedules: scrolled in
      // the same turn, so that nothing reads the page between the two.
      if (atEnd) void this.#endInView();
      c.updated = Date.now();
      await saveConversation(c);
      view.dispatchEvent(
        new CustomEvent('conversation-changed', { detail: c, bubbles: true, composed: true }),
      );
      view.requestUpdate();
      // Stop goes when the reply ends: its focus moves to the composer, not to the page.
      if (hadStopFocus || (fromMessage && this.#focusLost())) {
        await view.updateComplete;
        view.focusComposer();
      }
    }
  }

  /** Scrolls to the end once the view and its messages have rendered what changed. */
  async #endInView(): Promise<void> {
    await this.view.updateComplete;
    const messages = this.view.renderRoot.querySelectorAll<ChatMessage>('chat-message');
    await Promise.all([...messages].map((m) => m.updateComplete));
    this.parts.scrollToEnd();
  }

  #stopHasFocus(): boolean {
    return this.view.shadowRoot?.activeElement?.classList.contains('danger') === true;
  }

  /** Focus fell to the page (the element that had it was removed). */
  #focusLost(): boolean {
    return document.activeElement === document.body || document.activeElement === null;
  }

  /** Re-renders the streaming reply at most once a frame. */
  #refreshStreaming(): void {
    if (this.#frame) return;
    this.#frame = requestAnimationFrame(() => {
      this.#frame = 0;
      const atEnd = this.parts.atEnd();
      this.view.requestUpdate();
      void this.view.updateComplete.then(async () => {
        const streaming =
          this.view.renderRoot.querySelector<ChatMessage>('chat-message[streaming]');
        streaming?.requestUpdate();
        // Scrolled once the new text is in place, not before: else it ends below the fold.
        await streaming?.updateComplete;
        if (atEnd) this.parts.scrollToEnd();
      });
    });
  }
}
