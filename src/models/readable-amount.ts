/**
 * @module
 * A size's number as people read it, shared by the API's messages and the app's views.
 */

/**
 * One decimal under ten where it is not nought (`1.2`, `4.6`, `2`); from ten up a whole number
 * with its thousands separated (`338`, `1,234`), since a tenth of a big size says nothing.
 */
export function readableAmount(value: number): string {
  const tenths = Math.round(value * 10) / 10;
  if (tenths < 10 && !Number.isInteger(tenths)) return tenths.toFixed(1);
  return Math.round(value).toLocaleString('en-US');
}
