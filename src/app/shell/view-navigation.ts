/**
 * @module
 * Which view the shell shows and the phone's drawer: the address's hash picks the view, and the
 * drawer (the conversations, on a phone) is a step in the tab's history so that Back closes it.
 * The element renders both; this controller keeps them, follows the address and moves focus.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { DrawerHistory } from './drawer-history';
import { routeOf, type View } from './routes';

/** The element this controller serves: its rendered tree holds the header, the drawer and the view. */
export type NavigationHost = ReactiveControllerHost & {
  readonly renderRoot: HTMLElement | DocumentFragment;
};

/** Keeps the view, its section and the drawer's state, and updates the element on each change. */
export class ViewNavigation implements ReactiveController {
  view: View;
  /** The part of a view the address names (Settings' sections). */
  section: string;
  /** The conversation list, on a phone, is a drawer. */
  drawerOpen = false;
  /** Back closes the phone's drawer instead of leaving the app. */
  readonly #history = new DrawerHistory(() => void this.closeDrawer());

  constructor(private readonly host: NavigationHost) {
    host.addController(this);
    ({ view: this.view, section: this.section } = routeOf(location.hash));
  }

  hostConnected(): void {
    addEventListener('hashchange', this.#onHash);
    addEventListener('popstate', this.#history.onPopState);
  }

  hostDisconnected(): void {
    removeEventListener('hashchange', this.#onHash);
    removeEventListener('popstate', this.#history.onPopState);
  }

  readonly #onHash = () => {
    ({ view: this.view, section: this.section } = routeOf(location.hash));
    this.drawerOpen = false;
    this.#history.forget();
    this.host.requestUpdate();
  };

  /**
   * Shows the view at `hash`. From the phone's drawer the view takes the drawer's place in the
   * history, or, being the view already shown, only closes the drawer: Back then returns to where
   * the drawer was opened, not to the drawer.
   */
  go(hash: string): void {
    const route = routeOf(hash);
    if (this.drawerOpen && route.view === this.view && route.section === this.section) {
      this.drawerOpen = false;
      this.#history.closed();
      this.host.requestUpdate();
    } else if (this.#history.replaceWith(hash)) {
      this.#onHash();
    } else {
      location.hash = hash;
    }
  }

  /** Opens the phone's drawer and puts focus in it (where the list is). */
  async openDrawer(): Promise<void> {
    this.drawerOpen = true;
    this.#history.opened();
    this.host.requestUpdate();
    await this.host.updateComplete;
    this.host.renderRoot.querySelector<HTMLElement>('aside nav a[aria-current="page"]')?.focus();
  }

  /** Closes the phone's drawer and gives focus back to what opened it. */
  async closeDrawer(): Promise<void> {
    this.drawerOpen = false;
    this.#history.closed();
    this.host.requestUpdate();
    await this.host.updateComplete;
    const chat = this.host.renderRoot.querySelector('chat-view');
    if (this.view === 'chat' && chat) chat.focusMenu();
    else this.host.renderRoot.querySelector<HTMLElement>('header .menu')?.focus();
  }
}
