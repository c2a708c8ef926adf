import { describe, expect, it } from 'vitest';
import type { CandidateList } from '../../src/tooling/eval/candidates.js';
import { loadTreeModel } from '../../src/tiers/fast-path/load-tree-model.js';
import type { TreeIR } from '../../src/tiers/fast-path/model-ir.js';
import type { RankingDataset } from '../../src/tooling/training/dataset.js';
import { type LambdaMartParams, ensembleBytes, trainLambdaMart } from '../../src/tooling/training/lambdamart.js';
import { addLeafValues, assignLeaves, leafOf, refitLeaves } from '../../src/tooling/training/leaf-refit.js';
import { fitRegressionTreeWithXGBoost } from '../../src/tooling/training/regression-tree-fitter.js';
import { isBetterSelection, selectionScore } from '../../src/tooling/training/selection.js';
import { ndcgByCollection } from '../../src/tooling/training/validation-metrics.js';

/** Root: feature 1 < 0.5 → node 1 (leaf) else node 2: feature 0 < 2 → node 3 (leaf) else node 4 (leaf); missing goes left at the root, right at node 2. */
function handTree(): TreeIR {
  return {
    group: 0,
    weight: 1,
    left: Int32Array.from([1, -1, 3, -1, -1]),
    right: Int32Array.from([2, -1, 4, -1, -1]),
    splitIndex: Int32Array.from([1, 0, 0, 0, 0]),
    splitCondition: Float32Array.from([0.5, 9, 2, 9, 9]),
    defaultLeft: Uint8Array.from([1, 0, 0, 0, 0]),
  };
}

describe('Newton leaf refit', () => {
  it('routes rows like the evaluator (x < threshold left, NaN by default direction)', () => {
    const f = Float32Array.from([0, 0.2, 1, 0.5, 5, 0.7, 0, NaN, NaN, 1, 2, 3]);
    expect([...assignLeaves(handTree(), f, 6, 2)]).toEqual([1, 3, 4, 1, 4, 4]);
    expect(leafOf(handTree(), f, 1, 2)).toBe(3);
  });

  it('sets each leaf to learningRate × Σλ / (Σw + ε) of its rows, in float32, and 0 where no row lands', () => {
    const leaves = Int32Array.from([1, 3, 4, 1, 4, 4]);
    const lambdas = Float64Array.from([0.3, -0.2, 0.1, 0.5, -0.4, 0.05]);
    const weights = Float64Array.from([0.1, 0.2, 0.05, 0.3, 0.1, 0.02]);
    const tree = refitLeaves(handTree(), leaves, lambdas, weights, { learningRate: 0.1, epsilon: 1e-3 });
    expect(tree.splitCondition[1]).toBe(Math.fround((0.1 * (0.3 + 0.5)) / (0.1 + 0.3 + 1e-3)));
    expect(tree.splitCondition[3]).toBe(Math.fround((0.1 * -0.2) / (0.2 + 1e-3)));
    expect(tree.splitCondition[4]).toBe(Math.fround((0.1 * (0.1 - 0.4 + 0.05)) / (0.05 + 0.1 + 0.02 + 1e-3)));
    // inner nodes and the structure are unchanged
    expect(tree.splitCondition[0]).toBe(0.5);
    expect(tree.splitCondition[2]).toBe(2);
    expect(tree.left).toEqual(handTree().left);
    const empty = refitLeaves(handTree(), Int32Array.from([1]), Float64Array.from([1]), Float64Array.from([1]), {
      learningRate: 1,
      epsilon: 1,
    });
    expect(empty.splitCondition[3]).toBe(0);
    const scores = new Float64Array(6);
    addLeafValues(tree, leaves, scores);
    expect(scores[0]).toBe(tree.splitCondition[1]);
    expect(scores[2]).toBe(tree.splitCondition[4]);
  });

  it('refuses rows assigned to inner nodes and bad step options', () => {
    expect(() =>
      refitLeaves(handTree(), Int32Array.from([0]), Float64Array.from([1]), Float64Array.from([1]), {
        learningRate: 1,
        epsilon: 1,
      }),
    ).toThrow(/not a leaf/);
    expect(() =>
      refitLeaves(handTree(), Int32Array.from([1]), Float64Array.from([1]), Float64Array.from([1]), {
        learningRate: 0,
        epsilon: 1,
      }),
    ).toThrow(/learningRate/);
  });
});

