/**
 * The order the gate returns passages in, shared by the gate (included / conflicting), the context
 * builder and the adapters that merge or score those groups. Keep/drop is decided on relevance
 * elsewhere; this is only the order: by the `ranking` signal (src/signals.ts) when every returned
 * item that has a relevance also has a valid ranking, else by relevance. One decision for the whole
 * result, so merged groups never mix two scales.
 */
import { RANKING } from '../signals.js';
import type { SignalProbabilities } from '../types.js';

/** What the order reads of an item (a gate item or the gate's working item). */
export interface OrderedItem {
  readonly signals: SignalProbabilities | null;
  readonly relevance: number | null;
  readonly rule: string;
}

/** The item's `ranking` signal, or undefined when it has none or an invalid one. */
export function rankingOf(item: Pick<OrderedItem, 'signals'>): number | undefined {
  const v = item.signals?.[RANKING];
  return typeof v === 'number' && v >= 0 && v <= 1 ? v : undefined;
}

/** Items without a relevance (fail-open) are ordered last and do not vote. */
function ordered(item: OrderedItem): boolean {
  return item.relevance !== null && item.rule !== 'fail-open';
}

/** True when every ordered item of the groups has a ranking signal (and there is at least one). */
export function ordersByRanking(groups: ReadonlyArray<ReadonlyArray<OrderedItem>>): boolean {
  let any = false;
  for (const group of groups)
    for (let i = 0; i < group.length; i++) {
      const item = group[i]!;
      if (!ordered(item)) continue;
      if (rankingOf(item) === undefined) return false;
      any = true;
    }
  return any;
}

/** The value an item is ordered by (ranking or relevance), or null for an item without a relevance (last). */
export function orderValue(item: OrderedItem, byRanking: boolean): number | null {
  if (!ordered(item)) return null;
  return byRanking ? (rankingOf(item) as number) : (item.relevance as number);
}
