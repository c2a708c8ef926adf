/**
 * Loader behaviour without the native evaluator: every fixture format parses to the same IR, the
 * IR reproduces XGBoost's margins through a float32 reference walk, and refused/malformed inputs
 * raise the documented typed errors.
 */
import { describe, expect, it } from 'vitest';
import { ModelFormatError, UnsupportedModelError } from '../../src/errors.js';
import type { TreeEnsembleIR } from '../../src/tiers/fast-path/model-ir.js';
import { parseTreeModelBytes } from '../../src/tiers/fast-path/loaders/parse-model.js';
import { decodeUbjson } from '../../src/tiers/fast-path/loaders/ubjson.js';
import { loadXGBoostJson } from '../../src/tiers/fast-path/loaders/xgboost-json.js';
import { loadXGBoostLegacyBinary } from '../../src/tiers/fast-path/loaders/xgboost-legacy-binary.js';
import { readTreeModelIR } from '../../src/tiers/fast-path/load-tree-model.js';
import { formatFloat32, writeXGBoostJson } from '../../src/tiers/fast-path/xgboost-json-writer.js';
import {
  fixtureBytes,
  fixturePath,
  type JsonTree,
  manifest,
  type ModelDoc,
  readExpected,
  readMatrix,
  referenceMargins,
  setBooster,
  type TreeCells,
} from './loader-fixtures.js';

function sameIR(a: TreeEnsembleIR, b: TreeEnsembleIR): void {
  expect(a.objective).toBe(b.objective);
  expect(a.numFeatures).toBe(b.numFeatures);
  expect(a.numGroups).toBe(b.numGroups);
  expect(Object.is(a.baseMargin, b.baseMargin)).toBe(true);
  expect(a.trees.length).toBe(b.trees.length);
  a.trees.forEach((t, i) => {
    const u = b.trees[i] as (typeof b.trees)[number];
    expect(t.group).toBe(u.group);
    expect(t.weight).toBe(u.weight);
    expect(Array.from(t.left)).toEqual(Array.from(u.left));
    expect(Array.from(t.right)).toEqual(Array.from(u.right));
    expect(Array.from(t.splitIndex)).toEqual(Array.from(u.splitIndex));
    expect(Array.from(t.splitCondition)).toEqual(Array.from(u.splitCondition));
    expect(Array.from(t.defaultLeft)).toEqual(Array.from(u.defaultLeft));
  });
}

function json(name: string): ModelDoc {
  return JSON.parse(new TextDecoder().decode(fixtureBytes(`${name}.json`))) as ModelDoc;
}

function encode(doc: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(doc));
}

describe('XGBoost fixtures → IR', () => {
  for (const m of manifest()) {
    it(`${m.name}: JSON and UBJSON give the same IR, and its margins are XGBoost's exactly`, () => {
      const fromJson = parseTreeModelBytes(fixtureBytes(`${m.name}.json`));
      const fromUbj = parseTreeModelBytes(fixtureBytes(`${m.name}.ubj`));
      expect(fromJson.format).toBe('xgboost-json');
      expect(fromUbj.format).toBe('xgboost-ubjson');
      sameIR(fromJson.ir, fromUbj.ir);
      expect(fromJson.ir.objective).toBe(m.objective);
      expect(fromJson.ir.numFeatures).toBe(m.features);
      const { rows, nRows } = readMatrix(m.name);
      const expected = readExpected(m.name);
      const margins = referenceMargins(fromJson.ir, rows, nRows);
      expect(fromJson.ir.numGroups).toBe(expected.outputs);
      for (let r = 0; r < nRows; r++) {
        for (let g = 0; g < expected.outputs; g++) {
          expect(margins[r * expected.outputs + g]).toBe(expected.margin[r]![g]);
        }
      }
    });
  }

  it('ml-xgboost: the .bin and the toJSON() file give the same IR and XGBoost 1.7.4 margins', () => {
    const bin = parseTreeModelBytes(fixtureBytes('mlxgboost_t60_d5.bin'));
    const js = parseTreeModelBytes(fixtureBytes('mlxgboost_t60_d5.model.json'));
    expect(bin.format).toBe('legacy-binary');
    expect(js.format).toBe('ml-xgboost-json');
    sameIR(bin.ir, js.ir);
    expect(bin.ir.objective).toBe('binary:logistic');
    expect(bin.ir.numFeatures).toBe(12);
    const { rows, nRows } = readMatrix('mlxgboost_t60_d5');
    const expected = readExpected('mlxgboost_t60_d5');
    const margins = referenceMargins(bin.ir, rows, nRows);
    for (let r = 0; r < nRows; r++) expect(margins[r]).toBe(expected.margin[r]![0]);
  });

  it('accepts the "binf" header XGBoost 1.x writes before a legacy binary', () => {
    const raw = fixtureBytes('mlxgboost_t60_d5.bin');
    const withHeader = new Uint8Array(raw.length + 4);
    withHeader.set(new TextEncoder().encode('binf'));
    withHeader.set(raw, 4);
    sameIR(loadXGBoostLegacyBinary(withHeader), loadXGBoostLegacyBinary(raw));
  });

  it('readTreeModelIR reads by path', async () => {
    const { format, ir } = await readTreeModelIR(fixturePath('squarederror_t60_d4.ubj'));
    expect(format).toBe('xgboost-ubjson');
    expect(ir.baseMargin).toBe(2.5);
  });
});

