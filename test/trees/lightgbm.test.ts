/**
 * LightGBM text models (src/tiers/fast-path/loaders/lightgbm-text.ts): parity with LightGBM 4.7.0's
 * own predictions on the committed fixtures of scripts/make-lightgbm-fixtures.py (margins =
 * predict(raw_score=True), values = predict(), max |Δ| ≤ 1e-6 in float64 on every row and output),
 * typed refusals of what the IR cannot express exactly, detection by content whatever the file
 * name, and `relevance-gate convert` on a LightGBM file.
 */
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runConvert } from '../../src/cli/commands/convert.js';
import { ModelFormatError, UnsupportedModelError } from '../../src/errors.js';
import { loadTreeModel } from '../../src/index.js';
import { readTreeModelIR } from '../../src/tiers/fast-path/load-tree-model.js';
import { parseTreeModelBytes } from '../../src/tiers/fast-path/loaders/parse-model.js';
import { type TreeModel, createTreeModel } from '../../src/tiers/fast-path/tree-model.js';
import { type KernelModel, deepZeroTree } from './native-helpers.js';
import { REPO_ROOT } from './loader-fixtures.js';

const DIR = resolve(REPO_ROOT, 'test/trees/fixtures/lightgbm');
const TOLERANCE = 1e-6;
const tmp = mkdtempSync(join(tmpdir(), 'rg-lightgbm-'));
const opened: TreeModel[] = [];
afterAll(() => {
  for (const m of opened) m.dispose();
  rmSync(tmp, { recursive: true, force: true });
});

interface Expected {
  readonly model: string;
  readonly objective?: string;
  readonly rows?: number;
  readonly outputs?: number;
  readonly margin?: number[][];
  readonly prediction?: number[][];
  readonly refuse?: string;
}

function expected(name: string): Expected {
  return JSON.parse(readFileSync(join(DIR, `${name}.expected.json`), 'utf8')) as Expected;
}

function matrix(name: string): { rows: Float32Array; nRows: number; nCols: number } {
  const lines = readFileSync(join(DIR, `${name}.X.csv`), 'utf8')
    .trim()
    .split('\n');
  const nCols = (lines[0] as string).split(',').length;
  const rows = new Float32Array(lines.length * nCols);
  lines.forEach((line, r) => {
    line.split(',').forEach((v, c) => {
      // numpy writes nan / inf / -inf; Number() reads only its own spellings.
      rows[r * nCols + c] = v === 'nan' ? NaN : v === 'inf' ? Infinity : v === '-inf' ? -Infinity : Number(v);
    });
  });
  return { rows, nRows: lines.length, nCols };
}

const names = readdirSync(DIR)
  .filter((f) => f.endsWith('.expected.json'))
  .map((f) => f.slice(0, -'.expected.json'.length))
  .sort();
const parityNames = names.filter((n) => expected(n).refuse === undefined);
const refusalNames = names.filter((n) => expected(n).refuse !== undefined);

async function open(path: string | Uint8Array): Promise<TreeModel> {
  const m = await loadTreeModel(path);
  opened.push(m);
  return m;
}

/** Max |Δ| of margins and values against LightGBM's, over every row and output. */
function maxDeltas(model: TreeModel, name: string): { margin: number; value: number } {
  const e = expected(name);
  const { rows, nRows, nCols } = matrix(name);
  expect(model.numFeatures).toBe(nCols);
  expect(nRows).toBe(e.rows);
  expect(model.numOutputs).toBe(e.outputs);
  const margin = model.predict(rows, nRows, { output: 'margin' });
  const value = model.predict(rows, nRows, { output: 'value' });
  expect(margin).toBeInstanceOf(Float64Array);
  expect(value).toBeInstanceOf(Float64Array);
  const k = e.outputs as number;
  let dm = 0;
  let dv = 0;
  for (let r = 0; r < nRows; r++) {
    for (let g = 0; g < k; g++) {
      dm = Math.max(dm, Math.abs((margin[r * k + g] as number) - (e.margin?.[r]?.[g] as number)));
      dv = Math.max(dv, Math.abs((value[r * k + g] as number) - (e.prediction?.[r]?.[g] as number)));
    }
  }
  return { margin: dm, value: dv };
}

