/** Trains the fast-path pipeline on a small slice of MED (6 queries per split, top 30): seconds, real data. */
import { join } from 'node:path';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import type { GridPoint } from '../../src/tooling/training/grid-search.js';
import { trainFastPath } from '../../src/tooling/training/train-fast-path.js';
import { createXGBoostBackend } from '../../src/tooling/training/xgboost-backend.js';

const DATA = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');

export function trainOnMedSubset(seed: number, grid: GridPoint[]): ReturnType<typeof trainFastPath> {
  return trainFastPath(
    {
      collectionDirs: [join(DATA, 'med')],
      seed,
      k: 30,
      gateK: 10,
      targetPrecision: 0.5,
      grid,
      retrievalRankDropout: 0.5,
      minQueriesPerCollection: 0,
      maxQueriesPerSplit: 6,
    },
    {
      featurizerFor: async (c) => new LexicalFeaturizer(await buildCorpusStats(c.docs)),
      backend: createXGBoostBackend(),
    },
  );
}
