/**
 * Messages between the main thread and the cross-encoder workers. Token and logit buffers travel
 * as transferred typed arrays (no copies). Expected failures come back as data (`error`) so the
 * main thread can rebuild the typed error; a thrown error means something unexpected.
 */
import type { SerializedError } from './errors.js';
import type { ModelContract } from './model-contract.js';
import type { TruncationMode } from './tokenize-pairs.js';

export type ExecutionProviderName = 'cpu' | 'cuda';

/** Passed to every worker as piscina `workerData`. */
export interface WorkerConfig {
  readonly modelPath: string;
  readonly tokenizerPath: string;
  readonly maxLength: number;
  readonly truncation: TruncationMode;
  readonly intraOpThreads: number;
  readonly executionProvider: ExecutionProviderName;
}

export interface DescribeTask {
  readonly kind: 'describe';
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

export type WorkerTask = DescribeTask | TokenizeTask | InferTask;

export interface DescribeResult {
  readonly contract: ModelContract;
  readonly vocabSize: number;
  readonly error?: undefined;
}

export interface TokenizeResult {
  readonly ids: Int32Array;
  readonly typeIds: Int32Array;
  readonly lengths: Int32Array;
  readonly offsets: Int32Array;
  readonly error?: undefined;
}

export interface InferResult {
  /** Row-major [batch × signals], float64 so binary heads keep the exact class difference. */
  readonly logits: Float64Array;
  /** Wall time of tensor building + session.run in the worker, ms. */
  readonly runMs: number;
  readonly error?: undefined;
}

export interface WorkerFailure {
  readonly error: SerializedError;
}

export type WorkerResult<T> = T | WorkerFailure;
