/**
 * Model selection for the fast-path model: train each hyperparameter point on the TRAIN queries,
 * rerank the VALIDATION queries' BM25 top-k with it, and keep the point with the best macro-averaged
 * (every collection weighs the same) validation nDCG@10. Ties keep the earlier grid point.
 * The training and prediction back ends are injected (ml-xgboost and the native evaluator in
 * production; tests may pass small stand-ins).
 */
import { InvalidArgumentError } from '../errors.js';
import { meanOf, ndcgAt } from '../eval/metrics.js';
import { rerankOrder } from '../eval/run-eval.js';
import type { RankingDataset } from './dataset.js';

/**
 * Objectives (ml-xgboost cannot train rank:pairwise: it has no query-group API; see
 * src/tiers/trees/training/train-xgboost.ts):
 * - binary:logistic: label 1 for grade > 0; outputs a probability.
 * - reg:logistic: label = grade / (highest grade in that collection's judgments); outputs [0, 1].
 * - reg:squarederror: QUERY-CENTRED graded label = grade / top grade - mean of that over the query's
 *   candidates. Only differences within a query are rewarded, not a query's base rate of relevant
 *   candidates (which differs tenfold between collections), a pointwise stand-in for a ranking
 *   objective. Outputs a margin; the training pipeline fits Platt calibration for probabilities.
 */
export type FastPathObjective = 'binary:logistic' | 'reg:logistic' | 'reg:squarederror';

export interface GridPoint {
  readonly objective: FastPathObjective;
  readonly maxDepth: number;
  readonly eta: number;
  readonly rounds: number;
  readonly minChildWeight: number;
}

export interface TrainRequest {
  readonly features: Float32Array;
  readonly numRows: number;
  readonly numFeatures: number;
  /** Binary 0/1 for binary:logistic, graded in [0, 1] for reg:logistic. */
  readonly labels: Float32Array;
  readonly point: GridPoint;
  readonly seed: number;
}

export interface TrainingBackend {
  /** Trains a model and returns its bytes (a format loadTreeModel reads). Must be deterministic. */
  train(request: TrainRequest): Promise<Uint8Array>;
  /** Raw margins (float32 sums of the trees, as float64) of rows under model bytes. */
  predictMargins(modelBytes: Uint8Array, features: Float32Array, numRows: number, numFeatures: number): Promise<Float64Array>;
}

export interface ValidationResult {
  readonly point: GridPoint;
  /** Mean validation nDCG@10 per collection after reranking. */
  readonly ndcg10ByCollection: Readonly<Record<string, number | null>>;
  readonly macroNdcg10: number;
  readonly trainMs: number;
  readonly modelBytes: number;
}

export function labelsFor(dataset: RankingDataset, objective: FastPathObjective): Float32Array {
  const labels = new Float32Array(dataset.numRows);
  const maxGrade = new Map<string, number>();
  for (const g of dataset.groups) {
    let m = maxGrade.get(g.collection) ?? 1;
    for (const grade of g.list.judgments.values()) m = Math.max(m, grade);
    maxGrade.set(g.collection, m);
  }
  for (const g of dataset.groups) {
    const top = maxGrade.get(g.collection)!;
    const n = g.list.candidates.length;
    let mean = 0;
    for (let i = 0; i < n; i++) mean += dataset.grades[g.offset + i]! / top;
    mean = n > 0 ? mean / n : 0;
    for (let i = 0; i < n; i++) {
      const grade = dataset.grades[g.offset + i]!;
      labels[g.offset + i] =
        objective === 'binary:logistic' ? (grade > 0 ? 1 : 0) : objective === 'reg:logistic' ? grade / top : grade / top - mean;
    }
  }
  return labels;
}

/** Per-collection mean nDCG@10 of the dataset's candidate lists reordered by `scores` (first-stage order when null). */
export function ndcgByCollection(dataset: RankingDataset, scores: Float64Array | null): Record<string, number | null> {
  const perCollection = new Map<string, Array<number | null>>();
  for (const g of dataset.groups) {
    const n = g.list.candidates.length;
    const order = scores ? rerankOrder(g.list, scores.subarray(g.offset, g.offset + n)) : g.list.candidates.map((c) => c.docId);
    const values = perCollection.get(g.collection) ?? [];
    values.push(ndcgAt(order, g.list.judgments, 10));
    perCollection.set(g.collection, values);
  }
  const out: Record<string, number | null> = {};
  for (const [name, values] of perCollection) out[name] = meanOf(values);
  return out;
}

export function macroMean(byCollection: Readonly<Record<string, number | null>>): number {
  return meanOf(Object.values(byCollection)) ?? 0;
}

export async function gridSearch(
  backend: TrainingBackend,
  train: RankingDataset,
  validation: RankingDataset,
  grid: readonly GridPoint[],
  seed: number,
  onPoint?: (result: ValidationResult, index: number) => void,
): Promise<{ best: ValidationResult; bestModel: Uint8Array; results: ValidationResult[] }> {
  if (grid.length === 0) throw new InvalidArgumentError('empty hyperparameter grid');
  const nf = train.featureNames.length;
  const results: ValidationResult[] = [];
  let best: ValidationResult | null = null;
  let bestModel: Uint8Array | null = null;
  for (let i = 0; i < grid.length; i++) {
    const point = grid[i]!;
    const t0 = performance.now();
    const model = await backend.train({
      features: train.features,
      numRows: train.numRows,
      numFeatures: nf,
      labels: labelsFor(train, point.objective),
      point,
      seed,
    });
    const trainMs = performance.now() - t0;
    // Every objective maps margins monotonically (sigmoid or Platt), so margins rank like the final scores.
    const scores = await backend.predictMargins(model, validation.features, validation.numRows, nf);
    const ndcg10ByCollection = ndcgByCollection(validation, scores);
    const result: ValidationResult = {
      point,
      ndcg10ByCollection,
      macroNdcg10: macroMean(ndcg10ByCollection),
      trainMs: Math.round(trainMs),
      modelBytes: model.length,
    };
    results.push(result);
    onPoint?.(result, i);
    if (best === null || result.macroNdcg10 > best.macroNdcg10) {
      best = result;
      bestModel = model;
    }
  }
  return { best: best!, bestModel: bestModel!, results };
}