describe('base_score → base margin (float32, per objective)', () => {
  it('logit for binary:logistic, identity for logitraw, squarederror, rank and softprob', () => {
    const p = (name: string): number =>
      loadXGBoostJson(new TextDecoder().decode(fixtureBytes(`${name}.json`))).baseMargin;
    expect(Object.is(p('logistic_t100_d6'), -0)).toBe(true); // -logf(1/0.5 - 1) = -0
    expect(p('logitraw_t80_d5')).toBe(Math.fround(0.3));
    expect(p('squarederror_t60_d4')).toBe(2.5);
    expect(p('rank_pairwise_t100_d6')).toBe(0.5);
    expect(p('softprob3_t40_d4')).toBe(0.5);
  });

  it('logistic base_score 0.3468 becomes -logf(1/p - 1) in float32', () => {
    const doc = json('logistic_t100_d6');
    doc.learner.learner_model_param.base_score = '3.468E-1';
    const f = Math.fround;
    const pr = f(0.3468);
    expect(loadXGBoostJson(JSON.stringify(doc)).baseMargin).toBe(f(-f(Math.log(f(f(1 / pr) - 1)))));
  });

  it('refuses a logistic base_score outside (0, 1)', () => {
    const doc = json('logistic_t100_d6');
    doc.learner.learner_model_param.base_score = '1.5E0';
    expect(() => loadXGBoostJson(JSON.stringify(doc))).toThrow(ModelFormatError);
  });
});

