/**
 * Default worker count and intra-op threads of the cross-encoder pool, from the host's cores and
 * the model's size. A pure function: callers pass `availableParallelism()` and the model's
 * `config.json` sizes. The rule and the measurements behind it: docs/cross-encoder-sizing.md.
 *
 * Why this shape of rule:
 * - Batch-level parallelism (one session per worker, one thread each) beats intra-op parallelism
 *   for throughput: no per-operator synchronisation, and the batcher keeps every worker fed. So
 *   workers = usable cores / intra-op threads.
 * - Intra-op threads shorten ONE batch. That matters only when a request is a single long batch of
 *   a large model (few passages, low concurrency, a latency target): a request of many passages
 *   spans several batches, which separate workers already run at once. So 1 thread up to
 *   base-size models; 2 for large ones when the caller prefers latency; 2 (4 for latency) for
 *   very large ones, where one batch is seconds of a core.
 * - Every worker holds its own session (a copy of the weights), so memory can cap workers.
 * - On a GPU the device does the work: one session per device is the rule of onnxruntime's CUDA
 *   EP; a second worker overlaps tokenization and host-side copies with the other's run.
 */

/** Architecture sizes as config.json spells them (`hidden_size`, `num_hidden_layers`, `intermediate_size`). */
export interface ModelDimensions {
  readonly hiddenSize: number;
  readonly layers: number;
  /** FFN width; default 4 × hiddenSize (BERT, RoBERTa, DeBERTa). ModernBERT-base: 1152. */
  readonly intermediateSize?: number;
}

export interface PoolSizingInput {
  /** CPU cores the process may use: `os.availableParallelism()`. */
  readonly cores: number;
  /**
   * The model's size: `{ hiddenSize, layers }` from config.json, or the total parameter count when
   * that is all there is (embedding tables included, so it over-estimates compute). Absent: treated
   * as a small model.
   */
  readonly model?: ModelDimensions | { readonly parameters: number };
  /** Default 'cpu'. */
  readonly executionProvider?: 'cpu' | 'cuda';
  /**
   * 'throughput' (default): as many single-threaded workers as cores allow.
   * 'latency': more intra-op threads per worker so one batch finishes sooner (fewer workers).
   */
  readonly prefer?: 'throughput' | 'latency';
  /** Bytes one session needs (≈ the ONNX file's size); with `memoryBytes`, caps workers. */
  readonly modelBytes?: number;
  /** Memory the pool may use in all (e.g. a share of `os.totalmem()`). */
  readonly memoryBytes?: number;
}

export interface PoolSize {
  readonly workers: number;
  readonly intraOpThreads: number;
  /** Cores left for the main thread (event loop, batch forming) and the rest of the process. */
  readonly reservedCores: number;
  /** Model compute class the rule used. */
  readonly modelClass: ModelClass;
  /** One line saying how the numbers were reached (for logs and `info`). */
  readonly reason: string;
}

export type ModelClass = 'small' | 'base' | 'large' | 'xlarge';

/** Most workers the default gives: beyond this, cores go to intra-op threads instead of more sessions. */
export const MAX_DEFAULT_WORKERS = 16;
/** Most intra-op threads the default gives one session (BERT-style graphs scale poorly beyond). */
export const MAX_INTRA_OP_THREADS = 8;
/** Hosts with at least this many cores keep one core free of inference for the event loop. */
export const RESERVE_CORE_FROM = 8;
/** Session memory ≈ ONNX file × this (arena, fused weights, activations). */
export const SESSION_MEMORY_FACTOR = 1.5;

/**
 * Compute per token in units of 1e6 hidden² × layers: one encoder layer costs ≈ 4·h² (attention
 * projections) + 2·h·I (FFN) MACs per token, = 12·h² with the usual I = 4·h, so a unit is 12e6
 * MACs per token. MiniLM-L6: 0.88; BERT-base: 7.1; ModernBERT-base: 7.6; RoBERTa-large: 25.2.
 */
export function computeUnits(model: PoolSizingInput['model']): number {
  if (model === undefined) return 0;
  if ('parameters' in model) {
    if (!(model.parameters > 0) || !Number.isFinite(model.parameters)) return 0;
    // Encoder parameters ≈ 12 · hidden² · layers, so units ≈ parameters / 12e6.
    return model.parameters / 12e6;
  }
  const { hiddenSize, layers } = model;
  const ffn = model.intermediateSize ?? 4 * hiddenSize;
  if (!(hiddenSize > 0) || !(layers > 0) || !(ffn > 0) || !Number.isFinite(hiddenSize * layers * ffn)) return 0;
  return ((4 * hiddenSize * hiddenSize + 2 * hiddenSize * ffn) * layers) / 12e6;
}

