import { describe, expect, it } from 'vitest';
import { asksForMenu, rowAfterKey, tabStop } from '../../../../src/app/conversations/roving-focus';

describe('rowAfterKey', () => {
  it('moves one row down and up, and stops at the ends instead of wrapping', () => {
    expect(rowAfterKey('ArrowDown', 0, 3)).toBe(1);
    expect(rowAfterKey('ArrowDown', 2, 3)).toBe(2);
    expect(rowAfterKey('ArrowUp', 1, 3)).toBe(0);
    expect(rowAfterKey('ArrowUp', 0, 3)).toBe(0);
  });

  it('goes to the first row on Home and the last on End', () => {
    expect(rowAfterKey('Home', 2, 3)).toBe(0);
    expect(rowAfterKey('End', 0, 3)).toBe(2);
  });

  it('leaves other keys, and an empty list, alone', () => {
    expect(rowAfterKey('Enter', 0, 3)).toBeNull();
    expect(rowAfterKey('ArrowDown', 0, 0)).toBeNull();
  });
});

describe('tabStop', () => {
  it('is the row last focused while it is shown, else the open one, else the first', () => {
    expect(tabStop(['a', 'b', 'c'], 'c', 'b')).toBe('c');
    expect(tabStop(['a', 'b', 'c'], 'gone', 'b')).toBe('b');
    expect(tabStop(['a', 'b', 'c'], null, 'archived')).toBe('a');
    expect(tabStop([], null, 'b')).toBe('');
  });
});

describe('asksForMenu', () => {
  const key = (init: KeyboardEventInit) => ({ shiftKey: false, ...init }) as KeyboardEvent;
  it('is the Menu key or Shift+F10, not F10 alone', () => {
    expect(asksForMenu(key({ key: 'ContextMenu' }))).toBe(true);
    expect(asksForMenu(key({ key: 'F10', shiftKey: true }))).toBe(true);
    expect(asksForMenu(key({ key: 'F10' }))).toBe(false);
  });
});
