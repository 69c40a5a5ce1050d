/**
 * @module
 * Where a download stands, in words for its progress line (the API's phase names are for
 * programs: a bare "files" says nothing to a person).
 */
import type { DownloadProgress } from '../../../protocol/host/downloads';

/** `3 of 7 files`, `checking the files`, …: the end of a download's progress line. */
export function phaseWords(p: Pick<DownloadProgress, 'phase' | 'files_done' | 'files_total'>) {
  switch (p.phase) {
    case 'queued':
      return 'waiting to start';
    case 'manifest':
      return 'reading the list of files';
    case 'files':
      // The count is known once the manifest is read; a download of files is under way before.
      return p.files_total === null
        ? 'fetching files'
        : `${p.files_done} of ${p.files_total} file${p.files_total === 1 ? '' : 's'}`;
    case 'verify':
      return 'checking the files';
    case 'done':
      return 'done';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
  }
}
