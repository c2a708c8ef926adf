import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { readTreeModelIR } from '../../src/tiers/trees/load-tree-model.js';
import { trainFastPath } from '../../src/training/train-fastpath.js';
import { LAMBDAMART_SETTINGS } from '../../src/training/train-command.js';
import { createXGBoostBackend } from '../../src/training/xgboost-backend.js';

const DATA = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');

describe('trainFastPath with a LambdaMART grid point (med subset)', () => {
  it('trains both kinds of point, reports both, and is reproducible', async () => {
    const run = () =>
      trainFastPath(
        {
          collectionDirs: [join(DATA, 'med')],
          seed: 5,
          k: 30,
          gateK: 10,
          targetPrecision: 0.5,
          grid: [
            { objective: 'reg:squarederror', maxDepth: 2, eta: 0.3, rounds: 4, minChildWeight: 1 },
            { objective: 'lambdamart', maxDepth: 2, eta: 0.3, rounds: 4, minChildWeight: 5, lambdaMart: { ...LAMBDAMART_SETTINGS, patience: 4 } },
          ],
          retrievalRankDropout: 0.5,
          minQueriesPerCollection: 0,
          maxQueriesPerSplit: 6,
        },
        {
          featurizerFor: async (c) => new LexicalFeaturizer(await buildCorpusStats(c.docs)),
          backend: createXGBoostBackend(),
        },
      );
    const first = await run();
    expect(first.grid.map((g) => g.point.objective)).toEqual(['reg:squarederror', 'lambdamart']);
    const lm = first.grid[1]!;
    expect(lm.trees).toBeGreaterThanOrEqual(1);
    expect(lm.trees).toBeLessThanOrEqual(4);
    expect(lm.selection.worstCollection).toBe('med');
    // both objectives output margins, so the chosen one is calibrated for the gate
    expect(first.calibration).not.toBeNull();
    const { ir } = await readTreeModelIR(first.modelBytes);
    expect(ir.trees).toHaveLength(first.chosen.trees);
    const second = await run();
    expect(Buffer.from(second.modelBytes).equals(Buffer.from(first.modelBytes))).toBe(true);
    expect(second.grid.map((g) => g.ndcg10ByCollection)).toEqual(first.grid.map((g) => g.ndcg10ByCollection));
    expect(second.threshold).toEqual(first.threshold);
  }, 60_000);
});
