/**
 * A policy's identity for the approximate query cache: two gate calls may only reuse each
 * other's scores approximately when their policies (and query classes) are the same. Functions in
 * a policy (thresholdFn, rules' predicates) are told apart by identity, not by source, since the
 * same source can close over different values.
 */
import type { GatePolicy } from './types.js';

const functionIds = new WeakMap<object, number>();
let nextFunctionId = 1;

function functionId(fn: object): number {
  let id = functionIds.get(fn);
  if (id === undefined) {
    id = nextFunctionId++;
    functionIds.set(fn, id);
  }
  return id;
}

/**
 * A string equal for equal policies (same keys in the same order, same values, same function
 * objects). Policies written with their keys in another order differ: no reuse between them,
 * which costs hits, never a wrong reuse.
 */
export function policyFingerprint(policy: GatePolicy): string {
  return JSON.stringify(policy, (_key, value: unknown) =>
    typeof value === 'function'
      ? `\u0000fn${functionId(value)}`
      : typeof value === 'number' && !Number.isFinite(value)
        ? `\u0000${String(value)}`
        : value,
  );
}
