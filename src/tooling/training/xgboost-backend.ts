/**
 * The production training back end: ml-xgboost (via the typed wrapper train-xgboost.ts) to train,
 * the native tree evaluator (loadTreeModel) to score validation rows, so model selection sees the
 * exact margins serving will produce. LambdaMART's single trees are fitted by ml-xgboost too.
 */
import { loadTreeModel } from '../../tiers/fast-path/load-tree-model.js';
import { trainXGBoost } from './trees/train-xgboost.js';
import type { TrainingBackend, TrainRequest } from './grid-search.js';
import { fitRegressionTreeWithXGBoost } from './regression-tree-fitter.js';

export interface XGBoostBackendOptions {
  /** Progress of each training, in boosting rounds. */
  readonly onRounds?: (done: number, total: number) => void;
}

export function createXGBoostBackend(options: XGBoostBackendOptions = {}): TrainingBackend {
  return {
    fitRegressionTree: fitRegressionTreeWithXGBoost,
    async train(req: TrainRequest): Promise<Uint8Array> {
      const { bytes } = await trainXGBoost(
        { features: req.features, labels: req.labels, numRows: req.numRows, numFeatures: req.numFeatures },
        {
          objective: req.point.objective,
          rounds: req.point.rounds,
          maxDepth: req.point.maxDepth,
          eta: req.point.eta,
          minChildWeight: req.point.minChildWeight,
          seed: req.seed,
          subsample: 1,
          colsampleBytree: 1,
          treeMethod: 'exact',
        },
        options.onRounds ? { onProgress: options.onRounds } : {},
      );
      return bytes;
    },
    async predictMargins(modelBytes, features, numRows) {
      const model = await loadTreeModel(modelBytes);
      try {
        return Float64Array.from(model.predict(features, numRows, { output: 'margin' }));
      } finally {
        model.dispose();
      }
    },
  };
}
