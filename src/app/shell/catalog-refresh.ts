/**
 * @module
 * The catalogue the views share, kept fresh: read again when the host's status says what is on
 * the device or loaded changed, when a tab added or removed a model or a server, and when a view
 * says it is stale; only the latest read's answer is kept. The views get it fitted to this device
 * (device-fit.ts), judged again only when the catalogue changes.
 */
import type { ReactiveControllerHost } from 'lit';
import { fitForDevice } from '../device-fit';
import type { HostStatusController } from '../host-status';
import { catalog as fetchCatalog, type CatalogModel } from '../shared/api-client';
import { AddedModelsWatch } from './added-models-watch';

/** Holds the last catalogue read and reads it again when it may have changed. */
export class CatalogRefresh {
  /** The catalogue as the API last gave it. */
  catalog: CatalogModel[] = [];
  /** The catalogue was read at least once: until then the app says it is checking. */
  known = false;
  #key = '';
  /** Catalogue reads started, so that only the latest one's answer is shown. */
  #requests = 0;
  /** The catalogue judged for this device, kept while the two are the same. */
  #fit: { catalog: CatalogModel[]; offered: CatalogModel[] } | null = null;

  /** `refreshed`: a read's catalogue is now the one shown (the element's follow-up to it). */
  constructor(
    private readonly host: ReactiveControllerHost,
    private readonly status: HostStatusController,
    private readonly refreshed: () => Promise<void>,
  ) {
    // A model added or removed in any tab changes the catalogue.
    new AddedModelsWatch(host, () => void this.refresh());
    status.listen((s) => {
      // The catalogue says what is on the device and loaded: read it again when that changes.
      const key = JSON.stringify([
        // A new host, or its device facts measured: what can run here may be known now.
        s.host.id,
        s.device !== null,
        // …and the processor's: the fit of llama.cpp's models is known now.
        s.cpu != null,
        s.models,
        s.loaded_model,
        s.downloads.length,
        s.evicted_models,
        s.failing_models,
      ]);
      if (key !== this.#key) {
        this.#key = key;
        void this.refresh();
      }
    });
  }

  /** The catalogue as the app offers it here: models that run slowly here are marked so. */
  get offered(): CatalogModel[] {
    if (this.#fit?.catalog !== this.catalog)
      this.#fit = { catalog: this.catalog, offered: fitForDevice(this.catalog) };
    return this.#fit.offered;
  }

  /** Reads the catalogue again; a read that fails leaves the last one (the status line says why). */
  async refresh(): Promise<void> {
    const request = ++this.#requests;
    let catalog: CatalogModel[];
    try {
      catalog = await fetchCatalog();
    } catch {
      return; // the status line says why the API does not answer
    }
    // Reads overlap (a status change, an action's end): one that answers after a later one
    // would put back what the later one saw change.
    if (request !== this.#requests) return;
    this.catalog = catalog;
    this.known = true;
    this.host.requestUpdate();
    await this.refreshed();
  }
}
