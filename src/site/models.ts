/**
 * @module
 * `hearth.models` and `hearth.device()`: the typed model API of the `Hearth` object, over
 * Hearth's own routes (`{base}v1/hearth/catalog`, `…/models/{id}/download`, `…/load`, `…/status`).
 * What a site would otherwise write itself — ids encoded into paths, the download's SSE parsed,
 * the catalogue polled until the device's fit is known, a 503 `model_loading` waited out, a
 * cancelled download told apart from a failed one — is here once.
 */
import type { CatalogModel } from '../models/catalog';
import { recommendModel } from '../models/recommend';
import type { DownloadProgress } from '../protocol/host/downloads';
import type { HearthStatus as StatusBody } from '../protocol/host/status';
import { decodeSse } from '../protocol/sse';
import { errorOfResponse, HearthError } from './errors';
import type {
  HearthAddModel,
  HearthDevice,
  HearthModel,
  HearthModelFilter,
  HearthModels,
  HearthPrepareOptions,
  HearthProgress,
  HearthRecommendOptions,
} from './types';

/** How often the catalogue is read again while this device's fit is being measured. */
const FIT_POLL_MS = 250;
/**
 * How long `list()` waits for the fit: the engine worker measures it as the first page starts,
 * in well under a second; longer means no page can host the engine.
 */
const FIT_WAIT_MS = 60_000;
/** How often the host's status is read for a load's progress. */
const LOAD_POLL_MS = 250;

/** What the calls need of the page: where the API is, and the key its requests carry. */
export interface ModelsOptions {
  /** The absolute `{base}v1/`. */
  apiURL: string;
  /** Sent as `Authorization: Bearer …` (any key, unless the owner allows issued keys only). */
  apiKey: string;
}

/** The `AbortError` an aborted call rejects with: the signal's own reason where it is one. */
function abortError(signal: AbortSignal): unknown {
  const reason: unknown = signal.reason;
  return reason instanceof DOMException && reason.name === 'AbortError'
    ? reason
    : new DOMException('The operation was aborted.', 'AbortError');
}

/** `id` as one path segment: GGUF ids hold `:` and every id a `/`. */
const modelPath = (id: string) => `hearth/models/${encodeURIComponent(id)}`;

/** A catalogue entry whose fit is known. */
type Measured = CatalogModel & { fit: HearthModel['fit'] };

/** A call's method, JSON body and signal. */
interface CallInit {
  method?: string;
  body?: unknown;
  signal?: AbortSignal;
}

/** A catalogue entry as `HearthModel`. */
function toModel(m: Measured): HearthModel {
  return {
    id: m.id,
    engine: m.engine,
    backend: m.backend,
    size_mb: m.size_mb,
    downloaded: m.downloaded,
    fit: m.fit,
    ...(m.fit_reason !== undefined && { fit_reason: m.fit_reason }),
    vision: m.vision,
    tools: m.tools,
    embedding: m.embedding !== undefined,
    context_window: m.context_window,
  };
}

const measured = (m: CatalogModel): m is Measured => m.fit !== null;

/** Whether `m` passes `filter`. */
function passes(m: HearthModel, filter: HearthModelFilter): boolean {
  if (filter.task !== undefined && m.embedding !== (filter.task === 'embedding')) return false;
  if (filter.fits !== undefined && (m.fit !== 'no') !== filter.fits) return false;
  return filter.downloaded === undefined || m.downloaded === filter.downloaded;
}

/** A download's report as `HearthProgress`. */
function downloadProgress(report: DownloadProgress): HearthProgress {
  const total = report.bytes_total;
  const fraction =
    report.phase === 'done' ? 1 : total ? Math.min(report.bytes_done / total, 1) : null;
  const files =
    report.files_total === null ? '' : `, file ${report.files_done} of ${report.files_total}`;
  return {
    phase: 'download',
    loaded: report.bytes_done,
    total,
    fraction,
    fromCache: false,
    text:
      report.phase === 'done'
        ? `Downloaded ${report.model}.`
        : `Downloading ${report.model}: ${(report.bytes_done / 1e6).toFixed(1)}` +
          `${total === null ? '' : ` of ${(total / 1e6).toFixed(1)}`} MB${files}.`,
  };
}

