/**
 * @module
 * `<chat-view>`'s composer: the text box, Send (Stop while a reply streams in), and under it the
 * context meter. The box grows with its text up to a share of the conversation's height; the
 * send key is the user's choice (Enter by default, never while an input method is composing);
 * what the user types is kept in the conversation's draft as they type (a reload must not lose
 * it). Images are attached with a button, by paste or by drop (./attachments.ts), shown as
 * thumbnails that can be removed, and kept with the draft. Sending itself is the view's: it owns
 * the conversation.
 */
import { html, nothing } from 'lit';
import type { Conversation } from '../../conversations/conversation';
import { saveConversation } from '../../conversations/conversation-store';
import { isSendKey, preferences } from '../../shared/preferences';
import { ConversationDocuments, type DocumentsHost } from '../../documents/conversation-documents';
import { renderDocuments } from '../../documents/document-chips';
import { DOCUMENT_EXTENSIONS, DOCUMENT_TYPES, isDocument } from '../../documents/documents-api';
import { EmbeddingOffer } from '../../documents/embedding-offer';
import { IMAGE_TYPES, attachableFiles, readAttachments } from './attachments';

/** What the attach button offers to pick: the images and the documents the chat takes. */
const ACCEPT = [...IMAGE_TYPES, ...DOCUMENT_TYPES, ...DOCUMENT_EXTENSIONS].join(',');

/** The composer grows with its text up to this share of the conversation's height. */
const COMPOSER_MAX_SHARE = 0.4;

/** The view the composer is in (images dropped anywhere on it are attached). */
export interface ComposerView extends DocumentsHost {
  readonly conversation: Conversation;
  readonly renderRoot: ParentNode;
  readonly clientHeight: number;
  readonly updateComplete: Promise<boolean>;
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
  /** Why Send cannot take the images (the model does not see them), or null. */
  blocked: string | null;
  /** What the user should know of the images before sending (a server decides), or null. */
  note: string | null;
}

/** The composer's text box and its render. */
export class Composer {
  /** Why the last files the user gave could not be attached, one sentence each. */
  #refused: string[] = [];
  /** How deep in the view files are being dragged (enter and leave fire for each element). */
  #dragDepth = 0;
  /** The conversation's documents: uploaded, indexed in its store, searched as it asks. */
  readonly documents: ConversationDocuments;
  readonly #offer: EmbeddingOffer;

  constructor(private readonly view: ComposerView) {
    this.documents = new ConversationDocuments(view);
    this.#offer = new EmbeddingOffer(view, this.documents);
    view.addEventListener('dragenter', (e) => this.#onDragEnter(e as DragEvent));
    view.addEventListener('dragleave', (e) => this.#onDragLeave(e as DragEvent));
    view.addEventListener('dragover', (e) => this.#onDragOver(e as DragEvent));
    view.addEventListener('drop', (e) => this.#onDrop(e as DragEvent));
  }

  /** The images attached to the draft. */
  get images(): readonly string[] {
    return this.view.conversation.draftImages ?? [];
  }

  /**
   * Attaches the files that are images the API takes, gives the documents to the conversation's
   * documents, and says why of the others.
   */
  async attach(files: readonly File[]): Promise<void> {
    if (files.length === 0) return;
    // The conversation they were given to, even if another is opened while they are read.
    const c = this.view.conversation;
    const documents = files.filter((f) => !f.type.startsWith('image/') && isDocument(f));
    if (documents.length > 0) void this.documents.attach(documents);
    const { images, refused } = await readAttachments(files.filter((f) => !documents.includes(f)));
    if (images.length > 0) c.draftImages = [...(c.draftImages ?? []), ...images];
    if (c === this.view.conversation) this.#refused = refused;
    void saveConversation(c);
    this.view.requestUpdate();
  }

  /** Forgets the draft's images: it was sent. */
  clearImages(): void {
    delete this.view.conversation.draftImages;
    this.#refused = [];
  }

  /** Shows `text` and the conversation's own images, without the last one's refusals. */
  showDraft(text: string): void {
    if (this.#refused.length > 0) {
      this.#refused = [];
      this.view.requestUpdate();
    }
    this.show(text);
  }

  /** Removes the `index`th image; the focus goes to the next one's Remove, or to the box. */
  #remove(index: number): void {
    const c = this.view.conversation;
    const images = [...(c.draftImages ?? [])];
    images.splice(index, 1);
    if (images.length > 0) c.draftImages = images;
    else delete c.draftImages;
    void saveConversation(c);
    this.view.requestUpdate();
    void this.view.updateComplete.then(() => {
      const buttons = this.view.renderRoot.querySelectorAll<HTMLElement>('.attachments button');
      (buttons[Math.min(index, buttons.length - 1)] ?? this.element)?.focus();
    });
  }

  #onPaste(event: ClipboardEvent): void {
    const files = attachableFiles(event.clipboardData, isDocument);
    if (files.length === 0) return; // text pastes as text
    event.preventDefault();
    void this.attach(files);
  }

  /** Files are dragged over the view: the composer shows where they go. */
  #onDragEnter(event: DragEvent): void {
    if (!hasFiles(event)) return;
    this.#dragDepth += 1;
    if (this.#dragDepth === 1) this.view.requestUpdate();
  }

  #onDragLeave(event: DragEvent): void {
    if (!hasFiles(event) || this.#dragDepth === 0) return;
    // The element entered next had its dragenter first: 0 only once the drag left the view.
    this.#dragDepth -= 1;
    if (this.#dragDepth === 0) this.view.requestUpdate();
  }

  #onDragOver(event: DragEvent): void {
    if (!hasFiles(event) || event.defaultPrevented || !event.dataTransfer) return;
    // Without this the browser would open the picture in the tab instead.
    event.preventDefault();
    event.dataTransfer.dropEffect = 'copy';
  }

  #onDrop(event: DragEvent): void {
    this.#dragDepth = 0;
    this.view.requestUpdate();
    if (!hasFiles(event) || event.defaultPrevented || !event.dataTransfer) return;
    event.preventDefault();
    void this.attach([...event.dataTransfer.files]);
  }

  #onChosen(event: Event): void {
    const input = event.target as HTMLInputElement;
    const files = [...(input.files ?? [])];
    // Cleared, so that choosing the same picture again fires `change` again.
    input.value = '';
    void this.attach(files);
  }

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

