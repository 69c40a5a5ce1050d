/**
 * @module
 * How both fuzz runners send their cases (Node's, tests/unit/fuzz; the browser's,
 * tests/e2e/fuzz.spec.ts): in batches, with a valid case after each batch (whatever came before,
 * the API still answers a plain request as it should), every answer checked by the oracle.
 */
import type { FuzzCase } from './generate';
import { faultOf, type Answer, type Tally } from './oracle';

/** Cases sent between two probes. */
export const BATCH = 500;

/** Sends `cases` through `send`, a batch at a time, and adds every answer to `tally`. */
export async function runCases(
  cases: FuzzCase[],
  send: (batch: FuzzCase[]) => Promise<Answer[]>,
  tally: Tally,
): Promise<void> {
  const probe = cases.find((c) => 'reply' in c.expect);
  for (let at = 0; at < cases.length; at += BATCH) {
    const batch = cases.slice(at, at + BATCH);
    if (probe) batch.push({ ...probe, kind: 'probe:after-batch' });
    const answers = await send(batch);
    batch.forEach((c, i) => tally.add(c, answers[i]!, faultOf(c, answers[i]!)));
  }
}

/** `fn` of every item, `concurrency` at a time; the results in the items' order. */
export async function inLanes<T, R>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return results;
}
