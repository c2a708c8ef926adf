/**
 * The order in which the gate's accepted and conflicting items reach the model: one sequence in the
 * gate's returned order (src/gate/order.ts: the `ranking` signal when every item has it, else
 * relevance; highest first), fail-open items (no relevance) last. The gate already sorts each group
 * by that same key, so this is a merge; on equal values an included item precedes a conflicting
 * one, then the lower input rank wins.
 */
import { orderValue, ordersByRanking } from '../gate/order.js';
import type { GateItem, GateResult } from '../gate/types.js';
import type { Passage } from '../types.js';

function precedes(a: GateItem, b: GateItem, byRanking: boolean): boolean {
  const ra = orderValue(a, byRanking);
  const rb = orderValue(b, byRanking);
  if (ra === null || rb === null) return ra !== null || (rb === null && a.rank < b.rank);
  if (ra !== rb) return ra > rb;
  if (a.route !== b.route) return a.route === 'included';
  return a.rank < b.rank;
}

/** Included items, merged with conflicting ones when `includeConflicting`, in the gate's returned order. */
export function admittedItems<P extends Passage>(
  result: GateResult<P>,
  includeConflicting: boolean,
): Array<GateItem<P>> {
  const included = result.included;
  if (!includeConflicting || result.conflicting.length === 0) return [...included];
  const conflicting = result.conflicting;
  const byRanking = ordersByRanking([included, conflicting]);
  const out: Array<GateItem<P>> = [];
  let i = 0;
  let j = 0;
  while (i < included.length && j < conflicting.length)
    out.push(precedes(included[i], conflicting[j], byRanking) ? included[i++] : conflicting[j++]);
  while (i < included.length) out.push(included[i++]);
  while (j < conflicting.length) out.push(conflicting[j++]);
  return out;
}
