/**
 * Hostile-input fuzzing of the three loaders (JSON, UBJSON, legacy binary) through the public
 * `loadTreeModel(bytes)`: > 1000 seeded mutations (byte flips, truncations, huge counts, NaN and
 * infinite values, cyclic / out-of-range children, wrong lengths). Every file must either load into
 * a model that predicts finite-length output without crashing, or throw a RelevanceGateError
 * subclass. Any other exception type fails the test; a per-file time bound catches hangs.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RelevanceGateError } from '../../src/errors.js';
import { loadTreeModel, type TreeModel } from '../../src/index.js';
import { decodeUbjson, type UbjsonValue } from '../../src/tiers/fast-path/loaders/ubjson.js';
import { fixtureBytes, type ModelDoc, setBooster, type TreeCells } from './loader-fixtures.js';
import { mulberry32 as prng } from '../../src/util/seeded-random.js';

type Rand = () => number;
const int = (rand: Rand, n: number): number => Math.floor(rand() * n);
const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[int(rand, xs.length)] as T;

const HOSTILE_INTS = [-1, -2, 0, 1, 2, 3, 7, 0x7fffffff, -0x80000000, 0xffff, 1e9, 31, 30, 32];
const HOSTILE_FLOATS = [NaN, Infinity, -Infinity, 3.4e38, -0, 1e-45];

// ---------- generic byte mutations ----------
function flipBytes(src: Uint8Array, rand: Rand): Uint8Array {
  const out = src.slice();
  const n = 1 + int(rand, 8);
  for (let i = 0; i < n; i++) out[int(rand, out.length)] = int(rand, 256);
  return out;
}

function truncate(src: Uint8Array, rand: Rand): Uint8Array {
  // Bias towards the header, where structure is densest.
  const cut = rand() < 0.5 ? int(rand, Math.min(src.length, 2048)) : int(rand, src.length);
  return src.subarray(0, cut);
}

function overwriteWord(
  src: Uint8Array,
  rand: Rand,
  offset: number,
  littleEndian: boolean,
  asFloat = false,
): Uint8Array {
  const out = src.slice();
  const view = new DataView(out.buffer);
  if (offset + 4 > out.length) return out;
  if (asFloat) view.setFloat32(offset, pick(rand, HOSTILE_FLOATS), littleEndian);
  else view.setInt32(offset, pick(rand, HOSTILE_INTS) | 0, littleEndian);
  return out;
}

// ---------- legacy binary: structured mutations at known field offsets ----------
interface LegacyLayout {
  numTreesAt: number;
  numNodesAt: number[];
  nodeAt: number[];
  objLenAt: number;
  attrsAt: number;
  header: number;
}

function legacyLayout(b: Uint8Array): LegacyLayout {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const header = b[0] === 0x62 && b[1] === 0x69 && b[2] === 0x6e && b[3] === 0x66 ? 4 : 0; // "binf"
  let p = header + 136;
  const objLenAt = p;
  p += 8 + Number(v.getBigUint64(p, true));
  p += 8 + Number(v.getBigUint64(p, true));
  const numTreesAt = p;
  const numTrees = v.getInt32(p, true);
  p += 160;
  const numNodesAt: number[] = [];
  const nodeAt: number[] = [];
  for (let t = 0; t < numTrees; t++) {
    numNodesAt.push(p + 4);
    const n = v.getInt32(p + 4, true);
    p += 148;
    for (let i = 0; i < n; i++) nodeAt.push(p + 20 * i);
    p += 36 * n;
  }
  return { numTreesAt, numNodesAt, nodeAt, objLenAt, attrsAt: p + 4 * numTrees, header };
}

function mutateLegacy(src: Uint8Array, layout: LegacyLayout, rand: Rand): Uint8Array {
  switch (int(rand, 7)) {
    case 0:
      return overwriteWord(src, rand, layout.numTreesAt, true);
    case 1:
      return overwriteWord(src, rand, pick(rand, layout.numNodesAt), true);
    case 2: // child pointers: cycles, self-loops, out of range
      return overwriteWord(src, rand, pick(rand, layout.nodeAt) + 4 + 4 * int(rand, 2), true);
    case 3: // split index / default-left bit
      return overwriteWord(src, rand, pick(rand, layout.nodeAt) + 12, true);
    case 4: // NaN / inf thresholds and leaves
      return overwriteWord(src, rand, pick(rand, layout.nodeAt) + 16, true, true);
    case 5: {
      // huge string length / attribute flag
      const out = src.slice();
      const v = new DataView(out.buffer);
      if (rand() < 0.5) {
        v.setBigUint64(layout.objLenAt, BigInt(pick(rand, [0, 1, 255, 2 ** 31, 2 ** 40, 2 ** 53])), true);
        return out;
      }
      // A second draw (not the same test twice) picks between the other two.
      const second = rand();
      if (second < 0.5)
        v.setInt32(layout.header + 12, 1, true); // contain_extra_attrs with garbage after the trees
      else if (layout.attrsAt + 8 <= out.length)
        v.setBigUint64(layout.attrsAt, BigInt(pick(rand, [0, 1, 2 ** 31, 2 ** 53])), true); // dart weight count / attributes
      return out;
    }
    default:
      return overwriteWord(src, rand, layout.header + 4 * int(rand, 34), true); // learner parameters
  }
}

// ---------- JSON: structured mutations on the parsed document ----------
/** A model document under mutation: an earlier mutation may have replaced the booster with any value. */
type Doc = ModelDoc<Record<string, TreeCells>>;

