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

/**
 * Asks once per host whether the app may reach the targets on the user's network or computer
 * (the projector is most often beside the model): the flag the API needs, or the target the
 * user refused.
 */
function allowAll(targets: readonly string[]): { allow_private_network?: true } | string {
  const asked = new Map<string, { allow_private_network?: true } | null>();
  let allow: { allow_private_network?: true } = {};
  for (const target of targets.filter(Boolean)) {
    let host = target;
    try {
      host = new URL(target, location.href).host;
    } catch {
      // The API says what is wrong with it.
    }
    if (!asked.has(host)) asked.set(host, confirmPrivateNetwork(target));
    const answer = asked.get(host);
    if (!answer) return target;
    allow = { ...allow, ...answer };
  }
  return allow;
}

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

  /**
   * Adds the model the user typed: a URL, a path of the app, or a Hugging Face id; with the URL
   * of its vision projector, where the user gave one (a Hugging Face repo's is found by itself).
   */
  async addSource(typed: string, id: string, projector = ''): Promise<void> {
    const source = sourceOf(typed);
    if (source === '') {
      this.#set({
        phase: 'failed',
        message: 'Give the URL of a .gguf file or a Hugging Face id such as user/repo:Q4_K_M.',
      });
      return;
    }
    const mmproj = projector.trim();
    const allow = allowAll([...(source.startsWith('hf:') ? [] : [source]), mmproj]);
    if (typeof allow === 'string') {
      this.#set({ phase: 'failed', message: `Not added: ${allow} was not allowed.` });
      return;
    }
    this.#set({ phase: 'busy', what: `Checking ${source}…` });
    try {
      const entry = await addModel({
        source,
        ...(id.trim() && { id: id.trim() }),
        ...(mmproj && { mmproj }),
        ...allow,
      });
      this.#added(entry);
    } catch (err) {
      this.#set({ phase: 'failed', message: messageOf(err) });
    }
  }

  /**
   * Copies `.gguf` files into the app's storage and adds them as one model: a model alone, or a
   * model and its vision projector (the file whose name says `mmproj`, as llama.cpp's are named).
   */
  async addFiles(files: readonly File[], id: string): Promise<void> {
    const wrong = files.find((file) => !/\.gguf$/i.test(file.name));
    if (wrong) {
      this.#set({ phase: 'failed', message: `${wrong.name} is not a .gguf file.` });
      return;
    }
    const projectors = files.filter((file) => /mmproj/i.test(file.name));
    const models = files.filter((file) => !projectors.includes(file));
    const [model] = models;
    if (!model || models.length > 1 || projectors.length > 1) {
      this.#set({
        phase: 'failed',
        message:
          'Add one .gguf file, or a model and its vision projector (mmproj-….gguf) together; a GGUF split into parts can be added by its URL.',
      });
      return;
    }
    const stored: string[] = [];
    try {
      for (const file of [model, ...projectors]) {
        this.#set({
          phase: 'busy',
          what: `Copying ${file.name} (${formatBytes(file.size)}) into this app's storage…`,
        });
        stored.push((await storeFile(file)).path);
      }
      this.#set({ phase: 'busy', what: `Adding ${model.name}…` });
      const [source, mmproj] = stored as [string, string | undefined];
      const entry = await addModel({
        source,
        ...(mmproj && { mmproj }),
        ...(id.trim() && { id: id.trim() }),
      });
      this.#added(entry);
    } catch (err) {
      // A copy no model uses is only taking space.
      await Promise.all(stored.map((path) => deleteStoredFile(path).catch(() => undefined)));
      this.#set({ phase: 'failed', message: messageOf(err) });
    }
  }

  /** Says what is wrong with a drop that holds no file. */
  refuse(message: string): void {
    this.#set({ phase: 'failed', message });
  }
}
