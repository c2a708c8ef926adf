/**
 * The per-query records scripts/loco-base.ts writes to OUT/fold-<collection>.json and
 * scripts/loco-gate.ts / loco-fusion.ts read, and the nDCG@10 of one query under a given order.
 */
import type { PlattParameters } from '../src/calibration/platt.js';
import type { RankingBlend } from '../src/tiers/trees/ranking-blend.js';
import { ndcgAt } from '../src/eval/metrics.js';

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
