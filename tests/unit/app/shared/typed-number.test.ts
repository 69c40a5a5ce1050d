import { describe, expect, it } from 'vitest';
import { typedNumber } from '../../../../src/app/shared/typed-number';

describe('typedNumber', () => {
  it('reads a finished number', () => {
    expect(typedNumber('0')).toBe(0);
    expect(typedNumber('0.5')).toBe(0.5);
    expect(typedNumber('250')).toBe(250);
    expect(typedNumber(' 12 ')).toBe(12);
    expect(typedNumber('010')).toBe(10);
    expect(typedNumber('0.50')).toBe(0.5);
  });

  it('waits while a number is still being typed, so the field is not rewritten under the typist', () => {
    for (const raw of ['', '0.', '1e', '1e3', '-', '.5']) expect(typedNumber(raw)).toBeNull();
  });

  it('refuses what is not a finite number', () => {
    for (const raw of ['abc', 'Infinity', 'NaN', '1,5']) expect(typedNumber(raw)).toBeNull();
  });
});
