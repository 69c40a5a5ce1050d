/**
 * @module
 * The Models view's order while the user acts on it. The sort puts what is on the device first,
 * so a download that ends (or a load, a delete) would move the card the user just clicked from
 * under the pointer. Once the user acts, the order of the cards and of the variants in each is
 * held as it was shown; cards that come later go after them, in the sort's order. A model just
 * added goes first, its card and its variant in the card. A new search or filter sorts again.
 * Pure: the view holds one and asks it for the order at each render.
 */
import type { ModelCard } from './model-search';

/** Where `key` was in `held`, or after all of them. */
const place = (held: readonly string[] | undefined, key: string) => {
  const at = held?.indexOf(key) ?? -1;
  return at === -1 ? Number.MAX_SAFE_INTEGER : at;
};

export class CardOrder {
  /** The card keys as shown when the user acted, and each card's variant ids. */
  #held: { cards: string[]; variants: Map<string, string[]> } | null = null;
  /** A model just added: its card first. */
  #pinned: string | null = null;

  /** Holds the order of `shown`, the cards as the user sees them now (already held if it was). */
  hold(shown: readonly ModelCard[]): void {
    this.#held = {
      cards: shown.map((c) => c.key),
      variants: new Map(shown.map((c) => [c.key, c.variants.map((v) => v.model.id)])),
    };
  }

  /** Puts the card of model `id` first (with its variant first in it), and holds the rest. */
  pin(id: string, shown: readonly ModelCard[]): void {
    this.hold(shown);
    this.#pinned = id;
  }

  /** Lets the sort order the cards again (a new search or filter). */
  release(): void {
    this.#held = null;
    this.#pinned = null;
  }

  /** `cards` (in the sort's order) in the held order. */
  apply(cards: readonly ModelCard[]): ModelCard[] {
    const held = this.#held;
    const pinned = this.#pinned;
    if (!held && !pinned) return [...cards];
    const first = (c: ModelCard) => c.variants.some((v) => v.model.id === pinned);
    const ordered = cards.map((c) => ({
      ...c,
      variants: c.variants
        .map((v, i) => ({
          v,
          at: v.model.id === pinned ? -1 : place(held?.variants.get(c.key), v.model.id),
          i,
        }))
        .sort((a, b) => a.at - b.at || a.i - b.i)
        .map(({ v }) => v),
    }));
    return ordered
      .map((c, i) => ({ c, at: first(c) ? -1 : place(held?.cards, c.key), i }))
      .sort((a, b) => a.at - b.at || a.i - b.i)
      .map(({ c }) => c);
  }
}
