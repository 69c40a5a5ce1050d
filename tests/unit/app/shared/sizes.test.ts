/**
 * Sizes as people read them: whole numbers where a decimal adds nothing ("338 MB", not
 * "338.0 MB"), one decimal where it helps ("1.2 GB").
 */
import { describe, expect, it } from 'vitest';
import { formatBytes as storageBytes } from '../../../../src/models/storage-room';
import { formatBytes } from '../../../../src/app/shared/styles';

const MB = 1024 ** 2;
const GB = 1024 ** 3;

describe('sizes in the app', () => {
  it('reads a size of many megabytes as a whole number', () => {
    expect(formatBytes(338 * MB)).toBe('338 MB');
    expect(formatBytes(337.6 * MB)).toBe('338 MB');
    expect(formatBytes(12.3 * MB)).toBe('12 MB');
  });

  it('keeps one decimal under ten, and drops it when it is nought', () => {
    expect(formatBytes(1.23 * GB)).toBe('1.2 GB');
    expect(formatBytes(2 * GB)).toBe('2 GB');
    expect(formatBytes(4.56 * MB)).toBe('4.6 MB');
    expect(formatBytes(9.96 * MB)).toBe('10 MB');
  });

  it('reads large sizes in whole gigabytes, with thousands separated', () => {
    expect(formatBytes(15.6 * GB)).toBe('16 GB');
    expect(formatBytes(1234.4 * GB)).toBe('1,234 GB');
  });

  it('reads small sizes in whole kilobytes, and an unknown size as a question mark', () => {
    expect(formatBytes(380 * 1024)).toBe('380 KB');
    expect(formatBytes(null)).toBe('?');
  });
});

describe('sizes in the API’s messages', () => {
  it('reads them the same way', () => {
    expect(storageBytes(338e6)).toBe('338 MB');
    expect(storageBytes(6e9)).toBe('6 GB');
    expect(storageBytes(1.25e9)).toBe('1.3 GB');
    expect(storageBytes(2_500)).toBe('3 KB');
  });
});
