/**
 * @module
 * The embedding model documents need, offered where none is on the device (the API answered 409
 * `embedding_model_required`): the one `recommendModel` picks for embeddings, with one button that
 * downloads it, its progress, and then the waiting documents indexed with it.
 */
import { html, nothing } from 'lit';
import { recommendModel } from '../../models/recommend';
import type { DownloadProgress } from '../../protocol/host/downloads';
import { download, type CatalogModel } from '../shared/api-client';
import { formatBytes } from '../shared/styles';
import { describeModel } from '../models/model-info';
import type { ConversationDocuments, DocumentsHost } from './conversation-documents';

/** The download of the embedding model offered, and what it says. */
export class EmbeddingOffer {
  progress: DownloadProgress | null = null;
  error: string | null = null;

  constructor(
    private readonly host: DocumentsHost,
    private readonly documents: ConversationDocuments,
  ) {}

  /** The model to offer: the recommended embedding model, or null where none runs here. */
  get model(): CatalogModel | null {
    return recommendModel(this.host.catalog, { task: 'embedding' });
  }

  async get(model: CatalogModel): Promise<void> {
    this.error = null;
    const name = describeModel(model).name;
    try {
      for await (const progress of download(model.id)) {
        this.progress = progress;
        this.host.requestUpdate();
      }
      const end = this.progress;
      if (end?.phase === 'done') {
        this.host.dispatchEvent(
          new CustomEvent('catalog-stale', { bubbles: true, composed: true }),
        );
        await this.documents.retry(model.id);
      } else if (end?.phase === 'failed') {
        this.error = `${name} could not be downloaded: ${end.error?.message ?? 'it failed'}.`;
      }
    } catch (err) {
      this.error = `${name} could not be downloaded: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      this.progress = null;
      this.host.requestUpdate();
    }
  }

  render() {
    if (!this.documents.needsModel) return nothing;
    const model = this.model;
    const name = model ? describeModel(model).name : '';
    const p = this.progress;
    const percent =
      p && p.bytes_total ? Math.floor((100 * p.bytes_done) / p.bytes_total) : undefined;
    return html`<div class="notice warn doc-offer" role="alert">
      <span
        >Documents are searched with an embedding model on this device, and there is none yet.
        ${model ? nothing : 'None in the catalogue runs here: see Models.'}</span
      >
      ${
        model && !p
          ? html`<button class="primary" @click=${() => this.get(model)}>
              Download ${name} (${formatBytes((model.size_mb ?? 0) * 1024 ** 2)})
            </button>`
          : nothing
      }
      ${
        p
          ? html`<label
              >Downloading ${name} <progress max="100" value=${percent ?? nothing}></progress
            ></label>`
          : nothing
      }
      ${this.error ? html`<span class="error">${this.error}</span>` : nothing}
    </div>`;
  }
}
