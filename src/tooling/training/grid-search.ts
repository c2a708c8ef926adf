/**
 * Model selection for the fast-path model: train each hyperparameter point on the TRAIN queries,
 * rerank the VALIDATION queries' BM25 top-k with it, and keep the best point by the rule of
 * selection.ts (mean per-collection nDCG@10 gain, subject to the worst collection). Ties keep the
 * earlier grid point.
 * The training and prediction back ends are injected (ml-xgboost and the native evaluator in
 * production; tests may pass small stand-ins).
 */
import { InvalidArgumentError } from '../../errors.js';
import { readTreeModelIR } from '../../tiers/fast-path/load-tree-model.js';
import type { TreeIR, TreeObjective } from '../../tiers/fast-path/model-ir.js';
import type { RankingDataset } from './dataset.js';
import { type LambdaMartParams, ensembleBytes, trainLambdaMart } from './lambdamart.js';
import type { RegressionTreeFitter } from './regression-tree-fitter.js';
import { type SelectionScore, DEFAULT_MIN_WORST_GAIN, isBetterSelection, selectionScore } from './selection.js';
import { macroMean, ndcgByCollection } from './validation-metrics.js';

export { macroMean, ndcgByCollection };

/**
 * Objectives (ml-xgboost cannot train rank:pairwise: it has no query-group API; see
 * src/tooling/training/trees/train-xgboost.ts):
 * - binary:logistic: label 1 for grade > 0; outputs a probability.
 * - reg:logistic: label = grade / (highest grade in that collection's judgments); outputs [0, 1].
 * - reg:squarederror: QUERY-CENTRED graded label = grade / top grade - mean of that over the query's
 *   candidates. Only differences within a query are rewarded, not a query's base rate of relevant
 *   candidates (which differs tenfold between collections), a pointwise stand-in for a ranking
 *   objective. Outputs a margin; the training pipeline fits Platt calibration for probabilities.
 */
export type PointwiseObjective = 'binary:logistic' | 'reg:logistic' | 'reg:squarederror';

/**
 * 'lambdamart': LambdaMART for NDCG (src/tooling/training/lambdamart.ts), trees fitted by ml-xgboost with
 * Newton leaves; the number of trees is chosen by early stopping on the validation queries.
 */
export type FastPathObjective = PointwiseObjective | 'lambdamart';

/** LambdaMART settings of a grid point (see LambdaMartParams). */
export interface LambdaMartSettings {
  readonly sigma: number;
  readonly truncation: number;
  readonly patience: number;
  readonly epsilon: number;
  readonly queryWeighting: LambdaMartParams['queryWeighting'];
  /**
   * Boost from the best POINTWISE model of the grid so far (by the selection rule), its leaves
   * multiplied by `scale` (its margins are on a smaller scale than LambdaMART's): LambdaMART then
   * corrects that model, and early stopping may keep it unchanged (0 new trees). Needs a pointwise
   * point earlier in the grid.
   */
  readonly warmStart?: { readonly scale: number };
}

export interface GridPoint {
  readonly objective: FastPathObjective;
  readonly maxDepth: number;
  readonly eta: number;
  /** Boosting rounds; for lambdamart the most rounds (early stopping picks the number of trees). */
  readonly rounds: number;
  readonly minChildWeight: number;
  /** Required for lambdamart, ignored otherwise. */
  readonly lambdaMart?: LambdaMartSettings;
}

/** The objective stored in the model file for a grid point's objective. */
export function modelObjectiveOf(objective: FastPathObjective): TreeObjective {
  return objective === 'lambdamart' ? 'rank:ndcg' : objective;
}

/** Objectives whose model outputs a margin, not a probability (the pipeline fits Platt calibration). */
export function outputsMargin(objective: FastPathObjective): boolean {
  return objective === 'reg:squarederror' || objective === 'lambdamart';
}

export interface TrainRequest {
  readonly features: Float32Array;
  readonly numRows: number;
  readonly numFeatures: number;
  /** Binary 0/1 for binary:logistic, graded in [0, 1] for reg:logistic. */
  readonly labels: Float32Array;
  readonly point: GridPoint & { readonly objective: PointwiseObjective };
  readonly seed: number;
}

export interface TrainingBackend {
  /** Trains a model and returns its bytes (a format loadTreeModel reads). Must be deterministic. */
  train(request: TrainRequest): Promise<Uint8Array>;
  /** Raw margins (float32 sums of the trees, as float64) of rows under model bytes. */
  predictMargins(
    modelBytes: Uint8Array,
    features: Float32Array,
    numRows: number,
    numFeatures: number,
  ): Promise<Float64Array>;
  /** One least-squares regression tree (the structure LambdaMART uses); needed for lambdamart points. */
  readonly fitRegressionTree?: RegressionTreeFitter;
}

export interface ValidationResult {
  readonly point: GridPoint;
  /** Mean validation nDCG@10 per collection after reranking. */
  readonly ndcg10ByCollection: Readonly<Record<string, number | null>>;
  readonly macroNdcg10: number;
  /** Gains over the first stage, the selection criterion (selection.ts). */
  readonly selection: SelectionScore;
  /** Trees in the model (for lambdamart: chosen by early stopping, <= point.rounds). */
  readonly trees: number;
  /** lambdamart: rounds trained before early stopping ended it. */
  readonly roundsTrained: number;
  readonly trainMs: number;
  readonly modelBytes: number;
}

