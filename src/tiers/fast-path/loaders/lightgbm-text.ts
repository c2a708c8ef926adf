/**
 * LightGBM's text model format (Booster.save_model / LGBM_BoosterSaveModel, versions v2–v4) →
 * TreeEnsembleIR, exact for float32 rows: the IR's margins equal LightGBM's `predict(raw_score=True)`
 * and its values `predict()` (checked against LightGBM 4.7.0, test/trees/lightgbm.test.ts).
 *
 * How LightGBM's semantics map onto the IR (`x < t` in float32, NaN follows defaultLeft):
 * - LightGBM goes left when `x <= threshold` in float64. For a float32 x that is `x < T` with T
 *   the next float32 above the largest float32 <= threshold (`ltThreshold`), exactly.
 * - Its dense predict path drops |x| <= kZeroThreshold (1e-35f) from the row, so those values act
 *   as 0.0; the threshold absorbs that too (`zeroedThreshold`).
 * - Missing type None: NaN is read as 0.0, so NaN goes where 0 goes. Missing type NaN: NaN follows
 *   default_left. Missing type Zero: NaN and |x| <= 1e-35 follow default_left; when that zero band
 *   sits inside the other side of the split the node becomes three IR nodes with both subtrees
 *   copied (bounded: a model that would grow past MAX_GROWTH is refused).
 * - Leaves stay float64 and are summed in float64 in tree order (marginPrecision 'float64'), as
 *   LightGBM does; there is no separate base score (boost_from_average is folded into tree 0).
 * - A +inf threshold ("present vs missing" splits) sends x = +inf left, which `x < T` cannot say:
 *   such models set `clampPositiveInfinity`, so the evaluator reads an input +inf as FLT_MAX. That
 *   is exact for every other threshold below FLT_MAX; a model that also holds a finite threshold
 *   at or above FLT_MAX is refused.
 *
 * Objectives: binary (sigmoid:1) → binary:logistic; multiclass → multi:softprob; regression, L1,
 * huber, fair, quantile, mape → reg:squarederror (identity); lambdarank, rank_xendcg → rank:ndcg
 * (identity); cross_entropy → reg:logistic (sigmoid). Refused with UnsupportedModelError (nothing
 * is approximated): categorical splits, linear trees, random-forest averaging, objectives whose
 * output transform the evaluator lacks (poisson, gamma, tweedie: exp; multiclassova;
 * cross_entropy_lambda; binary with sigmoid ≠ 1; regression with sqrt).
 * Malformed text → ModelFormatError.
 */
import { ModelFormatError, UnsupportedModelError } from '../../../errors.js';
import type { TreeEnsembleIR, TreeIR, TreeObjective } from '../model-ir.js';
import { printable } from './objectives.js';
import { modelText } from './byte-reader.js';
import { buildTree, checkNumFeatures } from './tree-builder.js';

/** LightGBM's kZeroThreshold (1e-35f): |x| at most this is "zero" (dense rows drop it, missing type Zero). */
const ZERO = Math.fround(1e-35);
/** A tree may grow to at most this many times its node count (plus a constant) through Zero-missing copies. */
const MAX_GROWTH = 16;
/** Upper bound on num_leaves of one tree (LightGBM's own limit is 131072). */
const MAX_LEAVES = 1 << 20;

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The next float32 above x (x a float32; +inf stays +inf). */
function nextUpF32(x: number): number {
  if (Number.isNaN(x) || x === Number.POSITIVE_INFINITY) return x;
  if (x === 0) return 2 ** -149;
  f32[0] = x;
  u32[0] = x > 0 ? (u32[0] as number) + 1 : (u32[0] as number) - 1;
  return f32[0] as number;
}

/** The largest float32 <= t (t a double). */
function floorF32(t: number): number {
  const f = Math.fround(t);
  return f > t ? -nextUpF32(-f) : f;
}

/** For every float32 x (not NaN): x <= t in float64 ⟺ x < ltThreshold(t) in float32. */
function ltThreshold(t: number): number {
  return nextUpF32(floorF32(t));
}

/** The same, for rows whose values in [-ZERO, ZERO] LightGBM reads as 0.0. */
function zeroedThreshold(t: number): number {
  return t >= 0 ? ltThreshold(Math.max(t, ZERO)) : Math.min(ltThreshold(t), -ZERO);
}

