/**
 * @module
 * What the composer shows of the conversation's documents: a chip for each (its name, size and
 * state — uploading, indexing with a bar that is busy until the file's parts are counted, then
 * says how many are embedded, ready, waiting for an embedding model, or failed with why — and ×
 * to remove it), the files that could not be attached, the embedding model to
 * get, a note that a server's model is sent the passages found (and only them), and the
 * documents an import left out.
 */
import { html, nothing } from 'lit';
import { leavesFor } from '../shared/api-client';
import { formatBytes } from '../shared/styles';
import type { ConversationDocuments, DocumentState, DocumentsHost } from './conversation-documents';
import type { EmbeddingOffer } from './embedding-offer';

/** A document's state in words. */
function stateText(s: DocumentState): string {
  switch (s.state) {
    case 'uploading':
      return 'Uploading…';
    case 'indexing':
      return 'Indexing…';
    case 'ready':
      return 'Ready';
    case 'waiting':
      return 'Waits for an embedding model';
    case 'failed':
      return `Failed: ${s.message}`;
  }
}

/** How far a file's indexing is, once its parts are counted: `16 of 40 parts`. */
export function partsText(done: number, total: number): string {
  return `${done} of ${total} part${total === 1 ? '' : 's'}`;
}

/**
 * The bar of a document being uploaded or indexed: busy until its parts are counted, then how
 * many are embedded (`value` of `max`, and in its name). The numbers beside it are hidden from
 * screen readers: the list is a live region, and the bar's name says them without repeating
 * them every half second.
 */
export function progressBar(name: string, s: DocumentState) {
  if (s.state === 'indexing' && typeof s.total === 'number' && s.total > 0) {
    const parts = partsText(s.done ?? 0, s.total);
    return html`<progress
        max=${s.total}
        value=${s.done ?? 0}
        aria-label="Indexing ${name}: ${parts}"
      ></progress>
      <span class="muted" aria-hidden="true">${parts}</span>`;
  }
  const doing = s.state === 'uploading' ? 'Uploading' : 'Indexing';
  return html`<progress aria-label="${doing} ${name}"></progress>`;
}

function chip(name: string, size: string, s: DocumentState, remove: (() => void) | null) {
  const busy = s.state === 'uploading' || s.state === 'indexing';
  return html`<li class="doc ${s.state}">
    <span class="doc-name" title=${name}>${name}</span>
    ${size ? html`<span class="muted">${size}</span>` : nothing}
    <span class="doc-state">${stateText(s)}</span>
    ${busy ? progressBar(name, s) : nothing}
    ${
      remove
        ? html`<button
            type="button"
            class="link"
            aria-label="Remove document ${name}"
            title="Remove"
            @click=${remove}
          >
            ×
          </button>`
        : nothing
    }
  </li>`;
}

/** The documents' part of the composer. */
export function renderDocuments(
  host: DocumentsHost,
  documents: ConversationDocuments,
  offer: EmbeddingOffer,
) {
  const c = host.conversation;
  const list = documents.list;
  const uploading = documents.uploading;
  const model = host.models.find((m) => m.id === c.model);
  const remote = list.length > 0 ? leavesFor(model) : null;
  const leftOut = c.documentsLeftOut ?? [];
  return html`
    ${
      leftOut.length > 0
        ? html`<p class="attach-note">
            This conversation had documents (${leftOut.join(', ')}); an export carries their names,
            not the files: attach them again to ask about them.
          </p>`
        : nothing
    }
    ${
      remote
        ? html`<p class="attach-note" role="note">
            The passages found in your documents (only them, not the files) go to ${remote} with
            each message.
          </p>`
        : nothing
    }
    ${offer.render()}
    ${
      documents.errors.length > 0
        ? html`<p class="attach-error" role="alert">${documents.errors.join(' ')}</p>`
        : nothing
    }
    ${
      list.length + uploading.length > 0
        ? html`<ul class="documents" aria-label="Documents" aria-live="polite">
            ${list.map(({ doc, state }) =>
              chip(doc.filename, formatBytes(doc.bytes), state, () => {
                void documents.remove(doc.file_id);
              }),
            )}
            ${uploading.map((name) => chip(name, '', { state: 'uploading' }, null))}
          </ul>`
        : nothing
    }
  `;
}
