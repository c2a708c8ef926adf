import { describe, expect, it } from 'vitest';
import { readTreeModelIR } from '../../src/tiers/fast-path/load-tree-model.js';
import { LAMBDAMART_SETTINGS } from '../../src/tooling/training/fast-path-pipeline.js';
import { trainOnMedSubset } from './med-subset.js';

describe('trainFastPath with a LambdaMART grid point (med subset)', () => {
  it('trains both kinds of point, reports both, and is reproducible', async () => {
    const run = () =>
      trainOnMedSubset(5, [
        { objective: 'reg:squarederror', maxDepth: 2, eta: 0.3, rounds: 4, minChildWeight: 1 },
        {
          objective: 'lambdamart',
          maxDepth: 2,
          eta: 0.3,
          rounds: 4,
          minChildWeight: 5,
          lambdaMart: { ...LAMBDAMART_SETTINGS, patience: 4 },
        },
      ]);
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
