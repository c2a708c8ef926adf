/**
 * Messages between the main thread and the cross-encoder worker threads. Token and logit buffers
 * travel as transferred typed arrays (no copies). Failures come back as data (`error`) so the main
 * thread can rebuild the typed error.
 *
 * Life of a worker: it loads the tokenizer and the session and runs a probe, then posts exactly one
 * `ready` or `init-failed`. It then answers each `task` with one `result` or `failure`, one task at a
 * time. On `shutdown` (sent only while it runs nothing) it releases the session and exits by itself:
 * the main thread never terminates a thread that may be inside `session.run` (onnxruntime-node
 * aborts the whole process when that happens).
 */
import type { SerializedError } from './errors.js';
import type { ModelContract } from './model-contract.js';
import type { ModelConfigFields } from './model-config.js';
import type { PairInput } from './pair-input.js';
import type { PairChunking, TruncationMode } from './tokenize-pairs.js';

export type ExecutionProviderName = 'cpu' | 'cuda';

/** The output a bi-encoder worker reads: one vector of `dimensions` floats per text. */
export interface EmbeddingHead {
  readonly output: string;
  readonly dimensions: number;
}

/**
 * Faults a worker injects into itself, for the fault suite only (never set by the public API):
 * they make a worker die or stall at the moments a real crash or a slow run would. Infer faults
 * apply to the first generation of workers only, not to their replacements.
 */
export interface WorkerFaults {
  /** Exit the thread (code 7) on receiving the n-th infer task (1-based), before running it. */
  readonly exitOnInfer?: number;
  /** Throw an uncaught error on the n-th infer task (1-based), before running it. */
  readonly throwOnInfer?: number;
  /** Block the thread this long (ms) inside every infer task, the way a slow `session.run` does. */
  readonly blockInferMs?: number;
  /** Fail the load (after the probe) of the worker with this 0-based index, after waiting delayMs. */
  readonly failLoadOfWorker?: { readonly index: number; readonly delayMs: number };
}

/** Passed to every worker as `workerData`. */
export interface WorkerConfig {
  readonly modelPath: string;
  readonly tokenizerPath: string;
  readonly maxLength: number;
  readonly truncation: TruncationMode;
  /** Long passages as several windows (absent: truncated to one pair). */
  readonly chunking?: PairChunking;
  /** What the model reads per pair (query-passage, passage-query, passage alone). Default query-passage. */
  readonly pairInput?: PairInput;
  /** config.json fields the model contract reads (model_type, pad_token_id, id2label, problem_type). */
  readonly modelConfig?: ModelConfigFields;
  /**
   * A bi-encoder (the embedding tier) instead of a cross-encoder: the model reads one text
   * (pairInput 'passage') and returns one float32 vector per text at `output` ([batch, dimensions]).
   * Its rows travel back in InferResult.logits, `dimensions` values per text.
   */
  readonly embedding?: EmbeddingHead;
  readonly intraOpThreads: number;
  readonly executionProvider: ExecutionProviderName;
  /** Unix nice increment applied by the worker to its own thread (0 = none). */
  readonly niceIncrement?: number;
  /** 0-based slot index (for fault injection and messages). */
  readonly workerIndex?: number;
  /** True for a worker started to replace one that died. */
  readonly replacement?: boolean;
  readonly faults?: WorkerFaults;
}

export interface TokenizeTask {
  readonly kind: 'tokenize';
  readonly query: string;
  readonly passages: readonly string[];
}

/** A batch of already tokenized pairs, concatenated; pair i has lengths[i] tokens. */
export interface InferTask {
  readonly kind: 'infer';
  readonly ids: Int32Array;
  /** null when the model has no token_type_ids input. */
  readonly typeIds: Int32Array | null;
  readonly lengths: Int32Array;
}

export type WorkerTask = TokenizeTask | InferTask;

export interface DescribeResult {
  readonly contract: ModelContract;
  readonly vocabSize: number;
  /** Largest token id the tokenizer can produce (added tokens included). */
  readonly maxTokenId: number;
}

export interface TokenizeResult {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array;
  readonly lengths: Int32Array;
  readonly offsets: Int32Array;
  /** With chunking: pairs per passage (consecutive); absent → one pair per passage. */
  readonly chunks?: Int32Array;
}

export interface InferResult {
  /** Row-major [batch × signals], float64 so binary heads keep the exact class difference. */
  readonly logits: Float64Array;
  /** Wall time of tensor building + session.run in the worker, ms. */
  readonly runMs: number;
}

export type ToWorker =
  | { readonly type: 'task'; readonly id: number; readonly task: WorkerTask }
  | { readonly type: 'shutdown' };

export type FromWorker =
  | { readonly type: 'ready'; readonly describe: DescribeResult }
  | { readonly type: 'init-failed'; readonly error: SerializedError }
  | { readonly type: 'result'; readonly id: number; readonly result: TokenizeResult | InferResult }
  | { readonly type: 'failure'; readonly id: number; readonly error: SerializedError };