const OBJECTIVES: Readonly<Record<string, TreeObjective>> = {
  binary: 'binary:logistic',
  multiclass: 'multi:softprob',
  regression: 'reg:squarederror',
  regression_l1: 'reg:squarederror',
  huber: 'reg:squarederror',
  fair: 'reg:squarederror',
  quantile: 'reg:squarederror',
  mape: 'reg:squarederror',
  lambdarank: 'rank:ndcg',
  rank_xendcg: 'rank:ndcg',
  cross_entropy: 'reg:logistic',
};

function parseObjectiveLine(line: string | undefined, numClass: number, where: string): TreeObjective {
  // A model trained with a custom objective has no objective line: LightGBM's predict() then
  // returns the raw sum, which the identity transform reproduces.
  if (line === undefined || line.trim() === '' || line.trim() === 'custom') return 'reg:squarederror';
  const [name = '', ...params] = line.trim().split(/\s+/);
  const objective = OBJECTIVES[name];
  if (objective === undefined) {
    throw new UnsupportedModelError(
      `${where}: LightGBM objective "${printable(name)}" is not supported (its output transform has no exact ` +
        `equivalent here; supported: ${Object.keys(OBJECTIVES).join(', ')})`,
    );
  }
  for (const p of params) {
    const [key = '', value = ''] = p.split(':');
    if (key === 'sigmoid' && name === 'binary' && Number(value) !== 1) {
      throw new UnsupportedModelError(
        `${where}: binary objective with sigmoid:${printable(value)} (only 1 is supported)`,
      );
    }
    if (key === 'sqrt') throw new UnsupportedModelError(`${where}: ${name} with reg_sqrt is not supported`);
    if (key === 'num_class' && Number(value) !== numClass) {
      throw new ModelFormatError(
        `${where}: objective num_class ${printable(value)} differs from num_class ${numClass}`,
      );
    }
  }
  return objective;
}

/** A block of `key=value` lines. Keys are kept once; a repeated key is malformed. */
function keyValues(lines: readonly string[], from: number, to: number, where: string): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = from; i < to; i++) {
    const line = lines[i] as string;
    const eq = line.indexOf('=');
    if (eq <= 0) continue; // bare flags (average_output) are looked up by the caller
    const key = line.slice(0, eq);
    if (out.has(key)) throw new ModelFormatError(`${where}: "${printable(key)}" appears twice`);
    out.set(key, line.slice(eq + 1));
  }
  return out;
}

function parseNumber(s: string, what: string): number {
  const t = s.trim();
  if (t === 'inf' || t === '+inf') return Number.POSITIVE_INFINITY;
  if (t === '-inf') return Number.NEGATIVE_INFINITY;
  const n = t === '' ? NaN : Number(t);
  if (Number.isNaN(n)) throw new ModelFormatError(`${what}: "${printable(t)}" is not a number`);
  return n;
}

function intOf(kv: Map<string, string>, key: string, where: string, fallback?: number): number {
  const v = kv.get(key);
  if (v === undefined) {
    if (fallback !== undefined) return fallback;
    throw new ModelFormatError(`${where}: "${key}" is missing`);
  }
  const n = parseNumber(v, `${where} ${key}`);
  if (!Number.isSafeInteger(n)) throw new ModelFormatError(`${where}: "${key}" = ${printable(v)} is not an integer`);
  return n;
}

function numbers(kv: Map<string, string>, key: string, count: number, where: string): number[] {
  const v = kv.get(key);
  if (v === undefined) throw new ModelFormatError(`${where}: "${key}" is missing`);
  const parts = v.trim() === '' ? [] : v.trim().split(/\s+/);
  if (parts.length !== count) {
    throw new ModelFormatError(`${where}: "${key}" has ${parts.length} values, expected ${count}`);
  }
  return parts.map((p, i) => parseNumber(p, `${where} ${key}[${i}]`));
}

function integers(kv: Map<string, string>, key: string, count: number, where: string): number[] {
  const out = numbers(kv, key, count, where);
  out.forEach((n, i) => {
    if (!Number.isSafeInteger(n)) throw new ModelFormatError(`${where}: "${key}"[${i}] = ${n} is not an integer`);
  });
  return out;
}

/** Growable per-node arrays of one IR tree. */
class TreeNodes {
  readonly left: number[] = [];
  readonly right: number[] = [];
  readonly splitIndex: number[] = [];
  readonly splitCondition: number[] = [];
  readonly defaultLeft: number[] = [];
  readonly leafValues64: number[] = [];

