/**
 * Validation of a scorer's (or a cache's) answer for one pair. Both the gate and the router take
 * only answers that pass it, so an invalid probability is never decided on, labelled or cached.
 */
import type { ScorerPairResult, SignalProbabilities } from '../types.js';

/** Why an answer is unusable: no answer at all, or one that is not a valid score. */
export type PairResultProblem = 'scorer-null' | 'invalid-signal';

function validProbabilities(record: unknown): record is SignalProbabilities {
  if (typeof record !== 'object' || record === null) return false;
  for (const key in record) {
    const v = (record as Record<string, unknown>)[key];
    if (typeof v !== 'number' || !(v >= 0 && v <= 1)) return false;
  }
  return true;
}

function validRaw(record: unknown): record is Readonly<Record<string, number>> {
  if (typeof record !== 'object' || record === null) return false;
  for (const key in record) {
    const v = (record as Record<string, unknown>)[key];
    if (typeof v !== 'number' || !Number.isFinite(v)) return false;
  }
  return true;
}

/**
 * Why a scorer/cache answer is unusable, or undefined when it is a valid score: probabilities in
 * [0, 1] (plain, or under `probabilities` of a detailed record with finite `raw` values and a
 * string `tier` when present).
 */
export function pairResultProblem(result: ScorerPairResult | undefined): PairResultProblem | undefined {
  if (result === null || result === undefined) return 'scorer-null';
  if (typeof result !== 'object') return 'invalid-signal';
  const probabilities = (result as { probabilities?: unknown }).probabilities;
  if (typeof probabilities === 'object' && probabilities !== null) {
    const raw = (result as { raw?: unknown }).raw;
    const tier = (result as { tier?: unknown }).tier;
    if (!validProbabilities(probabilities)) return 'invalid-signal';
    if (raw !== undefined && !validRaw(raw)) return 'invalid-signal';
    if (tier !== undefined && typeof tier !== 'string') return 'invalid-signal';
    return undefined;
  }
  return validProbabilities(result) ? undefined : 'invalid-signal';
}

/** True when the answer is a valid score (narrows away null/undefined). */
export function isUsablePairResult(result: ScorerPairResult | undefined): result is NonNullable<ScorerPairResult> {
  return pairResultProblem(result) === undefined;
}

/**
 * Set on the results array by a scorer that honours the deadline by leaving the pairs it had no time
 * for null (the fast path's slices): its nulls are deadline cuts, not failures, even when it answers
 * a little before the deadline itself.
 */
export const CUT_BY_DEADLINE: unique symbol = Symbol.for('relevance-gate.cut-by-deadline');

/** Marks `results` as holding deadline cuts (CUT_BY_DEADLINE); returns it. */
export function markCutByDeadline<T extends object>(results: T): T {
  Object.defineProperty(results, CUT_BY_DEADLINE, { value: true, enumerable: false });
  return results;
}

/** True when a scorer marked these results' nulls as deadline cuts. */
export function isCutByDeadline(results: unknown): boolean {
  return (
    typeof results === 'object' &&
    results !== null &&
    (results as { [CUT_BY_DEADLINE]?: unknown })[CUT_BY_DEADLINE] === true
  );
}
