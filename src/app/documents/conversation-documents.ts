/**
 * @module
 * A conversation's documents, for `<chat-view>`'s composer: each attached file is uploaded to the
 * API's Files, the conversation gets a vector store of its own at its first document (its id kept
 * with the conversation), and the file is added to it; while a file is indexed its state is read
 * every half second (in progress, ready, or failed with the API's reason). Removing a document
 * takes it out of the store (the file stays in Documents). Where no embedding model is on the
 * device, the files wait, and ./embedding-offer.ts offers the recommended one; once it is
 * downloaded, the store is made with it. While a file is indexed, its state carries how many of
 * its parts (chunks) are embedded, from the API's `progress`. What it renders is in
 * ./document-chips.ts.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Conversation, DocumentRef } from '../conversations/conversation';
import { saveConversation } from '../conversations/conversation-store';
import { ApiError, type CatalogModel } from '../shared/api-client';
import {
  addToStore,
  createStore,
  needsEmbeddingModel,
  removeFromStore,
  storeFile,
  uploadFile,
} from './documents-api';

/** How often a file being indexed is asked for its state. */
export const POLL_MS = 500;

/** Where a document stands, as its chip says. */
export type DocumentState =
  | { state: 'uploading' }
  | {
      state: 'indexing';
      /** The parts (chunks) embedded so far and in all, once the API says (`progress`). */
      done?: number;
      total?: number | null;
    }
  | { state: 'ready' }
  | { state: 'waiting' }
  | { state: 'failed'; message: string };

/** The view the documents are attached in. */
export interface DocumentsHost extends ReactiveControllerHost, EventTarget {
  readonly conversation: Conversation;
  /** The whole catalogue (the embedding model to offer is chosen from it). */
  readonly catalog: CatalogModel[];
  /** The models a conversation can pick (its model's `leaves_device`). */
  readonly models: CatalogModel[];
  readonly renderRoot: ParentNode;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The documents of the host's conversation, their upload, indexing and removal. */
export class ConversationDocuments implements ReactiveController {
  /** Each document's state, by file id; the files being uploaded, by a name of their own. */
  readonly states = new Map<string, DocumentState>();
  /** Files being uploaded now: their names, shown as chips until they have an id. */
  uploading: string[] = [];
  /** Why the last files given could not be attached, one sentence each. */
  errors: string[] = [];
  /** The files that wait for an embedding model (of any conversation shown here). */
  waiting: string[] = [];
  /** A retry is under way (the files it indexes still count as waiting until it ends). */
  #retrying = false;
  /** The embedding models a retry was made with (each once, so a refusal is not a loop). */
  readonly #tried = new Set<string>();
  /** One attach (or retry) at a time: the first makes the store the next ones are added to. */
  #queue: Promise<void> = Promise.resolve();
  /** The store files whose state is being read now (`<store>/<file>`). */
  readonly #watched = new Set<string>();
  #connected = false;

  constructor(private readonly host: DocumentsHost) {
    host.addController(this);
  }

  hostConnected(): void {
    this.#connected = true;
  }

  hostDisconnected(): void {
    this.#connected = false;
    this.#watched.clear();
  }

  /**
   * Another conversation may be on show: read the state of its documents not yet known. Files
   * that wait are indexed as soon as an embedding model is on the device, however it came (the
   * offer's button, the Models view, a site's code).
   */
  hostUpdated(): void {
    const c = this.host.conversation;
    const model = this.host.catalog.find((m) => m.embedding && m.downloaded);
    if (model && this.needsModel && !this.#retrying && !this.#tried.has(model.id)) {
      void this.retry(model.id);
    }
    const storeId = c.vectorStoreId;
    for (const doc of c.documents ?? []) {
      if (this.states.has(doc.file_id)) continue;
      if (storeId) {
        void this.#watch(c, storeId, doc.file_id);
      } else {
        // Kept without a store: it waited for an embedding model when the page was left.
        this.states.set(doc.file_id, { state: 'waiting' });
        this.waiting = [...this.waiting, doc.file_id];
        this.host.requestUpdate();
      }
    }
  }

  /** Whether a file of the conversation on show waits for an embedding model. */
  get needsModel(): boolean {
    const docs = this.host.conversation.documents ?? [];
    return docs.some((d) => this.waiting.includes(d.file_id));
  }

  /** The conversation's documents with their states. */
  get list(): { doc: DocumentRef; state: DocumentState }[] {
    const docs = this.host.conversation.documents ?? [];
    return docs.map((doc) => ({
      doc,
      state: this.states.get(doc.file_id) ?? { state: 'indexing' },
    }));
  }

  /** Attaches `files` (documents) to the conversation: uploaded, then indexed in its store. */
  attach(files: readonly File[]): Promise<void> {
    const c = this.host.conversation;
    this.errors = [];
    this.uploading = [...this.uploading, ...files.map((f) => f.name)];
    this.host.requestUpdate();
    const run = async () => {
      for (const file of files) await this.#attachOne(c, file);
    };
    this.#queue = this.#queue.then(run, run);
    return this.#queue;
  }