describe('LightGBM parity (fixtures from scripts/make-lightgbm-fixtures.py)', () => {
  it('has the fixtures: several objectives, every missing type, refusals', () => {
    expect(parityNames).toEqual(
      expect.arrayContaining([
        'binary_t30',
        'regression_t30',
        'lambdarank_t30',
        'multiclass3_t10',
        'xentropy_t20',
        'binary_nomissing_t20',
        'regression_zero_t20',
        'binary_infsplit_t20',
      ]),
    );
    expect(refusalNames).toEqual(expect.arrayContaining(['categorical_t4', 'linear_t4', 'poisson_t4']));
  });

  for (const name of parityNames) {
    it(`${name}: margin and value within 1e-6 of LightGBM`, async () => {
      const model = await open(join(DIR, `${name}.txt`));
      expect(model.marginPrecision).toBe('float64');
      const d = maxDeltas(model, name);
      expect(d.margin).toBeLessThanOrEqual(TOLERANCE);
      expect(d.value).toBeLessThanOrEqual(TOLERANCE);
    });
  }

  it('depth-bounded LightGBM trees compile to the perfect layout; every kernel gives the same float64 sums', async () => {
    for (const name of parityNames) {
      const model = (await open(join(DIR, `${name}.txt`))) as KernelModel;
      expect(model.layout).toBe('perfect');
      const { rows, nRows } = matrix(name);
      const auto = Array.from(model.predictWithKernel(rows, nRows, undefined, 0));
      for (const kernel of [1, 2, 3] as const) {
        expect(Array.from(model.predictWithKernel(rows, nRows, undefined, kernel))).toEqual(auto);
      }
      // One row at a time (the scalar lockstep path) and in odd-sized blocks agree too.
      const nf = model.numFeatures;
      const k = model.numOutputs;
      for (let r = 0; r < nRows; r += 7) {
        const n = Math.min(7, nRows - r);
        const part = model.predictWithKernel(rows.subarray(r * nf, (r + n) * nf), n, undefined, 0);
        expect(Array.from(part)).toEqual(auto.slice(r * k, (r + n) * k));
      }
      // The node-by-node walk (an all-zero tree deeper than the perfect layout allows appended)
      // gives the same float64 sums.
      const { ir } = await readTreeModelIR(join(DIR, `${name}.txt`));
      const zero = deepZeroTree(14, ir.numFeatures);
      const deep = createTreeModel({
        ...ir,
        trees: [...ir.trees, { ...zero, leafValues64: new Float64Array(zero.left.length) }],
      }) as KernelModel;
      opened.push(deep);
      expect(deep.layout).toBe('generic');
      expect(Array.from(deep.predictWithKernel(rows, nRows, undefined, 0))).toEqual(auto);
    }
  });

  it('+inf thresholds ("present vs missing"): x = +inf goes left as in LightGBM, other values unchanged', async () => {
    const { ir } = await readTreeModelIR(join(DIR, 'binary_infsplit_t20.txt'));
    expect(ir.clampPositiveInfinity).toBe(true);
    const { rows } = matrix('binary_infsplit_t20');
    expect(Array.from(rows).filter((v) => v === Number.POSITIVE_INFINITY).length).toBeGreaterThan(5);
    // The clamp is what makes those rows exact: without it, x = +inf goes right at a +inf threshold.
    const exact = await open(join(DIR, 'binary_infsplit_t20.txt'));
    expect(maxDeltas(exact, 'binary_infsplit_t20').margin).toBe(0);
    const unclamped = createTreeModel({ ...ir, clampPositiveInfinity: false });
    opened.push(unclamped);
    expect(maxDeltas(unclamped, 'binary_infsplit_t20').margin).toBeGreaterThan(1e-3);
    // Models without +inf thresholds keep +inf an ordinary value (no clamp).
    expect((await readTreeModelIR(join(DIR, 'binary_t30.txt'))).ir.clampPositiveInfinity).toBeUndefined();
  });

  it('the same results through predictAsync on the libuv pool', async () => {
    const model = await loadTreeModel(join(DIR, 'multiclass3_t10.txt'), { asyncRowThreshold: 0 });
    opened.push(model);
    const { rows, nRows } = matrix('multiclass3_t10');
    const sync = model.predict(rows, nRows, { output: 'margin' });
    const pooled = await model.predictAsync(rows, nRows, { output: 'margin' });
    expect(pooled).toBeInstanceOf(Float64Array);
    expect(Array.from(pooled)).toEqual(Array.from(sync));
  });

  it('maps objectives to the IR', async () => {
    const objectives: Record<string, string> = {};
    for (const name of parityNames) {
      objectives[name] = (await readTreeModelIR(join(DIR, `${name}.txt`))).ir.objective;
    }
    expect(objectives).toMatchObject({
      binary_t30: 'binary:logistic',
      regression_t30: 'reg:squarederror',
      lambdarank_t30: 'rank:ndcg',
      multiclass3_t10: 'multi:softprob',
      xentropy_t20: 'reg:logistic',
    });
  });
});

