/**
 * @module
 * Adding a GGUF model over the API: from a URL, a path of the app or a Hugging Face id
 * (`POST /v1/hearth/models`), or from a file on the user's computer, which is first copied into
 * the app's storage (`PUT /v1/hearth/files/{name}.gguf`) so that it outlives a reload and works
 * offline, then added from there. A file whose adding fails is removed again.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import {
  addModel,
  ApiError,
  deleteStoredFile,
  storeFile,
  type CatalogModel,
} from '../../shared/api-client';
import { sourceOf } from '../model-facts';
import { confirmPrivateNetwork } from '../../shared/private-network-confirm';
import { formatBytes } from '../../shared/styles';

/** Where an addition stands. */
export type AddState =
  | { phase: 'idle' }
  | { phase: 'busy'; what: string }
  | { phase: 'failed'; message: string }
  | { phase: 'added'; model: CatalogModel };

type Host = ReactiveControllerHost & EventTarget;

const messageOf = (err: unknown) =>
  err instanceof ApiError || err instanceof Error ? err.message : String(err);

export class AddModelController implements ReactiveController {
  state: AddState = { phase: 'idle' };

  constructor(private readonly host: Host) {
    host.addController(this);
  }

  hostConnected(): void {}

  get busy(): boolean {
    return this.state.phase === 'busy';
  }

  #set(state: AddState): void {
    this.state = state;
    this.host.requestUpdate();
  }

  /** Tells the view (`model-added`, with its entry: it downloads it) and the app of the model. */
  #added(model: CatalogModel): void {
    this.#set({ phase: 'added', model });
    this.host.dispatchEvent(new CustomEvent('model-added', { detail: model }));
    this.host.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
  }

  /** Adds the model the user typed: a URL, a path of the app, or a Hugging Face id. */
  async addSource(typed: string, id: string): Promise<void> {
    const source = sourceOf(typed);
    if (source === '') {
      this.#set({
        phase: 'failed',
        message: 'Give the URL of a .gguf file or a Hugging Face id such as user/repo:Q4_K_M.',
      });
      return;
    }
    const allow = source.startsWith('hf:') ? {} : confirmPrivateNetwork(source);
    if (!allow) {
      this.#set({ phase: 'failed', message: `Not added: ${source} was not allowed.` });
      return;
    }
    this.#set({ phase: 'busy', what: `Checking ${source}…` });
    try {
      const entry = await addModel({ source, ...(id.trim() && { id: id.trim() }), ...allow });
      this.#added(entry);
    } catch (err) {
      this.#set({ phase: 'failed', message: messageOf(err) });
    }
  }

  /** Copies a `.gguf` file into the app's storage and adds it. */
  async addFile(file: File, id: string): Promise<void> {
    if (!/\.gguf$/i.test(file.name)) {
      this.#set({ phase: 'failed', message: `${file.name} is not a .gguf file.` });
      return;
    }
    this.#set({
      phase: 'busy',
      what: `Copying ${file.name} (${formatBytes(file.size)}) into this app's storage…`,
    });
    let path: string | null = null;
    try {
      path = (await storeFile(file)).path;
      this.#set({ phase: 'busy', what: `Adding ${file.name}…` });
      const entry = await addModel({ source: path, ...(id.trim() && { id: id.trim() }) });
      this.#added(entry);
    } catch (err) {
      // A copy no model uses is only taking space.
      if (path !== null) await deleteStoredFile(path).catch(() => undefined);
      this.#set({ phase: 'failed', message: messageOf(err) });
    }
  }

  /** Says what is wrong with a drop that holds no single file. */
  refuse(message: string): void {
    this.#set({ phase: 'failed', message });
  }
}