function mutateJsonDoc(doc: Doc, rand: Rand): void {
  const trees: Array<Record<string, TreeCells>> | undefined = doc.learner.gradient_booster?.model?.trees;
  if (trees === undefined || trees.length === 0) return; // an earlier mutation replaced the booster
  const tree = trees[int(rand, trees.length)];
  const arrays = ['left_children', 'right_children', 'split_indices', 'split_conditions', 'default_left', 'split_type'];
  switch (int(rand, 9)) {
    case 0: {
      const a = tree[pick(rand, arrays)];
      a[int(rand, a.length)] = pick(rand, [...HOSTILE_INTS, 1e308, -1e308, 0.5, null, 'x', true]);
      break;
    }
    case 1: // cyclic / shared / out-of-range children
      tree[pick(rand, ['left_children', 'right_children'])][int(rand, tree.left_children.length)] =
        int(rand, tree.left_children.length + 4) - 2;
      break;
    case 2: {
      // wrong lengths (works for arrays and typed arrays)
      const k = pick(rand, arrays);
      tree[k] = tree[k].slice(0, Math.max(0, tree[k].length - 1 - int(rand, 3)));
      break;
    }
    case 3:
      doc.learner.learner_model_param[pick(rand, ['num_feature', 'num_class', 'base_score', 'num_target'])] = pick(
        rand,
        ['-1', '0', '2', '2147483647', '1e308', 'NaN', '', 'abc', 5, null, '[1,2]'],
      );
      break;
    case 4:
      doc.learner.gradient_booster.model.tree_info[int(rand, trees.length)] = pick(rand, [-1, 1, 3, 1e9, 0.5, 'a']);
      break;
    case 5:
      doc.learner.gradient_booster.model.tree_info.pop();
      break;
    case 6:
      doc.learner.objective.name = pick(rand, ['reg:gamma', '', 'multi:softprob', 'binary:logistic', 42, 'rank:ndcg']);
      break;
    case 7:
      delete tree[pick(rand, arrays)];
      break;
    default:
      setBooster(
        doc,
        pick(rand, [
          {
            name: 'dart',
            gbtree: doc.learner.gradient_booster,
            weight_drop: trees.map(() => pick(rand, [1, 0.5, 1e308, -1])),
          },
          { name: 'gblinear' },
          { name: 'gbtree' },
          null,
        ]),
      );
  }
}