export function labelsFor(dataset: RankingDataset, objective: PointwiseObjective): Float32Array {
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
        objective === 'binary:logistic'
          ? grade > 0
            ? 1
            : 0
          : objective === 'reg:logistic'
            ? grade / top
            : grade / top - mean;
    }
  }
  return labels;
}

/** The trees of model bytes with every leaf multiplied by `scale` (float32). */
async function scaledTrees(modelBytes: Uint8Array, scale: number): Promise<TreeIR[]> {
  const { ir } = await readTreeModelIR(modelBytes);
  return ir.trees.map((t) => ({
    ...t,
    splitCondition: t.splitCondition.map((v, i) => (t.left[i] === -1 ? Math.fround(v * scale) : v)),
  }));
}

async function trainPoint(
  backend: TrainingBackend,
  train: RankingDataset,
  validation: RankingDataset,
  point: GridPoint,
  seed: number,
  minWorstGain: number,
  bestPointwise: Uint8Array | null,
): Promise<{ model: Uint8Array; trees: number; roundsTrained: number }> {
  if (point.objective !== 'lambdamart') {
    const model = await backend.train({
      features: train.features,
      numRows: train.numRows,
      numFeatures: train.featureNames.length,
      labels: labelsFor(train, point.objective),
      point: { ...point, objective: point.objective },
      seed,
    });
    return { model, trees: point.rounds, roundsTrained: point.rounds };
  }
  if (!point.lambdaMart) throw new InvalidArgumentError('a lambdamart grid point needs its lambdaMart settings');
  if (!backend.fitRegressionTree)
    throw new InvalidArgumentError('this training back end cannot fit single regression trees (needed for lambdamart)');
  const { warmStart, ...settings } = point.lambdaMart;
  let initialTrees: TreeIR[] = [];
  if (warmStart) {
    if (!bestPointwise)
      throw new InvalidArgumentError('a warm-started lambdamart point needs a pointwise point earlier in the grid');
    if (!(warmStart.scale > 0 && Number.isFinite(warmStart.scale)))
      throw new InvalidArgumentError(`warmStart.scale must be > 0, got ${warmStart.scale}`);
    initialTrees = await scaledTrees(bestPointwise, warmStart.scale);
  }
  const result = await trainLambdaMart(
    train,
    validation,
    {
      maxDepth: point.maxDepth,
      learningRate: point.eta,
      maxRounds: point.rounds,
      minChildWeight: point.minChildWeight,
      seed,
      minWorstGain,
      ...settings,
      initialTrees,
    },
    backend.fitRegressionTree,
  );
  return {
    model: ensembleBytes(result.ensemble),
    trees: result.ensemble.trees.length,
    roundsTrained: result.roundsTrained,
  };
}

/**
 * Trains every grid point on TRAIN and keeps the best on VALIDATION by the selection rule of
 * selection.ts (mean per-collection nDCG@10 gain over the first stage, subject to the worst
 * collection's gain >= minWorstGain). Validation scores come from the back end's predictMargins on
 * the model bytes, i.e. exactly what serving computes.
 */
export async function gridSearch(
  backend: TrainingBackend,
  train: RankingDataset,
  validation: RankingDataset,
  grid: readonly GridPoint[],
  seed: number,
  onPoint?: (result: ValidationResult, index: number) => void,
  minWorstGain = DEFAULT_MIN_WORST_GAIN,
): Promise<{ best: ValidationResult; bestModel: Uint8Array; results: ValidationResult[] }> {
  if (grid.length === 0) throw new InvalidArgumentError('empty hyperparameter grid');
  const nf = train.featureNames.length;
  const firstStage = ndcgByCollection(validation, null);
  const results: ValidationResult[] = [];
  let best: ValidationResult | null = null;
  let bestModel: Uint8Array | null = null;
  let bestPointwise: { result: ValidationResult; model: Uint8Array } | null = null;
  for (let i = 0; i < grid.length; i++) {
    const point = grid[i]!;
    const t0 = performance.now();
    const { model, trees, roundsTrained } = await trainPoint(
      backend,
      train,
      validation,
      point,
      seed,
      minWorstGain,
      bestPointwise?.model ?? null,
    );
    const trainMs = performance.now() - t0;
    // Every objective maps margins monotonically (sigmoid or Platt), so margins rank like the final scores.
    const scores = await backend.predictMargins(model, validation.features, validation.numRows, nf);
    const ndcg10ByCollection = ndcgByCollection(validation, scores);
    const result: ValidationResult = {
      point,
      ndcg10ByCollection,
      macroNdcg10: macroMean(ndcg10ByCollection),
      selection: selectionScore(ndcg10ByCollection, firstStage),
      trees,
      roundsTrained,
      trainMs: Math.round(trainMs),
      modelBytes: model.length,
    };
    results.push(result);
    onPoint?.(result, i);
    if (isBetterSelection(result.selection, best?.selection ?? null, minWorstGain)) {
      best = result;
      bestModel = model;
    }
    if (
      point.objective !== 'lambdamart' &&
      isBetterSelection(result.selection, bestPointwise?.result.selection ?? null, minWorstGain)
    ) {
      bestPointwise = { result, model };
    }
  }
  return { best: best!, bestModel: bestModel!, results };
}
