/**
 * Chooses the fast path's ranking-blend weight λ (src/tiers/fast-path/ranking-blend.ts) on the
 * VALIDATION queries, after the trees are chosen (the trees and the `relevant` probabilities do not
 * depend on it). Rule, over the fixed ascending grid RANKING_BLEND_LAMBDAS:
 *   1. the best λ: the highest WORST-collection relative validation nDCG@10 gain over BM25 (ordering
 *      by the ranking signal, ties by first-stage rank, as the gate and `relevance-gate eval` order);
 *   2. the chosen λ: the LARGEST λ at which EVERY collection's gain is within one standard error of
 *      its gain at the best λ (the standard error from that collection's per-query paired nDCG@10
 *      differences to BM25 at the best λ).
 * The worst collection, because the blend is there for collections unlike the training ones. The
 * one-standard-error step (after Breiman's rule: the simplest model within one standard error of the
 * best), because a larger λ leans on the extractor's BM25, which transfers to unseen collections
 * better than the trees do, and a few validation queries cannot tell close λs apart: leave-one-
 * collection-out with the best λ alone, one split seed put CISI 4.8 % below BM25 (λ 0); research/loco/NOTES.md
 * "Choosing λ" has the per-seed tables. Deterministic: fixed grid, fixed order, float64.
 */
import { InvalidArgumentError } from '../../errors.js';
import {
  lexicalEvidence,
  type RankingBlend,
  rankingLogit,
  rankingProbability,
} from '../../tiers/fast-path/ranking-blend.js';
import type { RankingDataset } from './dataset.js';
import { ndcgPerQueryByCollection } from './validation-metrics.js';

/** The λ grid (the one research/loco/loco-fusion.ts measured): 0 = the margin alone. */
export const RANKING_BLEND_LAMBDAS: readonly number[] = Object.freeze([
  0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 50, 100, 1000,
]);

export const RANKING_BLEND_RULE =
  'the largest lambda at which every collection is within one standard error of its relative validation nDCG@10 gain over BM25 at the lambda with the best worst-collection gain';

export interface RankingBlendCandidate {
  readonly lambda: number;
  /** Per collection: (nDCG@10 ordered by the ranking signal − BM25's) / BM25's, validation queries. */
  readonly relativeGain: Readonly<Record<string, number>>;
  readonly worstGain: number;
  /** Per collection: standard error of relativeGain (sd of the per-query nDCG@10 differences to BM25 / √n / BM25's mean). */
  readonly standardError: Readonly<Record<string, number>>;
  readonly meanGain: number;
}

export interface RankingBlendSelection {
  readonly blend: RankingBlend;
  readonly chosen: RankingBlendCandidate;
  /** The λ with the highest worstGain (ties: the smaller); `chosen` is the largest λ where no collection falls more than its standard error below it. */
  readonly best: RankingBlendCandidate;
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
  const firstStage = ndcgPerQueryByCollection(validation, null);
  const grid: RankingBlendCandidate[] = [];
  for (const lambda of lambdas) {
    const reranked = ndcgPerQueryByCollection(validation, rankingScores(validation, margins, lambda));
    const gains: Record<string, PairedGain | null> = {};
    for (const name of Object.keys(firstStage).sort())
      gains[name] = pairedRelativeGain(firstStage[name]!, reranked[name]!);
    const candidate = rankingBlendCandidate(lambda, gains);
    if (candidate === null) throw new InvalidArgumentError('no validation collection has a first-stage nDCG@10');
    grid.push(candidate);
  }
  const { best, chosen } = pickRankingBlend(grid);
  return { blend: { lambda: chosen.lambda }, chosen, best, grid, rule: RANKING_BLEND_RULE };
}

/** A collection's relative gain over BM25 at one λ, with its standard error (pairedRelativeGain). */
export interface PairedGain {
  readonly gain: number;
  readonly standardError: number;
}

/**
 * The candidate of one λ from its per-collection gains, in the key order given (collections without
 * a gain, null, are left out); null when no collection has one.
 */
export function rankingBlendCandidate(
  lambda: number,
  gains: Readonly<Record<string, PairedGain | null>>,
): RankingBlendCandidate | null {
  const relativeGain: Record<string, number> = {};
  const standardError: Record<string, number> = {};
  let worst = Number.POSITIVE_INFINITY;
  let sum = 0;
  let n = 0;
  for (const [name, g] of Object.entries(gains)) {
    if (g === null) continue;
    relativeGain[name] = g.gain;
    standardError[name] = g.standardError;
    worst = Math.min(worst, g.gain);
    sum += g.gain;
    n++;
  }
  if (n === 0) return null;
  return { lambda, relativeGain, worstGain: worst, meanGain: sum / n, standardError };
}

/**
 * The rule on a grid of candidates in ascending λ: `best` has the highest worstGain (ties: the
 * smaller λ); `chosen` is the largest λ at which every collection of `best` is within its standard
 * error of its gain there. Shared with the leave-one-collection-out scripts, which build the grid
 * from fold files.
 */
export function pickRankingBlend(grid: readonly RankingBlendCandidate[]): {
  readonly best: RankingBlendCandidate;
  readonly chosen: RankingBlendCandidate;
} {
  if (grid.length === 0) throw new InvalidArgumentError('empty lambda grid');
  let best = grid[0]!;
  for (const c of grid) if (c.worstGain > best.worstGain) best = c;
  const withinError = (c: RankingBlendCandidate): boolean =>
    Object.entries(best.relativeGain).every(
      ([name, g]) => (c.relativeGain[name] ?? Number.NEGATIVE_INFINITY) >= g - best.standardError[name]!,
    );
  let chosen = best;
  for (const c of grid) if (c.lambda > chosen.lambda && withinError(c)) chosen = c;
  return { best, chosen };
}

/**
 * (mean reranked − mean BM25) / mean BM25 over the queries with a judged relevant passage, and its
 * standard error from the paired per-query differences; null without such a query or with BM25 at 0.
 */
export function pairedRelativeGain(
  base: ReadonlyArray<number | null>,
  reranked: ReadonlyArray<number | null>,
): PairedGain | null {
  const diffs: number[] = [];
  let baseSum = 0;
  for (let i = 0; i < base.length; i++) {
    const b = base[i];
    const r = reranked[i];
    if (b === null || b === undefined || r === null || r === undefined) continue;
    baseSum += b;
    diffs.push(r - b);
  }
  const n = diffs.length;
  if (n === 0 || !(baseSum > 0)) return null;
  const baseMean = baseSum / n;
  const diffMean = diffs.reduce((a, d) => a + d, 0) / n;
  const variance = n > 1 ? diffs.reduce((a, d) => a + (d - diffMean) ** 2, 0) / (n - 1) : 0;
  return { gain: diffMean / baseMean, standardError: Math.sqrt(variance / n) / baseMean };
}