  constructor(
    private readonly budget: number,
    private readonly where: string,
  ) {}

  alloc(): number {
    if (this.left.length >= this.budget) {
      throw new UnsupportedModelError(
        `${this.where}: its missing-as-zero splits would need more than ${this.budget} nodes in this engine's form`,
      );
    }
    this.left.push(-1);
    this.right.push(-1);
    this.splitIndex.push(0);
    this.splitCondition.push(0);
    this.defaultLeft.push(0);
    this.leafValues64.push(0);
    return this.left.length - 1;
  }

  leaf(id: number, value: number): void {
    this.splitCondition[id] = Math.fround(value);
    this.leafValues64[id] = value;
  }

  /** Inner node `id`: x < threshold → left; NaN → left when defaultLeft. Returns [left, right] ids, fresh unless given. */
  split(id: number, feature: number, threshold: number, defaultLeft: boolean, right?: number): [number, number] {
    const l = this.alloc();
    const r = right ?? this.alloc();
    this.left[id] = l;
    this.right[id] = r;
    this.splitIndex[id] = feature;
    this.splitCondition[id] = threshold;
    this.defaultLeft[id] = defaultLeft ? 1 : 0;
    return [l, r];
  }
}

interface LgbTree {
  readonly numLeaves: number;
  readonly splitFeature: number[];
  readonly threshold: number[];
  readonly decisionType: number[];
  readonly leftChild: number[];
  readonly rightChild: number[];
  readonly leafValue: number[];
}

/**
 * Every inner node and every leaf is reached exactly once from inner node 0 (no cycles, no shared
 * or dangling children), so the translation below terminates and copies only what it must.
 */
function checkStructure(tree: LgbTree, where: string): void {
  const inner = tree.numLeaves - 1;
  if (inner === 0) return;
  const seenInner = new Uint8Array(inner);
  const seenLeaf = new Uint8Array(tree.numLeaves);
  const stack = [0];
  seenInner[0] = 1;
  while (stack.length > 0) {
    const n = stack.pop() as number;
    for (const c of [tree.leftChild[n] as number, tree.rightChild[n] as number]) {
      if (c >= 0) {
        if (c >= inner || seenInner[c] === 1) {
          throw new ModelFormatError(`${where}: node ${n} has child ${c} out of range or reached twice`);
        }
        seenInner[c] = 1;
        stack.push(c);
      } else {
        const leaf = ~c;
        if (leaf >= tree.numLeaves || seenLeaf[leaf] === 1) {
          throw new ModelFormatError(`${where}: node ${n} has leaf ${leaf} out of range or reached twice`);
        }
        seenLeaf[leaf] = 1;
      }
    }
  }
  if (seenLeaf.some((v) => v === 0) || seenInner.some((v) => v === 0)) {
    throw new ModelFormatError(`${where}: some nodes are not reachable from the root`);
  }
}

