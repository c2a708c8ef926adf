/**
 * One least-squares regression tree fitted with ml-xgboost (the project's tree learner): one
 * boosting round of reg:squarederror with eta 1 and base_score 0, read back as a TreeIR. LambdaMART
 * uses only its structure (splits); its leaves are replaced by the Newton step (leaf-refit.ts).
 * With squared error every row has hessian 1, so min_child_weight is the least number of rows per leaf.
 */
import { InvalidArgumentError } from '../../errors.js';
import type { TreeIR } from '../../tiers/fast-path/model-ir.js';
import { readTreeModelIR } from '../../tiers/fast-path/load-tree-model.js';
import { trainXGBoost } from './trees/train-xgboost.js';

export interface RegressionTreeRequest {
  /** Row-major numRows × numFeatures, NaN = missing. */
  readonly features: Float32Array;
  readonly targets: Float32Array;
  readonly numRows: number;
  readonly numFeatures: number;
  readonly maxDepth: number;
  /** Least rows per leaf. */
  readonly minChildWeight: number;
  readonly seed: number;
}

export type RegressionTreeFitter = (request: RegressionTreeRequest) => Promise<TreeIR>;

export const fitRegressionTreeWithXGBoost: RegressionTreeFitter = async (req) => {
  const { bytes } = await trainXGBoost(
    { features: req.features, labels: req.targets, numRows: req.numRows, numFeatures: req.numFeatures },
    {
      objective: 'reg:squarederror',
      rounds: 1,
      eta: 1,
      baseScore: 0,
      maxDepth: req.maxDepth,
      minChildWeight: req.minChildWeight,
      seed: req.seed,
      subsample: 1,
      colsampleBytree: 1,
      treeMethod: 'exact',
    },
  );
  const { ir } = await readTreeModelIR(bytes);
  if (ir.trees.length !== 1) throw new InvalidArgumentError(`expected one tree from one round, got ${ir.trees.length}`);
  return ir.trees[0]!;
};
