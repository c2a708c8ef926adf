/**
 * Choosing a gate threshold from labelled scores: the one implementation used by calibration
 * (fitCalibratedThreshold), evaluation (`relevance-gate eval`) and training (a model's
 * recommendedThreshold). A pair is KEPT when score ≥ threshold.
 */
import { finiteNumber, probability } from '../util/validate-options.js';

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

/** The row of a kept set of `kept` pairs, `relevantKept` of them relevant, out of `relevantTotal` relevant. */
export function thresholdRow(
  threshold: number,
  kept: number,
  relevantKept: number,
  relevantTotal: number,
): ThresholdRow {
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

/** Refuses a pair whose score is not a finite number (a NaN would silently sort anywhere). */
export function assertFiniteScores(pairs: readonly LabelledScore[]): void {
  for (let i = 0; i < pairs.length; i++) finiteNumber(`pairs[${i}].score`, pairs[i]!.score);
}

/**
 * The threshold that reaches `targetPrecision` with the most recall: among the thresholds equal
 * to a pair's score (the only places where kept sets change; ties are kept or dropped together),
 * those whose precision ≥ target; the one with the HIGHEST recall wins; among equal recall, the
 * HIGHEST threshold (fewest pairs kept, i.e. the score of the lowest-scored relevant pair it keeps).
 * Returns null when no non-empty kept set reaches the target or the pool has no relevant pair.
 */
export function thresholdForPrecision(pairs: readonly LabelledScore[], targetPrecision: number): ThresholdRow | null {
  probability('targetPrecision', targetPrecision);
  assertFiniteScores(pairs);
  const sorted = [...pairs].sort((a, b) => b.score - a.score);
  let relevantTotal = 0;
  for (const p of pairs) if (p.relevant) relevantTotal++;
  if (relevantTotal === 0) return null;
  let best: ThresholdRow | null = null;
  let relevantKept = 0;
  for (let i = 0; i < sorted.length; i++) {
    relevantKept += sorted[i]!.relevant ? 1 : 0;
    if (i + 1 < sorted.length && sorted[i + 1]!.score === sorted[i]!.score) continue;
    const r = thresholdRow(sorted[i]!.score, i + 1, relevantKept, relevantTotal);
    if (r.precision! >= targetPrecision && (best === null || r.recall! > best.recall!)) best = r;
  }
  return best;
}
