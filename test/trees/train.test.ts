/**
 * train-xgboost.ts: determinism, chunked training, the -1/NaN missing-value encoding, parameter
 * validation, and that trained bytes load into the native evaluator with predictions equal to
 * ml-xgboost's own WASM predict.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { loadTreeModel } from '../../src/index.js';
import { parseTreeModelBytes } from '../../src/tiers/fast-path/loaders/parse-model.js';
import { trainXGBoost, type XGBoostTrainData } from '../../src/tooling/training/trees/train-xgboost.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

function dataset(rows: number, seed: number, missing = 0.1): XGBoostTrainData {
  const rand = mulberry32(seed);
  const numFeatures = 5;
  const features = new Float32Array(rows * numFeatures);
  const labels = new Float32Array(rows);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < numFeatures; j++) features[i * numFeatures + j] = rand() < missing ? NaN : rand() * 2;
    const a = features[i * numFeatures] as number;
    const b = features[i * numFeatures + 1] as number;
    labels[i] = (Number.isNaN(a) ? 1 : a) + (Number.isNaN(b) ? 0 : b) * 0.5 + (rand() - 0.5) * 0.4 > 1.4 ? 1 : 0;
  }
  return { features, labels, numRows: rows, numFeatures };
}

const DATA = dataset(1500, 5);
const PARAMS = { objective: 'binary:logistic', rounds: 20, maxDepth: 4, eta: 0.3, seed: 11, subsample: 0.7 } as const;

const equalBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

describe('trainXGBoost', () => {
  it('is deterministic: same data and params give the same bytes, even interleaved with another seed', async () => {
    const a = await trainXGBoost(DATA, PARAMS);
    const b = await trainXGBoost(DATA, { ...PARAMS, seed: 12 });
    const c = await trainXGBoost(DATA, PARAMS);
    expect(equalBytes(a.bytes, c.bytes)).toBe(true);
    expect(equalBytes(a.bytes, b.bytes)).toBe(false); // subsample 0.7: the seed matters
  });

  it('concurrent calls are serialized and stay deterministic', async () => {
    const [a, b] = await Promise.all([trainXGBoost(DATA, PARAMS), trainXGBoost(DATA, PARAMS)]);
    expect(equalBytes(a.bytes, b.bytes)).toBe(true);
  });

  it('training in chunks gives the same model as one call, and reports progress per chunk', async () => {
    const seen: number[] = [];
    const chunked = await trainXGBoost(DATA, PARAMS, {
      chunkRounds: 3,
      onProgress: (done, total) => seen.push(done * 1000 + total),
    });
    const whole = await trainXGBoost(DATA, PARAMS, { chunkRounds: 20 });
    expect(equalBytes(chunked.bytes, whole.bytes)).toBe(true);
    expect(seen).toEqual([3, 6, 9, 12, 15, 18, 20].map((d) => d * 1000 + 20));
  });

  it("produces a legacy binary that loads, with predictions equal to ml-xgboost's own predict (-1 = missing there)", async () => {
    const { bytes } = await trainXGBoost(DATA, PARAMS);
    const parsed = parseTreeModelBytes(bytes);
    expect(parsed.format).toBe('legacy-binary');
    expect(parsed.ir.trees.length).toBe(20);
    const model = await loadTreeModel(bytes);
    expect(model.numFeatures).toBe(5);
    const test = dataset(200, 99, 0.2);
    const ours = model.predict(test.features, test.numRows, { output: 'value' });
    model.dispose();

    const require = createRequire(import.meta.url);
    const XGBoost = (await require('ml-xgboost')) as {
      load(m: unknown): { predict(rows: number[][]): number[]; free(): void };
    };
    const theirs = XGBoost.load({
      name: 'ml-xgboost',
      model: Array.from(new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length)),
      options: {},
    });
    const rows: number[][] = [];
    for (let i = 0; i < test.numRows; i++)
      rows.push(Array.from(test.features.subarray(i * 5, i * 5 + 5), (v) => (Number.isNaN(v) ? -1 : v)));
    const expected = theirs.predict(rows);
    theirs.free();
    let maxDiff = 0;
    for (let i = 0; i < test.numRows; i++)
      maxDiff = Math.max(maxDiff, Math.abs((ours[i] as number) - (expected[i] as number)));
    expect(maxDiff).toBeLessThan(1e-6);
  });

  it('trains reg:squarederror (as reg:linear inside) and multi:softprob', async () => {
    const reg = parseTreeModelBytes(
      (await trainXGBoost(DATA, { objective: 'reg:squarederror', rounds: 5, baseScore: 0.25 })).bytes,
    ).ir;
    expect(reg.objective).toBe('reg:squarederror');
    expect(reg.baseMargin).toBe(0.25);
    const labels = Float32Array.from(DATA.labels, (y, i) => (y + (i % 2)) % 3);
    const multi = await loadTreeModel(
      (await trainXGBoost({ ...DATA, labels }, { objective: 'multi:softprob', rounds: 4, numClass: 3 })).bytes,
    );
    expect(multi.numOutputs).toBe(3);
    expect(multi.numTrees).toBe(12);
    multi.dispose();
  });

  it('refuses a genuine -1.0 feature by default, naming row and column; accepts it as missing on request', async () => {
    const features = DATA.features.slice();
    features[7 * 5 + 2] = -1;
    await expect(trainXGBoost({ ...DATA, features }, PARAMS)).rejects.toThrow(/-1 at row 7, column 2/);
    await expect(trainXGBoost({ ...DATA, features }, PARAMS, { minusOne: 'as-missing' })).resolves.toHaveProperty(
      'rounds',
      20,
    );
  });

  it('validates data and parameters before touching the WASM module', async () => {
    const bad: Array<[Partial<XGBoostTrainData>, Record<string, unknown>, RegExp]> = [
      [{}, { objective: 'rank:pairwise' }, /objective must be one of/],
      [{}, { objective: 'multi:softprob' }, /needs numClass/],
      [{}, { rounds: 0 }, /rounds/],
      [{}, { eta: 0 }, /eta/],
      [{}, { maxDepth: 100 }, /maxDepth/],
      [{}, { baseScore: 1 }, /baseScore/],
      [{ numRows: 7 }, {}, /features has/],
      [{ labels: new Float32Array(3) }, {}, /labels must have/],
      [{ labels: Float32Array.from(DATA.labels, () => 2) }, {}, /must be in \[0, 1\]/],
      [{ features: Float32Array.from(DATA.features, (v, i) => (i === 3 ? Infinity : v)) }, {}, /not finite/],
    ];
    for (const [d, p, message] of bad) {
      const run = trainXGBoost({ ...DATA, ...d } as XGBoostTrainData, { ...PARAMS, ...p } as never);
      await expect(run).rejects.toThrow(InvalidArgumentError);
      await expect(trainXGBoost({ ...DATA, ...d } as XGBoostTrainData, { ...PARAMS, ...p } as never)).rejects.toThrow(
        message,
      );
    }
    // The module still works afterwards.
    await expect(trainXGBoost(DATA, { ...PARAMS, rounds: 2 })).resolves.toHaveProperty('rounds', 2);
  });

  it('honours an abort signal between chunks', async () => {
    const ctl = new AbortController();
    const run = trainXGBoost(
      DATA,
      { ...PARAMS, rounds: 50 },
      { chunkRounds: 1, signal: ctl.signal, onProgress: (d) => d === 3 && ctl.abort() },
    );
    await expect(run).rejects.toThrow(/aborted/);
  });
});