  async #attachOne(c: Conversation, file: File): Promise<void> {
    let uploaded;
    try {
      uploaded = await uploadFile(file);
    } catch (err) {
      this.errors = [...this.errors, `${file.name} could not be uploaded: ${messageOf(err)}`];
      return;
    } finally {
      const i = this.uploading.indexOf(file.name);
      if (i >= 0) this.uploading = this.uploading.filter((_, j) => j !== i);
      this.host.requestUpdate();
    }
    const doc = { file_id: uploaded.id, filename: uploaded.filename, bytes: uploaded.bytes };
    c.documents = [...(c.documents ?? []), doc];
    delete c.documentsLeftOut;
    this.states.set(doc.file_id, { state: 'indexing' });
    await saveConversation(c);
    await this.#index(c, [doc.file_id]);
  }

  /** Adds files to the conversation's store, made now if it has none, and follows them. */
  async #index(c: Conversation, fileIds: string[], embeddingModel?: string): Promise<void> {
    try {
      if (c.vectorStoreId) {
        try {
          for (const id of fileIds) await addToStore(c.vectorStoreId, id);
        } catch (err) {
          // Its store was deleted (in Documents): the conversation gets a new one.
          if (!(err instanceof ApiError && err.status === 404)) throw err;
          delete c.vectorStoreId;
          fileIds = (c.documents ?? []).map((d) => d.file_id);
        }
      }
      if (!c.vectorStoreId) {
        const made = await createStore({
          name: `Conversation: ${c.title}`.slice(0, 200),
          file_ids: fileIds,
          metadata: { conversation: c.id },
          ...(embeddingModel && { embedding_model: embeddingModel }),
        });
        c.vectorStoreId = made.id;
        await saveConversation(c);
      }
      this.waiting = this.waiting.filter((id) => !fileIds.includes(id));
      for (const id of fileIds) void this.#watch(c, c.vectorStoreId, id);
    } catch (err) {
      const state: DocumentState = needsEmbeddingModel(err)
        ? { state: 'waiting' }
        : { state: 'failed', message: messageOf(err) };
      for (const id of fileIds) this.states.set(id, state);
      if (state.state === 'waiting') this.waiting = [...new Set([...this.waiting, ...fileIds])];
    }
    this.host.requestUpdate();
  }

  /** An embedding model is on the device now (`model`): the waiting files are indexed with it. */
  retry(model: string): Promise<void> {
    const c = this.host.conversation;
    const ids = this.waiting.filter((id) => c.documents?.some((d) => d.file_id === id));
    for (const id of ids) this.states.set(id, { state: 'indexing' });
    this.#retrying = true;
    this.#tried.add(model);
    const run = () => this.#index(c, ids, model);
    this.#queue = this.#queue.then(run, run).finally(() => (this.#retrying = false));
    return this.#queue;
  }

  /** Reads a store file's state until it is no longer in progress. */
  async #watch(c: Conversation, storeId: string, fileId: string): Promise<void> {
    const key = `${storeId}/${fileId}`;
    if (this.#watched.has(key)) return;
    this.#watched.add(key);
    try {
      while (this.#connected && this.#watched.has(key)) {
        if (!c.documents?.some((d) => d.file_id === fileId)) return;
        let state: DocumentState;
        try {
          const file = await storeFile(storeId, fileId);
          state =
            file.status === 'completed'
              ? { state: 'ready' }
              : file.status === 'in_progress'
                ? {
                    state: 'indexing',
                    done: file.progress?.chunks_done ?? 0,
                    total: file.progress?.chunks_total ?? null,
                  }
                : {
                    state: 'failed',
                    message: file.last_error?.message ?? `It was ${file.status}.`,
                  };
        } catch (err) {
          const gone = err instanceof ApiError && err.status === 404;
          // The store itself is gone (deleted in Documents): the next message searches nothing,
          // and the next document attached makes a new one.
          if (gone && err.code === 'vector_store_not_found' && c.vectorStoreId === storeId) {
            delete c.vectorStoreId;
            await saveConversation(c);
          }
          state = {
            state: 'failed',
            message: gone ? 'It is no longer indexed here (deleted in Documents).' : messageOf(err),
          };
        }
        this.states.set(fileId, state);
        this.host.requestUpdate();
        if (state.state !== 'indexing') return;
        await sleep(POLL_MS);
      }
    } finally {
      this.#watched.delete(key);
    }
  }

  /**
   * Takes a document out of the conversation and of its store; the focus goes to the next
   * document's Remove, or to the message box.
   */
  async remove(fileId: string): Promise<void> {
    const c = this.host.conversation;
    const index = (c.documents ?? []).findIndex((d) => d.file_id === fileId);
    c.documents = (c.documents ?? []).filter((d) => d.file_id !== fileId);
    if (c.documents.length === 0) delete c.documents;
    this.waiting = this.waiting.filter((id) => id !== fileId);
    this.states.delete(fileId);
    this.host.requestUpdate();
    void this.host.updateComplete.then(() => {
      const root = this.host.renderRoot;
      const buttons = root.querySelectorAll<HTMLElement>('.documents button');
      (
        buttons[Math.min(index, buttons.length - 1)] ?? root.querySelector<HTMLElement>('#composer')
      )?.focus();
    });
    await saveConversation(c);
    if (c.vectorStoreId) {
      try {
        await removeFromStore(c.vectorStoreId, fileId);
      } catch (err) {
        this.errors = [`It could not be taken out of the store: ${messageOf(err)}`];
        this.host.requestUpdate();
      }
    }
  }
}
