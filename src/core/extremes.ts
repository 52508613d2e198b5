// The least and greatest of many numbers without spreading them into arguments: `Math.min(...xs)`
// puts every element on the stack and throws a RangeError somewhere past 100,000 of them.

/** The least of `values` (Infinity when there are none, as Math.min()). */
export function minOf(values: Iterable<number>): number {
  let min = Infinity;
  for (const v of values) if (v < min || Number.isNaN(v)) min = v;
  return min;
}

/** The greatest of `values` (-Infinity when there are none, as Math.max()). */
export function maxOf(values: Iterable<number>): number {
  let max = -Infinity;
  for (const v of values) if (v > max || Number.isNaN(v)) max = v;
  return max;
}
