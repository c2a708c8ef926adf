/**
 * Chooses the fast path's ranking-blend weight λ (src/tiers/trees/ranking-blend.ts) on the
 * VALIDATION queries, after the trees are chosen (the trees and the `relevant` probabilities do not
 * depend on it). Rule: over the fixed grid RANKING_BLEND_LAMBDAS, the λ whose WORST collection has
 * the highest relative validation nDCG@10 gain over BM25 (ordering by the ranking signal, ties by
 * first-stage rank, as the gate and `relevance-gate eval` order); ties keep the smaller λ. The worst
 * collection, because the blend is there for collections unlike the training ones (leave-one-
 * collection-out it lifted the one the margin alone lost, docs/eval.md). Deterministic: fixed grid,
 * fixed order, float64.
 */
import { InvalidArgumentError } from '../errors.js';
import { lexicalEvidence, type RankingBlend, rankingLogit, rankingProbability } from '../tiers/trees/ranking-blend.js';
import type { RankingDataset } from './dataset.js';
import { ndcgByCollection } from './validation-metrics.js';

/** The λ grid (the one scripts/loco-fusion.ts measured): 0 = the margin alone. */
export const RANKING_BLEND_LAMBDAS: readonly number[] = Object.freeze([
  0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 50, 100, 1000,
]);

export const RANKING_BLEND_RULE =
  'highest worst-collection relative validation nDCG@10 gain over BM25 (ties: the smaller lambda)';

export interface RankingBlendCandidate {
  readonly lambda: number;
  /** Per collection: (nDCG@10 ordered by the ranking signal − BM25's) / BM25's, validation queries. */
  readonly relativeGain: Readonly<Record<string, number>>;
  readonly worstGain: number;
  readonly meanGain: number;
}

export interface RankingBlendSelection {
  readonly blend: RankingBlend;
  readonly chosen: RankingBlendCandidate;
  readonly grid: readonly RankingBlendCandidate[];
  readonly rule: string;
}

/** The scorer's ranking signal for every row of `dataset` from its margins (float64, as the scorer computes it). */
export function rankingScores(dataset: RankingDataset, margins: ArrayLike<number>, lambda: number): Float64Array {
  const nf = dataset.featureNames.length;
  const bm25 = dataset.featureNames.indexOf('bm25_all');
  const idfSum = dataset.featureNames.indexOf('query_idf_sum');
  if (bm25 < 0 || idfSum < 0) throw new InvalidArgumentError('the dataset has no bm25_all / query_idf_sum features');
  const out = new Float64Array(dataset.numRows);
  for (let r = 0; r < dataset.numRows; r++) {
    const g = lexicalEvidence(dataset.features[r * nf + bm25]!, dataset.features[r * nf + idfSum]!);
    out[r] = rankingProbability(rankingLogit(margins[r]!, g, lambda));
  }
  return out;
}

/** Whether the dataset has the features the ranking signal reads (a stand-in featurizer in tests may not). */
export function hasRankingFeatures(dataset: RankingDataset): boolean {
  return dataset.featureNames.includes('bm25_all') && dataset.featureNames.includes('query_idf_sum');
}

/**
 * λ for the model whose validation margins are `margins` (one per validation row); undefined when
 * the dataset lacks bm25_all / query_idf_sum (then the model declares no blend).
 */
export function chooseRankingBlend(
  validation: RankingDataset,
  margins: ArrayLike<number>,
  lambdas: readonly number[] = RANKING_BLEND_LAMBDAS,
): RankingBlendSelection | undefined {
  if (lambdas.length === 0) throw new InvalidArgumentError('empty lambda grid');
  if (!hasRankingFeatures(validation)) return undefined;
  if (margins.length !== validation.numRows)
    throw new InvalidArgumentError(`${margins.length} margins for ${validation.numRows} validation rows`);
  const firstStage = ndcgByCollection(validation, null);
  const grid: RankingBlendCandidate[] = [];
  let best: RankingBlendCandidate | undefined;
  for (const lambda of lambdas) {
    const reranked = ndcgByCollection(validation, rankingScores(validation, margins, lambda));
    const relativeGain: Record<string, number> = {};
    let worst = Number.POSITIVE_INFINITY;
    let sum = 0;
    let n = 0;
    for (const name of Object.keys(firstStage).sort()) {
      const base = firstStage[name];
      const value = reranked[name];
      if (base === null || base === undefined || !(base > 0) || value === null || value === undefined) continue;
      const gain = (value - base) / base;
      relativeGain[name] = gain;
      worst = Math.min(worst, gain);
      sum += gain;
      n++;
    }
    if (n === 0) throw new InvalidArgumentError('no validation collection has a first-stage nDCG@10');
    const candidate: RankingBlendCandidate = { lambda, relativeGain, worstGain: worst, meanGain: sum / n };
    grid.push(candidate);
    if (best === undefined || candidate.worstGain > best.worstGain) best = candidate;
  }
  const chosen = best as RankingBlendCandidate;
  return { blend: { lambda: chosen.lambda }, chosen, grid, rule: RANKING_BLEND_RULE };
}
