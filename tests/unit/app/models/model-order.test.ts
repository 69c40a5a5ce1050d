import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../../src/app/shared/api-client';
import { describeModel } from '../../../../src/app/models/model-info';
import { CardOrder } from '../../../../src/app/models/model-order';
import type { ModelCard } from '../../../../src/app/models/model-search';

/** A card of `key` holding the variants `ids`, in that order. */
function card(key: string, ...ids: string[]): ModelCard {
  return {
    key,
    name: key,
    family: key,
    parameters: null,
    goodFor: [],
    variants: ids.map((id) => {
      const model = { id, engine: 'webllm', tools: false, reasoning: false } as CatalogModel;
      return { model, info: describeModel(model) };
    }),
  };
}

const keys = (cards: ModelCard[]) => cards.map((c) => c.key);
const ids = (c: ModelCard) => c.variants.map((v) => v.model.id);

describe('CardOrder', () => {
  it("leaves the sort's order alone until the user acts", () => {
    const sorted = [card('b'), card('a')];
    expect(keys(new CardOrder().apply(sorted))).toEqual(['b', 'a']);
  });

  it('holds the order of the cards and of their variants as shown when the user acted', () => {
    const order = new CardOrder();
    order.hold([card('a', 'a1', 'a2'), card('b', 'b1'), card('c', 'c1')]);
    // A download ended: the sort now puts b first, and a2 before a1.
    const shown = order.apply([card('b', 'b1'), card('a', 'a2', 'a1'), card('c', 'c1')]);
    expect(keys(shown)).toEqual(['a', 'b', 'c']);
    expect(ids(shown[0]!)).toEqual(['a1', 'a2']);
  });

  it("puts cards that come later after the held ones, in the sort's order", () => {
    const order = new CardOrder();
    order.hold([card('a'), card('b')]);
    expect(keys(order.apply([card('y'), card('b'), card('x'), card('a')]))).toEqual([
      'a',
      'b',
      'y',
      'x',
    ]);
  });

  it('puts the card of a model just added first, with its variant first in it', () => {
    const order = new CardOrder();
    const shown = [card('a', 'a1'), card('b', 'b1')];
    order.pin('b2', shown);
    const now = order.apply([card('a', 'a1'), card('b', 'b1', 'b2')]);
    expect(keys(now)).toEqual(['b', 'a']);
    expect(ids(now[0]!)).toEqual(['b2', 'b1']);
  });

  it('lets the sort order the cards again once released', () => {
    const order = new CardOrder();
    order.pin('a1', [card('a', 'a1'), card('b', 'b1')]);
    order.release();
    expect(keys(order.apply([card('b', 'b1'), card('a', 'a1')]))).toEqual(['b', 'a']);
  });
});
