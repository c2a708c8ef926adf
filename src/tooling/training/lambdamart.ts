/**
 * LambdaMART (Burges 2010) with ml-xgboost as the tree learner, which has no query groups, custom
 * objectives or sample weights. Per boosting round:
 *   1. λ and w of every training row from the current scores, grouped by query (lambdas.ts);
 *   2. ONE least-squares regression tree fitted to λ by ml-xgboost: the tree's structure;
 *   3. its leaves replaced by the Newton step learningRate × Σλ / (Σw + ε) (leaf-refit.ts);
 *   4. the tree added to the ensemble and to the training and validation scores.
 * The number of trees is chosen on the VALIDATION queries (selection.ts rule, evaluated after every
 * round, stopping after `patience` rounds without improvement). The result is one XGBoost JSON
 * model (objective rank:ndcg, base_score 0: its margin is the sum of the leaves) that loadTreeModel
 * and XGBoost load. Scores stay per pair: the model sees one (query, passage) feature row at a time.
 * Deterministic: fixed row and query orders, float32 leaves, no randomness besides XGBoost's seed.
 */
import { InvalidArgumentError } from '../../errors.js';
import {
  describeValue,
  integerInRange,
  nonNegativeNumber,
  type OptionErrorFactory,
  positiveFraction,
  positiveInteger,
  positiveNumber,
} from '../../util/validate-options.js';
import type { TreeEnsembleIR, TreeIR } from '../../tiers/fast-path/model-ir.js';
import { writeXGBoostJson } from '../../tiers/fast-path/xgboost-json-writer.js';
import type { RankingDataset } from './dataset.js';
import { ndcgByCollection } from './validation-metrics.js';
import { type LambdaQuery, computeLambdas, idealDcg } from './lambdas.js';
import { addLeafValues, assignLeaves, refitLeaves } from './leaf-refit.js';
import type { RegressionTreeFitter } from './regression-tree-fitter.js';
import { type SelectionScore, isBetterSelection, selectionScore } from './selection.js';

export interface LambdaMartParams {
  readonly maxDepth: number;
  readonly learningRate: number;
  /** Most trees; early stopping usually ends sooner. */
  readonly maxRounds: number;
  /** Least training rows per leaf of the structure fit. */
  readonly minChildWeight: number;
  /** RankNet σ. */
  readonly sigma: number;
  /** Pairs count only when one of them is ranked above this position (Infinity = all pairs). */
  readonly truncation: number;
  /** Stop after this many rounds without a better validation selection score. */
  readonly patience: number;
  /** ε of the Newton step. */
  readonly epsilon: number;
  readonly seed: number;
  /** Admissibility bar of the selection rule (selection.ts): least worst-collection validation gain. */
  readonly minWorstGain: number;
  /**
   * Query weights: 'query' = every training query (copy) weighs 1; 'collection' = every collection
   * gets the same total weight, split evenly over its queries (so SciFact's many queries do not
   * decide the trees alone).
   */
  readonly queryWeighting: 'query' | 'collection';
  /**
   * Trees of an existing model (margin = their sum, base 0) to boost from: the scores start at its
   * margins, round 0 (the existing model alone) is a candidate of early stopping, and the result
   * holds its trees followed by the new ones. Empty = start from 0 (first-stage order).
   */
  readonly initialTrees?: readonly TreeIR[];
}

export interface LambdaMartRound {
  readonly round: number;
  readonly ndcg10ByCollection: Readonly<Record<string, number | null>>;
  readonly selection: SelectionScore;
}

export interface LambdaMartResult {
  /** The chosen ensemble: the initial trees, then the first `rounds` new trees. */
  readonly ensemble: TreeEnsembleIR;
  /** New trees kept (0 = the initial model was best). */
  readonly rounds: number;
  /** Rounds actually trained (>= rounds). */
  readonly roundsTrained: number;
  /** Validation after every trained round. */
  readonly history: readonly LambdaMartRound[];
  /** Every tree trained, including those after the chosen round (analysis of the learning curve). */
  readonly trainedTrees: readonly TreeIR[];
}

/** The rows of the queries that have at least one relevant candidate (the only ones with lambdas), copied. */
interface TrainingRows {
  readonly features: Float32Array;
  readonly grades: Int32Array;
  readonly numRows: number;
  readonly queries: readonly LambdaQuery[];
}

function rowsWithLambdas(dataset: RankingDataset, weighting: LambdaMartParams['queryWeighting']): TrainingRows {
  const nf = dataset.featureNames.length;
  const keep = dataset.groups.filter((g) => idealDcg(dataset.grades, g.offset, g.list.candidates.length) > 0);
  const perCollection = new Map<string, number>();
  for (const g of keep) perCollection.set(g.collection, (perCollection.get(g.collection) ?? 0) + 1);
  const share = keep.length / perCollection.size;
  const numRows = keep.reduce((n, g) => n + g.list.candidates.length, 0);
  const features = new Float32Array(numRows * nf);
  const grades = new Int32Array(numRows);
  const queries: LambdaQuery[] = [];
  let at = 0;
  for (const g of keep) {
    const n = g.list.candidates.length;
    features.set(dataset.features.subarray(g.offset * nf, (g.offset + n) * nf), at * nf);
    grades.set(dataset.grades.subarray(g.offset, g.offset + n), at);
    queries.push({
      offset: at,
      count: n,
      weight: weighting === 'collection' ? share / perCollection.get(g.collection)! : 1,
    });
    at += n;
  }
  return { features, grades, numRows, queries };
}

