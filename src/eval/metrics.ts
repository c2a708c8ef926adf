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
import { InvalidArgumentError } from '../errors.js';

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
  if (!(k >= 1) || !Number.isInteger(k)) throw new InvalidArgumentError(`k must be a positive integer, got ${k}`);
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

/** One scored (query, passage) pair with its binary label. */
export interface LabelledScore {
  readonly score: number;
  readonly relevant: boolean;
}

export interface ThresholdRow {
  readonly threshold: number;
  /** Relevant kept / kept; null when nothing is kept. */
  readonly precision: number | null;
  /** Relevant kept / relevant in the pool; null when the pool has no relevant pair. */
  readonly recall: number | null;
  /** Harmonic mean of precision and recall; null when either is null, 0 when both are 0. */
  readonly f1: number | null;
  readonly kept: number;
  readonly relevantKept: number;
}

function validatePairs(pairs: readonly LabelledScore[]): void {
  for (let i = 0; i < pairs.length; i++) {
    if (!Number.isFinite(pairs[i]!.score))
      throw new InvalidArgumentError(`pair ${i}: score ${pairs[i]!.score} is not finite`);
  }
}

function row(threshold: number, kept: number, relevantKept: number, relevantTotal: number): ThresholdRow {
  const precision = kept === 0 ? null : relevantKept / kept;
  const recall = relevantTotal === 0 ? null : relevantKept / relevantTotal;
  const f1 =
    precision === null || recall === null
      ? null
      : precision + recall === 0
        ? 0
        : (2 * precision * recall) / (precision + recall);
  return { threshold, precision, recall, f1, kept, relevantKept };
}

/** Precision/recall/F1 when keeping pairs with score >= threshold, for each given threshold (in the order given). */
export function thresholdSweep(pairs: readonly LabelledScore[], thresholds: readonly number[]): ThresholdRow[] {
  validatePairs(pairs);
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
    return row(t, lo, relPrefix[lo]!, relevantTotal);
  });
}

/** Evenly spaced thresholds from 0 to 1 inclusive (steps of 1/steps), for tables and plots of probabilities. */
export function thresholdGrid(steps = 100): number[] {
  return Array.from({ length: steps + 1 }, (_, i) => Number((i / steps).toFixed(6)));
}

/**
 * The threshold that reaches `targetPrecision`: among all thresholds equal to a pair's score (the only
 * places where kept sets change), those whose precision >= target; the one with the HIGHEST recall wins;
 * among equal recall, the HIGHEST threshold (fewest pairs kept, i.e. the score of the lowest-scored
 * relevant pair it keeps). Returns null when no non-empty kept set reaches the target or the pool has
 * no relevant pair.
 */
export function thresholdForPrecision(pairs: readonly LabelledScore[], targetPrecision: number): ThresholdRow | null {
  if (!(targetPrecision >= 0 && targetPrecision <= 1)) {
    throw new InvalidArgumentError(`target precision must be in [0, 1], got ${targetPrecision}`);
  }
  validatePairs(pairs);
  const sorted = [...pairs].sort((a, b) => b.score - a.score);
  const relevantTotal = pairs.reduce((n, p) => n + (p.relevant ? 1 : 0), 0);
  if (relevantTotal === 0) return null;
  let best: ThresholdRow | null = null;
  let relevantKept = 0;
  for (let i = 0; i < sorted.length; i++) {
    relevantKept += sorted[i]!.relevant ? 1 : 0;
    // Only the last pair of a run of equal scores is a valid cut: ties are kept or dropped together.
    if (i + 1 < sorted.length && sorted[i + 1]!.score === sorted[i]!.score) continue;
    const r = row(sorted[i]!.score, i + 1, relevantKept, relevantTotal);
    if (r.precision! >= targetPrecision && (best === null || r.recall! > best.recall!)) best = r;
  }
  return best;
}

/** Gate outcome over queries: each query keeps its candidates with score >= threshold. */
export interface GateStats {
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

/** Gate stats for per-query candidate lists (scores + labels), pooled (micro-averaged) over queries. */
export function gateStats(perQuery: ReadonlyArray<readonly LabelledScore[]>, threshold: number): GateStats {
  let all = 0;
  let relevantAll = 0;
  let kept = 0;
  let relevantKept = 0;
  let empty = 0;
  for (const pairs of perQuery) {
    validatePairs(pairs);
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
