/**
 * The fast path's ordering score: the tree margin blended with the extractor's own BM25, per pair.
 *
 *   evidence = bm25_all / (2.2 · query_idf_sum)     (2.2 = k1 + 1: BM25's bound per unit of idf, so
 *                                                    evidence is the pair's BM25 over its query's bound)
 *   z        = (margin + λ · evidence) / (1 + λ)
 *   ranking  = σ(z)
 *
 * Why: leave-one-collection-out, ordering by margin + λ · evidence puts held-out nDCG@10 above BM25
 * on every collection where the margin alone does not (research/loco/NOTES.md), but the same blend used for
 * keep/drop lowers the gate's F1; so it is a SECOND signal (`ranking`) next to `relevant`.
 * Division by (1 + λ) only rescales (the order is that of margin + λ · evidence): it keeps z near
 * the margin's range so σ(z) does not saturate to 1.0 in float64 and tie pairs that differ.
 * Pure function of the pair's margin and features (no other passage of the list): cache-safe.
 * λ is chosen by the training pipeline (src/tooling/training/ranking-blend-selection.ts) and declared in
 * meta.json as `rankingBlend: { lambda }`; models without it emit no `ranking`.
 */
import { BM25_PARAMETERS } from '../../features/schema.js';
import { sigmoid } from '../../util/sigmoid.js';

/** meta.json `rankingBlend`. */
export interface RankingBlend {
  /** Weight of the lexical evidence against the tree margin (finite, ≥ 0; 0 = order by the margin). */
  readonly lambda: number;
}

/** k1 + 1: the largest BM25 contribution of one query term per unit of its idf. */
const BM25_TERM_BOUND = BM25_PARAMETERS.k1 + 1;

/** bm25_all over its per-query bound; 0 when the query has no idf mass or a feature is missing (NaN). */
export function lexicalEvidence(bm25All: number, queryIdfSum: number): number {
  const bound = BM25_TERM_BOUND * queryIdfSum;
  if (!(bound > 0) || !Number.isFinite(bm25All)) return 0;
  return bm25All / bound;
}

/** z = (margin + λ · evidence) / (1 + λ): the raw value of the ranking signal. */
export function rankingLogit(margin: number, evidence: number, lambda: number): number {
  return (margin + lambda * evidence) / (1 + lambda);
}

/** σ(z) in [0, 1]. */
export function rankingProbability(z: number): number {
  return sigmoid(z);
}

/** Validates meta.json's `rankingBlend`; returns an error message, or undefined when it is valid. */
export function rankingBlendProblem(raw: unknown): string | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'rankingBlend must be { "lambda": number }';
  const keys = Object.keys(raw);
  const lambda = (raw as { lambda?: unknown }).lambda;
  if (keys.length !== 1 || typeof lambda !== 'number' || !Number.isFinite(lambda) || lambda < 0)
    return 'rankingBlend must be { "lambda": a finite number >= 0 }';
  return undefined;
}