// ---------- UBJSON: a minimal encoder so structured mutations reach the UBJSON path too ----------
function encodeUbjson(v: UbjsonValue | undefined): number[] {
  const out: number[] = [];
  const str = (s: string): void => {
    const b = new TextEncoder().encode(s);
    out.push(0x4c, ...bigEndian(8, BigInt(b.length)), ...b);
  };
  const enc = (x: UbjsonValue | undefined): void => {
    if (x === null || x === undefined) out.push(0x5a);
    else if (x === true) out.push(0x54);
    else if (x === false) out.push(0x46);
    else if (typeof x === 'number') {
      const f = new DataView(new ArrayBuffer(8));
      f.setFloat64(0, x, false);
      out.push(0x44, ...new Uint8Array(f.buffer));
    } else if (typeof x === 'string') {
      out.push(0x53);
      str(x);
    } else if (x instanceof Float32Array || x instanceof Int32Array || x instanceof Uint8Array) {
      const [m, w] = x instanceof Float32Array ? [0x64, 4] : x instanceof Int32Array ? [0x6c, 4] : [0x55, 1];
      out.push(0x5b, 0x24, m, 0x23, 0x4c, ...bigEndian(8, BigInt(x.length)));
      const d = new DataView(new ArrayBuffer(x.length * w));
      x.forEach((e: number, i: number) => {
        if (w === 1) d.setUint8(i, e);
        else if (m === 0x64) d.setFloat32(4 * i, e, false);
        else d.setInt32(4 * i, e, false);
      });
      out.push(...new Uint8Array(d.buffer));
    } else if (Array.isArray(x) || ArrayBuffer.isView(x)) {
      out.push(0x5b);
      for (const e of Array.from(x as ArrayLike<UbjsonValue>)) enc(e);
      out.push(0x5d);
    } else {
      out.push(0x7b);
      for (const [k, e] of Object.entries(x)) {
        str(k);
        enc(e);
      }
      out.push(0x7d);
    }
  };
  enc(v);
  return out;
}

function bigEndian(bytes: number, v: bigint): number[] {
  const out: number[] = [];
  for (let i = bytes - 1; i >= 0; i--) out.push(Number((v >> BigInt(8 * i)) & 0xffn));
  return out;
}

function mutateUbjDoc(doc: Doc, rand: Rand): void {
  const trees: Array<Record<string, TreeCells>> | undefined = doc.learner.gradient_booster?.model?.trees;
  if (trees === undefined || trees.length === 0) return;
  const tree = trees[int(rand, trees.length)];
  switch (int(rand, 4)) {
    case 0: {
      const c = tree.split_conditions as Float32Array;
      c[int(rand, c.length)] = pick(rand, HOSTILE_FLOATS);
      break;
    }
    case 1: {
      const a = tree[pick(rand, ['left_children', 'right_children', 'split_indices'])] as Int32Array;
      a[int(rand, a.length)] = pick(rand, HOSTILE_INTS);
      break;
    }
    case 2:
      tree[pick(rand, ['left_children', 'split_conditions', 'default_left'])] = (
        tree.left_children as Int32Array
      ).subarray(0, int(rand, 5));
      break;
    default:
      mutateJsonDoc(doc, rand);
  }
}

/** Corrupts a UBJSON container count (`#` followed by an int marker) in place. */
function hugeUbjCount(src: Uint8Array, rand: Rand): Uint8Array {
  const out = src.slice();
  const starts: number[] = [];
  for (let i = 0; i + 10 < out.length && starts.length < 2000; i++)
    if (out[i] === 0x23 && out[i + 1] === 0x4c) starts.push(i + 2);
  if (starts.length === 0) return out;
  const at = pick(rand, starts);
  new DataView(out.buffer).setBigInt64(at, BigInt(pick(rand, [2 ** 31, 2 ** 40, 2 ** 53 - 1, -1, 0, 1])), false);
  return out;
}

// ---------- the check ----------
const ROWS = 4;

async function exercise(bytes: Uint8Array, rand: Rand): Promise<'loaded' | 'refused'> {
  let model: TreeModel;
  try {
    model = await loadTreeModel(bytes);
  } catch (err) {
    if (err instanceof RelevanceGateError) return 'refused';
    throw err;
  }
  try {
    const rows = new Float32Array(ROWS * model.numFeatures);
    for (let i = 0; i < rows.length; i++)
      rows[i] = rand() < 0.1 ? NaN : rand() < 0.05 ? pick(rand, [Infinity, -Infinity]) : rand() * 4 - 2;
    const margin = model.predict(rows, ROWS, { output: 'margin' });
    const value = model.predict(rows, ROWS, { output: 'value' });
    expect(margin.length).toBe(ROWS * model.numOutputs);
    expect(value.length).toBeGreaterThanOrEqual(ROWS);
  } finally {
    model.dispose();
  }
  return 'loaded';
}

interface Tally {
  loaded: number;
  refused: number;
  slowestMs: number;
}