/** Translates one LightGBM tree into IR node arrays (explicit stack: depth never touches the JS stack). */
function translateTree(tree: LgbTree, numFeatures: number, where: string): TreeNodes {
  const inner = tree.numLeaves - 1;
  const nodes = new TreeNodes(MAX_GROWTH * (2 * tree.numLeaves) + 1024, where);
  const root = nodes.alloc();
  // Each task fills IR node `id` with LightGBM node `ref` (>= 0 inner, < 0 leaf ~ref).
  const stack: Array<{ ref: number; id: number }> = [{ ref: inner === 0 ? -1 : 0, id: root }];
  while (stack.length > 0) {
    const { ref, id } = stack.pop() as { ref: number; id: number };
    if (ref < 0) {
      nodes.leaf(id, tree.leafValue[~ref] as number);
      continue;
    }
    const feature = tree.splitFeature[ref] as number;
    if (feature < 0 || feature >= numFeatures) {
      throw new ModelFormatError(`${where}: node ${ref} splits on feature ${feature}, model has ${numFeatures}`);
    }
    const t = tree.threshold[ref] as number;
    const dt = tree.decisionType[ref] as number;
    if (dt < 0 || dt > 15) throw new ModelFormatError(`${where}: node ${ref} has decision_type ${dt}`);
    if ((dt & 1) !== 0) {
      throw new UnsupportedModelError(
        `${where}: node ${ref} is a categorical split; categorical splits are not supported`,
      );
    }
    const dl = (dt & 2) !== 0;
    const missing = (dt >> 2) & 3;
    const L = tree.leftChild[ref] as number;
    const R = tree.rightChild[ref] as number;
    const push = (pairs: Array<[number, number]>) => {
      for (const [r, i] of pairs) stack.push({ ref: r, id: i });
    };
    if (missing === 0 || missing === 2) {
      // None: NaN is read as 0.0 and compared; NaN: NaN follows default_left.
      const [a, b] = nodes.split(id, feature, zeroedThreshold(t), missing === 0 ? 0 <= t : dl);
      push([
        [L, a],
        [R, b],
      ]);
      continue;
    }
    if (missing !== 1) throw new ModelFormatError(`${where}: node ${ref} has unknown missing type ${missing}`);
    // Zero: NaN and |x| <= ZERO follow default_left; other values compare with x <= t.
    const lt = ltThreshold(t);
    const aboveZero = nextUpF32(ZERO);
    if (dl && lt >= -ZERO) {
      const [a, b] = nodes.split(id, feature, Math.max(lt, aboveZero), true);
      push([
        [L, a],
        [R, b],
      ]);
    } else if (!dl && lt <= aboveZero) {
      const [a, b] = nodes.split(id, feature, Math.min(lt, -ZERO), false);
      push([
        [L, a],
        [R, b],
      ]);
    } else if (dl) {
      // t < -ZERO with values between: left = (x <= t) ∪ [-ZERO, ZERO] ∪ NaN.
      const [l1, bId] = nodes.split(id, feature, lt, true);
      const [r1, cId] = nodes.split(bId, feature, -ZERO, false);
      const [l2, r2] = nodes.split(cId, feature, aboveZero, false);
      push([
        [L, l1],
        [R, r1],
        [L, l2],
        [R, r2],
      ]);
    } else {
      // t > ZERO: left = (x < -ZERO) ∪ (ZERO < x <= t); the zero band and NaN go right.
      const [l1, bId] = nodes.split(id, feature, -ZERO, false);
      const [r1, cId] = nodes.split(bId, feature, aboveZero, true);
      const [l2, r2] = nodes.split(cId, feature, lt, false);
      push([
        [L, l1],
        [R, r1],
        [L, l2],
        [R, r2],
      ]);
    }
  }
  return nodes;
}

/** True when the bytes start like a LightGBM text model: a first line "tree", then key=value lines. */
export function looksLikeLightGBMText(bytes: Uint8Array): boolean {
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 256));
  return /^[ \t]*tree[ \t]*\r?\n[A-Za-z_]+=/.test(head.replace(/^\xef\xbb\xbf/, ''));
}

