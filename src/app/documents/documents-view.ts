/**
 * @module
 * `<documents-view>` (`#/documents`): every file kept on this device and every vector store, as
 * the API lists them — a file's name, size and when it was uploaded; a store's name, its files'
 * counts (ready, indexing, failed) and size, and its files with their state. A file or a store is
 * deleted after a confirmation (a file deleted leaves every store that held it); a store's file
 * can be re-indexed (taken out of the store and added again). While files are indexed the lists
 * are read again every half second, and each such file has a bar: busy until its parts (chunks)
 * are counted, then how many of them are embedded.
 */
import { css, html, LitElement, nothing } from 'lit';
import { confirmStyles, type ConfirmDialog } from '../shared/confirm-dialog';
import '../shared/confirm-dialog';
import { shared, formatBytes, view } from '../shared/styles';
import { POLL_MS } from './conversation-documents';
import { partsText } from './document-chips';
import {
  deleteFile,
  deleteStore,
  listFiles,
  listStoreFiles,
  listStores,
  reindex,
  type FileObject,
  type VectorStoreFileObject,
  type VectorStoreObject,
} from './documents-api';

/** What is about to be deleted, for the confirmation. */
type Doomed = { kind: 'file'; item: FileObject } | { kind: 'store'; item: VectorStoreObject };

const when = (seconds: number) =>
  new Date(seconds * 1000).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });

const stateText = (f: VectorStoreFileObject) =>
  f.status === 'completed'
    ? 'Ready'
    : f.status === 'in_progress'
      ? 'Indexing…'
      : `Failed: ${f.last_error?.message ?? f.status}`;

/** A file being indexed: its bar, busy until its parts are counted, then how many are done. */
const indexing = (name: string, f: VectorStoreFileObject) => {
  const total = f.progress?.chunks_total;
  const done = f.progress?.chunks_done ?? 0;
  return typeof total === 'number' && total > 0
    ? html`<progress
          max=${total}
          value=${done}
          aria-label="Indexing ${name}: ${partsText(done, total)}"
        ></progress>
        <span class="muted" aria-hidden="true">${partsText(done, total)}</span>`
    : html`<progress aria-label="Indexing ${name}"></progress>`;
};

export class DocumentsView extends LitElement {
  static override properties = {
    files: { state: true },
    stores: { state: true },
    error: { state: true },
    doomed: { state: true },
  };

  static override styles = [
    shared,
    view,
    confirmStyles,
    css`
      h3 {
        font-size: 1.1em;
        margin: 1.2em 0 0.4em;
      }
      ul.items {
        list-style: none;
        margin: 0;
        padding: 0;
      }
      ul.items > li {
        border: 1px solid var(--border);
        border-radius: 8px;
        padding: 0.6em 0.8em;
        margin-bottom: 0.5em;
      }
      .row {
        display: flex;
        flex-wrap: wrap;
        align-items: baseline;
        gap: 0.3em 0.8em;
      }
      .name {
        font-weight: 600;
        overflow-wrap: anywhere;
      }
      .row .end {
        margin-left: auto;
      }
      ul.store-files {
        margin: 0.4em 0 0;
        padding-left: 1.2em;
      }
      ul.store-files li {
        margin: 0.2em 0;
      }
    `,
  ];

  declare private files: FileObject[] | null;
  declare private stores: { store: VectorStoreObject; files: VectorStoreFileObject[] }[] | null;
  declare private error: string | null;
  declare private doomed: Doomed | null;
  #timer = 0;

  constructor() {
    super();
    this.files = null;
    this.stores = null;
    this.error = null;
    this.doomed = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.refresh();
  }

  override disconnectedCallback(): void {
    super.disconnectedCallback();
    clearTimeout(this.#timer);
  }

  /** Reads the files and stores again; again in half a second while any file is indexed. */
  async refresh(): Promise<void> {
    clearTimeout(this.#timer);
    try {
      const [files, stores] = await Promise.all([listFiles(), listStores()]);
      this.stores = await Promise.all(
        stores.map(async (store) => ({ store, files: await listStoreFiles(store.id) })),
      );
      this.files = files;
      this.error = null;
    } catch (err) {
      this.error = `The documents could not be read: ${err instanceof Error ? err.message : String(err)}`;
    }
    const indexing = this.stores?.some((s) => s.files.some((f) => f.status === 'in_progress'));
    if (indexing && this.isConnected)
      this.#timer = window.setTimeout(() => this.refresh(), POLL_MS);
  }

  async #ask(doomed: Doomed): Promise<void> {
    this.doomed = doomed;
    await this.updateComplete;
    await this.renderRoot.querySelector<ConfirmDialog>('confirm-dialog')?.show({ focus: 'cancel' });
  }

  async #answer(yes: boolean): Promise<void> {
    const doomed = this.doomed;
    this.doomed = null;
    if (!yes || !doomed) return;
    try {
      if (doomed.kind === 'file') await deleteFile(doomed.item.id);
      else {
        await deleteStore(doomed.item.id);
        // The conversations that searched it search nothing now (hearth-app's list).
        this.dispatchEvent(
          new CustomEvent('vector-store-deleted', { detail: doomed.item.id, bubbles: true }),
        );
      }
    } catch (err) {
      this.error = `It could not be deleted: ${err instanceof Error ? err.message : String(err)}`;
    }
    await this.refresh();
    this.renderRoot.querySelector<HTMLElement>('h2')?.focus();
  }