export function validateLambdaMartParams(p: LambdaMartParams): void {
  const fail: OptionErrorFactory = (name, requirement, value) =>
    new InvalidArgumentError(`LambdaMART: ${name} must be ${requirement}, got ${describeValue(value)}`);
  integerInRange('maxDepth', p.maxDepth, 1, 16, fail);
  positiveFraction('learningRate', p.learningRate, fail);
  integerInRange('maxRounds', p.maxRounds, 1, 10_000, fail);
  nonNegativeNumber('minChildWeight', p.minChildWeight, fail);
  positiveInteger('patience', p.patience, fail);
  positiveNumber('epsilon', p.epsilon, fail);
}

export function ensembleOf(trees: readonly TreeIR[], numFeatures: number): TreeEnsembleIR {
  return { booster: 'gbtree', objective: 'rank:ndcg', numFeatures, numGroups: 1, baseMargin: 0, baseScore: 0, trees };
}

/** XGBoost JSON bytes of an ensemble (what loadTreeModel reads and the model directory stores). */
export function ensembleBytes(ensemble: TreeEnsembleIR): Uint8Array {
  return new TextEncoder().encode(writeXGBoostJson(ensemble));
}

export async function trainLambdaMart(
  train: RankingDataset,
  validation: RankingDataset,
  params: LambdaMartParams,
  fitTree: RegressionTreeFitter,
  onRound?: (round: LambdaMartRound, best: LambdaMartRound) => void,
): Promise<LambdaMartResult> {
  validateLambdaMartParams(params);
  const nf = train.featureNames.length;
  if (validation.featureNames.join('\u0000') !== train.featureNames.join('\u0000')) {
    throw new InvalidArgumentError('train and validation have different features');
  }
  const rows = rowsWithLambdas(train, params.queryWeighting);
  if (rows.numRows === 0) throw new InvalidArgumentError('no training query has a relevant candidate');
  const scores = new Float64Array(rows.numRows);
  const lambdas = new Float64Array(rows.numRows);
  const weights = new Float64Array(rows.numRows);
  const targets = new Float32Array(rows.numRows);
  const validationScores = new Float64Array(validation.numRows);
  const firstStage = ndcgByCollection(validation, null);
  const lambdaOptions = { sigma: params.sigma, truncation: params.truncation };

  const initial = params.initialTrees ?? [];
  for (const tree of initial) {
    addLeafValues(tree, assignLeaves(tree, rows.features, rows.numRows, nf), scores);
    addLeafValues(tree, assignLeaves(tree, validation.features, validation.numRows, nf), validationScores);
  }
  const trees: TreeIR[] = [];
  const history: LambdaMartRound[] = [];
  let best: LambdaMartRound | null = null;
  if (initial.length > 0) {
    const ndcg10ByCollection = ndcgByCollection(validation, validationScores);
    best = { round: 0, ndcg10ByCollection, selection: selectionScore(ndcg10ByCollection, firstStage) };
  }
  for (let round = 1; round <= params.maxRounds; round++) {
    computeLambdas(scores, rows.grades, rows.queries, lambdaOptions, lambdas, weights);
    for (let r = 0; r < rows.numRows; r++) targets[r] = lambdas[r]!;
    const structure = await fitTree({
      features: rows.features,
      targets,
      numRows: rows.numRows,
      numFeatures: nf,
      maxDepth: params.maxDepth,
      minChildWeight: params.minChildWeight,
      seed: params.seed,
    });
    const leaves = assignLeaves(structure, rows.features, rows.numRows, nf);
    const tree = refitLeaves(structure, leaves, lambdas, weights, {
      learningRate: params.learningRate,
      epsilon: params.epsilon,
    });
    trees.push(tree);
    addLeafValues(tree, leaves, scores);
    addLeafValues(tree, assignLeaves(tree, validation.features, validation.numRows, nf), validationScores);

    const ndcg10ByCollection = ndcgByCollection(validation, validationScores);
    const current: LambdaMartRound = {
      round,
      ndcg10ByCollection,
      selection: selectionScore(ndcg10ByCollection, firstStage),
    };
    history.push(current);
    if (isBetterSelection(current.selection, best?.selection ?? null, params.minWorstGain)) best = current;
    onRound?.(current, best!);
    if (round - best!.round >= params.patience) break;
  }
  const rounds = best!.round;
  return {
    ensemble: ensembleOf([...initial, ...trees.slice(0, rounds)], nf),
    rounds,
    roundsTrained: history.length,
    history,
    trainedTrees: trees,
  };
}
