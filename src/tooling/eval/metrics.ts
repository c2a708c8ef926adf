/**
 * Retrieval and gate metrics, computed in float64.
 *
 * Conventions (documented in docs/eval.md):
 * - nDCG@k uses LINEAR graded gains (gain = qrels grade, as trec_eval / pytrec_eval and BEIR do) and the
 *   standard discount 1 / log2(rank + 1), rank starting at 1. The ideal ranking is built from ALL judged
 *   relevant documents of the query (grade > 0), not only those retrieved. A query without relevant
 *   judgments has no nDCG (callers skip it). Unjudged documents count as grade 0.
 * - Average precision: binary relevance (grade > 0), denominator = all judged relevant documents.
 * - Threshold rules: a pair is KEPT when score >= threshold. Precision of an empty kept set is undefined
 *   (null in tables); recall is relative to the relevant pairs in the scored pool.
 */
import {
  assertFiniteScores,
  type LabelledScore,
  type ThresholdRow,
  thresholdRow,
} from '../../calibration/threshold-for-precision.js';
import { positiveInteger } from '../../util/validate-options.js';

export {
  thresholdForPrecision,
  type LabelledScore,
  type ThresholdRow,
} from '../../calibration/threshold-for-precision.js';

/** Grades of judged documents for one query: doc id → grade (> 0 = relevant). */
export type Judgments = ReadonlyMap<string, number>;

function gradeOf(judgments: Judgments, docId: string): number {
  const g = judgments.get(docId);
  return g !== undefined && g > 0 ? g : 0;
}

/** DCG of the first k entries of `ranking` (linear gains, log2 discount). */
export function dcgAt(ranking: readonly string[], judgments: Judgments, k: number): number {
  let dcg = 0;
  const n = Math.min(k, ranking.length);
  for (let i = 0; i < n; i++) {
    const g = gradeOf(judgments, ranking[i]!);
    if (g > 0) dcg += g / Math.log2(i + 2);
  }
  return dcg;
}

/** nDCG@k of a ranking, or null when the query has no relevant judgment. */
export function ndcgAt(ranking: readonly string[], judgments: Judgments, k = 10): number | null {
  positiveInteger('k', k);
  const ideal = [...judgments.values()].filter((g) => g > 0).sort((a, b) => b - a);
  if (ideal.length === 0) return null;
  let idcg = 0;
  for (let i = 0; i < Math.min(k, ideal.length); i++) idcg += ideal[i]! / Math.log2(i + 2);
  return dcgAt(ranking, judgments, k) / idcg;
}

/** Average precision of a ranking (binary relevance), or null when the query has no relevant judgment. */
export function averagePrecision(ranking: readonly string[], judgments: Judgments): number | null {
  let relevantTotal = 0;
  for (const g of judgments.values()) if (g > 0) relevantTotal++;
  if (relevantTotal === 0) return null;
  let hits = 0;
  let sum = 0;
  for (let i = 0; i < ranking.length; i++) {
    if (gradeOf(judgments, ranking[i]!) > 0) {
      hits++;
      sum += hits / (i + 1);
    }
  }
  return sum / relevantTotal;
}

/** Mean of the non-null values (null when there are none). */
export function meanOf(values: ReadonlyArray<number | null>): number | null {
  let sum = 0;
  let n = 0;
  for (const v of values) {
    if (v !== null) {
      sum += v;
      n++;
    }
  }
  return n === 0 ? null : sum / n;
}

/** Precision/recall/F1 when keeping pairs with score >= threshold, for each given threshold (in the order given). */
export function thresholdSweep(pairs: readonly LabelledScore[], thresholds: readonly number[]): ThresholdRow[] {
  assertFiniteScores(pairs);
  const sorted = [...pairs].sort((a, b) => b.score - a.score);
  const relevantTotal = pairs.reduce((n, p) => n + (p.relevant ? 1 : 0), 0);
  // Prefix counts over the descending scores: kept(t) = number of scores >= t (binary search).
  const relPrefix = new Int32Array(sorted.length + 1);
  for (let i = 0; i < sorted.length; i++) relPrefix[i + 1] = relPrefix[i]! + (sorted[i]!.relevant ? 1 : 0);
  return thresholds.map((t) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]!.score >= t) lo = mid + 1;
      else hi = mid;
    }
    return thresholdRow(t, lo, relPrefix[lo]!, relevantTotal);
  });
}

/** Evenly spaced thresholds from 0 to 1 inclusive (steps of 1/steps), for tables and plots of probabilities. */
export function thresholdGrid(steps = 100): number[] {
  return Array.from({ length: steps + 1 }, (_, i) => Number((i / steps).toFixed(6)));
}

/**
 * What a threshold keeps over queries: each query keeps its candidates with score >= threshold.
 * (Offline evaluation of a threshold; the gate's per-call result stats are GateStats in src/gate.)
 */
export interface KeptSetStats {
  readonly threshold: number;
  /** Relevant / all over every candidate (keeping all of them), pooled over queries. */
  readonly precisionAll: number | null;
  /** Relevant kept / kept, pooled over queries; null when nothing is kept. */
  readonly precisionKept: number | null;
  /** Relevant kept / relevant candidates, pooled over queries; null when no candidate is relevant. */
  readonly recallKept: number | null;
  /** Mean number kept per query. */
  readonly keptPerQuery: number;
  /** Mean number of candidates per query. */
  readonly candidatesPerQuery: number;
  readonly queries: number;
  /** Queries where the gate kept nothing. */
  readonly queriesWithNothingKept: number;
}

/** Kept-set stats of per-query candidate lists (scores + labels), pooled (micro-averaged) over queries. */
export function keptSetStats(perQuery: ReadonlyArray<readonly LabelledScore[]>, threshold: number): KeptSetStats {
  let all = 0;
  let relevantAll = 0;
  let kept = 0;
  let relevantKept = 0;
  let empty = 0;
  for (const pairs of perQuery) {
    assertFiniteScores(pairs);
    let keptHere = 0;
    for (const p of pairs) {
      all++;
      if (p.relevant) relevantAll++;
      if (p.score >= threshold) {
        keptHere++;
        if (p.relevant) relevantKept++;
      }
    }
    kept += keptHere;
    if (keptHere === 0) empty++;
  }
  const q = perQuery.length;
  return {
    threshold,
    precisionAll: all === 0 ? null : relevantAll / all,
    precisionKept: kept === 0 ? null : relevantKept / kept,
    recallKept: relevantAll === 0 ? null : relevantKept / relevantAll,
    keptPerQuery: q === 0 ? 0 : kept / q,
    candidatesPerQuery: q === 0 ? 0 : all / q,
    queries: q,
    queriesWithNothingKept: empty,
  };
}
