import { describe, expect, it } from 'vitest';
import type { RankingDataset } from '../../src/tooling/training/dataset.js';
import { labelsFor } from '../../src/tooling/training/grid-search.js';
import { toProbabilities } from '../../src/tooling/training/train-fast-path.js';
import type { CandidateList } from '../../src/tooling/eval/candidates.js';
import { trainOnMedSubset } from '../training/med-subset.js';

function fakeDataset(): RankingDataset {
  const list = (queryId: string, grades: number[], judgments: Array<[string, number]>): CandidateList => ({
    queryId,
    queryText: queryId,
    candidates: grades.map((g, i) => ({ docId: `${queryId}-d${i}`, bm25: 10 - i, rank: i + 1, grade: g })),
    judgments: new Map(judgments),
  });
  const a = list(
    'qa',
    [4, 0, 2, 0],
    [
      ['qa-d0', 4],
      ['qa-d2', 2],
    ],
  );
  const b = list('qb', [1, 0], [['qb-d0', 1]]);
  return {
    featureNames: ['x'],
    numRows: 6,
    features: new Float32Array(6),
    grades: Int32Array.from([4, 0, 2, 0, 1, 0]),
    groups: [
      { collection: 'graded', list: a, offset: 0 },
      { collection: 'binary', list: b, offset: 4 },
    ],
  };
}

describe('training labels', () => {
  it('binary, graded and query-centred labels', () => {
    const ds = fakeDataset();
    expect([...labelsFor(ds, 'binary:logistic')]).toEqual([1, 0, 1, 0, 1, 0]);
    expect([...labelsFor(ds, 'reg:logistic')]).toEqual([1, 0, 0.5, 0, 1, 0]);
    // centred: grade/top - mean over the query's candidates: qa mean = (1 + .5)/4 = .375; qb mean = .5
    const c = [...labelsFor(ds, 'reg:squarederror')];
    const expected = [0.625, -0.375, 0.125, -0.375, 0.5, -0.5];
    for (const [i, v] of c.entries()) expect(v).toBeCloseTo(expected[i]!, 6);
  });

  it('maps margins to probabilities like the scorer does', () => {
    const p = toProbabilities(Float64Array.from([0, 2]), { type: 'platt', a: 2, b: -1 });
    expect(p[0]).toBeCloseTo(1 / (1 + Math.exp(1)), 12);
    expect(p[1]).toBeCloseTo(1 / (1 + Math.exp(-3)), 12);
    expect(toProbabilities(Float64Array.from([0]), null)[0]).toBe(0.5);
  });
});

describe('trainFastPath on a small real subset (med)', () => {
  it('is reproducible: two runs give byte-identical models, splits and thresholds', async () => {
    const run = () =>
      trainOnMedSubset(3, [{ objective: 'reg:squarederror', maxDepth: 2, eta: 0.3, rounds: 6, minChildWeight: 1 }]);
    const first = await run();
    const second = await run();
    expect(first.modelBytes.length).toBeGreaterThan(100);
    expect(Buffer.from(second.modelBytes).equals(Buffer.from(first.modelBytes))).toBe(true);
    expect(second.splits).toEqual(first.splits);
    expect(second.threshold).toEqual(first.threshold);
    expect(second.calibration).toEqual(first.calibration);
    expect(first.calibration).not.toBeNull();
    // splits are of queries, disjoint, and the limited train/validation lists are what was used
    const s = first.splits.collections.med!;
    expect(s.train).toHaveLength(6);
    expect(new Set([...s.train, ...s.validation, ...s.test]).size).toBe(
      s.train.length + s.validation.length + s.test.length,
    );
    expect(first.trainRows).toBe(6 * 30);
  }, 60_000);
});
