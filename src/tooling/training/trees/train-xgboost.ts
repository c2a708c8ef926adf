/**
 * Training gradient-boosted trees from TypeScript with `ml-xgboost` 1.1.2 (a WASM build of a
 * pre-1.0 XGBoost, 0.8x era). Returns the model as XGBoost's legacy binary bytes, which
 * `loadTreeModel(bytes)` loads (and `relevance-gate convert` turns into XGBoost JSON).
 *
 * How to call:
 *   const { bytes } = await trainXGBoost(
 *     { features, labels, numRows, numFeatures },            // features: row-major Float32Array, NaN = missing
 *     { objective: 'binary:logistic', rounds: 200, maxDepth: 6, eta: 0.1, seed: 7 },
 *     { onProgress: (done, total) => bar.update(done) },
 *   );
 *   const model = await loadTreeModel(bytes);
 *
 * Facts about ml-xgboost this module works around (all measured):
 * - Missing values: ml-xgboost builds its DMatrix with -1 as the *missing marker*. NaN in the data
 *   aborts training and a genuine -1.0 is silently treated as missing. So this wrapper maps NaN to
 *   -1 (= missing, which is what NaN means to our evaluator too) and refuses genuine -1.0 values by
 *   default (InvalidArgumentError naming row and column); pass `minusOne: 'as-missing'` to accept
 *   that -1.0 means missing for your features. ±Infinity is refused.
 * - Errors inside the WASM module are C++ exceptions it cannot catch: the module is left in an
 *   undefined state. So every parameter is validated here first, only known objectives are passed,
 *   and if a WASM call ever throws, the module is marked unusable (TrainingError on every later call;
 *   restart the process).
 * - It only has a "train N rounds" call, but calling it again on the same booster continues boosting
 *   and produces byte-identical models (20 rounds == 10 + 10 == 20 × 1), so we train in chunks and
 *   report progress between chunks, yielding to the event loop each time. Each chunk runs
 *   synchronously on the calling thread (milliseconds to seconds on large data).
 * - Determinism: same data + params (including `seed`) → same bytes. Trainings are serialized
 *   because XGBoost's random generator is process-global in the module.
 * - No query-group API, so ranking objectives cannot be trained; `reg:squarederror` does not exist
 *   in that XGBoost and is trained as its old name `reg:linear` (loaders read it as squarederror).
 * - Data is copied into the WASM heap with malloc (ml-xgboost's own `train` copies onto the 5 MB
 *   emscripten stack, which overflows for large matrices).
 */
import { createRequire } from 'node:module';
import { InvalidArgumentError, AbortedError } from '../../../errors.js';
import { integerInRange, positiveInteger } from '../../../util/validate-options.js';
import { TrainingError } from '../errors.js';

export { TrainingError } from '../errors.js';

export type TrainObjective =
  | 'binary:logistic'
  | 'binary:logitraw'
  | 'reg:logistic'
  | 'reg:squarederror'
  | 'multi:softprob'
  | 'multi:softmax';

export const TRAIN_OBJECTIVES: readonly TrainObjective[] = [
  'binary:logistic',
  'binary:logitraw',
  'reg:logistic',
  'reg:squarederror',
  'multi:softprob',
  'multi:softmax',
];

export interface XGBoostTrainParams {
  readonly objective: TrainObjective;
  /** Boosting rounds (trees per output), 1..100000. */
  readonly rounds: number;
  /** Default 6. */
  readonly maxDepth?: number;
  /** Learning rate, default 0.3. */
  readonly eta?: number;
  /** Default 0. */
  readonly seed?: number;
  /** Row subsampling per tree in (0, 1], default 1. */
  readonly subsample?: number;
  /** Column subsampling per tree in (0, 1], default 1. */
  readonly colsampleBytree?: number;
  /** Default 1. */
  readonly minChildWeight?: number;
  /** Minimum loss reduction to split, default 0. */
  readonly gamma?: number;
  /** L2 regularization, default 1. */
  readonly lambda?: number;
  /** L1 regularization, default 0. */
  readonly alpha?: number;
  /** Required for multi:* objectives (>= 2). */
  readonly numClass?: number;
  /** Initial prediction in response space, default 0.5. */
  readonly baseScore?: number;
  /** Weight of positive examples (binary), default 1. */
  readonly scalePosWeight?: number;
  /** Tree construction: 'exact' (default) | 'approx' | 'hist'. */
  readonly treeMethod?: 'exact' | 'approx' | 'hist';
}

