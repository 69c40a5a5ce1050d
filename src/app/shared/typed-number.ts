/**
 * @module
 * A number as a person types it into a field. Fields commit on `input` as well as on `change`:
 * `change` waits for the field to lose focus, and never fires when a value is set without a
 * keystroke (WebDriver BiDi's fill in Firefox, some password managers and assistive tools).
 */

/** Digits, with a fraction that has digits: what a finished number looks like in these fields. */
const FINISHED = /^-?\d+(\.\d+)?$/;

/**
 * The number `raw` spells, or null while it is unfinished or not a number: `0.`, `1e` or `-`
 * wait for more, so that committing does not rewrite the field under the typist (`0.` would
 * become `0`). Leading zeros are fine (`010` is 10: typed after a field's `0`).
 */
export function typedNumber(raw: string): number | null {
  const text = raw.trim();
  return FINISHED.test(text) ? Number(text) : null;
}