/** The model API of one page. */
export class Models implements HearthModels {
  readonly #options: ModelsOptions;

  constructor(options: ModelsOptions) {
    this.#options = options;
  }

  /** A call of Hearth's API: the answer when it is 2xx, else its error as a `HearthError`. */
  async #call(path: string, init: CallInit = {}): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.#options.apiKey}` };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(new URL(path, this.#options.apiURL), {
        method: init.method ?? 'GET',
        headers,
        ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
        ...(init.signal && { signal: init.signal }),
      });
    } catch (err) {
      if (init.signal?.aborted) throw abortError(init.signal);
      throw new HearthError(
        'network_error',
        `Hearth's service worker did not answer ${path} (${String(err)}).`,
        { cause: err },
      );
    }
    if (!response.ok) throw await errorOfResponse(response);
    return response;
  }

  async #json<T>(path: string, init?: CallInit): Promise<T> {
    return (await (await this.#call(path, init)).json()) as T;
  }

  /**
   * The catalogue once every entry's fit is known: the engine worker measures the device as the
   * first page starts, and until then the catalogue says `fit: null`.
   */
  async #catalog(signal?: AbortSignal): Promise<Measured[]> {
    const deadline = Date.now() + FIT_WAIT_MS;
    for (;;) {
      const { data } = await this.#json<{ data: CatalogModel[] }>('hearth/catalog', {
        ...(signal && { signal }),
      });
      if (data.every(measured)) return data;
      if (Date.now() > deadline) {
        const reason = data.find((m) => m.fit === null)?.fit_reason;
        throw new HearthError(
          'engine_unavailable',
          `This device's fit is still not known after ${FIT_WAIT_MS / 1000} s` +
            `${reason ? ` (${reason})` : ''}: a page of the site must host the engine, which measures it.`,
          { status: 503 },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, FIT_POLL_MS));
    }
  }

  async list(filter: HearthModelFilter = {}): Promise<HearthModel[]> {
    return (await this.#catalog()).map(toModel).filter((m) => passes(m, filter));
  }

  async recommend(options: HearthRecommendOptions = {}): Promise<HearthModel | null> {
    const pick = recommendModel(await this.#catalog(), options);
    return pick ? toModel(pick) : null;
  }

  /** The model `id` as the catalogue has it now: 404 `model_not_found` when it has none. */
  async #find(id: string, signal?: AbortSignal): Promise<HearthModel> {
    const model = (await this.#catalog(signal)).find((m) => m.id === id);
    if (model) return toModel(model);
    throw new HearthError(
      'model_not_found',
      `The model '${id}' is not in Hearth's catalogue: hearth.models.list() gives every model there is, and hearth.models.add({ source }) adds a GGUF.`,
      { status: 404, param: 'model' },
    );
  }

  async add(model: HearthAddModel): Promise<HearthModel> {
    const body = {
      source: model.source,
      ...(model.mmproj !== undefined && { mmproj: model.mmproj }),
      ...(model.id !== undefined && { id: model.id }),
    };
    const added = await this.#json<CatalogModel>('hearth/models', { method: 'POST', body });
    return this.#find(added.id);
  }

  async prepare(id: string, options: HearthPrepareOptions = {}): Promise<HearthModel> {
    const { signal, onProgress } = options;
    if (signal?.aborted) throw abortError(signal);
    const before = await this.#find(id, signal);
    if (before.engine === 'server') return before;
    if (before.downloaded || before.engine === 'echo') {
      const bytes = Math.round((before.size_mb ?? 0) * 1e6);
      onProgress?.({
        phase: 'download',
        loaded: bytes,
        total: bytes,
        fraction: 1,
        fromCache: true,
        text: `${id} is on this device already.`,
      });
    } else {
      await this.#download(id, options);
    }
    if (before.engine !== 'echo') await this.#load(id, before.downloaded, options);
    onProgress?.({
      phase: 'load',
      loaded: 1,
      total: 1,
      fraction: 1,
      fromCache: before.downloaded,
      text: `${id} is ready.`,
    });
    return this.#find(id, signal);
  }

  /** Downloads what is missing of `id`, reporting each step; an abort cancels it in the host. */
  async #download(id: string, { signal, onProgress }: HearthPrepareOptions): Promise<void> {
    const listening = new AbortController();
    const onAbort = () => {
      listening.abort();
      // The download runs in the engine's host, whoever listens: stop it there. What it stored
      // stays, and the next prepare resumes from it.
      void this.#call(`${modelPath(id)}/download`, { method: 'DELETE' }).catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#call(`${modelPath(id)}/download`, {
        method: 'POST',
        body: { stream: true },
        signal: listening.signal,
      });
      let last: DownloadProgress | undefined;
      for await (const event of decodeSse(response.body!)) {
        const data = JSON.parse(event.data) as DownloadProgress | { error: { message: string } };
        if ('error' in data && !('phase' in data)) {
          throw await errorOfResponse(Response.json(data, { status: 500 }));
        }
        last = data as DownloadProgress;
        if (last.phase === 'failed' && last.error) {
          const { code, message, param } = last.error;
          throw new HearthError(code ?? 'download_failed', message, { param: param ?? null });
        }
        if (last.phase === 'cancelled') break;
        onProgress?.(downloadProgress(last));
      }
      if (signal?.aborted) throw abortError(signal);
      if (last?.phase !== 'done') {
        throw new HearthError(
          'download_cancelled',
          `The download of ${id} was cancelled${last?.phase === 'cancelled' ? ' (by another page, or the Models view)' : ' before it ended'}; what it stored stays, and prepare() again resumes it.`,
        );
      }
    } catch (err) {
      if (signal?.aborted) throw abortError(signal);
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Loads `id` into the engine, reporting the host's progress while it does. */
  async #load(
    id: string,
    fromCache: boolean,
    { signal, onProgress }: HearthPrepareOptions,
  ): Promise<void> {
    let done = false;
    const watch = async () => {
      while (!done) {
        await new Promise((resolve) => setTimeout(resolve, LOAD_POLL_MS));
        const status = await this.#json<StatusBody>('hearth/status').catch(() => null);
        const loading = status?.loading;
        if (done || !loading || loading.model !== id) continue;
        onProgress?.({
          phase: 'load',
          loaded: loading.progress,
          total: 1,
          fraction: Math.min(loading.progress, 0.99),
          fromCache,
          text: loading.text || `Loading ${id}…`,
        });
      }
    };
    onProgress?.({
      phase: 'load',
      loaded: 0,
      total: 1,
      fraction: 0,
      fromCache,
      text: `Loading ${id}…`,
    });
    void watch();
    try {
      for (;;) {
        try {
          await this.#call(`${modelPath(id)}/load`, {
            method: 'POST',
            ...(signal && { signal }),
          });
          return;
        } catch (err) {
          // A long load is answered 503 `model_loading` and carries on in the engine: ask again.
          if (!(err instanceof HearthError) || err.code !== 'model_loading') throw err;
        }
      }
    } finally {
      done = true;
    }
  }

  async delete(id: string): Promise<void> {
    await this.#call(modelPath(id), { method: 'DELETE' });
  }

  /** What `hearth.device()` answers. */
  async device(): Promise<HearthDevice> {
    const status = await this.#json<StatusBody & { host: StatusBody['host'] | null }>(
      'hearth/status',
    );
    const { available, adapter, features, reason } = status.webgpu;
    return {
      host: status.host ?? null,
      webgpu: { available, adapter, features, ...(reason !== undefined && { reason }) },
      cpu: status.cpu
        ? {
            cores: status.cpu.cores,
            threads: status.cpu.threads,
            isolated: status.cpu.isolated,
            bytes_per_second: status.cpu.bytes_per_second,
            memory_gb: status.cpu.memory_gb,
          }
        : null,
      llama: status.llama ?? null,
      storage: status.storage,
      loaded_model: status.loaded_model ?? null,
      loaded_embedding_model: status.loaded_embedding_model ?? null,
    };
  }
}
