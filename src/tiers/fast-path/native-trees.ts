/**
 * The tree evaluator's slice of the native addon (native/src/trees/trees_binding.cc), the
 * flattening of a TreeEnsembleIR into the arrays the native compiler takes, and the mapping of
 * native error codes onto the typed errors of src/errors.ts.
 */
import {
  DisposedError,
  InvalidArgumentError,
  ModelFormatError,
  RelevanceGateError,
  UnsupportedModelError,
} from '../../errors.js';
import { loadAddon } from '../../native/addon.js';
import { TREE_OBJECTIVES, type TreeEnsembleIR } from './model-ir.js';

/** Arguments of `treesCompile`: the IR's trees concatenated; tree t owns nodes [nodeOffsets[t], nodeOffsets[t+1]). */
export interface NativeTreeSpec {
  readonly numFeatures: number;
  readonly numGroups: number;
  readonly objective: string;
  readonly baseMargin: number;
  readonly nodeOffsets: Int32Array;
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly splitIndex: Int32Array;
  readonly splitCondition: Float32Array;
  readonly defaultLeft: Uint8Array;
  readonly groups: Int32Array;
  readonly weights: Float32Array;
  /** Float64 leaves, one per node, for 'float64' models (LightGBM): compiled to the perfect64 or generic64 layout. */
  readonly leafValues64?: Float64Array;
  /** +inf inputs evaluated as FLT_MAX (LightGBM models with +inf thresholds). */
  readonly clampPositiveInfinity?: boolean;
}

export interface NativeTreeInfo {
  readonly numFeatures: number;
  readonly numGroups: number;
  readonly numTrees: number;
  /** Objective code: index into NATIVE_OBJECTIVES. */
  readonly objective: number;
  readonly layout: 'perfect' | 'generic';
  /** 'float64' for models compiled with leafValues64: their margins are Float64Array. */
  readonly marginPrecision: 'float32' | 'float64';
  readonly depth: number;
  readonly numValueOutputs: number;
}

/** Kernel override for tests and benchmarks: 0 auto, 1 scalar, 2 avx2, 3 avx512 (falls back when the CPU lacks it). */
export type NativeKernel = 0 | 1 | 2 | 3;

export interface NativeTreeEvaluator {
  info(): NativeTreeInfo;
  predict(
    rows: Float32Array,
    nRows: number,
    out: Float32Array | Float64Array,
    valueOutput: boolean,
    kernel?: NativeKernel,
  ): void;
  predictAsync(rows: Float32Array, nRows: number, valueOutput: boolean): Promise<Float32Array | Float64Array>;
  dispose(): void;
}

export interface TreesAddon {
  treesCompile(spec: NativeTreeSpec): Uint8Array;
  treesKernel(): 'avx512' | 'avx2' | 'scalar';
  TreeEvaluator: new (image: Uint8Array) => NativeTreeEvaluator;
}

/** Objective names in the order of the native enum (tree_eval.h). */
export const NATIVE_OBJECTIVES = TREE_OBJECTIVES;

export function treesAddon(): TreesAddon {
  return loadAddon() as TreesAddon;
}

/** Re-throws a native error as the matching typed error; anything else unchanged. */
export function mapNativeError(err: unknown): never {
  if (err instanceof RelevanceGateError) throw err;
  if (err instanceof Error) {
    const code = (err as Error & { code?: unknown }).code;
    switch (code) {
      case 'ERR_MODEL_FORMAT':
        throw new ModelFormatError(err.message, { cause: err });
      case 'ERR_UNSUPPORTED_MODEL':
        throw new UnsupportedModelError(err.message, { cause: err });
      case 'ERR_INVALID_ARGUMENT':
        throw new InvalidArgumentError(err.message, { cause: err });
      case 'ERR_DISPOSED':
        throw new DisposedError('tree model');
      default:
        break;
    }
  }
  throw err;
}

/** Concatenates the IR's per-tree arrays. Throws ModelFormatError on inconsistent tree arrays. */
export function flattenEnsemble(ir: TreeEnsembleIR): NativeTreeSpec {
  if (ir === null || typeof ir !== 'object' || !Array.isArray(ir.trees)) {
    throw new ModelFormatError('tree ensemble IR has no trees array');
  }
  const numTrees = ir.trees.length;
  const precision = ir.marginPrecision ?? 'float32';
  if (precision !== 'float32' && precision !== 'float64') {
    throw new ModelFormatError(`marginPrecision must be 'float32' or 'float64', got ${String(precision)}`);
  }
  const wide = precision === 'float64';
  const nodeOffsets = new Int32Array(numTrees + 1);
  let total = 0;
  for (let t = 0; t < numTrees; t++) {
    const tree = ir.trees[t]!;
    const n = tree.left?.length;
    if (
      typeof n !== 'number' ||
      tree.right?.length !== n ||
      tree.splitIndex?.length !== n ||
      tree.splitCondition?.length !== n ||
      tree.defaultLeft?.length !== n ||
      (wide && (!(tree.leafValues64 instanceof Float64Array) || tree.leafValues64.length !== n))
    ) {
      throw new ModelFormatError(`tree ${t}: node arrays have different lengths (or leafValues64 is missing)`);
    }
    total += n;
    if (total > 0x7fffffff) throw new ModelFormatError('tree ensemble has too many nodes');
    nodeOffsets[t + 1] = total;
  }
  const left = new Int32Array(total);
  const right = new Int32Array(total);
  const splitIndex = new Int32Array(total);
  const splitCondition = new Float32Array(total);
  const defaultLeft = new Uint8Array(total);
  const groups = new Int32Array(numTrees);
  const weights = new Float32Array(numTrees);
  const leafValues64 = wide ? new Float64Array(total) : undefined;
  for (let t = 0; t < numTrees; t++) {
    const tree = ir.trees[t]!;
    const at = nodeOffsets[t]!;
    left.set(tree.left, at);
    right.set(tree.right, at);
    splitIndex.set(tree.splitIndex, at);
    splitCondition.set(tree.splitCondition, at);
    defaultLeft.set(tree.defaultLeft, at);
    if (leafValues64 !== undefined && tree.leafValues64 !== undefined) leafValues64.set(tree.leafValues64, at);
    if (!Number.isInteger(tree.group) || tree.group < 0 || tree.group > 0x7fffffff) {
      throw new ModelFormatError(`tree ${t}: group ${String(tree.group)} is not a valid class index`);
    }
    groups[t] = tree.group;
    if (typeof tree.weight !== 'number' || !Number.isFinite(tree.weight)) {
      throw new ModelFormatError(`tree ${t}: weight ${String(tree.weight)} is not finite`);
    }
    weights[t] = tree.weight;
  }
  const u32 = (v: unknown, what: string): number => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0xffffffff) {
      throw new ModelFormatError(`${what} ${String(v)} is not a valid count`);
    }
    return v;
  };
  if (typeof ir.baseMargin !== 'number' || !Number.isFinite(ir.baseMargin)) {
    throw new ModelFormatError(`base margin ${String(ir.baseMargin)} is not finite`);
  }
  return {
    numFeatures: u32(ir.numFeatures, 'numFeatures'),
    numGroups: u32(ir.numGroups, 'numGroups'),
    objective: String(ir.objective),
    baseMargin: ir.baseMargin,
    nodeOffsets,
    left,
    right,
    splitIndex,
    splitCondition,
    defaultLeft,
    groups,
    weights,
    ...(leafValues64 !== undefined ? { leafValues64 } : {}),
    ...(ir.clampPositiveInfinity === true ? { clampPositiveInfinity: true } : {}),
  };
}
