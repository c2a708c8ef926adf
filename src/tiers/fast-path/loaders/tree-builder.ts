/**
 * Turns the per-node arrays a loader read into a validated TreeIR. Every loader goes through here,
 * so the guarantees the evaluator relies on are established in one place:
 * - node 0 is the root; every node reachable from it is reached exactly once (no cycles, no shared
 *   children), children are in range, and a node is a leaf exactly when its left child is -1
 *   (XGBoost's rule);
 * - split features are in [0, numFeatures); thresholds are not NaN (±inf are legal: XGBoost treats
 *   them as ordinary floats); leaf values and tree weights are finite;
 * - nodes not reachable from the root (deleted nodes in pre-1.0 binaries, padding in a hostile
 *   file) are dropped and the rest renumbered in their original order, so every node the
 *   evaluator sees is meaningful.
 */
import { ModelFormatError, UnsupportedModelError } from '../../../errors.js';
import type { TreeIR } from '../model-ir.js';

/**
 * Upper bound on num_feature: a row must hold that many float32s, so anything near 2^31 is a
 * corrupt header, not a model anyone can call.
 */
export const MAX_FEATURES = 1 << 24;

export function checkNumFeatures(n: number, where: string): void {
  if (!Number.isInteger(n) || n < 1)
    throw new ModelFormatError(`${where}: num_feature ${n} must be a positive integer`);
  if (n > MAX_FEATURES)
    throw new UnsupportedModelError(`${where}: num_feature ${n} exceeds the supported maximum ${MAX_FEATURES}`);
}

export interface RawTree {
  readonly left: ArrayLike<number>;
  readonly right: ArrayLike<number>;
  readonly splitIndex: ArrayLike<number>;
  readonly splitCondition: ArrayLike<number>;
  readonly defaultLeft: ArrayLike<number | boolean>;
  /** Optional float64 leaf values (LightGBM); must be finite on leaves. */
  readonly leafValues64?: ArrayLike<number>;
}

export function buildTree(raw: RawTree, group: number, weight: number, numFeatures: number, where: string): TreeIR {
  const n = raw.left.length;
  if (n === 0) throw new ModelFormatError(`${where}: tree has no nodes`);
  for (const [name, arr] of [
    ['right_children', raw.right],
    ['split_indices', raw.splitIndex],
    ['split_conditions', raw.splitCondition],
    ['default_left', raw.defaultLeft],
    ...(raw.leafValues64 !== undefined ? ([['leaf_values', raw.leafValues64]] as const) : []),
  ] as const) {
    if (arr.length !== n) {
      throw new ModelFormatError(`${where}: ${name} has ${arr.length} entries, left_children has ${n}`);
    }
  }
  if (!Number.isFinite(Math.fround(weight)))
    throw new ModelFormatError(`${where}: tree weight ${weight} is not finite as float32`);

  // Walk from the root with an explicit stack: depth is bounded by n, never by the JS call stack.
  const seen = new Uint8Array(n);
  const stack: number[] = [0];
  seen[0] = 1;
  let reachable = 0;
  while (stack.length > 0) {
    const i = stack.pop() as number;
    reachable++;
    const l = raw.left[i] as number;
    const r = raw.right[i] as number;
    // Stored as float32: a JSON 1e308 becomes Infinity, so judge the value after rounding.
    const cond = Math.fround(Number(raw.splitCondition[i]));
    if (l === -1) {
      // XGBoost's IsLeaf() looks at the left child only.
      if (!Number.isFinite(cond))
        throw new ModelFormatError(`${where}: leaf ${i} has non-finite value ${cond} (as float32)`);
      if (raw.leafValues64 !== undefined && !Number.isFinite(raw.leafValues64[i] as number))
        throw new ModelFormatError(`${where}: leaf ${i} has non-finite value ${String(raw.leafValues64[i])}`);
      continue;
    }
    if (!Number.isInteger(l) || !Number.isInteger(r) || l < 1 || r < 1 || l >= n || r >= n || l === r) {
      throw new ModelFormatError(`${where}: node ${i} has invalid children (${l}, ${r}) for ${n} nodes`);
    }
    const f = raw.splitIndex[i] as number;
    if (!Number.isInteger(f) || f < 0 || f >= numFeatures) {
      throw new ModelFormatError(`${where}: node ${i} splits on feature ${f}, model has ${numFeatures} features`);
    }
    if (Number.isNaN(cond)) throw new ModelFormatError(`${where}: node ${i} has a NaN split condition`);
    for (const c of [l, r]) {
      if (seen[c] === 1) throw new ModelFormatError(`${where}: node ${c} is reached twice (cycle or shared child)`);
      seen[c] = 1;
      stack.push(c);
    }
  }

  // Renumber: old id -> new id, keeping the original order (identity when every node is reachable).
  const newId = new Int32Array(n).fill(-1);
  let next = 0;
  for (let i = 0; i < n; i++) if (seen[i] === 1) newId[i] = next++;
  const left = new Int32Array(reachable);
  const right = new Int32Array(reachable);
  const splitIndex = new Int32Array(reachable);
  const splitCondition = new Float32Array(reachable);
  const defaultLeft = new Uint8Array(reachable);
  const leafValues64 = raw.leafValues64 === undefined ? undefined : new Float64Array(reachable);
  for (let i = 0; i < n; i++) {
    const j = newId[i] as number;
    if (j < 0) continue;
    const l = raw.left[i] as number;
    const isLeaf = l === -1;
    left[j] = isLeaf ? -1 : (newId[l] as number);
    right[j] = isLeaf ? -1 : (newId[raw.right[i] as number] as number);
    splitIndex[j] = isLeaf ? 0 : (raw.splitIndex[i] as number);
    splitCondition[j] = Number(raw.splitCondition[i]);
    defaultLeft[j] = isLeaf ? 0 : raw.defaultLeft[i] ? 1 : 0;
    if (leafValues64 !== undefined) leafValues64[j] = isLeaf ? (raw.leafValues64?.[i] as number) : 0;
  }
  return {
    group,
    weight: Math.fround(weight),
    left,
    right,
    splitIndex,
    splitCondition,
    defaultLeft,
    ...(leafValues64 !== undefined ? { leafValues64 } : {}),
  };
}
