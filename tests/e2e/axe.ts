/**
 * axe-core as the tests run it: `axe(page)` is an `AxeBuilder` that audits the page in one
 * `axe.run` inside it, gathering in full only what the tests read: violations.
 * - Legacy mode (`setLegacyMode`): by default the builder runs `axe.runPartial` in each frame, then
 *   opens a blank page, injects axe-core there again and finishes the run in it, which is there
 *   for cross-origin frames. The app has no frame, and that round took most of an audit: the
 *   Models view took 9.5 s in Chromium and 8.3 s in Firefox, and 3.3 s and 1.3 s in one run.
 * - `resultTypes: ['violations']`: a rule that passed keeps one node, as its example, instead of
 *   all of them (1,700 in the Models view), each with its selector through the shadow roots.
 * The tests assert that there is no violation, and at times that a rule ran (its id in `passes`);
 * a11y.spec.ts holds that this builder still finds violations.
 */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';

type Results = Awaited<ReturnType<AxeBuilder['analyze']>>;

/** An `AxeBuilder` for `page`: one run in the page, violations in full. */
export function axe(page: Page): AxeBuilder {
  return new AxeBuilder({ page }).setLegacyMode().options({ resultTypes: ['violations'] });
}

/**
 * Each violation in one line: the rule, its impact and help, and where (its first three nodes; a
 * node in a shadow root as its host's selector, `>>>`, its own).
 */
export function violations(results: Results): string[] {
  return results.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.help} — ${v.nodes
        .slice(0, 3)
        .map((n) => n.target.map((t) => (Array.isArray(t) ? t.join(' >>> ') : t)).join(' '))
        .join(' | ')}`,
  );
}
