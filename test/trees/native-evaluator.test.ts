/**
 * The native tree evaluator (createTreeModel): exact XGBoost semantics on every kernel and
 * layout, numerically stable transforms, boundary validation, hostile IRs, async prediction.
 * Fixture parity through the public loaders is in parity.test.ts; this file checks the
 * evaluator itself, against the fixtures' expected margins and a float32 reference oracle.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DisposedError, InvalidArgumentError, ModelFormatError, UnsupportedModelError } from '../../src/errors.js';
import { loadXGBoostJson } from '../../src/tiers/fast-path/loaders/xgboost-json.js';
import type { TreeEnsembleIR, TreeIR } from '../../src/tiers/fast-path/model-ir.js';
import {
  createTreeModel,
  treeKernelName,
  treeModelFromShared,
  type TreeModel,
} from '../../src/tiers/fast-path/tree-model.js';
import {
  fixturePath,
  manifest,
  readExpected,
  readMatrix,
  referenceMargins,
  withinTolerance,
} from './loader-fixtures.js';
import { readFileSync } from 'node:fs';
import { KERNELS, deepZeroTree, ensemble, stump, tree, type KernelModel, type NodeSpec } from './native-helpers.js';
import { mulberry32 } from '../../src/util/seeded-random.js';

const opened: TreeModel[] = [];
function make(ir: TreeEnsembleIR, options?: Parameters<typeof createTreeModel>[1]): KernelModel {
  const m = createTreeModel(ir, options) as KernelModel;
  opened.push(m);
  return m;
}
afterAll(() => {
  for (const m of opened) m.dispose();
});

function loadFixtureIR(name: string): TreeEnsembleIR {
  return loadXGBoostJson(readFileSync(fixturePath(`${name}.json`), 'utf8'));
}

describe('fixture margins on every kernel, layout and batch size', () => {
  const names = manifest().map((m) => m.name);
  it.each(names)('%s', (name) => {
    const { rows, nRows, nCols } = readMatrix(name);
    const expected = readExpected(name);
    const ir = loadFixtureIR(name);
    // The appended all-zero deep tree changes no margin (x + 0 = x) but forces the generic layout.
    const variants: [string, TreeEnsembleIR][] = [
      ['perfect', ir],
      ['generic', { ...ir, trees: [...ir.trees, deepZeroTree(14, ir.numFeatures)] }],
    ];
    for (const [layout, variant] of variants) {
      const model = make(variant);
      expect(model.layout).toBe(layout);
      let reference: Float32Array | undefined;
      for (const kernel of KERNELS) {
        for (const batch of [1, 5, 20, nRows]) {
          const out = new Float32Array(nRows * model.numOutputs);
          for (let r0 = 0; r0 < nRows; r0 += batch) {
            const n = Math.min(batch, nRows - r0);
            const part = model.predictWithKernel(
              rows.subarray(r0 * nCols, (r0 + n) * nCols),
              n,
              { output: 'margin' },
              kernel.id,
            );
            expect(part).toBeInstanceOf(Float32Array);
            out.set(part, r0 * model.numOutputs);
          }
          // Bit-identical across kernels and batchings, and within 1e-6 of XGBoost.
          if (reference === undefined) reference = out;
          else expect(out).toEqual(reference);
        }
      }
      for (let r = 0; r < nRows; r++) {
        for (let g = 0; g < model.numOutputs; g++) {
          const got = reference![r * model.numOutputs + g]!;
          if (!withinTolerance(got, expected.margin[r]![g]!)) {
            throw new Error(`${name} ${layout} row ${r} output ${g}: ${got} vs ${expected.margin[r]![g]}`);
          }
        }
      }
      const values = model.predict(rows, nRows, { output: 'value' });
      expect(values).toBeInstanceOf(Float64Array);
      for (let i = 0; i < values.length; i++) {
        const e = expected.prediction[Math.floor(i / model.numOutputs)]![i % model.numOutputs]!;
        if (!withinTolerance(values[i]!, e)) throw new Error(`${name} ${layout} value ${i}: ${values[i]} vs ${e}`);
      }
    }
  });
});

function randomTree(rand: () => number, maxDepth: number, numFeatures: number, group: number, weight: number): TreeIR {
  const nodes: NodeSpec[] = [];
  const grow = (depth: number): number => {
    const at = nodes.length;
    if (depth >= maxDepth || (depth > 0 && rand() < 0.25)) {
      nodes.push({ leaf: (rand() - 0.5) * 2 });
      return at;
    }
    nodes.push({ f: 0, t: 0, l: 0, r: 0 });
    const f = Math.floor(rand() * numFeatures);
    const t = rand() < 0.1 ? Number.POSITIVE_INFINITY : Math.fround((rand() - 0.5) * 4);
    const l = grow(depth + 1);
    const r = grow(depth + 1);
    nodes[at] = { f, t, dl: rand() < 0.5, l, r };
    return at;
  };
  grow(0);
  return tree(nodes, group, weight);
}

describe('random ensembles agree bit for bit with the float32 reference oracle', () => {
  const cases = [
    { seed: 1, depth: 6, groups: 1, trees: 60, dart: false },
    { seed: 2, depth: 3, groups: 3, trees: 30, dart: true },
    { seed: 3, depth: 9, groups: 2, trees: 20, dart: false },
    { seed: 4, depth: 13, groups: 1, trees: 10, dart: true }, // generic layout
    { seed: 5, depth: 0, groups: 1, trees: 5, dart: false }, // single-leaf trees
  ];
  it.each(cases)('seed $seed depth $depth groups $groups dart $dart', ({ seed, depth, groups, trees, dart }) => {
    const rand = mulberry32(seed); // seeded so a failure reproduces
    const numFeatures = 7;
    const ir = ensemble(
      Array.from({ length: trees }, (_, i) =>
        randomTree(rand, depth, numFeatures, i % groups, dart ? Math.fround(0.3 + rand()) : 1),
      ),
      {
        numFeatures,
        numGroups: groups,
        baseMargin: Math.fround(0.37),
        booster: dart ? 'dart' : 'gbtree',
        objective: groups > 1 ? 'multi:softprob' : 'reg:squarederror',
      },
    );
    const nRows = 37;
    const rows = new Float32Array(nRows * numFeatures);
    const specials = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, -0];
    for (let i = 0; i < rows.length; i++)
      rows[i] = rand() < 0.15 ? specials[Math.floor(rand() * specials.length)]! : (rand() - 0.5) * 4;
    const oracle = referenceMargins(ir, rows, nRows);
    const model = make(ir);
    for (const kernel of KERNELS) {
      expect(model.predictWithKernel(rows, nRows, { output: 'margin' }, kernel.id)).toEqual(oracle);
    }
  });
});

describe('XGBoost 1.7.4 semantics', () => {
  it('goes left iff x < threshold in float32; equality goes right', () => {
    const thr = Math.fround(0.1); // 0.1 is not a float32: the comparison must use the float32 value
    const m = make(ensemble([stump(0, thr, -1, 1)]));
    const rows = new Float32Array([thr, 0, 0, 0, Math.fround(0.1) - 1e-9, 0, 0, 0, 0.09999999, 0, 0, 0]);
    expect(Array.from(m.predict(rows, 3, { output: 'margin' }))).toEqual([1, 1, -1]);
  });

  it('sends NaN the default way and treats ±Infinity as ordinary values', () => {
    const ir = ensemble([stump(0, 0.5, 10, 20, true), stump(1, 0.5, 1, 2, false)]);
    const m = make(ir);
    const rows = new Float32Array([
      NaN,
      NaN,
      0,
      0, // default left (10) + default right (2)
      Infinity,
      -Infinity,
      0,
      0, // +inf goes right (20), -inf goes left (1)
      -Infinity,
      Infinity,
      0,
      0,
    ]);
    for (const k of KERNELS)
      expect(Array.from(m.predictWithKernel(rows, 3, { output: 'margin' }, k.id))).toEqual([12, 21, 12]);
  });

  it('keeps default-left NaN correct for +Infinity thresholds and falls back safely for -Infinity ones', () => {
    const ir = ensemble([
      stump(0, Infinity, 1, 2, true),
      stump(1, -Infinity, 10, 20, true),
      stump(2, Infinity, 100, 200, false),
    ]);
    const m = make(ir);
    expect(m.layout).toBe('generic'); // a default-left -inf threshold cannot use the staged-NaN trick
    const rows = new Float32Array([NaN, NaN, NaN, 0, Infinity, -Infinity, Infinity, 0, 5, 5, 5, 0]);
    expect(Array.from(m.predict(rows, 3, { output: 'margin' }))).toEqual([1 + 10 + 200, 2 + 20 + 200, 1 + 20 + 100]);
    const m2 = make(ensemble([stump(0, Infinity, 1, 2, true), stump(2, Infinity, 100, 200, false)]));
    expect(m2.layout).toBe('perfect');
    for (const k of KERNELS)
      expect(Array.from(m2.predictWithKernel(rows, 3, { output: 'margin' }, k.id))).toEqual([201, 202, 101]);
  });

  it('sums leaves in float32, in tree order, starting from the base margin', () => {
    // 2^24 + 1 + 1 is 2^24 in sequential float32 (each +1 rounds back), 2^24 + 2 in float64.
    const ir = ensemble([stump(0, 0, 1, 1), stump(0, 0, 1, 1)], { baseMargin: 16777216 });
    const m = make(ir);
    expect(m.predict(new Float32Array(4), 1, { output: 'margin' })[0]).toBe(16777216);
    const reversed = make(ensemble([stump(0, 0, 1, 1), stump(0, 0, 16777216, 16777216)], { baseMargin: 1 }));
    expect(reversed.predict(new Float32Array(4), 1, { output: 'margin' })[0]).toBe(16777218);
  });

  it('multiplies dart leaves by the tree weight in float32', () => {
    const w = Math.fround(0.3);
    const m = make(ensemble([stump(0, 0, 0.7, 0.7, false, 0, w)], { booster: 'dart', baseMargin: 0.5 }));
    expect(m.predict(new Float32Array(4), 1, { output: 'margin' })[0]).toBe(
      Math.fround(0.5 + Math.fround(Math.fround(0.7) * w)),
    );
  });

  it('adds each tree to its group and applies softmax per row', () => {
    const ir = ensemble(
      [
        stump(0, 0, 1, 2, false, 0),
        stump(0, 0, 3, 4, false, 1),
        stump(0, 0, 5, 6, false, 2),
        stump(0, 0, 1, 1, false, 0),
      ],
      {
        objective: 'multi:softprob',
        numGroups: 3,
      },
    );
    const m = make(ir);
    expect(m.numOutputs).toBe(3);
    const margins = m.predict(new Float32Array([-1, 0, 0, 0]), 1, { output: 'margin' });
    expect(Array.from(margins)).toEqual([2, 3, 5]);
    const p = m.predict(new Float32Array([-1, 0, 0, 0]), 1, { output: 'value' });
    const z = Math.exp(2) + Math.exp(3) + Math.exp(5);
    expect(p[0]).toBeCloseTo(Math.exp(2) / z, 15);
    expect(p[2]).toBeCloseTo(Math.exp(5) / z, 15);
  });

  it('multi:softmax gives the class index (first maximum) as the one value per row', () => {
    const ir = ensemble([stump(0, 0, 1, 7, false, 0), stump(0, 0, 7, 7, false, 1), stump(0, 0, 3, 7, false, 2)], {
      objective: 'multi:softmax',
      numGroups: 3,
    });
    const m = make(ir);
    const v = m.predict(new Float32Array([-1, 0, 0, 0, 1, 0, 0, 0]), 2, { output: 'value' });
    expect(Array.from(v)).toEqual([1, 0]); // row 2: all equal -> first
    expect(m.predict(new Float32Array(4), 1, { output: 'margin' })).toHaveLength(3);
  });

  it('computes sigmoid without overflow or collapse for huge margins', () => {
    const m = make(ensemble([stump(0, 0, -1e30, 1e30), stump(1, 0, -40, 40)], { objective: 'binary:logistic' }));
    const rows = new Float32Array([-1, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, -1, 0, 0]);
    const v = m.predict(rows, 4, { output: 'value' });
    expect(Array.from(v)).toEqual([0, 1, 0, 1]); // exp never overflows: no NaN, no Infinity
    // XGBoost's float32 sigmoid returns exactly 1.0 at margin 20; float64 keeps 1 - p(20) = 2.1e-9,
    // and the e / (1 + e) branch keeps p(-40) = 4.2e-18 to full relative precision.
    const small = make(ensemble([stump(0, 0, -40, 20)], { objective: 'binary:logistic' }));
    const p = small.predict(new Float32Array([-1, 0, 0, 0, 1, 0, 0, 0]), 2, { output: 'value' });
    expect(p[0]! / Math.exp(-40)).toBeCloseTo(1, 10);
    expect(p[1]).toBeLessThan(1);
    expect((1 - p[1]!) / Math.exp(-20)).toBeCloseTo(1, 6);
  });

  it('identity objectives return the float32 margin as float64', () => {
    const m = make(ensemble([stump(0, 0, 0.1, 0.2)], { objective: 'rank:pairwise' }));
    const v = m.predict(new Float32Array(4), 1);
    expect(v).toBeInstanceOf(Float64Array);
    expect(v[0]).toBe(Math.fround(0.2));
  });
});

describe('boundary validation', () => {
  const ir = ensemble([stump(0, 0, 1, 2)]);

  it('rejects bad rows, row counts and options with InvalidArgumentError', () => {
    const m = make(ir);
    const rows = new Float32Array(8);
    expect(() => m.predict(new Float64Array(8) as unknown as Float32Array, 2)).toThrow(InvalidArgumentError);
    expect(() => m.predict([0, 0, 0, 0] as unknown as Float32Array, 1)).toThrow(InvalidArgumentError);
    expect(() => m.predict(rows, 3)).toThrow(InvalidArgumentError);
    expect(() => m.predict(rows, 1)).toThrow(/expected nRows \* numFeatures/);
    for (const n of [-1, 1.5, NaN, Infinity, 2 ** 53, '2' as unknown as number]) {
      expect(() => m.predict(rows, n)).toThrow(InvalidArgumentError);
    }
    expect(() => m.predict(rows, 2, { output: 'prob' as 'value' })).toThrow(InvalidArgumentError);
    expect(() => m.predict(rows, 2, null as unknown as undefined)).toThrow(InvalidArgumentError);
    expect(m.predict(new Float32Array(0), 0)).toHaveLength(0);
  });

  it('rejects calls on a disposed model with DisposedError', async () => {
    const m = make(ir);
    m.dispose();
    m.dispose(); // idempotent
    expect(() => m.predict(new Float32Array(4), 1)).toThrow(DisposedError);
    await expect(m.predictAsync(new Float32Array(4), 1)).rejects.toThrow(DisposedError);
    expect(() => m.share()).toThrow(DisposedError);
  });

  it('rejects a bad asyncRowThreshold', () => {
    expect(() => createTreeModel(ir, { asyncRowThreshold: -1 })).toThrow(InvalidArgumentError);
  });

  it('is checked natively too (the raw addon refuses what the TS wrapper would)', () => {
    const m = make(ir) as unknown as { evaluator: { predict(...a: unknown[]): void } };
    const ev = m.evaluator;
    expect(() => ev.predict(new Float32Array(4), 2, new Float32Array(2), false)).toThrow(/expected nRows/);
    expect(() => ev.predict(new Float32Array(4), 1, new Float32Array(5), false)).toThrow(/wrong length/);
    expect(() => ev.predict(new Float32Array(4), 1, new Float32Array(1), true)).toThrow(/wrong type/);
    expect(() => ev.predict(new Int32Array(4), 1, new Float32Array(1), false)).toThrow(/wrong type/);
    expect(() => ev.predict(new Float32Array(4), -1, new Float32Array(1), false)).toThrow(/non-negative/);
  });
});

describe('hostile IRs are refused with typed errors', () => {
  const ok = (): NodeSpec[] => [{ f: 0, t: 0, l: 1, r: 2 }, { leaf: 1 }, { leaf: 2 }];
  const cases: [string, () => TreeEnsembleIR, RegExp][] = [
    [
      'child out of range',
      () => ensemble([tree([{ f: 0, t: 0, l: 1, r: 9 }, { leaf: 1 }, { leaf: 2 }])]),
      /out of range/,
    ],
    ['negative child', () => ensemble([tree([{ f: 0, t: 0, l: -5, r: 2 }, { leaf: 1 }, { leaf: 2 }])]), /out of range/],
    [
      'cycle to the root',
      () => ensemble([tree([{ f: 0, t: 0, l: 1, r: 2 }, { f: 1, t: 0, l: 0, r: 2 }, { leaf: 2 }])]),
      /reached twice|out of range/,
    ],
    [
      'shared child',
      () => ensemble([tree([{ f: 0, t: 0, l: 1, r: 2 }, { f: 1, t: 0, l: 2, r: 3 }, { leaf: 2 }, { leaf: 3 }])]),
      /reached twice/,
    ],
    [
      'feature out of range',
      () => ensemble([tree([{ f: 4, t: 0, l: 1, r: 2 }, { leaf: 1 }, { leaf: 2 }])]),
      /feature 4/,
    ],
    ['negative feature', () => ensemble([tree([{ f: -1, t: 0, l: 1, r: 2 }, { leaf: 1 }, { leaf: 2 }])]), /feature -1/],
    ['NaN leaf', () => ensemble([tree([{ f: 0, t: 0, l: 1, r: 2 }, { leaf: NaN }, { leaf: 2 }])]), /non-finite/],
    ['group out of range', () => ensemble([tree(ok(), 3)], { numGroups: 2 }), /group 3/],
    ['non-finite weight', () => ensemble([tree(ok(), 0, Infinity)]), /weight/],
    ['empty tree', () => ensemble([tree([])]), /no nodes/],
    ['zero features', () => ensemble([tree([{ leaf: 1 }])], { numFeatures: 0 }), /numFeatures/],
    ['non-finite base margin', () => ensemble([tree(ok())], { baseMargin: NaN }), /base margin/],
    ['ragged node arrays', () => ensemble([{ ...tree(ok()), right: new Int32Array(2) }]), /different lengths/],
  ];
  it.each(cases)('%s', (_label, build, message) => {
    let caught: unknown;
    try {
      createTreeModel(build());
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ModelFormatError);
    expect((caught as Error).message).toMatch(message);
  });

  it('refuses an unknown objective with UnsupportedModelError', () => {
    expect(() =>
      createTreeModel(ensemble([stump(0, 0, 1, 2)], { objective: 'survival:cox' as 'reg:squarederror' })),
    ).toThrow(UnsupportedModelError);
  });

  it('a very deep (10 000-level) chain is refused, not a stack overflow', () => {
    expect(() => createTreeModel(ensemble([deepZeroTree(10_000, 4)]))).toThrow(/deeper than/);
  });
});

describe('predictAsync', () => {
  const ir = loadFixtureIR('logistic_t100_d6');
  const { rows, nRows } = readMatrix('logistic_t100_d6');

  it('matches predict inline (small) and on the libuv pool (large)', async () => {
    const m = make(ir, { asyncRowThreshold: 64 });
    const sync = m.predict(rows, nRows, { output: 'value' });
    expect(await m.predictAsync(rows.subarray(0, 24 * 10), 10, { output: 'value' })).toEqual(sync.subarray(0, 10));
    const asyncOut = await m.predictAsync(rows, nRows, { output: 'value' });
    expect(asyncOut).toEqual(sync);
    expect(await m.predictAsync(rows, nRows, { output: 'margin' })).toEqual(
      m.predict(rows, nRows, { output: 'margin' }),
    );
  });

  it('copies the rows: overwriting them after the call does not change the result', async () => {
    const m = make(ir, { asyncRowThreshold: 0 });
    const expected = m.predict(rows, nRows, { output: 'margin' });
    const scratch = rows.slice();
    const pending = m.predictAsync(scratch, nRows, { output: 'margin' });
    scratch.fill(NaN);
    expect(await pending).toEqual(expected);
  });

  it('finishes correctly when the model is disposed while the work is in flight', async () => {
    const m = make(ir, { asyncRowThreshold: 0 });
    const expected = m.predict(rows, nRows, { output: 'margin' });
    const pending = Array.from({ length: 4 }, () => m.predictAsync(rows, nRows, { output: 'margin' }));
    m.dispose();
    for (const p of pending) expect(await p).toEqual(expected);
  });

  it('rejects bad input as a rejected promise, not a throw', async () => {
    const m = make(ir);
    await expect(m.predictAsync(rows, nRows + 1)).rejects.toThrow(InvalidArgumentError);
  });
});

describe('sharing', () => {
  it('treeModelFromShared attaches to the same memory and predicts the same', () => {
    const m = make(loadFixtureIR('softprob3_t40_d4'));
    const handle = m.share();
    expect(handle.image.buffer).toBeInstanceOf(SharedArrayBuffer);
    const again = treeModelFromShared(handle);
    opened.push(again);
    const { rows, nRows } = readMatrix('softprob3_t40_d4');
    expect(again.predict(rows, nRows)).toEqual(m.predict(rows, nRows));
    expect(again.numOutputs).toBe(3);
    expect(again.objective).toBe('multi:softprob');
    m.dispose(); // the other holder keeps working
    expect(again.predict(rows, nRows, { output: 'margin' })).toHaveLength(nRows * 3);
  });

  it('refuses things that are not handles, and corrupted images', () => {
    const m = make(ensemble([stump(0, 0, 1, 2)]));
    const handle = m.share();
    expect(() => treeModelFromShared({} as never)).toThrow(InvalidArgumentError);
    expect(() => treeModelFromShared({ ...handle, image: new Uint8Array(handle.image) })).toThrow(InvalidArgumentError);
    const corrupt = new Uint8Array(new SharedArrayBuffer(handle.image.byteLength));
    corrupt.set(handle.image);
    corrupt.fill(0xff, 12, 16); // numFeatures
    expect(() => treeModelFromShared({ ...handle, image: corrupt })).toThrow(ModelFormatError);
    const truncated = new Uint8Array(new SharedArrayBuffer(handle.image.byteLength - 16));
    truncated.set(handle.image.subarray(0, truncated.length));
    expect(() => treeModelFromShared({ ...handle, image: truncated })).toThrow(ModelFormatError);
    expect(() => treeModelFromShared({ ...handle, objective: 'binary:logistic' })).toThrow(ModelFormatError);
  });

  it('reports the kernel it dispatches to', () => {
    expect(['avx512', 'avx2', 'scalar']).toContain(treeKernelName());
  });
});