describe('LightGBM refusals', () => {
  for (const name of refusalNames) {
    it(`${name}: UnsupportedModelError (${expected(name).refuse})`, async () => {
      const err = await loadTreeModel(join(DIR, `${name}.txt`)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UnsupportedModelError);
      expect((err as UnsupportedModelError).code).toBe('RG_ERR_UNSUPPORTED_MODEL');
    });
  }

  const base = readFileSync(join(DIR, 'binary_t30.txt'), 'utf8');
  const edit = (from: RegExp, to: string): Uint8Array => {
    const text = base.replace(from, to);
    expect(text).not.toBe(base);
    return new TextEncoder().encode(text);
  };

  it.each([
    ['binary with sigmoid 2', /^objective=binary sigmoid:1$/m, 'objective=binary sigmoid:2'],
    ['multiclassova', /^objective=binary sigmoid:1$/m, 'objective=multiclassova num_class:1 sigmoid:1'],
    ['regression sqrt', /^objective=binary sigmoid:1$/m, 'objective=regression sqrt'],
    ['random forest averaging', /^objective=binary sigmoid:1$/m, 'objective=binary sigmoid:1\naverage_output'],
    ['a categorical decision_type', /^decision_type=\d+/m, 'decision_type=9'],
  ])('refuses %s with UnsupportedModelError', (_what, from, to) => {
    expect(() => parseTreeModelBytes(edit(from, to))).toThrow(UnsupportedModelError);
  });

  it('refuses a model holding both a +inf threshold and a finite one at or above FLT_MAX', () => {
    const text = base.replace(/^threshold=([^ ]+) ([^ ]+)/m, 'threshold=inf 3.5e38');
    expect(text).not.toBe(base);
    expect(() => parseTreeModelBytes(new TextEncoder().encode(text))).toThrow(/FLT_MAX/);
    // Either alone loads.
    expect(() => parseTreeModelBytes(edit(/^threshold=[^ ]+/m, 'threshold=inf'))).not.toThrow();
    expect(() => parseTreeModelBytes(edit(/^threshold=[^ ]+/m, 'threshold=3.5e38'))).not.toThrow();
  });

  it.each([
    ['a child out of range', /^left_child=\d+/m, 'left_child=99'],
    ['a cycle', /^left_child=\d+/m, 'left_child=0'],
    ['a short leaf_value', /^leaf_value=[^ ]+ /m, 'leaf_value='],
    ['a NaN threshold', /^threshold=[^ ]+/m, 'threshold=nan'],
    ['a feature out of range', /^split_feature=\d+/m, 'split_feature=12'],
    ['an unknown missing type', /^decision_type=\d+/m, 'decision_type=12'],
    ['a missing version', /^version=v4$/m, 'versio=v4'],
  ])('rejects %s with ModelFormatError', (_what, from, to) => {
    expect(() => parseTreeModelBytes(edit(from, to))).toThrow(ModelFormatError);
  });
});

