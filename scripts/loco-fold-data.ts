/**
 * The per-query records scripts/loco-base.ts writes to OUT/fold-<collection>.json and
 * scripts/loco-gate.ts / loco-fusion.ts read, and the nDCG@10 of one query under a given order.
 */
import type { PlattParameters } from '../src/calibration/platt.js';
import type { RankingBlend } from '../src/tiers/trees/ranking-blend.js';
import { ndcgAt } from '../src/eval/metrics.js';
import { RANKING_BLEND_LAMBDAS } from '../src/training/ranking-blend-selection.js';
import { lexicalEvidence, rankingLogit } from '../src/tiers/trees/ranking-blend.js';

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

/** A fold query with the per-pair features the ranking signal reads. */
export type RankedQuery = ScoredQuery & { readonly f: Record<string, number[]> };

/** The ranking signal's logit per candidate (BM25 order) at `lambda`, as the scorer computes it. */
export function rankingLogits(q: RankedQuery, lambda: number): number[] {
  const bm25 = q.f.bm25_all;
  const idf = q.f.query_idf_sum;
  if (!bm25 || !idf) throw new Error(`query ${q.q}: the fold file has no bm25_all / query_idf_sum (rerun loco-base)`);
  return q.m.map((m, i) => rankingLogit(m, lexicalEvidence(bm25[i]!, idf[i]!), lambda));
}

/** Per λ of RANKING_BLEND_LAMBDAS: relative nDCG@10 gain over BM25 and its standard error (paired per-query differences). */
export interface GainPoint {
  readonly gain: number;
  readonly se: number;
}

export function blendGainCurve(queries: readonly RankedQuery[]): GainPoint[] {
  const base = queries.map((q) =>
    queryNdcgAt10(
      q,
      q.m.map((_, i) => -i),
    ),
  );
  const baseMean = meanOf(base);
  return RANKING_BLEND_LAMBDAS.map((lambda) => {
    const d = queries.map((q, k) => queryNdcgAt10(q, rankingLogits(q, lambda)) - base[k]!);
    const md = meanOf(d);
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - md) ** 2, 0) / Math.max(1, d.length - 1));
    return { gain: md / baseMean, se: sd / Math.sqrt(d.length) / baseMean };
  });
}

function meanOf(a: readonly number[]): number {
  return a.reduce((x, y) => x + y, 0) / a.length;
}

/** Index into RANKING_BLEND_LAMBDAS of the highest worst-collection gain (ties: the smaller λ). */
export function bestWorstLambda(perCollection: readonly GainPoint[][]): number {
  const worst = RANKING_BLEND_LAMBDAS.map((_, j) => Math.min(...perCollection.map((c) => c[j]!.gain)));
  let best = 0;
  for (let j = 1; j < worst.length; j++) if (worst[j]! > worst[best]!) best = j;
  return best;
}

/**
 * The shipped rule (src/training/ranking-blend-selection.ts) on fold curves: the largest λ with every
 * collection within one standard error of its gain at the best λ. Index into RANKING_BLEND_LAMBDAS.
 */
export function oneStandardErrorLambda(perCollection: readonly GainPoint[][]): number {
  const b = bestWorstLambda(perCollection);
  let chosen = b;
  for (let j = b + 1; j < RANKING_BLEND_LAMBDAS.length; j++)
    if (perCollection.every((x) => x[j]!.gain >= x[b]!.gain - x[b]!.se)) chosen = j;
  return chosen;
}

/** The shipped rule's λ for a fold, from its training collections' validation queries. */
export function foldBlendLambda(fold: FoldFile): number {
  const curves = fold.trainedOn.map((c) => blendGainCurve(fold.scores[c]!.validation as RankedQuery[]));
  return RANKING_BLEND_LAMBDAS[oneStandardErrorLambda(curves)]!;
}