describe('validation selection rule', () => {
  const base = { a: 0.4, b: 0.5 };
  it('prefers a point with no losing collection, then the higher mean gain', () => {
    const safe = selectionScore({ a: 0.41, b: 0.51 }, base);
    const bigButLoses = selectionScore({ a: 0.6, b: 0.49 }, base);
    const better = selectionScore({ a: 0.45, b: 0.5 }, base);
    expect(safe.meanGain).toBeCloseTo(0.01, 12);
    expect(bigButLoses.worstCollection).toBe('b');
    expect(isBetterSelection(safe, bigButLoses)).toBe(true);
    expect(isBetterSelection(bigButLoses, safe)).toBe(false);
    expect(isBetterSelection(better, safe)).toBe(true);
    expect(isBetterSelection(safe, safe)).toBe(false); // ties keep the earlier
    const lessBad = selectionScore({ a: 0.395, b: 0.6 }, base);
    expect(isBetterSelection(lessBad, bigButLoses)).toBe(true); // neither admissible: higher worst gain
  });
});

/** Queries of 12 candidates; feature 0 = grade + noise (informative), feature 1 = noise; first-stage order is random. */
function syntheticDataset(queries: number, seed: number, collection: (q: number) => string): RankingDataset {
  let s = seed >>> 0;
  const rnd = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const n = 12;
  const features = new Float32Array(queries * n * 2);
  const grades = new Int32Array(queries * n);
  const groups = [];
  for (let q = 0; q < queries; q++) {
    const candidates = [];
    const judgments = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const row = q * n + i;
      const grade = rnd() < 0.25 ? 1 + Math.floor(rnd() * 3) : 0;
      grades[row] = grade;
      features[row * 2] = grade + rnd() * 2.5;
      features[row * 2 + 1] = rnd() < 0.1 ? NaN : rnd();
      const docId = `q${q}-d${i}`;
      if (grade > 0) judgments.set(docId, grade);
      candidates.push({ docId, bm25: n - i, rank: i + 1, grade });
    }
    const list: CandidateList = { queryId: `q${q}`, queryText: `q${q}`, candidates, judgments };
    groups.push({ collection: collection(q), list, offset: q * n });
  }
  return { featureNames: ['signal', 'noise'], numRows: queries * n, features, grades, groups };
}

const PARAMS: LambdaMartParams = {
  maxDepth: 3,
  learningRate: 0.3,
  maxRounds: 8,
  minChildWeight: 5,
  sigma: 1,
  truncation: Infinity,
  patience: 8,
  epsilon: 1e-3,
  seed: 1,
  minWorstGain: 0,
  queryWeighting: 'query',
};

