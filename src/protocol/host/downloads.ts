/**
 * @module
 * A model download as the API reports it: the events of
 * `POST /v1/hearth/models/{org}/{name}/download`, and the host's status.
 */
import type { ErrorBody } from '../errors';

/** Where a download stands. */
export type DownloadPhase =
  | 'queued'
  /** Reading the model's manifests, which say what else there is. */
  | 'manifest'
  /** Fetching tokenizer, weight shards and library. */
  | 'files'
  /** Checking that every file is there. */
  | 'verify'
  | 'done'
  | 'failed'
  | 'cancelled';

/** One progress report of a download. */
export interface DownloadProgress {
  object: 'hearth.download';
  model: string;
  phase: DownloadPhase;
  bytes_done: number;
  /** Unknown until the weight manifest is read; it grows as files report their size. */
  bytes_total: number | null;
  files_done: number;
  files_total: number | null;
  /** The file being fetched. */
  file: string | null;
  /** Why it failed. */
  error?: ErrorBody['error'];
}

/** Whether a download has ended. */
export function finished(phase: DownloadPhase): boolean {
  return phase === 'done' || phase === 'failed' || phase === 'cancelled';
}