describe('LightGBM detection by content', () => {
  it.each(['model.bin', 'model.json', 'model', 'model.ubj'])('loads a LightGBM file named %s', async (file) => {
    const path = join(tmp, file);
    copyFileSync(join(DIR, 'binary_t30.txt'), path);
    expect((await readTreeModelIR(path)).format).toBe('lightgbm-text');
    const d = maxDeltas(await open(path), 'binary_t30');
    expect(d.margin).toBeLessThanOrEqual(TOLERANCE);
  });

  it('loads from bytes, with CRLF line ends and a UTF-8 BOM', async () => {
    const text = readFileSync(join(DIR, 'regression_t30.txt'), 'utf8').replace(/\n/g, '\r\n');
    const bytes = new TextEncoder().encode(`\uFEFF${text}`);
    expect(parseTreeModelBytes(bytes).format).toBe('lightgbm-text');
    const d = maxDeltas(await open(bytes), 'regression_t30');
    expect(d.margin).toBeLessThanOrEqual(TOLERANCE);
  });

  it('a model saved with num_iteration (fewer trees) still loads', async () => {
    const text = readFileSync(join(DIR, 'binary_t30.txt'), 'utf8');
    const cut = text.indexOf('Tree=5\n');
    const end = text.indexOf('end of trees');
    const model = await open(new TextEncoder().encode(text.slice(0, cut) + text.slice(end)));
    expect(model.numTrees).toBe(5);
  });
});

describe('relevance-gate convert on a LightGBM model', () => {
  it('writes XGBoost JSON that loads and agrees to float32 precision', async () => {
    const out = join(tmp, 'converted.json');
    const message = await runConvert({ model: join(DIR, 'binary_t30.txt'), out });
    expect(message).toContain('lightgbm-text');
    expect(message).toContain('float32');
    const converted = await open(out);
    const { rows, nRows } = matrix('binary_t30');
    const e = expected('binary_t30');
    const margin = converted.predict(rows, nRows, { output: 'margin' });
    let d = 0;
    for (let r = 0; r < nRows; r++) d = Math.max(d, Math.abs((margin[r] as number) - (e.margin?.[r]?.[0] as number)));
    // float32 leaves summed in float32 (XGBoost's arithmetic): close, not bit-exact.
    expect(d).toBeLessThan(1e-4);
  });

  it('writes a LightGBM model with a Zero-missing split rewrite too', async () => {
    const out = join(tmp, 'zero.json');
    await runConvert({ model: join(DIR, 'regression_zero_t20.txt'), out });
    expect((await readTreeModelIR(out)).format).toBe('xgboost-json');
  });
});

describe('a fast-path model directory (what the server config points at) with a LightGBM model', () => {
  it('loads through loadFastPathScorer and scores with the LightGBM margins', async () => {
    const { loadFastPathScorer } = await import('../../src/tiers/fast-path/fast-path-scorer.js');
    const { NUM_FEATURES } = await import('../../src/features/schema.js');
    const shipped = resolve(REPO_ROOT, 'models/fast-path-lexical');
    const dir = join(tmp, 'fast-path-lightgbm');
    const { mkdirSync, writeFileSync } = await import('node:fs');
    mkdirSync(dir);
    const meta = JSON.parse(readFileSync(join(shipped, 'meta.json'), 'utf8')) as Record<string, unknown>;
    copyFileSync(join(shipped, meta.statsFile as string), join(dir, meta.statsFile as string));
    // A hand-written two-leaf-split LambdaRank model over the lexical schema's features.
    const model = [
      'tree',
      'version=v4',
      'num_class=1',
      'num_tree_per_iteration=1',
      'label_index=0',
      `max_feature_idx=${NUM_FEATURES - 1}`,
      'objective=lambdarank',
      '',
      'Tree=0',
      'num_leaves=3',
      'num_cat=0',
      'split_feature=0 1',
      'threshold=1.5 0.25',
      'decision_type=2 10',
      'left_child=-1 -2',
      'right_child=1 -3',
      'leaf_value=-0.5 0.25 1',
      'is_linear=0',
      'shrinkage=1',
      '',
      'end of trees',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'model.lgb'), model);
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ ...meta, modelFile: 'model.lgb', objective: 'rank:ndcg' }));
    const scorer = await loadFastPathScorer(dir);
    try {
      expect(scorer.model.marginPrecision).toBe('float64');
      expect(scorer.model.numTrees).toBe(1);
      const rows = new Float32Array(NUM_FEATURES * 3);
      rows[0] = 1; // f0 <= 1.5 → -0.5
      rows[NUM_FEATURES] = 2; // f0 > 1.5, f1 = 0 <= 0.25 → 0.25
      rows[2 * NUM_FEATURES] = 2;
      rows[2 * NUM_FEATURES + 1] = 0.5; // → 1
      expect(Array.from(scorer.model.predict(rows, 3, { output: 'margin' }))).toEqual([-0.5, 0.25, 1]);
    } finally {
      scorer.model.dispose();
    }
  });
});
