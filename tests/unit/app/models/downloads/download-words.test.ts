import { describe, expect, it } from 'vitest';
import type { DownloadProgress } from '../../../../../src/protocol/host/downloads';
import { phaseWords } from '../../../../../src/app/models/downloads/download-words';

const progress = (over: Partial<DownloadProgress>): DownloadProgress => ({
  object: 'hearth.download',
  model: 'mlc-ai/x',
  phase: 'files',
  bytes_done: 0,
  bytes_total: null,
  files_done: 0,
  files_total: null,
  file: null,
  ...over,
});

describe('the words for where a download stands', () => {
  it('counts the files fetched of how many, not a bare "files"', () => {
    expect(phaseWords(progress({ files_done: 3, files_total: 7 }))).toBe('3 of 7 files');
    expect(phaseWords(progress({ files_done: 0, files_total: 1 }))).toBe('0 of 1 file');
    expect(phaseWords(progress({ files_total: null }))).toBe('fetching files');
  });

  it('says the other phases in words', () => {
    expect(phaseWords(progress({ phase: 'queued' }))).toBe('waiting to start');
    expect(phaseWords(progress({ phase: 'manifest' }))).toBe('reading the list of files');
    expect(phaseWords(progress({ phase: 'verify' }))).toBe('checking the files');
  });
});
