/**
 * @module
 * The "⋯" menu of `<conversation-list>`'s rows, as a reactive controller: which row's menu is
 * open and where it shows (fixed, beside its button), its keys, and what closes it (a click
 * elsewhere, a resize, the list's scroll, a row's choice). The list renders it; this decides it.
 */
import type { LitElement, ReactiveController } from 'lit';

/** The open menu: whose, and where it shows (fixed, beside its button). */
interface MenuPlace {
  id: string;
  top?: number;
  bottom?: number;
  right: number;
}

export class RowMenu implements ReactiveController {
  #place: MenuPlace | null = null;

  /** `moreButton` finds a row's "⋯" button, which the menu belongs to. */
  constructor(
    private readonly host: LitElement,
    private readonly moreButton: (id: string) => HTMLElement | null,
  ) {
    host.addController(this);
  }

  /** The row whose menu is open, or null. */
  get openFor(): string | null {
    return this.#place?.id ?? null;
  }

  #set(place: MenuPlace | null): void {
    if (place === this.#place) return;
    this.#place = place;
    this.host.requestUpdate();
  }

  hostConnected(): void {
    document.addEventListener('pointerdown', this.#onPointerDown, true);
    window.addEventListener('resize', this.close);
  }

  hostDisconnected(): void {
    document.removeEventListener('pointerdown', this.#onPointerDown, true);
    window.removeEventListener('resize', this.close);
  }

  /** A click outside the menu closes it (and leaves focus where the click puts it). */
  readonly #onPointerDown = (e: PointerEvent) => {
    if (!this.#place) return;
    const path = e.composedPath();
    const menu = this.host.renderRoot.querySelector('[role="menu"]');
    const button = this.moreButton(this.#place.id);
    if ((menu && path.includes(menu)) || (button && path.includes(button))) return;
    this.#set(null);
  };

  /** Closes the menu, focus staying where it is. */
  readonly close = () => {
    this.#set(null);
  };

  /** Closes the menu if its row is no longer among `ids`. */
  closeIfGone(ids: readonly { id: string }[]): void {
    const id = this.#place?.id;
    if (id !== undefined && !ids.some((c) => c.id === id)) this.#set(null);
  }

  /** Opens row `id`'s menu beside its `button`, focus on its first or last item. */
  async open(id: string, button: HTMLElement, item: 'first' | 'last'): Promise<void> {
    const r = button.getBoundingClientRect();
    const width = document.documentElement.clientWidth;
    const height = document.documentElement.clientHeight;
    // Below the button where there is room for it, else above.
    const below = height - r.bottom > 190;
    this.#set({
      id,
      right: Math.max(4, width - r.right),
      ...(below ? { top: r.bottom + 2 } : { bottom: height - r.top + 2 }),
    });
    await this.host.updateComplete;
    const menu = this.host.renderRoot.querySelector<HTMLElement>('[role="menu"]');
    const place = this.#place;
    if (menu && place) {
      // Through the CSSOM: the page's CSP allows no style attribute.
      menu.style.right = `${place.right}px`;
      menu.style.top = place.top === undefined ? 'auto' : `${place.top}px`;
      menu.style.bottom = place.bottom === undefined ? 'auto' : `${place.bottom}px`;
      if (!menu.matches(':popover-open')) menu.showPopover();
    }
    const items = this.#items();
    (item === 'first' ? items[0] : items.at(-1))?.focus();
  }

  #items(): HTMLElement[] {
    return [...this.host.renderRoot.querySelectorAll<HTMLElement>('[role="menuitem"]')];
  }

  /** Closes the menu and gives focus back to its button. */
  #dismiss(): void {
    const id = this.#place?.id;
    this.#set(null);
    if (id) this.moreButton(id)?.focus();
  }

  /** The menu's keys: Up, Down, Home and End move between items; Esc and Tab close it. */
  onKey(e: KeyboardEvent): void {
    const items = this.#items();
    const at = items.indexOf(this.host.shadowRoot?.activeElement as HTMLElement);
    const go = (i: number) => items[(i + items.length) % items.length]?.focus();
    switch (e.key) {
      case 'ArrowDown':
        go(at + 1);
        break;
      case 'ArrowUp':
        go(at - 1);
        break;
      case 'Home':
        go(0);
        break;
      case 'End':
        go(-1);
        break;
      case 'Escape':
        // Only the menu closes, not the drawer it is in.
        e.stopPropagation();
        this.#dismiss();
        break;
      case 'Tab':
        // Tab leaves the menu from its button, on to what follows it.
        this.#dismiss();
        return;
      default:
        return;
    }
    e.preventDefault();
  }
}
