/**
 * @module
 * What the Models view does to a model, over the API: download (following its progress), cancel,
 * delete or remove, load and unload; and what it remembers meanwhile: the last outcome of each
 * model's action, the deletion awaiting a yes, the downloads that stopped before the end, their
 * speed. The element only renders it.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { DownloadProgress } from '../openai/downloads';
import { ApiError, call, download, modelPath } from './api-client';
import { SpeedMeter } from './model-facts';

/** What happened to a model's last action. */
export interface ModelNote {
  text: string;
  error: boolean;
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
  readonly speed = new SpeedMeter();

  constructor(private readonly host: Host) {
    host.addController(this);
  }

  hostConnected(): void {}

  /** Asks for a confirmation of deleting `id` (null: none). */
  confirm(id: string | null): void {
    this.confirming = id;
    this.host.requestUpdate();
  }

  note(id: string, text: string | null, error = false): void {
    const notes = new Map(this.notes);
    if (text === null) notes.delete(id);
    else notes.set(id, { text, error });
    this.notes = notes;
    this.host.requestUpdate();
  }

  /** Tells the app to read the catalogue again. */
  stale(): void {
    this.host.dispatchEvent(new CustomEvent('catalog-stale', { bubbles: true, composed: true }));
  }

  async #act(id: string, action: () => Promise<unknown>, done?: string): Promise<void> {
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

  async download(id: string): Promise<void> {
    this.note(id, null);
    this.stopped.delete(id);
    try {
      let last: DownloadProgress | undefined;
      for await (const progress of download(id)) last = progress;
      if (last?.phase === 'failed') {
        this.stopped.add(id);
        this.note(id, last.error?.message ?? 'The download failed.', true);
      } else if (last?.phase === 'cancelled') {
        this.stopped.add(id);
      }
    } catch (err) {
      this.stopped.add(id);
      this.note(id, err instanceof ApiError ? err.message : String(err), true);
    } finally {
      this.speed.forget(id);
      this.stale();
    }
  }

  cancel(id: string): Promise<void> {
    this.stopped.add(id);
    return this.#act(id, () => call(`${modelPath(id)}/download`, { method: 'DELETE' }));
  }

  /** Deletes the model's files; a model the user added leaves the catalogue with them. */
  delete(id: string, added: boolean): Promise<void> {
    this.confirming = null;
    this.stopped.delete(id);
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
