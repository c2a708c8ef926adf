/**
 * The production training back end: ml-xgboost (via the typed wrapper train-xgboost.ts) to train,
 * the native tree evaluator (loadTreeModel) to score validation rows, so model selection sees the
 * exact scores serving will produce (both objectives used here, binary:logistic and reg:logistic,
 * map margins to probabilities with the sigmoid).
 */
import { loadTreeModel } from '../tiers/trees/load-tree-model.js';
import { trainXGBoost } from '../tiers/trees/training/train-xgboost.js';
import type { TrainingBackend, TrainRequest } from './grid-search.js';

export interface XGBoostBackendOptions {
  /** Progress of each training, in boosting rounds. */
  readonly onRounds?: (done: number, total: number) => void;
}

export function createXGBoostBackend(options: XGBoostBackendOptions = {}): TrainingBackend {
  return {
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
    async predict(modelBytes, features, numRows) {
      const model = await loadTreeModel(modelBytes);
      try {
        // Same arithmetic as the fast-path scorer: float32 margin, sigmoid in float64.
        const margins = model.predict(features, numRows, { output: 'margin' });
        const out = new Float64Array(numRows);
        for (let i = 0; i < numRows; i++) out[i] = 1 / (1 + Math.exp(-margins[i]!));
        return out;
      } finally {
        model.dispose();
      }
    },
  };
}
