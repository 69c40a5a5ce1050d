/**
 * @module
 * `<chat-view>`'s composer: the text box, Send (Stop while a reply streams in), and under it the
 * context meter. The box grows with its text up to a share of the conversation's height; the
 * send key is the user's choice (Enter by default, never while an input method is composing);
 * what the user types is kept in the conversation's draft as they type (a reload must not lose
 * it). Sending itself is the view's: it owns the conversation.
 */
import { html, nothing } from 'lit';
import type { Conversation } from '../../conversations/conversation';
import { saveConversation } from '../../conversations/conversation-store';
import { isSendKey, preferences } from '../../shared/preferences';

/** The composer grows with its text up to this share of the conversation's height. */
const COMPOSER_MAX_SHARE = 0.4;

/** The view the composer is in. */
export interface ComposerView {
  readonly conversation: Conversation;
  readonly renderRoot: ParentNode;
  readonly clientHeight: number;
  requestUpdate(): void;
  send(): Promise<void>;
  stop(): void;
}

/** What the composer shows: whether a reply streams in, whether Send can, the context used. */
export interface ComposerState {
  streaming: boolean;
  canSend: boolean;
  /** The model's context window in tokens, 0 where a meter would mean nothing. */
  window: number;
  /** The tokens the conversation and the draft take. */
  used: number;
}

/** The composer's text box and its render. */
export class Composer {
  constructor(private readonly view: ComposerView) {}

  get element(): HTMLTextAreaElement | null {
    return this.view.renderRoot.querySelector<HTMLTextAreaElement>('#composer');
  }

  focus(): void {
    this.element?.focus();
  }

  /** Shows `text` in the box (another conversation's draft, or nothing once sent). */
  show(text: string): void {
    const composer = this.element;
    if (!composer) return;
    composer.value = text;
    this.grow();
  }

  /** The composer grows with its text, up to a share of the conversation's height. */
  grow(): void {
    const composer = this.element;
    if (!composer) return;
    composer.style.height = 'auto';
    const max = Math.max(60, this.view.clientHeight * COMPOSER_MAX_SHARE);
    composer.style.height = `${Math.min(composer.scrollHeight + 2, max)}px`;
  }

  /** Keeps what the user is typing (a reload must not lose it). */
  #onInput(event: Event): void {
    this.view.conversation.draft = (event.target as HTMLTextAreaElement).value;
    void saveConversation(this.view.conversation);
    this.grow();
    this.view.requestUpdate();
  }

  #onKey(event: KeyboardEvent): void {
    if (isSendKey(event)) {
      event.preventDefault();
      void this.view.send();
    }
  }

  render({ streaming, canSend, window, used }: ComposerState) {
    const stop = () => this.view.stop();
    return html`<div class="composer">
      <form
        @submit=${(e: Event) => {
          e.preventDefault();
          void this.view.send();
        }}
      >
        <label class="sr-only" for="composer">Message</label>
        <textarea
          id="composer"
          rows="1"
          placeholder="Message Hearth"
          aria-describedby="send-how"
          @input=${(e: Event) => this.#onInput(e)}
          @keydown=${(e: KeyboardEvent) => this.#onKey(e)}
        ></textarea>
        ${
          streaming
            ? html`<button type="button" class="danger" @click=${stop}>Stop</button>`
            : html`<button
                type="submit"
                class="primary"
                ?disabled=${!canSend}
                aria-describedby=${canSend ? nothing : 'send-why'}
              >
                Send
              </button>`
        }
      </form>
      <div class="meter">
        <span id="send-how" class="sr-only">${sendHow()}</span>
        ${
          canSend
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
    </div>`;
  }
}

/** How the composer sends, for screen readers (the send key is a preference). */
function sendHow(): string {
  return preferences().sendKey === 'enter'
    ? 'Enter sends, Shift+Enter starts a new line.'
    : 'Ctrl+Enter sends, Enter starts a new line.';
}
