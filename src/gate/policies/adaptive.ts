/**
 * Query-adaptive threshold selection. Precedence (first that applies):
 * an operating point (the threshold is chosen from the scored list after scoring; the base
 * threshold is only this placeholder); related-threshold mode → relatedThreshold; thresholdFn;
 * thresholdByQueryClass[queryClass]; thresholdByQueryLength (first bucket with words ≤ maxWords);
 * the base threshold.
 */
import { InvalidPolicyError } from '../errors.js';
import type { QueryLengthThreshold, ThresholdFunction } from '../types.js';

/**
 * How a compiled policy picks its threshold: 'threshold' (an absolute, possibly query-adaptive
 * threshold), 'related-threshold' (the absolute relatedThreshold), 'operating-point' (relative to
 * the request's scored list; src/gate/policies/operating-points.ts).
 */
export type ThresholdMode = 'threshold' | 'related-threshold' | 'operating-point';

export interface AdaptiveThresholdPolicy {
  readonly baseThreshold: number;
  readonly thresholdMode: ThresholdMode;
  readonly relatedThreshold: number;
  readonly thresholdFn: ThresholdFunction | undefined;
  readonly thresholdByQueryClass: Readonly<Record<string, number>> | undefined;
  readonly thresholdByQueryLength: readonly QueryLengthThreshold[] | undefined;
}

/** Whitespace-separated words (Unicode whitespace), without allocating. */
export function countWords(query: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < query.length; i++) {
    const c = query.charCodeAt(i);
    const space =
      c <= 32 ||
      c === 0x85 ||
      c === 0xa0 ||
      c === 0x1680 ||
      (c >= 0x2000 && c <= 0x200a) ||
      c === 0x2028 ||
      c === 0x2029 ||
      c === 0x202f ||
      c === 0x205f ||
      c === 0x3000;
    if (space) inWord = false;
    else if (!inWord) {
      inWord = true;
      words++;
    }
  }
  return words;
}

export function selectThreshold(
  policy: AdaptiveThresholdPolicy,
  query: string,
  queryClass: string | undefined,
): number {
  if (policy.thresholdMode === 'operating-point') return policy.baseThreshold;
  if (policy.thresholdMode === 'related-threshold') return policy.relatedThreshold;
  if (policy.thresholdFn !== undefined) {
    let chosen: unknown;
    try {
      chosen = policy.thresholdFn(query, {
        queryClass,
        queryWords: countWords(query),
        baseThreshold: policy.baseThreshold,
      });
    } catch (cause) {
      throw new InvalidPolicyError('thresholdFn', `threw: ${cause instanceof Error ? cause.message : String(cause)}`, {
        cause,
      });
    }
    if (typeof chosen !== 'number' || !(chosen >= 0 && chosen <= 1)) {
      throw new InvalidPolicyError('thresholdFn', `must return a number in [0, 1], returned ${String(chosen)}`);
    }
    return chosen;
  }
  if (
    queryClass !== undefined &&
    policy.thresholdByQueryClass !== undefined &&
    Object.hasOwn(policy.thresholdByQueryClass, queryClass)
  ) {
    return policy.thresholdByQueryClass[queryClass];
  }
  const buckets = policy.thresholdByQueryLength;
  if (buckets !== undefined) {
    const words = countWords(query);
    for (let i = 0; i < buckets.length; i++) if (words <= buckets[i].maxWords) return buckets[i].threshold;
  }
  return policy.baseThreshold;
}
