import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { type TrainFastPathOptions, trainFastPath } from '../../src/tooling/training/train-fast-path.js';
import { createXGBoostBackend } from '../../src/tooling/training/xgboost-backend.js';

const DATA = join(import.meta.dirname, '..', '..', '..', 'shared', 'data');

function train(querySplits: TrainFastPathOptions['querySplits']) {
  return trainFastPath(
    {
      collectionDirs: [join(DATA, 'med')],
      seed: 5,
      k: 30,
      gateK: 10,
      targetPrecision: 0.5,
      grid: [{ objective: 'reg:squarederror', maxDepth: 2, eta: 0.3, rounds: 3, minChildWeight: 1 }],
      retrievalRankDropout: 0.5,
      minQueriesPerCollection: 0,
      ...(querySplits === undefined ? {} : { querySplits }),
    },
    {
      featurizerFor: async (c) => new LexicalFeaturizer(await buildCorpusStats(c.docs)),
      backend: createXGBoostBackend(),
    },
  );
}

describe('trainFastPath querySplits: a split of the caller’s own', () => {
  it('trains, validates and records exactly the given queries (a cross-validation fold)', async () => {
    const split = {
      train: ['1', '2', '3', '4', '5', '6', '7', '8'],
      validation: ['9', '10', '11', '12'],
      test: ['30'],
    };
    const result = await train({ med: split });
    expect(result.splits.collections.med).toMatchObject(split);
    expect(result.splits.method).toContain('given by the caller for med');
    const med = result.collections.find((c) => c.name === 'med')!;
    expect(med.queries).toEqual({ train: 8, validation: 4, test: 1 });
    // the seeded split is something else
    const seeded = await train(undefined);
    expect(seeded.splits.collections.med!.train).not.toEqual(split.train);
    expect(seeded.splits.method).not.toContain('given by the caller');
  }, 60_000);

  it('refuses ids that are not judged queries, ids in two parts and collections not trained on', async () => {
    await expect(train({ med: { train: ['1', 'no-such-query'], validation: ['2'], test: [] } })).rejects.toThrow(
      /"no-such-query" is not a judged query of med/,
    );
    await expect(train({ med: { train: ['1', '2'], validation: ['2'], test: [] } })).rejects.toThrow(
      /query 2 is in two parts/,
    );
    await expect(train({ cisi: { train: ['1'], validation: [], test: [] } })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(train({ med: { train: 'all' as unknown as string[], validation: [], test: [] } })).rejects.toThrow(
      /must be an array of query ids/,
    );
  }, 60_000);
});
