/**
 * @module
 * A list as one Tab stop (a "roving tabindex"): one row takes Tab, the arrow keys, Home and End
 * move between rows. Tab then passes a long list in one step instead of one per row.
 */

/** The row the arrow keys (Up, Down, Home, End) lead to from row `at` of `count`; null: another key. */
export function rowAfterKey(key: string, at: number, count: number): number | null {
  if (count === 0) return null;
  switch (key) {
    case 'ArrowDown':
      return Math.min(at + 1, count - 1);
    case 'ArrowUp':
      return Math.max(at - 1, 0);
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

/**
 * The row that takes Tab: the one last focused while it is shown, else the open one, else the
 * first.
 */
export function tabStop(rows: readonly string[], last: string | null, open: string): string {
  if (last !== null && rows.includes(last)) return last;
  if (rows.includes(open)) return open;
  return rows[0] ?? '';
}

/** Whether `event` asks for a context menu by keyboard (the Menu key, or Shift+F10). */
export const asksForMenu = (event: KeyboardEvent) =>
  event.key === 'ContextMenu' || (event.shiftKey && event.key === 'F10');