export interface XGBoostTrainData {
  /** Row-major, numRows × numFeatures; NaN = missing. */
  readonly features: Float32Array;
  readonly labels: ArrayLike<number>;
  readonly numRows: number;
  readonly numFeatures: number;
}

export interface XGBoostTrainOptions {
  /** Called after each chunk of rounds with (roundsDone, totalRounds). */
  readonly onProgress?: (roundsDone: number, totalRounds: number) => void;
  /** Rounds per chunk between progress reports (default: rounds / 50, at least 1). */
  readonly chunkRounds?: number;
  /** What a genuine -1.0 feature value means: 'error' (default) refuses it; 'as-missing' accepts it as missing. */
  readonly minusOne?: 'error' | 'as-missing';
  /** Checked between chunks. */
  readonly signal?: AbortSignal;
}

export interface TrainedXGBoostModel {
  /** XGBoost legacy binary model bytes (what ml-xgboost's toJSON().model holds). */
  readonly bytes: Uint8Array;
  readonly rounds: number;
  /** The exact parameters passed to XGBoost. */
  readonly xgboostParams: Readonly<Record<string, string>>;
}

interface XGBoostWasm {
  isReady: Promise<XGBoostWasm>;
  HEAPU8: Uint8Array;
  _malloc(n: number): number;
  _free(p: number): void;
  _create_model(x: number, y: number, rows: number, cols: number): number;
  _train_full_model(model: number, rounds: number): void;
  _save_model(model: number): number;
  _get_file_content(ptr: number, size: number): void;
  _free_memory_model(model: number): void;
  cwrap(name: string, ret: string | null, args: string[]): (...a: unknown[]) => unknown;
}

let wasmPromise: Promise<XGBoostWasm> | undefined;
let poisoned: unknown;
let queue: Promise<unknown> = Promise.resolve();

function wasm(): Promise<XGBoostWasm> {
  if (wasmPromise === undefined) {
    const require = createRequire(import.meta.url);
    // The emscripten loader first tries fetch() on a file path, fails, prints two lines to stderr
    // and falls back to reading the file. Hiding instantiateStreaming during the synchronous
    // require() makes it take the file path directly; nothing else can run in that window.
    const wa = (globalThis as unknown as { WebAssembly: { instantiateStreaming?: unknown } }).WebAssembly;
    const streaming = wa.instantiateStreaming;
    let mod: XGBoostWasm;
    try {
      wa.instantiateStreaming = undefined;
      mod = require('ml-xgboost/dist/wasm/xgboost') as XGBoostWasm;
    } finally {
      wa.instantiateStreaming = streaming;
    }
    wasmPromise = mod.isReady;
  }
  return wasmPromise;
}

function check(cond: boolean, message: string): void {
  if (!cond) throw new InvalidArgumentError(message);
}

function num(name: string, v: number | undefined, def: number, ok: (x: number) => boolean, range: string): string {
  const x = v ?? def;
  check(typeof x === 'number' && Number.isFinite(x) && ok(x), `${name} must be ${range}, got ${String(v)}`);
  return String(x);
}

