/**
 * The model-selection rule, on VALIDATION queries: per collection, the nDCG@10 gain of reranking
 * over the first-stage order. A candidate is admissible when its worst collection's gain is at
 * least `minWorstGain`; among admissible candidates the highest mean gain (every collection weighs
 * the same) wins; when none is admissible, the highest worst-collection gain wins. Ties keep the
 * earlier candidate (fewer rounds, earlier grid point).
 */
import { InvalidArgumentError } from '../../errors.js';

export interface SelectionScore {
  /** Mean over collections of (reranked - first-stage) validation nDCG@10. */
  readonly meanGain: number;
  readonly worstGain: number;
  readonly worstCollection: string;
}

export const DEFAULT_MIN_WORST_GAIN = 0;

export function selectionScore(
  reranked: Readonly<Record<string, number | null>>,
  firstStage: Readonly<Record<string, number | null>>,
): SelectionScore {
  let sum = 0;
  let n = 0;
  let worstGain = Number.POSITIVE_INFINITY;
  let worstCollection = '';
  for (const name of Object.keys(firstStage).sort()) {
    const base = firstStage[name];
    const value = reranked[name];
    if (base === null || base === undefined) continue;
    if (value === null || value === undefined)
      throw new InvalidArgumentError(`no reranked nDCG@10 for collection ${name}`);
    const gain = value - base;
    sum += gain;
    n++;
    if (gain < worstGain) {
      worstGain = gain;
      worstCollection = name;
    }
  }
  if (n === 0) throw new InvalidArgumentError('no collection has a first-stage nDCG@10 to compare with');
  return { meanGain: sum / n, worstGain, worstCollection };
}

/** True when `a` should replace the current best `b`. */
export function isBetterSelection(
  a: SelectionScore,
  b: SelectionScore | null,
  minWorstGain = DEFAULT_MIN_WORST_GAIN,
): boolean {
  if (b === null) return true;
  const aOk = a.worstGain >= minWorstGain;
  const bOk = b.worstGain >= minWorstGain;
  if (aOk !== bOk) return aOk;
  return aOk ? a.meanGain > b.meanGain : a.worstGain > b.worstGain;
}