describe('refused and malformed models', () => {
  it('refuses categorical splits, naming them', () => {
    const doc = json('squarederror_t60_d4');
    doc.learner.gradient_booster.model.trees[3].split_type[0] = 1;
    expect(() => parseTreeModelBytes(encode(doc))).toThrow(UnsupportedModelError);
    expect(() => parseTreeModelBytes(encode(doc))).toThrow(/categorical/);
    const doc2 = json('squarederror_t60_d4');
    doc2.learner.gradient_booster.model.trees[0].categories = [1, 2];
    doc2.learner.gradient_booster.model.trees[0].categories_nodes = [0];
    expect(() => parseTreeModelBytes(encode(doc2))).toThrow(/categorical/);
  });

  it('refuses gblinear, unknown objectives and multi-target models', () => {
    const lin = json('squarederror_t60_d4');
    setBooster(lin, { name: 'gblinear', model: { weights: [0] } });
    expect(() => parseTreeModelBytes(encode(lin))).toThrow(/booster "gblinear" is not supported/);
    const obj = json('squarederror_t60_d4');
    obj.learner.objective.name = 'reg:gamma';
    expect(() => parseTreeModelBytes(encode(obj))).toThrow(UnsupportedModelError);
    expect(() => parseTreeModelBytes(encode(obj))).toThrow(/reg:gamma/);
    const mt = json('squarederror_t60_d4');
    mt.learner.learner_model_param.num_target = '2';
    expect(() => parseTreeModelBytes(encode(mt))).toThrow(/num_target/);
  });

  it('reads dart weight_drop into tree weights', () => {
    const doc = json('squarederror_t60_d4');
    const gbtree = doc.learner.gradient_booster;
    const n = gbtree.model.trees.length;
    const weights = Array.from({ length: n }, (_, i) => 0.5 + i / (2 * n));
    setBooster(doc, { name: 'dart', gbtree, weight_drop: weights });
    const ir = parseTreeModelBytes(encode(doc)).ir;
    expect(ir.booster).toBe('dart');
    expect(ir.trees.map((t) => t.weight)).toEqual(weights.map(Math.fround));
    doc.learner.gradient_booster.weight_drop = weights.slice(1);
    expect(() => parseTreeModelBytes(encode(doc))).toThrow(/weight_drop/);
  });

  it('rejects cycles, shared children, out-of-range children and features, NaN thresholds', () => {
    const cases: Array<[string, (t: JsonTree) => void, RegExp]> = [
      ['cycle', (t) => (t.left_children[1] = 0), /invalid children|reached twice/],
      ['shared child', (t) => (t.right_children[1] = t.left_children[1]), /invalid children|reached twice/],
      ['child out of range', (t) => (t.left_children[0] = 10_000), /invalid children/],
      ['feature out of range', (t) => (t.split_indices[0] = 24), /feature 24/],
      ['length mismatch', (t) => t.split_conditions.pop(), /split_conditions has/],
    ];
    for (const [, mutate, message] of cases) {
      const doc = json('squarederror_t60_d4');
      mutate(doc.learner.gradient_booster.model.trees[0]);
      expect(() => parseTreeModelBytes(encode(doc))).toThrow(ModelFormatError);
      expect(() => parseTreeModelBytes(encode(doc))).toThrow(message);
    }
    // NaN cannot be spelled in JSON; UBJSON can carry it.
    const ubj = fixtureBytes('squarederror_t60_d4.ubj').slice();
    const doc = decodeUbjson(ubj) as unknown as ModelDoc<Record<string, TreeCells>>;
    const cond = doc.learner.gradient_booster.model.trees[0].split_conditions as Float32Array;
    const first = cond[0]!;
    const view = new DataView(ubj.buffer);
    let patched = false;
    for (let i = 0; i + 4 <= ubj.length && !patched; i++) {
      if (view.getFloat32(i, false) === first && view.getFloat32(i + 4, false) === cond[1]) {
        view.setFloat32(i, NaN, false);
        patched = true;
      }
    }
    expect(patched).toBe(true);
    expect(() => parseTreeModelBytes(ubj)).toThrow(/NaN split condition/);
  });

  it('judges leaves and dart weights after float32 rounding (1e308 is Infinity as float32)', () => {
    const doc = json('squarederror_t60_d4');
    const t = doc.learner.gradient_booster.model.trees[0];
    const leaf = (t.left_children as number[]).indexOf(-1);
    t.split_conditions[leaf] = 1e308;
    expect(() => parseTreeModelBytes(encode(doc))).toThrow(/non-finite value Infinity/);
    const dart = json('squarederror_t60_d4');
    const gbtree = dart.learner.gradient_booster;
    setBooster(dart, { name: 'dart', gbtree, weight_drop: gbtree.model.trees.map(() => 1e300) });
    expect(() => parseTreeModelBytes(encode(dart))).toThrow(/weight/);
  });

  it("accepts XGBoost's JSON memory snapshot {Model, Config}", () => {
    const doc = json('softprob3_t40_d4');
    const snap = parseTreeModelBytes(encode({ Model: doc, Config: {} }));
    sameIR(snap.ir, parseTreeModelBytes(encode(doc)).ir);
  });

  it('drops unreachable nodes and renumbers the rest in order', () => {
    const doc = json('squarederror_t60_d4');
    const t = doc.learner.gradient_booster.model.trees[0];
    const before = parseTreeModelBytes(encode(json('squarederror_t60_d4'))).ir.trees[0]!;
    // Append an orphan node (like a deleted node in a legacy binary).
    t.left_children.push(-1);
    t.right_children.push(-1);
    t.split_indices.push(0);
    t.split_conditions.push(123);
    t.default_left.push(0);
    t.split_type.push(0);
    const after = parseTreeModelBytes(encode(doc)).ir.trees[0]!;
    expect(Array.from(after.splitCondition)).toEqual(Array.from(before.splitCondition));
  });

  it('names what is wrong with non-model input', () => {
    expect(() => parseTreeModelBytes(new Uint8Array(0))).toThrow(/empty/);
    expect(() => parseTreeModelBytes(new TextEncoder().encode('{"learner": '))).toThrow(/not valid JSON/);
    expect(() => parseTreeModelBytes(new TextEncoder().encode('hello world'))).toThrow(/not a recognized model/);
    expect(() => parseTreeModelBytes(encode({ name: 'ml-xgboost', model: [1, 2, 'x'] }))).toThrow(/byte value/);
  });

  it('a legacy binary truncated anywhere fails with ModelFormatError', () => {
    const raw = fixtureBytes('mlxgboost_t60_d5.bin');
    for (const cut of [0, 3, 100, 136, 150, 200, 400, 5000, raw.length - 241, raw.length - 1]) {
      expect(() => loadXGBoostLegacyBinary(raw.subarray(0, cut))).toThrow(ModelFormatError);
    }
  });
});