  #renderImages() {
    const images = this.images;
    if (images.length === 0) return nothing;
    return html`<ul class="attachments" aria-label="Attached images">
      ${images.map(
        (url, i) =>
          html`<li>
            <img src=${url} alt="Attached image ${i + 1}" />
            <button
              type="button"
              aria-label="Remove image ${i + 1}"
              title="Remove"
              @click=${() => this.#remove(i)}
            >
              ×
            </button>
          </li>`,
      )}
    </ul>`;
  }

  render({ streaming, canSend, window, used, blocked, note }: ComposerState) {
    const stop = () => this.view.stop();
    const sendable = canSend && blocked === null;
    return html`<div class="composer ${this.#dragDepth > 0 ? 'dropping' : ''}">
      ${this.#dragDepth > 0 ? html`<p class="attach-note">Drop images or documents to attach them.</p>` : nothing}
      ${renderDocuments(this.view, this.documents, this.#offer)} ${this.#renderImages()}
      ${
        this.#refused.length > 0
          ? html`<p class="attach-error" role="alert">${this.#refused.join(' ')}</p>`
          : nothing
      }
      ${blocked ? html`<p class="attach-error" id="send-why" role="alert">${blocked}</p>` : nothing}
      ${note ? html`<p class="attach-note">${note}</p>` : nothing}
      <form
        @submit=${(e: Event) => {
          e.preventDefault();
          void this.view.send();
        }}
      >
        <label class="attach button" title="Attach images or documents">
          <span aria-hidden="true">+</span>
          <input
            class="sr-only"
            aria-label="Attach images or documents"
            type="file"
            accept=${ACCEPT}
            multiple
            @change=${(e: Event) => this.#onChosen(e)}
          />
        </label>
        <label class="sr-only" for="composer">Message</label>
        <textarea
          id="composer"
          rows="1"
          placeholder="Message Hearth"
          aria-describedby="send-how"
          @input=${(e: Event) => this.#onInput(e)}
          @keydown=${(e: KeyboardEvent) => this.#onKey(e)}
          @paste=${(e: ClipboardEvent) => this.#onPaste(e)}
        ></textarea>
        ${
          streaming
            ? html`<button type="button" class="danger" @click=${stop}>Stop</button>`
            : html`<button
                type="submit"
                class="primary"
                ?disabled=${!sendable}
                aria-describedby=${sendable ? nothing : 'send-why'}
              >
                Send
              </button>`
        }
      </form>
      <div class="meter">
        <span id="send-how" class="sr-only">${sendHow()}</span>
        ${
          sendable || blocked
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

/** Whether `event` drags files (not text or a link from the page). */
function hasFiles(event: DragEvent): boolean {
  return event.dataTransfer?.types.includes('Files') ?? false;
}

/** How the composer sends, for screen readers (the send key is a preference). */
function sendHow(): string {
  return preferences().sendKey === 'enter'
    ? 'Enter sends, Shift+Enter starts a new line.'
    : 'Ctrl+Enter sends, Enter starts a new line.';
}
