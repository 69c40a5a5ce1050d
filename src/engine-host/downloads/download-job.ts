/**
 * @module
 * One download's state and its reports, apart from the downloads that run it (downloads.ts) and
 * the file fetching that advances it (file-fetch.ts): both change its progress, and listeners
 * hear it at a steady pace however fast the bytes come.
 */
import type { DownloadProgress } from '../../protocol/host/downloads';

/** One download. */
export class Job {
  readonly progress: DownloadProgress;
  readonly abort = new AbortController();
  readonly listeners = new Set<(progress: DownloadProgress) => void>();
  /** Files whose size is in `bytes_total` already (a retried file counts once). */
  readonly sized = new Set<string>();
  /** Files stored or found by this download, and counted in `bytes_done`. */
  readonly stored = new Set<string>();
  done: Promise<void> = Promise.resolve();
  #lastReport = 0;
  #reportScheduled = false;

  constructor(
    model: string,
    readonly progressMs: number,
    readonly onChange: () => void,
  ) {
    this.progress = {
      object: 'hearth.download',
      model,
      phase: 'queued',
      bytes_done: 0,
      bytes_total: null,
      files_done: 0,
      files_total: null,
      file: null,
    };
  }

  /** Tells the listeners; byte counts at most every `progressMs`, phases at once. */
  report(now = false): void {
    const due = now || Date.now() - this.#lastReport >= this.progressMs;
    if (!due) {
      if (this.#reportScheduled) return;
      this.#reportScheduled = true;
      setTimeout(() => {
        this.#reportScheduled = false;
        this.report(true);
      }, this.progressMs);
      return;
    }
    this.#lastReport = Date.now();
    const snapshot = { ...this.progress };
    for (const listener of this.listeners) listener(snapshot);
    this.onChange();
  }
}

/** Adds a file's size to the total once (a retried or resumed file counts once). */
export function countTotal(job: Job, url: string, bytes: number): void {
  if (job.progress.bytes_total === null || job.sized.has(url)) return;
  job.sized.add(url);
  job.progress.bytes_total += bytes;
}