/** Validates params and maps them to XGBoost's string parameters. */
export function xgboostParamsFor(p: XGBoostTrainParams): Record<string, string> {
  check(
    TRAIN_OBJECTIVES.includes(p.objective),
    `objective must be one of ${TRAIN_OBJECTIVES.join(', ')}, got ${String(p.objective)}`,
  );
  integerInRange('rounds', p.rounds, 1, 100_000);
  const multi = p.objective.startsWith('multi:');
  const out: Record<string, string> = {
    booster: 'gbtree',
    objective: p.objective === 'reg:squarederror' ? 'reg:linear' : p.objective,
    max_depth: num('maxDepth', p.maxDepth, 6, (x) => Number.isInteger(x) && x >= 1 && x <= 30, 'an integer in [1, 30]'),
    eta: num('eta', p.eta, 0.3, (x) => x > 0 && x <= 1, 'in (0, 1]'),
    seed: num('seed', p.seed, 0, (x) => Number.isInteger(x) && x >= 0 && x <= 0x7fffffff, 'an integer in [0, 2^31)'),
    subsample: num('subsample', p.subsample, 1, (x) => x > 0 && x <= 1, 'in (0, 1]'),
    colsample_bytree: num('colsampleBytree', p.colsampleBytree, 1, (x) => x > 0 && x <= 1, 'in (0, 1]'),
    min_child_weight: num('minChildWeight', p.minChildWeight, 1, (x) => x >= 0, '>= 0'),
    gamma: num('gamma', p.gamma, 0, (x) => x >= 0, '>= 0'),
    lambda: num('lambda', p.lambda, 1, (x) => x >= 0, '>= 0'),
    alpha: num('alpha', p.alpha, 0, (x) => x >= 0, '>= 0'),
    scale_pos_weight: num('scalePosWeight', p.scalePosWeight, 1, (x) => x > 0, '> 0'),
    tree_method: p.treeMethod ?? 'exact',
    silent: '1',
    nthread: '1',
  };
  check(
    ['exact', 'approx', 'hist'].includes(out.tree_method as string),
    `treeMethod must be exact, approx or hist, got ${String(p.treeMethod)}`,
  );
  const logistic = p.objective === 'binary:logistic' || p.objective === 'reg:logistic';
  out.base_score = num(
    'baseScore',
    p.baseScore,
    0.5,
    (x) => (logistic ? x > 0 && x < 1 : true),
    logistic ? 'in (0, 1) for a logistic objective' : 'finite',
  );
  if (multi) {
    check(
      Number.isInteger(p.numClass) && (p.numClass as number) >= 2 && (p.numClass as number) <= 10_000,
      `${p.objective} needs numClass, an integer in [2, 10000], got ${String(p.numClass)}`,
    );
    out.num_class = String(p.numClass);
  } else {
    check(p.numClass === undefined || p.numClass === 1, `numClass is only for multi:* objectives`);
  }
  return out;
}

/** Copies features into the layout ml-xgboost expects: NaN → -1 (its missing marker). */
function encodeFeatures(d: XGBoostTrainData, minusOne: 'error' | 'as-missing'): Float32Array {
  const out = new Float32Array(d.features.length);
  for (let i = 0; i < d.features.length; i++) {
    const v = d.features[i] as number;
    if (Number.isNaN(v)) {
      out[i] = -1;
    } else if (v === -1 && minusOne === 'error') {
      const row = Math.floor(i / d.numFeatures);
      throw new InvalidArgumentError(
        `feature value -1 at row ${row}, column ${i - row * d.numFeatures}: ml-xgboost treats -1 as missing; ` +
          `encode the feature so -1 cannot occur, or pass minusOne: 'as-missing'`,
      );
    } else if (!Number.isFinite(v)) {
      const row = Math.floor(i / d.numFeatures);
      throw new InvalidArgumentError(
        `feature value ${v} at row ${row}, column ${i - row * d.numFeatures} is not finite`,
      );
    } else {
      out[i] = v;
    }
  }
  return out;
}

function encodeLabels(d: XGBoostTrainData, p: XGBoostTrainParams): Float32Array {
  const out = new Float32Array(d.numRows);
  for (let i = 0; i < d.numRows; i++) {
    const y = Number(d.labels[i]);
    if (!Number.isFinite(y)) throw new InvalidArgumentError(`label at row ${i} is not a finite number`);
    if (
      (p.objective === 'binary:logistic' || p.objective === 'binary:logitraw' || p.objective === 'reg:logistic') &&
      (y < 0 || y > 1)
    ) {
      throw new InvalidArgumentError(`label ${y} at row ${i} must be in [0, 1] for ${p.objective}`);
    }
    if (p.objective.startsWith('multi:') && (!Number.isInteger(y) || y < 0 || y >= (p.numClass as number))) {
      throw new InvalidArgumentError(
        `label ${y} at row ${i} must be a class index in [0, ${p.numClass}) for ${p.objective}`,
      );
    }
    out[i] = y;
  }
  return out;
}

