/**
 * TreeModel: a compiled, read-only tree ensemble evaluated by the native addon.
 *
 * createTreeModel() validates and compiles the IR natively into a flat image (perfect-tree
 * layout, see docs/trees-evaluator.md) stored in a SharedArrayBuffer. `share()` returns a
 * structured-cloneable handle; `treeModelFromShared(handle)` in another worker thread attaches
 * to the same memory without copying (the image is re-validated on attach).
 *
 * Outputs are row-major, nRows × numOutputs:
 * - 'margin': Float32Array, XGBoost's float32 sum (base margin, then leaves in tree order); for a
 *   model with marginPrecision 'float64' (LightGBM), Float64Array, LightGBM's float64 sum.
 * - 'value' (default): Float64Array, the objective's transform computed in float64 from the
 *   float32 margin: sigmoid for binary:logistic / reg:logistic, softmax per row for
 *   multi:softprob, identity otherwise. multi:softmax gives ONE value per row (the class index,
 *   first maximum), as XGBoost does, so its 'value' output has nRows entries.
 * Missing values are NaN and follow each node's default direction; ±Infinity are ordinary values
 * compared with `<` (XGBoost's inplace_predict / XGBoosterPredictFromDense behaviour).
 */
import { DisposedError, InvalidArgumentError, ModelFormatError, NativeAddonError } from '../../errors.js';
import type { TreeEnsembleIR, TreeObjective } from './model-ir.js';
import {
  NATIVE_OBJECTIVES,
  flattenEnsemble,
  mapNativeError,
  treesAddon,
  type NativeKernel,
  type NativeTreeEvaluator,
} from './native-trees.js';

export type TreeOutputKind = 'margin' | 'value';

export interface TreePredictOptions {
  /** 'margin' (raw float32 sum) or 'value' (after the objective's transform). Default 'value'. */
  readonly output?: TreeOutputKind;
}

export interface TreeModelOptions {
  /** predictAsync runs batches with more rows than this on the libuv pool; smaller ones inline. Default 4096. */
  readonly asyncRowThreshold?: number;
}

/** Structured-cloneable handle to a compiled model's shared memory (postMessage it to a worker). */
export interface SharedTreeModel {
  readonly kind: 'relevance-gate/tree-model';
  readonly version: 1;
  readonly objective: TreeObjective;
  /** The compiled image, backed by a SharedArrayBuffer. Treat as read-only. */
  readonly image: Uint8Array;
}

export interface TreeModel {
  readonly numFeatures: number;
  /** Margins per row (numGroups). 'value' output has the same count, except multi:softmax (1). */
  readonly numOutputs: number;
  readonly objective: TreeObjective;
  readonly numTrees: number;
  /** 'float32' (XGBoost: margins are Float32Array) or 'float64' (LightGBM: margins are Float64Array). */
  readonly marginPrecision: 'float32' | 'float64';
  /** Synchronous, on the calling thread, any batch size. */
  predict(rows: Float32Array, nRows: number, options?: TreePredictOptions): Float32Array | Float64Array;
  /** Inline up to asyncRowThreshold rows; larger batches run as native async work (rows are copied first). */
  predictAsync(rows: Float32Array, nRows: number, options?: TreePredictOptions): Promise<Float32Array | Float64Array>;
  /** A handle another worker thread can attach to with treeModelFromShared(). */
  share(): SharedTreeModel;
  /** Releases this model's reference to the compiled image; later calls throw DisposedError. */
  dispose(): void;
}

const DEFAULT_ASYNC_ROW_THRESHOLD = 4096;
/** Outputs up to this many values are written to a reused scratch array (see predictWithKernel). */
const SCRATCH_VALUES = 4096;

function readThreshold(options: TreeModelOptions | undefined): number {
  const v = options?.asyncRowThreshold ?? DEFAULT_ASYNC_ROW_THRESHOLD;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new InvalidArgumentError(`asyncRowThreshold must be a non-negative safe integer, got ${String(v)}`);
  }
  return v;
}

function readOutput(options: TreePredictOptions | undefined): boolean {
  if (options === undefined) return true;
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('predict options must be an object like { output: "margin" | "value" }');
  }
  const out = options.output;
  if (out === undefined || out === 'value') return true;
  if (out === 'margin') return false;
  throw new InvalidArgumentError(`output must be 'margin' or 'value', got ${JSON.stringify(out) ?? String(out)}`);
}

class NativeTreeModel implements TreeModel {
  readonly numFeatures: number;
  readonly numOutputs: number;
  readonly numTrees: number;
  readonly marginPrecision: 'float32' | 'float64';
  /** 'perfect' (padded complete trees, fast) or 'generic' (deep trees); for diagnostics. */
  readonly layout: 'perfect' | 'generic';
  private readonly numValueOutputs: number;
  private evaluator: NativeTreeEvaluator | null;
  private scratch32: Float32Array | undefined;
  private scratch64: Float64Array | undefined;

  constructor(
    readonly objective: TreeObjective,
    private readonly image: Uint8Array,
    private readonly asyncRowThreshold: number,
  ) {
    const Evaluator = treesAddon().TreeEvaluator;
    let evaluator: NativeTreeEvaluator;
    try {
      evaluator = new Evaluator(image);
    } catch (err) {
      mapNativeError(err);
    }
    const info = evaluator.info();
    if (NATIVE_OBJECTIVES[info.objective] !== objective) {
      evaluator.dispose();
      throw new ModelFormatError(`compiled model's objective does not match ${objective}`);
    }
    this.evaluator = evaluator;
    this.numFeatures = info.numFeatures;
    this.numOutputs = info.numGroups;
    this.numTrees = info.numTrees;
    this.marginPrecision = info.marginPrecision === 'float64' ? 'float64' : 'float32';
    this.numValueOutputs = info.numValueOutputs;
    this.layout = info.layout;
  }

