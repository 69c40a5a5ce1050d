// Small statistics the benchmark files share.

/**
 * The median of `xs` (NaN when empty).
 * @param {number[]} xs
 */
export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  /** @param {number} i */
  const at = (i) => s[i] ?? NaN;
  const m = s.length >> 1;
  return s.length % 2 ? at(m) : (at(m - 1) + at(m)) / 2;
};

/**
 * `x` to `digits` decimals, as a number.
 * @param {number} x
 */
export const round = (x, digits = 2) => Number(x.toFixed(digits));