export function loadLightGBMText(input: string | Uint8Array, where = 'LightGBM model'): TreeEnsembleIR {
  const text = modelText(input, where);
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const firstTree = lines.findIndex((l) => l.startsWith('Tree='));
  const endTrees = lines.indexOf('end of trees');
  const headerEnd = firstTree >= 0 ? firstTree : endTrees >= 0 ? endTrees : lines.length;
  const header = keyValues(lines, 0, headerEnd, `${where} header`);
  if (!header.has('version')) throw new ModelFormatError(`${where}: header has no "version" line`);
  if (lines.slice(0, headerEnd).includes('average_output')) {
    throw new UnsupportedModelError(`${where}: random-forest models (average_output) are not supported`);
  }
  const numClass = intOf(header, 'num_class', where, 1);
  const perIteration = intOf(header, 'num_tree_per_iteration', where, numClass);
  if (numClass < 1 || perIteration < 1 || perIteration > 1 << 16) {
    throw new ModelFormatError(`${where}: num_class ${numClass} / num_tree_per_iteration ${perIteration} out of range`);
  }
  const numFeatures = intOf(header, 'max_feature_idx', where) + 1;
  checkNumFeatures(numFeatures, where);
  const objective = parseObjectiveLine(header.get('objective'), numClass, where);
  if (objective === 'multi:softprob' ? perIteration !== numClass : perIteration !== 1) {
    throw new UnsupportedModelError(
      `${where}: ${perIteration} trees per iteration with objective ${objective} (num_class ${numClass}) is not supported`,
    );
  }

  const trees: TreeIR[] = [];
  const thresholds: ThresholdsSeen = { positiveInfinity: false, atOrAboveFloatMax: false };
  if (firstTree >= 0) {
    const stop = endTrees >= 0 ? endTrees : lines.length;
    let start = firstTree;
    while (start < stop) {
      let next = start + 1;
      while (next < stop && !(lines[next] as string).startsWith('Tree=')) next++;
      const index = trees.length;
      const tw = `${where} tree ${index}`;
      if (lines[start] !== `Tree=${index}`) throw new ModelFormatError(`${tw}: expected "Tree=${index}"`);
      const kv = keyValues(lines, start + 1, next, tw);
      trees.push(readTree(kv, index % perIteration, numFeatures, tw, thresholds));
      start = next;
    }
  }
  if (trees.length === 0) throw new ModelFormatError(`${where}: no trees`);
  if (trees.length % perIteration !== 0) {
    throw new ModelFormatError(`${where}: ${trees.length} trees is not a multiple of ${perIteration} per iteration`);
  }
  if (thresholds.positiveInfinity && thresholds.atOrAboveFloatMax) {
    throw new UnsupportedModelError(
      `${where}: holds both +inf thresholds and finite thresholds at or above FLT_MAX; x = +inf cannot follow both exactly`,
    );
  }
  const names = header.get('feature_names')?.trim().split(/\s+/);
  return {
    booster: 'gbtree',
    objective,
    numFeatures,
    numGroups: perIteration,
    // No base score: LightGBM folds boost_from_average into tree 0's leaves. (The JSON writer
    // derives the response-space base_score from this margin.)
    baseMargin: 0,
    trees,
    marginPrecision: 'float64',
    ...(thresholds.positiveInfinity ? { clampPositiveInfinity: true } : {}),
    ...(names !== undefined && names.length === numFeatures ? { featureNames: names } : {}),
  };
}

/** What the thresholds of the whole model hold, for the +inf decision (see the header). */
interface ThresholdsSeen {
  positiveInfinity: boolean;
  /** A finite threshold >= FLT_MAX: its `x < T` has T = +inf, which the clamp would change. */
  atOrAboveFloatMax: boolean;
}

const FLOAT_MAX = 3.4028234663852886e38;

function readTree(
  kv: Map<string, string>,
  group: number,
  numFeatures: number,
  where: string,
  seen: ThresholdsSeen,
): TreeIR {
  const numLeaves = intOf(kv, 'num_leaves', where);
  if (numLeaves < 1 || numLeaves > MAX_LEAVES) throw new ModelFormatError(`${where}: num_leaves ${numLeaves}`);
  if (intOf(kv, 'is_linear', where, 0) !== 0) {
    throw new UnsupportedModelError(`${where}: linear trees (linear_tree=true) are not supported`);
  }
  if (intOf(kv, 'num_cat', where, 0) !== 0) {
    throw new UnsupportedModelError(`${where}: categorical splits are not supported`);
  }
  const inner = numLeaves - 1;
  const tree: LgbTree = {
    numLeaves,
    leafValue: numbers(kv, 'leaf_value', numLeaves, where),
    splitFeature: inner === 0 ? [] : integers(kv, 'split_feature', inner, where),
    threshold: inner === 0 ? [] : numbers(kv, 'threshold', inner, where),
    decisionType: inner === 0 ? [] : integers(kv, 'decision_type', inner, where),
    leftChild: inner === 0 ? [] : integers(kv, 'left_child', inner, where),
    rightChild: inner === 0 ? [] : integers(kv, 'right_child', inner, where),
  };
  tree.threshold.forEach((t, i) => {
    if (Number.isNaN(t)) throw new ModelFormatError(`${where}: threshold[${i}] is NaN`);
    if (t === Number.POSITIVE_INFINITY) seen.positiveInfinity = true;
    else if (t >= FLOAT_MAX) seen.atOrAboveFloatMax = true;
  });
  checkStructure(tree, where);
  const nodes = translateTree(tree, numFeatures, where);
  return buildTree(
    {
      left: nodes.left,
      right: nodes.right,
      splitIndex: nodes.splitIndex,
      splitCondition: nodes.splitCondition,
      defaultLeft: nodes.defaultLeft,
      leafValues64: nodes.leafValues64,
    },
    group,
    1,
    numFeatures,
    where,
  );
}
