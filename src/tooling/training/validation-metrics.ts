/**
 * Validation metrics of a ranking dataset under a set of scores: per-collection mean nDCG@10 of the
 * candidate lists reordered by the scores (ties keep first-stage order, like \`relevance-gate eval\`).
 */
import { meanOf, ndcgAt } from '../eval/metrics.js';
import { rerankOrder } from '../eval/run-eval.js';
import type { RankingDataset } from './dataset.js';

/** Per-collection mean nDCG@10 of the dataset's candidate lists reordered by `scores` (first-stage order when null). */
export function ndcgByCollection(dataset: RankingDataset, scores: Float64Array | null): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  for (const [name, values] of Object.entries(ndcgPerQueryByCollection(dataset, scores))) out[name] = meanOf(values);
  return out;
}

/**
 * Per collection, nDCG@10 per query (null where the query has no relevant judgment) of the lists
 * reordered by `scores` (first-stage order when null), in dataset order: paired across score sets.
 */
export function ndcgPerQueryByCollection(
  dataset: RankingDataset,
  scores: Float64Array | null,
): Record<string, Array<number | null>> {
  const out: Record<string, Array<number | null>> = {};
  for (const g of dataset.groups) {
    const n = g.list.candidates.length;
    const order = scores
      ? rerankOrder(g.list, scores.subarray(g.offset, g.offset + n))
      : g.list.candidates.map((c) => c.docId);
    const values = out[g.collection] ?? [];
    values.push(ndcgAt(order, g.list.judgments, 10));
    out[g.collection] = values;
  }
  return out;
}

export function macroMean(byCollection: Readonly<Record<string, number | null>>): number {
  return meanOf(Object.values(byCollection)) ?? 0;
}
