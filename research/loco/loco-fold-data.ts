/**
 * The per-query records scripts/loco-base.ts writes to OUT/fold-<collection>.json and
 * scripts/loco-gate.ts / loco-fusion.ts read, and the nDCG@10 of one query under a given order.
 */
import type { PlattParameters } from '../../src/calibration/platt.js';
import type { RankingBlend } from '../../src/tiers/fast-path/ranking-blend.js';
import { ndcgAt } from '../../src/tooling/eval/metrics.js';
import { plattProbability } from '../../src/calibration/platt.js';
import type { GateList } from '../../src/tooling/eval/operating-points.js';
import {
  type PairedGain,
  RANKING_BLEND_LAMBDAS,
  type RankingBlendCandidate,
  pairedRelativeGain,
  pickRankingBlend,
  rankingBlendCandidate,
} from '../../src/tooling/training/ranking-blend-selection.js';
import { lexicalEvidence, rankingLogit, rankingProbability } from '../../src/tiers/fast-path/ranking-blend.js';

export interface ScoredQuery {
  readonly q: string;
  /** margins of the BM25 top-k in BM25 order */
  readonly m: number[];
  /** grades in BM25 order */
  readonly g: number[];
  /** number of judged relevant documents of the query (nDCG's ideal) */
  readonly judged: number[];
  /** BM25 first-stage score per candidate (BM25 order); absent in folds written before it was added */
  readonly s?: number[];
  /** lexical features per candidate (BM25 order), keyed by name: bm25_all, query_idf_sum, idf_coverage */
  readonly f?: Record<string, number[]>;
}

/** Scores by split ('held', 'train', …) and collection. */
export type FoldScores = Record<string, Record<string, ScoredQuery[]>>;

export interface FoldFile {
  readonly heldOut: string;
  readonly trainedOn: string[];
  readonly calibration: PlattParameters | null;
  readonly recommendedThreshold: number;
  /** The fold model's ranking blend as the training pipeline chose it; absent in folds written before it was added. */
  readonly rankingBlend?: RankingBlend | null;
  readonly chosen: unknown;
  readonly scores: FoldScores;
}

/**
 * nDCG@10 of the query's candidates ordered by `score` descending (ties by BM25 rank). Relevant
 * documents outside the top k still count in the ideal DCG: the judged grades not in the list.
 */
export function queryNdcgAt10(q: ScoredQuery, score: readonly number[]): number {
  const judgments = new Map<string, number>();
  q.g.forEach((g, i) => {
    if (g > 0) judgments.set(String(i), g);
  });
  const missing = [...q.judged];
  for (const g of judgments.values()) missing.splice(missing.indexOf(g), 1);
  for (const [i, g] of missing.entries()) judgments.set(`missing-${i}`, g);
  const order = q.m.map((_, i) => i).sort((x, y) => score[y]! - score[x]! || x - y);
  return ndcgAt(order.map(String), judgments, 10) ?? 0;
}

/**
 * One query's nDCG@10 in BM25 order, in the margin (relevance) order, and in the order the gate returns
 * (the ranking signal when the fold model declares a blend; ties by BM25 rank, as the gate breaks them
 * by input rank).
 */
export function queryOrderNdcgs(
  q: ScoredQuery,
  blend: RankingBlend | null,
): { readonly bm25: number; readonly byRelevance: number; readonly reranked: number } {
  const bm25 = queryNdcgAt10(
    q,
    q.m.map((_, i) => -i),
  );
  const byRelevance = queryNdcgAt10(q, q.m);
  return {
    bm25,
    byRelevance,
    reranked: blend === null ? byRelevance : queryNdcgAt10(q, rankingSignal(q, blend.lambda)),
  };
}

/** A fold query with the per-pair features the ranking signal reads. */
export type RankedQuery = ScoredQuery & { readonly f: Record<string, number[]> };

/** The ranking signal's logit per candidate (BM25 order) at `lambda`, as the scorer computes it. */
export function rankingLogits(q: RankedQuery, lambda: number): number[] {
  const bm25 = q.f.bm25_all;
  const idf = q.f.query_idf_sum;
  if (!bm25 || !idf) throw new Error(`query ${q.q}: the fold file has no bm25_all / query_idf_sum (rerun loco-base)`);
  return q.m.map((m, i) => rankingLogit(m, lexicalEvidence(bm25[i]!, idf[i]!), lambda));
}