async function run(cases: number, seed: number, make: (rand: Rand) => Uint8Array): Promise<Tally> {
  const rand = prng(seed);
  const tally: Tally = { loaded: 0, refused: 0, slowestMs: 0 };
  for (let i = 0; i < cases; i++) {
    const bytes = make(rand);
    const t0 = performance.now();
    let outcome: 'loaded' | 'refused';
    try {
      outcome = await exercise(bytes, rand);
    } catch (err) {
      throw new Error(`case ${i} (seed ${seed}) threw a non-RelevanceGateError: ${String(err)}`, { cause: err });
    }
    tally[outcome]++;
    tally.slowestMs = Math.max(tally.slowestMs, performance.now() - t0);
  }
  return tally;
}

// Small seeds keep the run fast: a 4-depth model for the structured formats.
const JSON_SEED = fixtureBytes('squarederror_t60_d4.json');
const UBJ_SEED = fixtureBytes('logistic_default_base_t50_d4.ubj');
const BIN_SEED = fixtureBytes('mlxgboost_t60_d5.bin');
const SOFTPROB_JSON = fixtureBytes('softprob3_t40_d4.json');
// XGBoost 1.7.4's own legacy binary of a dart model ("binf" header, weight_drop after tree_info).
const DART_BIN_SEED = new Uint8Array(readFileSync(new URL('./fixtures/dart_t30_d3.bin', import.meta.url)));

describe('loader fuzzing (seeded, >= 1000 hostile files)', () => {
  const results: Record<string, Tally> = {};

  it('legacy binary (ml-xgboost gbtree and XGBoost 1.7 dart): 400 byte flips, truncations and forged fields', async () => {
    const seeds = [BIN_SEED, DART_BIN_SEED].map((bytes) => ({ bytes, layout: legacyLayout(bytes) }));
    results.legacy = await run(400, 101, (rand) => {
      const { bytes, layout } = rand() < 0.7 ? seeds[0]! : seeds[1]!;
      const k = rand();
      if (k < 0.25) return flipBytes(bytes, rand);
      if (k < 0.45) return truncate(bytes, rand);
      return mutateLegacy(bytes, layout, rand);
    });
    expect(results.legacy!.refused).toBeGreaterThan(0);
    expect(results.legacy!.loaded).toBeGreaterThan(0);
  });

  it('JSON: 350 structural mutations, byte flips and truncations', async () => {
    const base = JSON.parse(new TextDecoder().decode(JSON_SEED)) as Doc;
    const softprob = JSON.parse(new TextDecoder().decode(SOFTPROB_JSON)) as Doc;
    results.json = await run(350, 202, (rand) => {
      const k = rand();
      if (k < 0.15) return flipBytes(JSON_SEED, rand);
      if (k < 0.3) return truncate(JSON_SEED, rand);
      const doc = structuredClone(rand() < 0.8 ? base : softprob);
      mutateJsonDoc(doc, rand);
      if (rand() < 0.3) mutateJsonDoc(doc, rand);
      return new TextEncoder().encode(JSON.stringify(doc));
    });
    expect(results.json!.refused).toBeGreaterThan(0);
    expect(results.json!.loaded).toBeGreaterThan(0);
  });

  it('UBJSON: 350 byte flips, truncations, huge counts and structural mutations', async () => {
    const base = decodeUbjson(UBJ_SEED);
    results.ubj = await run(350, 303, (rand) => {
      const k = rand();
      if (k < 0.25) return flipBytes(UBJ_SEED, rand);
      if (k < 0.45) return truncate(UBJ_SEED, rand);
      if (k < 0.65) return hugeUbjCount(UBJ_SEED, rand);
      const doc = structuredClone(base);
      mutateUbjDoc(doc as unknown as Doc, rand);
      return new Uint8Array(encodeUbjson(doc));
    });
    expect(results.ubj!.refused).toBeGreaterThan(0);
    expect(results.ubj!.loaded).toBeGreaterThan(0);
  });

  it('every file was answered (no hang: the test timeout bounds it) and >= 1000 files were tried', () => {
    const all = Object.values(results);
    expect(all.reduce((s, t) => s + t.loaded + t.refused, 0)).toBeGreaterThanOrEqual(1000);
    console.log('fuzz outcomes', JSON.stringify(results));
  });
});