describe('LambdaMART on ml-xgboost', () => {
  const collection = (q: number): string => (q % 2 === 0 ? 'even' : 'odd');
  const train = syntheticDataset(60, 7, collection);
  const validation = syntheticDataset(30, 99, collection);

  it('learns the ranking, and the written XGBoost JSON model reproduces the summed leaves', async () => {
    const result = await trainLambdaMart(train, validation, PARAMS, fitRegressionTreeWithXGBoost);
    expect(result.rounds).toBeGreaterThanOrEqual(1);
    expect(result.ensemble.trees).toHaveLength(result.rounds);
    expect(result.ensemble.objective).toBe('rank:ndcg');
    const best = result.history[result.rounds - 1]!;
    const bm25 = ndcgByCollection(validation, null);
    // the informative feature makes reranking far better than the random first-stage order
    expect(best.selection.worstGain).toBeGreaterThan(0.1);

    const model = await loadTreeModel(ensembleBytes(result.ensemble));
    try {
      const margins = model.predict(validation.features, validation.numRows, { output: 'margin' });
      for (let r = 0; r < validation.numRows; r++) {
        let sum = 0;
        for (const tree of result.ensemble.trees) sum += tree.splitCondition[leafOf(tree, validation.features, r, 2)]!;
        expect(margins[r]).toBeCloseTo(sum, 5);
      }
      const served = ndcgByCollection(validation, Float64Array.from(margins));
      for (const name of Object.keys(bm25)) expect(served[name]).toBeCloseTo(best.ndcg10ByCollection[name]!, 6);
    } finally {
      model.dispose();
    }
  }, 30_000);

  it('is deterministic: the same inputs give the same model bytes', async () => {
    const a = await trainLambdaMart(train, validation, { ...PARAMS, maxRounds: 4 }, fitRegressionTreeWithXGBoost);
    const b = await trainLambdaMart(train, validation, { ...PARAMS, maxRounds: 4 }, fitRegressionTreeWithXGBoost);
    expect(Buffer.from(ensembleBytes(b.ensemble)).equals(Buffer.from(ensembleBytes(a.ensemble)))).toBe(true);
  }, 30_000);

  it('stops after `patience` rounds without a better validation score and keeps the best prefix', async () => {
    const result = await trainLambdaMart(
      train,
      validation,
      { ...PARAMS, maxRounds: 40, patience: 2 },
      fitRegressionTreeWithXGBoost,
    );
    expect(result.roundsTrained).toBeLessThan(40);
    expect(result.roundsTrained - result.rounds).toBe(2);
  }, 30_000);

  it('boosts from an existing model: its trees come first and round 0 (that model alone) is a candidate', async () => {
    const start = await trainLambdaMart(
      train,
      validation,
      { ...PARAMS, maxRounds: 3, patience: 3 },
      fitRegressionTreeWithXGBoost,
    );
    const initialTrees = start.ensemble.trees;
    const warm = await trainLambdaMart(
      train,
      validation,
      { ...PARAMS, maxRounds: 3, patience: 3, initialTrees },
      fitRegressionTreeWithXGBoost,
    );
    expect(warm.ensemble.trees.slice(0, initialTrees.length)).toEqual(initialTrees);
    expect(warm.ensemble.trees).toHaveLength(initialTrees.length + warm.rounds);
    // the first new tree was fitted to the lambdas of the initial model's scores, not of zero scores
    expect(warm.trainedTrees[0]).not.toEqual(start.trainedTrees[0]);
    // rounds that cannot improve (a one-leaf tree: Σλ = 0 shifts every score alike) keep the initial model unchanged
    const oneLeaf = async (): Promise<TreeIR> => ({
      group: 0,
      weight: 1,
      left: Int32Array.from([-1]),
      right: Int32Array.from([-1]),
      splitIndex: Int32Array.from([0]),
      splitCondition: Float32Array.from([0]),
      defaultLeft: Uint8Array.from([0]),
    });
    const kept = await trainLambdaMart(
      train,
      validation,
      { ...PARAMS, maxRounds: 2, patience: 2, initialTrees },
      oneLeaf,
    );
    expect(kept.rounds).toBe(0);
    expect(kept.ensemble.trees).toEqual(initialTrees);
  }, 30_000);

  it('refuses bad parameters', async () => {
    await expect(
      trainLambdaMart(train, validation, { ...PARAMS, learningRate: 0 }, fitRegressionTreeWithXGBoost),
    ).rejects.toThrow(/learningRate/);
    await expect(
      trainLambdaMart(train, validation, { ...PARAMS, maxDepth: 0 }, fitRegressionTreeWithXGBoost),
    ).rejects.toThrow(/maxDepth/);
  });
});