  private live(): NativeTreeEvaluator {
    if (this.evaluator === null) throw new DisposedError('tree model');
    return this.evaluator;
  }

  private checkRows(rows: Float32Array, nRows: number): void {
    if (!(rows instanceof Float32Array)) {
      throw new InvalidArgumentError('rows must be a Float32Array (row-major, NaN = missing)');
    }
    if (typeof nRows !== 'number' || !Number.isSafeInteger(nRows) || nRows < 0) {
      throw new InvalidArgumentError(`nRows must be a non-negative safe integer, got ${String(nRows)}`);
    }
    if (rows.length !== nRows * this.numFeatures) {
      throw new InvalidArgumentError(
        `rows has ${rows.length} values; expected nRows * numFeatures = ${nRows} * ${this.numFeatures}`,
      );
    }
  }

  predict(rows: Float32Array, nRows: number, options?: TreePredictOptions): Float32Array | Float64Array {
    return this.predictWithKernel(rows, nRows, options, 0);
  }

  /** predict() with a kernel override (tests and benchmarks compare kernels). */
  predictWithKernel(
    rows: Float32Array,
    nRows: number,
    options: TreePredictOptions | undefined,
    kernel: NativeKernel,
  ): Float32Array | Float64Array {
    const evaluator = this.live();
    const value = readOutput(options);
    this.checkRows(rows, nRows);
    const n = nRows * (value ? this.numValueOutputs : this.numOutputs);
    // Small results go through a reused off-heap scratch array: V8 keeps typed arrays of <= 64
    // bytes on the JS heap and moving one off-heap for the native call costs more than the
    // evaluation of a small model. slice() then copies on the JS side, which is cheap.
    const small = n <= SCRATCH_VALUES;
    const wide = value || this.marginPrecision === 'float64';
    const out = small ? this.scratchArray(wide) : wide ? new Float64Array(n) : new Float32Array(n);
    try {
      evaluator.predict(rows, nRows, small ? out.subarray(0, n) : out, value, kernel);
    } catch (err) {
      mapNativeError(err);
    }
    return small ? out.slice(0, n) : out;
  }

  /** The reused scratch array for float64 (values, LightGBM margins) or float32 (XGBoost margins) output, made on first use. */
  private scratchArray(wide: boolean): Float32Array | Float64Array {
    if (wide) {
      if (this.scratch64 === undefined) this.scratch64 = new Float64Array(SCRATCH_VALUES);
      return this.scratch64;
    }
    if (this.scratch32 === undefined) this.scratch32 = new Float32Array(SCRATCH_VALUES);
    return this.scratch32;
  }

  async predictAsync(
    rows: Float32Array,
    nRows: number,
    options?: TreePredictOptions,
  ): Promise<Float32Array | Float64Array> {
    const evaluator = this.live();
    const value = readOutput(options);
    this.checkRows(rows, nRows);
    if (nRows <= this.asyncRowThreshold) return this.predict(rows, nRows, options);
    try {
      return await evaluator.predictAsync(rows, nRows, value);
    } catch (err) {
      mapNativeError(err);
    }
  }

  share(): SharedTreeModel {
    this.live();
    return { kind: 'relevance-gate/tree-model', version: 1, objective: this.objective, image: this.image };
  }

  dispose(): void {
    if (this.evaluator === null) return;
    this.evaluator.dispose();
    this.evaluator = null;
  }
}

/** Compiles an IR (from any loader) into a native model. Throws ModelFormatError / UnsupportedModelError. */
export function createTreeModel(ir: TreeEnsembleIR, options?: TreeModelOptions): TreeModel {
  const threshold = readThreshold(options);
  const spec = flattenEnsemble(ir);
  let compiled: Uint8Array;
  try {
    compiled = treesAddon().treesCompile(spec);
  } catch (err) {
    mapNativeError(err);
  }
  const image = new Uint8Array(new SharedArrayBuffer(compiled.byteLength));
  image.set(compiled);
  const model = new NativeTreeModel(ir.objective, image, threshold);
  // An addon built before float64 leaves existed ignores leafValues64 and would sum float32:
  // refuse rather than return approximate LightGBM margins.
  if (spec.leafValues64 !== undefined && model.marginPrecision !== 'float64') {
    model.dispose();
    throw new NativeAddonError(
      'the native addon predates float64 tree models (LightGBM): rebuild it (npx node-gyp rebuild)',
    );
  }
  return model;
}

/** Attaches to a model shared by another thread (`model.share()`), without copying its memory. */
export function treeModelFromShared(handle: SharedTreeModel, options?: TreeModelOptions): TreeModel {
  const threshold = readThreshold(options);
  if (
    handle === null ||
    typeof handle !== 'object' ||
    handle.kind !== 'relevance-gate/tree-model' ||
    handle.version !== 1 ||
    !(handle.image instanceof Uint8Array) ||
    !(handle.image.buffer instanceof SharedArrayBuffer) ||
    !(NATIVE_OBJECTIVES as readonly string[]).includes(handle.objective)
  ) {
    throw new InvalidArgumentError('not a shared tree model handle (expected the result of model.share())');
  }
  return new NativeTreeModel(handle.objective, handle.image, threshold);
}

/** The SIMD kernel the evaluator uses on this CPU ('avx512', 'avx2' or 'scalar'). */
export function treeKernelName(): string {
  return treesAddon().treesKernel();
}
