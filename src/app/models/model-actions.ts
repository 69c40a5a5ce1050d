/**
 * @module
 * What the Models view does to a model, over the API: download (following its progress), cancel,
 * delete or remove, load and unload; and what it remembers meanwhile: the last outcome of each
 * model's action, the deletion awaiting a yes, the downloads that stopped before the end, their
 * speed. The element only renders it.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { DownloadProgress } from '../../protocol/host/downloads';
import { ApiError, call, download, modelPath, type CatalogModel } from '../shared/api-client';
import { describeDownloadFailure } from './downloads/download-failure';
import { SpeedMeter } from './model-facts';

/** What happened to a model's last action. */
export interface ModelNote {
  text: string;
  error: boolean;
  /** A download whose host could not be reached: the view points to what works offline. */
  unreachable?: boolean;
}

/** The element the controller serves: it updates, and it announces catalogue changes. */
type Host = ReactiveControllerHost & EventTarget;

export class ModelActionsController implements ReactiveController {
  /** The last action's outcome, by model id. */
  notes = new Map<string, ModelNote>();
  /** The model whose deletion waits for a confirmation. */
  confirming: string | null = null;
  /** Models whose download stopped before the end (a later one resumes). */
  readonly stopped = new Set<string>();
  /**
   * Models whose download failed before it stored anything: there is nothing to resume or to
   * delete, only a retry.
   */
  readonly empty = new Set<string>();
  readonly speed = new SpeedMeter();

  /** `acted` is told before each action the user takes on a model (the view keeps its order). */
  constructor(
    private readonly host: Host,
    private readonly acted: () => void = () => undefined,
  ) {
    host.addController(this);
  }

  hostConnected(): void {}

  /** Asks for a confirmation of deleting `id` (null: none). */
  confirm(id: string | null): void {
    this.acted();
    this.confirming = id;
    this.host.requestUpdate();
  }

  note(id: string, text: string | null, error = false, unreachable = false): void {
    const notes = new Map(this.notes);
    if (text === null) notes.delete(id);
    else notes.set(id, { text, error, ...(unreachable && { unreachable }) });
    this.notes = notes;
    this.host.requestUpdate();
  }

  /** Tells the app to read the catalogue again. */
  stale(): void {
    this.host.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
  }

  async #act(id: string, action: () => Promise<unknown>, done?: string): Promise<void> {
    this.acted();
    this.note(id, null);
    try {
      await action();
      if (done) this.note(id, done);
    } catch (err) {
      this.note(id, err instanceof Error ? err.message : String(err), true);
    } finally {
      this.stale();
    }
  }

  async download(model: CatalogModel): Promise<void> {
    const id = model.id;
    this.acted();
    // Something of it may be stored from before: then a failure leaves something to resume.
    const had = this.stopped.has(id) || !!model.evicted;
    this.note(id, null);
    this.stopped.delete(id);
    this.empty.delete(id);
    try {
      let last: DownloadProgress | undefined;
      for await (const progress of download(id)) last = progress;
      if (last?.phase === 'failed') {
        this.#failed(model, last.error ?? { message: '' }, had || last.bytes_done > 0);
      } else if (last?.phase === 'cancelled') {
        this.stopped.add(id);
      }
    } catch (err) {
      const error =
        err instanceof ApiError
          ? { code: err.code, message: err.message }
          : { message: String(err) };
      this.#failed(model, error, had);
    } finally {
      this.speed.forget(id);
      this.stale();
    }
  }

  /** Says why `model`'s download failed, in words; `stored`: whether any of it is on the device. */
  #failed(model: CatalogModel, error: { code?: string | null; message: string }, stored: boolean) {
    (stored ? this.stopped : this.empty).add(model.id);
    const failure = describeDownloadFailure(model, error);
    this.note(model.id, failure.text, true, failure.unreachable);
  }

  cancel(id: string): Promise<void> {
    this.stopped.add(id);
    return this.#act(id, () => call(`${modelPath(id)}/download`, { method: 'DELETE' }));
  }

  /** Deletes the model's files; a model the user added leaves the catalogue with them. */
  delete(id: string, added: boolean): Promise<void> {
    this.confirming = null;
    this.stopped.delete(id);
    this.empty.delete(id);
    return this.#act(
      id,
      () => call(modelPath(id), { method: 'DELETE' }),
      added ? 'Removed.' : 'Deleted.',
    );
  }

  load(id: string): Promise<void> {
    return this.#act(id, () => call(`${modelPath(id)}/load`, { method: 'POST' }));
  }

  unload(id: string): Promise<void> {
    return this.#act(id, () => call('hearth/unload', { method: 'POST' }));
  }
}
