/**
 * @module
 * Where the keyboard is in `<conversation-list>`; the list calls it from its render, its key
 * handlers and its `updated` (it needs no lifecycle of its own, so it is no controller). The
 * rows are one Tab stop (src/app/conversations/roving-focus.ts): the arrow keys move between
 * them, Right arrow to a row's "⋯", and the Menu key or Shift+F10 opens its menu. After an action
 * (a row archived, deleted, pinned…) focus goes where the user can carry on, and again once the
 * app has changed the list, since the element it was on may be gone by then.
 */
import type { LitElement } from 'lit';
import type { RowMenu } from './conversation-menu';
import { asksForMenu, rowAfterKey, tabStop } from './roving-focus';

/** Where focus goes once the list has changed after an action. */
export type FocusTarget = { id: string; part: 'open' | 'more' } | 'new' | 'archived';

export class ListFocus {
  /** The rows as shown, in order: the list's, and the archive's. */
  #order: string[] = [];
  #archivedOrder: string[] = [];
  /** The row that takes Tab, in this render. */
  #tabStop = '';
  /** Where focus goes when the app next changes the list, until when (a change may not come). */
  #pending: { target: FocusTarget; until: number } | null = null;

  constructor(
    private readonly host: LitElement,
    private readonly menu: RowMenu,
  ) {}

  /** The row that takes Tab, in this render. */
  get tabStop(): string {
    return this.#tabStop;
  }

  /**
   * The rows this render shows, in order, the list's then the archive's; the one focused `last`
   * keeps the Tab stop while it is shown, else the `open` one does.
   */
  setRows(order: string[], archivedOrder: string[], last: string | null, open: string): void {
    this.#order = order;
    this.#archivedOrder = archivedOrder;
    this.#tabStop = tabStop([...order, ...archivedOrder], last, open);
  }

  element(target: FocusTarget): HTMLElement | null {
    const root = this.host.shadowRoot;
    if (!root) return null;
    if (target === 'new') return root.getElementById('new');
    if (target === 'archived') return root.getElementById('archive-toggle');
    return root.getElementById(`${target.part}-${target.id}`);
  }

  /** Moves focus to `target` now, and again once the app has changed the list, if it was lost. */
  focusSoon(target: FocusTarget): void {
    this.#pending = { target, until: Date.now() + 5000 };
    this.element(target)?.focus();
  }

  /** Whether focus is in this list, or nowhere (dropped to the body by a removed element). */
  #focusIsOurs(): boolean {
    const active = document.activeElement;
    return (
      active === null || active === document.body || this.host.shadowRoot?.activeElement != null
    );
  }

  /** The list was rendered with new conversations from the app: the focus asked for, if lost. */
  listChanged(): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = null;
    if (Date.now() < pending.until && this.#focusIsOurs()) this.element(pending.target)?.focus();
  }

  /**
   * Where focus goes when row `id` leaves its list: the row after it, else the one before, else
   * "New chat" (in the archive: its toggle).
   */
  afterLeaving(id: string): FocusTarget {
    const archived = this.#archivedOrder.includes(id);
    const order = archived ? this.#archivedOrder : this.#order;
    const i = order.indexOf(id);
    const next = order[i + 1] ?? order[i - 1];
    return next ? { id: next, part: 'open' } : archived ? 'archived' : 'new';
  }

  /** A row's keys: Up, Down, Home and End move between rows, Right goes to the row's "⋯". */
  onRowKey(e: KeyboardEvent, id: string): void {
    const more = this.element({ id, part: 'more' });
    if (asksForMenu(e)) {
      if (more) void this.menu.open(id, more, 'first');
    } else if (e.key === 'ArrowRight') {
      more?.focus();
    } else {
      const rows = [...this.host.renderRoot.querySelectorAll<HTMLElement>('button.open')];
      const to = rowAfterKey(e.key, rows.indexOf(e.currentTarget as HTMLElement), rows.length);
      if (to === null) return;
      rows[to]?.focus();
    }
    e.preventDefault();
  }

  /** The "⋯" keys: Up and Down, the Menu key and Shift+F10 open the menu; Left goes back to the row. */
  onMoreKey(e: KeyboardEvent, id: string): void {
    const button = e.currentTarget as HTMLElement;
    if (e.key === 'ArrowLeft') this.element({ id, part: 'open' })?.focus();
    else if (e.key === 'ArrowDown' || asksForMenu(e)) void this.menu.open(id, button, 'first');
    else if (e.key === 'ArrowUp') void this.menu.open(id, button, 'last');
    else return;
    e.preventDefault();
  }
}