describe('UBJSON decoder', () => {
  const b = (...xs: Array<number | string>): Uint8Array =>
    new Uint8Array(xs.flatMap((x) => (typeof x === 'string' ? Array.from(x, (c) => c.charCodeAt(0)) : [x])));

  it('decodes typed containers to typed arrays and untyped ones to arrays', () => {
    const v = decodeUbjson(
      b(
        '{',
        'i',
        1,
        'a',
        '[',
        '$',
        'l',
        '#',
        'i',
        2,
        0,
        0,
        0,
        1,
        0xff,
        0xff,
        0xff,
        0xff,
        'i',
        1,
        'b',
        '[',
        'T',
        'Z',
        ']',
        '}',
      ),
    ) as { a: Int32Array; b: unknown[] };
    expect(v.a).toBeInstanceOf(Int32Array);
    expect(Array.from(v.a)).toEqual([1, -1]);
    expect(v.b).toEqual([true, null]);
  });

  it('refuses counts larger than the input, zero-width typed containers, deep nesting and trailing bytes', () => {
    expect(() => decodeUbjson(b('[', '$', 'd', '#', 'l', 0x7f, 0xff, 0xff, 0xff))).toThrow(
      /exceeds the remaining input/,
    );
    expect(() => decodeUbjson(b('[', '$', 'Z', '#', 'l', 0x7f, 0xff, 0xff, 0xff))).toThrow(
      /unsupported typed container/,
    );
    expect(() => decodeUbjson(b('[', '#', 'L', 0, 0, 0x10, 0, 0, 0, 0, 0))).toThrow(/exceeds the remaining input/);
    expect(() => decodeUbjson(b(...new Array<string>(100).fill('[')))).toThrow(/nesting deeper/);
    expect(() => decodeUbjson(b('Z', 'Z'))).toThrow(/trailing/);
    expect(() => decodeUbjson(b('S', 'i', 2, 0xc3, 0x28))).toThrow(/UTF-8/);
    expect(() => decodeUbjson(b('L', 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff))).toThrow(/out of range/);
  });

  it('gives objects a null prototype so "__proto__" keys are plain data', () => {
    const v = decodeUbjson(b('{', 'i', 9, '__proto__', 'T', '}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBeNull();
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toBe(true);
  });
});

describe('XGBoost JSON writer', () => {
  it('round-trips every fixture format through JSON bit for bit', () => {
    for (const file of [
      'softprob3_t40_d4.ubj',
      'logitraw_t80_d5.json',
      'mlxgboost_t60_d5.bin',
      'rank_pairwise_t100_d6.ubj',
    ]) {
      const { ir } = parseTreeModelBytes(fixtureBytes(file));
      const back = parseTreeModelBytes(new TextEncoder().encode(writeXGBoostJson(ir)));
      expect(back.format).toBe('xgboost-json');
      sameIR(back.ir, ir);
    }
  });

  it('formats float32 values as the shortest string that reads back exactly', () => {
    for (const v of [0.1, 1 / 3, -2.5e-8, 3.4028234663852886e38, 1.401298464324817e-45, 12345.678]) {
      const f = Math.fround(v);
      const s = formatFloat32(f);
      expect(Math.fround(Number(s))).toBe(f);
      expect(s.replace(/^-/, '').replace(/e.*$/, '').replace('.', '').replace(/^0+/, '').length).toBeLessThanOrEqual(9);
    }
    expect(formatFloat32(0.5)).toBe('0.5');
  });

  it('refuses to write an infinite threshold instead of changing it', () => {
    const { ir } = parseTreeModelBytes(fixtureBytes('squarederror_t60_d4.json'));
    (ir.trees[0]!.splitCondition as Float32Array)[0] = Infinity;
    expect(() => writeXGBoostJson(ir)).toThrow(UnsupportedModelError);
  });
});