function validateData(d: XGBoostTrainData): void {
  check(d !== null && typeof d === 'object', 'training data must be an object');
  check(d.features instanceof Float32Array, 'features must be a Float32Array');
  positiveInteger('numRows', d.numRows);
  check(
    Number.isInteger(d.numFeatures) && d.numFeatures >= 1 && d.numFeatures <= 1_000_000,
    `numFeatures must be an integer in [1, 1e6], got ${String(d.numFeatures)}`,
  );
  check(
    d.features.length === d.numRows * d.numFeatures,
    `features has ${d.features.length} values, expected numRows × numFeatures = ${d.numRows * d.numFeatures}`,
  );
  check(
    d.labels !== null && typeof d.labels === 'object' && d.labels.length === d.numRows,
    `labels must have numRows = ${d.numRows} entries`,
  );
}

function runExclusive<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.then(fn, fn);
  queue = run.catch(() => undefined);
  return run;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Trains a model; see the module comment for semantics. */
export function trainXGBoost(
  data: XGBoostTrainData,
  params: XGBoostTrainParams,
  options: XGBoostTrainOptions = {},
): Promise<TrainedXGBoostModel> {
  // Validate synchronously-callable parts before queueing, so bad input fails fast.
  let xgbParams: Record<string, string>;
  let features: Float32Array;
  let labels: Float32Array;
  try {
    validateData(data);
    xgbParams = xgboostParamsFor(params);
    features = encodeFeatures(data, options.minusOne ?? 'error');
    labels = encodeLabels(data, params);
    if (options.chunkRounds !== undefined) {
      positiveInteger('chunkRounds', options.chunkRounds);
    }
  } catch (err) {
    return Promise.reject(err);
  }
  const chunk = options.chunkRounds ?? Math.max(1, Math.floor(params.rounds / 50));

  return runExclusive(async () => {
    if (poisoned !== undefined) {
      throw new TrainingError(
        'the ml-xgboost WASM module failed earlier in this process and cannot be reused; restart the process',
        { cause: poisoned },
      );
    }
    if (options.signal?.aborted) throw new AbortedError('training was aborted');
    const x = await wasm();
    const setParam = x.cwrap('set_param', null, ['number', 'string', 'string']) as (
      m: number,
      k: string,
      v: string,
    ) => void;
    let model = 0;
    const guard = <T>(what: string, fn: () => T): T => {
      try {
        return fn();
      } catch (cause) {
        poisoned = cause;
        throw new TrainingError(`ml-xgboost failed during ${what}: ${String(cause).slice(0, 300)}`, { cause });
      }
    };
    try {
      model = guard('data upload', () => {
        const px = x._malloc(features.byteLength);
        const py = x._malloc(labels.byteLength);
        if (px === 0 || py === 0) throw new Error('WASM malloc failed (training data too large)');
        try {
          x.HEAPU8.set(new Uint8Array(features.buffer, features.byteOffset, features.byteLength), px);
          x.HEAPU8.set(new Uint8Array(labels.buffer, labels.byteOffset, labels.byteLength), py);
          return x._create_model(px, py, data.numRows, data.numFeatures);
        } finally {
          x._free(px);
          x._free(py);
        }
      });
      for (const [k, v] of Object.entries(xgbParams)) guard('set_param', () => setParam(model, k, v));
      let done = 0;
      while (done < params.rounds) {
        if (options.signal?.aborted) throw new AbortedError('training was aborted');
        const n = Math.min(chunk, params.rounds - done);
        guard('training', () => x._train_full_model(model, n));
        done += n;
        options.onProgress?.(done, params.rounds);
        await yieldToEventLoop();
      }
      const bytes = guard('saving', () => {
        const size = x._save_model(model);
        if (size <= 0) throw new Error(`save_model returned ${size}`);
        const p = x._malloc(size);
        try {
          x._get_file_content(p, size);
          return x.HEAPU8.slice(p, p + size);
        } finally {
          x._free(p);
        }
      });
      return { bytes, rounds: params.rounds, xgboostParams: xgbParams };
    } finally {
      if (model !== 0 && poisoned === undefined) x._free_memory_model(model);
    }
  });
}