  async #reindex(storeId: string, fileId: string): Promise<void> {
    try {
      await reindex(storeId, fileId);
    } catch (err) {
      this.error = `It could not be re-indexed: ${err instanceof Error ? err.message : String(err)}`;
    }
    await this.refresh();
  }

  #fileName(id: string): string {
    return this.files?.find((f) => f.id === id)?.filename ?? id;
  }

  #renderStore({ store, files }: { store: VectorStoreObject; files: VectorStoreFileObject[] }) {
    const c = store.file_counts;
    const name = store.name || store.id;
    return html`<li>
      <div class="row">
        <span class="name">${name}</span>
        <span class="muted"
          >${c.total} file${c.total === 1 ? '' : 's'}: ${c.completed} ready, ${c.in_progress}
          indexing, ${c.failed} failed · ${formatBytes(store.usage_bytes)}</span
        >
        <button
          class="end danger"
          aria-label="Delete store ${name}"
          @click=${() => this.#ask({ kind: 'store', item: store })}
        >
          Delete
        </button>
      </div>
      ${
        files.length > 0
          ? html`<ul class="store-files" aria-label="Files of ${name}">
              ${files.map((f) => {
                const file = this.#fileName(f.id);
                return html`<li>
                  <span>${file}</span> · <span class="muted">${stateText(f)}</span>
                  ${f.status === 'in_progress' ? indexing(file, f) : nothing}
                  <button
                    class="link"
                    aria-label="Re-index ${file} in ${name}"
                    ?disabled=${f.status === 'in_progress'}
                    @click=${() => this.#reindex(store.id, f.id)}
                  >
                    Re-index
                  </button>
                </li>`;
              })}
            </ul>`
          : nothing
      }
    </li>`;
  }

  #renderFile(file: FileObject) {
    return html`<li>
      <div class="row">
        <span class="name">${file.filename}</span>
        <span class="muted">${formatBytes(file.bytes)} · uploaded ${when(file.created_at)}</span>
        <button
          class="end danger"
          aria-label="Delete file ${file.filename}"
          @click=${() => this.#ask({ kind: 'file', item: file })}
        >
          Delete
        </button>
      </div>
    </li>`;
  }

  #renderConfirm() {
    const d = this.doomed;
    const what = d?.kind === 'file' ? d.item.filename : (d?.item.name ?? '');
    const content = !d
      ? nothing
      : d.kind === 'file'
        ? html`<p id="doomed">
            ${what} is deleted from this device, and taken out of every store and conversation that
            searches it.
          </p>`
        : html`<p id="doomed">
            The store ${what} and its index are deleted; its files stay in Files. A conversation
            that used it no longer finds its documents.
          </p>`;
    return html`<confirm-dialog
      heading=${d ? `Delete ${what}?` : ''}
      confirm="Delete"
      described-by="doomed"
      .content=${content}
      @answer=${(e: CustomEvent<boolean>) => this.#answer(e.detail)}
    ></confirm-dialog>`;
  }

  protected override render() {
    const busy = this.files === null;
    return html`
      <h2 tabindex="-1">Documents</h2>
      <p class="muted">
        The files attached to conversations, or uploaded by any client of the API, and the vector
        stores that index them. All of it is kept on this device.
      </p>
      ${this.error ? html`<p class="error" role="alert">${this.error}</p>` : nothing}
      <section aria-labelledby="stores-heading" aria-busy=${busy ? 'true' : 'false'}>
        <h3 id="stores-heading">Vector stores</h3>
        ${
          busy
            ? html`<p>Reading the documents…</p>`
            : this.stores?.length
              ? html`<ul class="items">
                  ${this.stores.map((s) => this.#renderStore(s))}
                </ul>`
              : html`<p class="muted">No vector stores yet.</p>`
        }
      </section>
      <section aria-labelledby="files-heading">
        <h3 id="files-heading">Files</h3>
        ${
          busy
            ? nothing
            : this.files?.length
              ? html`<ul class="items">
                  ${this.files.map((f) => this.#renderFile(f))}
                </ul>`
              : html`<p class="muted">
                  No files yet. Attach a document to a conversation with its + button.
                </p>`
        }
      </section>
      ${this.#renderConfirm()}
    `;
  }
}

customElements.define('documents-view', DocumentsView);

declare global {
  interface HTMLElementTagNameMap {
    'documents-view': DocumentsView;
  }
}