/**
 * Per λ of RANKING_BLEND_LAMBDAS: the queries' relative nDCG@10 gain over BM25 and its standard error
 * (src/tooling/training/ranking-blend-selection.ts pairedRelativeGain), ordered by the ranking signal.
 */
export function blendGainCurve(queries: readonly RankedQuery[]): PairedGain[] {
  const base = queries.map((q) =>
    queryNdcgAt10(
      q,
      q.m.map((_, i) => -i),
    ),
  );
  return RANKING_BLEND_LAMBDAS.map((lambda) => {
    const gain = pairedRelativeGain(
      base,
      queries.map((q) => queryNdcgAt10(q, rankingLogits(q, lambda))),
    );
    if (gain === null) throw new Error('no query with a first-stage nDCG@10 above 0');
    return gain;
  });
}

/** The ranking-blend grid of a fold from its collections' curves (blendGainCurve), as the pipeline builds it. */
export function blendGrid(curves: Readonly<Record<string, readonly PairedGain[]>>): RankingBlendCandidate[] {
  return RANKING_BLEND_LAMBDAS.map((lambda, j) => {
    const gains: Record<string, PairedGain> = {};
    for (const name of Object.keys(curves).sort()) gains[name] = curves[name]![j]!;
    const candidate = rankingBlendCandidate(lambda, gains);
    if (candidate === null) throw new Error('a ranking-blend grid needs at least one collection');
    return candidate;
  });
}

/** A fold's ranking-blend grid from its training collections' validation queries (what the pipeline saw). */
export function foldBlendGrid(fold: FoldFile): RankingBlendCandidate[] {
  const curves: Record<string, PairedGain[]> = {};
  for (const c of fold.trainedOn) curves[c] = blendGainCurve(fold.scores[c]!.validation as RankedQuery[]);
  return blendGrid(curves);
}

/** The shipped rule's λ for a fold (pickRankingBlend on foldBlendGrid). */
export function foldBlendLambda(fold: FoldFile): number {
  return pickRankingBlend(foldBlendGrid(fold)).chosen.lambda;
}

/** The gate works on the BM25 top 20 (docs/eval.md "Operating points"). */
export const GATE_K = 20;
/** The calibration of a fold file without one: the margin read as a logit. */
export const IDENTITY_CALIBRATION: PlattParameters = { type: 'platt', a: 1, b: 0 };

/**
 * The gate's view of fold queries: relevance probabilities and labels of the BM25 top GATE_K, and
 * with a ranking blend the `ranking` signal the scorer emits with it (the gate's order, and the
 * order its operating points take the kept head of); without one, relevance order.
 */
export function gateLists(
  queries: readonly ScoredQuery[],
  calibration: PlattParameters,
  blend?: RankingBlend | null,
): GateList[] {
  return queries.map((q) => ({
    relevances: q.m.slice(0, GATE_K).map((m) => plattProbability(calibration, m)),
    relevant: q.g.slice(0, GATE_K).map((g) => g > 0),
    ...(blend ? { order: rankingSignal(q, blend.lambda).slice(0, GATE_K) } : {}),
  }));
}

/** The gate lists an operating-point fit of a fold reads: its training collections' validation + test queries. */
export function foldTrainingLists(fold: FoldFile, blend?: RankingBlend | null): Record<string, GateList[]> {
  const calibration = fold.calibration ?? IDENTITY_CALIBRATION;
  const out: Record<string, GateList[]> = {};
  for (const n of fold.trainedOn)
    out[n] = gateLists([...fold.scores[n]!.validation!, ...fold.scores[n]!.test!], calibration, blend);
  return out;
}

/** The `ranking` signal per candidate (BM25 order) at `lambda`, the probability the scorer emits. */
export function rankingSignal(q: ScoredQuery, lambda: number): number[] {
  if (q.f === undefined) throw new Error(`query ${q.q} has no per-pair features (re-run scripts/loco-base.ts)`);
  return rankingLogits(q as RankedQuery, lambda).map(rankingProbability);
}
