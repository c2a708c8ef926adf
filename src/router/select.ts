/**
 * Pure selection rules of the router (no I/O, no clocks), kept apart so tests can pin them down.
 */

/**
 * Indices of `candidates` ordered by how close their fast-path relevance is to `threshold`
 * (closest first: the pairs most likely to change a decision when rescored). Ties keep the input
 * order; pairs without a relevance (NaN) go last.
 */
export function orderByThresholdDistance(
  candidates: readonly number[],
  relevance: ArrayLike<number>,
  threshold: number,
): number[] {
  const order = candidates.slice();
  const distance = (i: number): number => {
    const r = relevance[i];
    return Number.isFinite(r) ? Math.abs(r - threshold) : Number.POSITIVE_INFINITY;
  };
  const d = new Map<number, number>();
  for (const i of order) d.set(i, distance(i));
  order.sort((a, b) => (d.get(a) as number) - (d.get(b) as number) || a - b);
  return order;
}

/**
 * The largest m in [0, max] with predict(m) ≤ limitMs (predict is non-decreasing in m), found by
 * binary search. Returns 0 when even one pair does not fit.
 */
export function largestFitting(max: number, limitMs: number, predict: (pairs: number) => number): number {
  if (max <= 0 || !(limitMs > 0)) return 0;
  if (predict(max) <= limitMs) return max;
  let lo = 0;
  let hi = max;
  while (hi - lo > 1) {
    const mid = (lo + hi) >>> 1;
    if (predict(mid) <= limitMs) lo = mid;
    else hi = mid;
  }
  return lo;
}

/** First signal of `names` present in `record` (the relevance the cascade reads), NaN when none. */
export function readRelevance(record: Readonly<Record<string, number>>, names: readonly string[]): number {
  for (const name of names) {
    const v = record[name];
    if (typeof v === 'number') return v;
  }
  return Number.NaN;
}
