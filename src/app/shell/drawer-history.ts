/**
 * @module
 * The phone's drawer as a step in the tab's history, as a page is: opening it adds an entry, so
 * that Back (the phone's button or gesture) closes it instead of leaving the app. Closing it in
 * place takes its entry away again, and a view picked in it takes the entry's place.
 */

/** What marks the drawer's entry in `history.state`. */
const KEY = 'hearthDrawer';

const onDrawerEntry = () => (history.state as Record<string, unknown> | null)?.[KEY] === true;

export class DrawerHistory {
  /** The drawer's entry is in the history (the drawer is open). */
  #pushed = false;

  /** `onBack`: Back (or Forward) left the drawer's entry; the drawer is to close. */
  constructor(private readonly onBack: () => void) {
    // A reload on the drawer's entry finds the drawer closed: the entry is an ordinary one now.
    if (onDrawerEntry()) history.replaceState(null, '');
  }

  /** The drawer opened. */
  opened(): void {
    if (this.#pushed) return;
    history.pushState({ [KEY]: true }, '');
    this.#pushed = true;
  }

  /** The drawer closed where it is (Close, Esc, the menu button): its entry goes. */
  closed(): void {
    if (!this.#pushed) return;
    this.#pushed = false;
    if (onDrawerEntry()) history.back();
  }

  /**
   * Goes to `hash` from the drawer, the view in the drawer's place in the history (Back then
   * returns to where the drawer was opened). False where the drawer has no entry: the caller
   * navigates.
   */
  replaceWith(hash: string): boolean {
    if (!this.#pushed || !onDrawerEntry()) return false;
    this.#pushed = false;
    history.replaceState(null, '', hash);
    return true;
  }

  /** The drawer closed by a change of address: its entry, if any, is an ordinary one now. */
  forget(): void {
    this.#pushed = false;
  }

  /** For `popstate`. */
  readonly onPopState = () => {
    if (!this.#pushed || onDrawerEntry()) return;
    this.#pushed = false;
    this.onBack();
  };
}