/** small < 2 (TinyBERT, MiniLM-L6/L12) ≤ base < 12 (BERT/XLM-R/ModernBERT/DeBERTa base) ≤ large < 40 ≤ xlarge. */
export function modelClassOf(units: number): ModelClass {
  if (units < 2) return 'small';
  if (units < 12) return 'base';
  if (units < 40) return 'large';
  return 'xlarge';
}

/** Intra-op threads per class: [throughput, latency]. */
const INTRA_OP: Record<ModelClass, readonly [number, number]> = {
  small: [1, 1],
  // Measured on 2 cores (BERT-base width, one 20-passage request at a time): 2 × 1 answered in
  // 5.6 s, 1 × 2 in 7.9 s; a request spans several batches, which separate workers run at once.
  base: [1, 1],
  large: [1, 2],
  xlarge: [2, 4],
};

function wholeAtLeastOne(value: number | undefined): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : 1;
}

/** The default pool size for a host and model (see the module comment and docs/cross-encoder-sizing.md). */
export function defaultPoolSize(input: PoolSizingInput): PoolSize {
  const cores = wholeAtLeastOne(input.cores);
  const units = computeUnits(input.model);
  const modelClass = modelClassOf(units);
  if (input.executionProvider === 'cuda') {
    const workers = Math.min(2, cores);
    return {
      workers,
      intraOpThreads: 1,
      reservedCores: Math.max(0, cores - workers),
      modelClass,
      reason: `cuda: ${workers} worker(s) share the device (one runs while the other tokenizes), 1 CPU thread each`,
    };
  }
  const reservedCores = cores >= RESERVE_CORE_FROM ? 1 : 0;
  const usable = cores - reservedCores;
  const prefer = input.prefer ?? 'throughput';
  const intra = Math.min(usable, INTRA_OP[modelClass][prefer === 'latency' ? 1 : 0]);
  let workers = Math.max(1, Math.floor(usable / intra));
  let intraOpThreads = intra;
  const notes: string[] = [];
  if (workers > MAX_DEFAULT_WORKERS) {
    // More sessions than this only multiply memory; give the spare cores to each session instead.
    workers = MAX_DEFAULT_WORKERS;
    intraOpThreads = Math.min(MAX_INTRA_OP_THREADS, Math.max(intra, Math.floor(usable / workers)));
    notes.push(`capped at ${MAX_DEFAULT_WORKERS} workers`);
  }
  if (input.modelBytes !== undefined && input.memoryBytes !== undefined && input.modelBytes > 0) {
    const fit = Math.floor(input.memoryBytes / (input.modelBytes * SESSION_MEMORY_FACTOR));
    if (fit < workers) {
      workers = Math.max(1, fit);
      // Fewer sessions: let each use more of the cores it leaves idle.
      intraOpThreads = Math.min(MAX_INTRA_OP_THREADS, Math.max(intraOpThreads, Math.floor(usable / workers)));
      notes.push(`memory fits ${Math.max(1, fit)} session(s)`);
    }
  }
  const reason =
    `${cores} cores (${reservedCores} kept for the event loop), ${modelClass} model ` +
    `(${units.toFixed(1)} × 12M MACs per token), prefer ${prefer}: ${workers} × ${intraOpThreads} thread(s)` +
    (notes.length > 0 ? `; ${notes.join('; ')}` : '');
  return { workers, intraOpThreads, reservedCores, modelClass, reason };
}

/**
 * The sizes of a parsed config.json (`hidden_size`, `num_hidden_layers`, `intermediate_size`), as
 * every BERT, RoBERTa, XLM-R, ModernBERT and DeBERTa config spells them; undefined when the config
 * lacks them or they are not positive integers (the rule then treats the model as small).
 */
export function modelDimensionsFromConfig(config: unknown): ModelDimensions | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const fields = config as Record<string, unknown>;
  const whole = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
  const { hidden_size: hiddenSize, num_hidden_layers: layers, intermediate_size: intermediateSize } = fields;
  if (!whole(hiddenSize) || !whole(layers)) return undefined;
  return whole(intermediateSize) ? { hiddenSize, layers, intermediateSize } : { hiddenSize, layers };
}
