/**
 * Public types of the embedding tier (a bi-encoder on the cross-encoder's worker pool and batcher).
 * No runtime imports beyond constants: the router and the server read these without loading
 * onnxruntime-node or tokenizers.
 */
import type { PlattParameters } from '../../calibration/platt.js';
import type { DetailedPairScore, Passage, Scorer, ScoreOptions } from '../../types.js';
import type { BatcherStats } from '../cross-encoder/batcher.js';
import type { ExecutionProviderName } from '../cross-encoder/protocol.js';
import type { WorkerPoolStats } from '../cross-encoder/worker-pool.js';
import type { VectorCacheStats } from './vector-cache.js';
import type { EmbeddingInput } from './vectors.js';

/** Tier label of the embedding scorer's results (and of `embeddingTier` in a router). */
export const EMBEDDING_TIER = 'embedding';
/**
 * The cosine similarity of query and passage, clamped to [0, 1] under `probabilities` (a signal is
 * a [0, 1] value; a negative cosine reads as 0, "not similar") and exact, in [-1, 1], under `raw`.
 */
export const SIMILARITY = 'similarity';

export interface EmbeddingScorerOptions {
  /** A bi-encoder folder (`relevance-gate import-model <hf-folder> --as bi-encoder --out <dir>`). Required. */
  readonly modelDir: string;
  /** ONNX file by its suffix: 'int8' → onnx/model_int8.onnx. Default: onnx/model.onnx (fp32). */
  readonly variant?: string;
  /**
   * The model id precomputed embeddings must name (`embeddingModel`). Default
   * `embedding:<sha256 of the ONNX, tokenizer and config files, 16 hex>:len<maxLength>`; set it to
   * declare vectors computed elsewhere with the same model (e.g. sentence-transformers) compatible.
   */
  readonly modelId?: string;
  /**
   * Platt parameters of `relevant` over the cosine (σ(a·cos + b), a > 0). Default: the folder's
   * calibration.json (`relevance-gate fit-points --tier embedding`), else σ(10·cos − 5).
   */
  readonly calibration?: Pick<PlattParameters, 'a' | 'b'>;
  /** Prepended to every query before it is embedded (E5: 'query: ', BGE's retrieval instruction). Default ''. */
  readonly queryPrefix?: string;
  /** Prepended to every passage before it is embedded (E5: 'passage: '). Default ''. */
  readonly passagePrefix?: string;
  /** Worker threads, one session each. Default: the cross-encoder's rule for this host and model size. */
  readonly workers?: number;
  /** onnxruntime intra-op threads per worker. Default 1. */
  readonly intraOpThreads?: number;
  /** Padded tokens per batch (longest text × texts). Default 4096. */
  readonly maxBatchTokens?: number;
  /** Longest wait for a partial batch while a worker is idle, ms. Default 2. */
  readonly maxQueueDelayMs?: number;
  /** Tokens per text, special tokens included. Default: the folder's maxLength, never above the model's limit. */
  readonly maxLength?: number;
  /** 'cpu' (default) or 'cuda'. */
  readonly executionProvider?: ExecutionProviderName;
  /** Texts waiting (tokenizing or queued) beyond which calls get OverloadedError. Default 4096. */
  readonly maxPendingTexts?: number;
  /** Passages per score() call, texts per embed() call. Default 1024. */
  readonly maxPassagesPerRequest?: number;
  /** Characters of a query. Default 20,000. */
  readonly maxQueryChars?: number;
  /** Characters of one passage or text. Default 200,000. */
  readonly maxPassageChars?: number;
  /** Characters of one call, query and passages. Default 4,000,000. */
  readonly maxRequestChars?: number;
  /** Bytes of the in-process vector cache (L1 LRU by content hash and model id); 0 turns it off. Default 64 MiB. */
  readonly cacheBytes?: number;
  /** How long close() lets running batches finish. Default 10,000 ms. */
  readonly closeTimeoutMs?: number;
  /** Unix nice increment of the worker threads (0..19), best effort. Default 10. */
  readonly workerNice?: number;
}

/** Per-call options of `score`: the usual limits, plus a precomputed query embedding. */
export interface EmbeddingScoreOptions extends ScoreOptions {
  /**
   * The query's embedding, computed earlier by the same model (L2-normalised or not: it is
   * normalised). With it the query is not embedded. Needs `embeddingModel`.
   */
  readonly queryEmbedding?: EmbeddingInput;
  /**
   * The model id the precomputed vectors of this call came from (`queryEmbedding`, and every
   * `passage.embedding` that names none itself); must equal the scorer's `modelId`.
   */
  readonly embeddingModel?: string;
}

/** Options of `embed`. */
export interface EmbedOptions extends ScoreOptions {
  /** Embed the texts as queries (queryPrefix) or passages (passagePrefix, the default). */
  readonly as?: 'query' | 'passage';
}

/** Where the `relevant` calibration came from. */
export type EmbeddingCalibrationSource = 'option' | 'file' | 'default';

export interface EmbeddingScorerInfo {
  readonly modelDir: string;
  readonly modelPath: string;
  readonly tokenizerPath: string;
  /** The `variant` option, null without one. */
  readonly variant: string | null;
  readonly modelId: string;
  readonly dimensions: number;
  readonly maxLength: number;
  /** Pooling the folder declares (information: the graph pools). */
  readonly pooling: string | null;
  readonly queryPrefix: string;
  readonly passagePrefix: string;
  readonly calibration: PlattParameters;
  readonly calibrationSource: EmbeddingCalibrationSource;
  readonly workers: number;
  readonly intraOpThreads: number;
  readonly executionProvider: ExecutionProviderName;
}

export interface EmbeddingScorerStats extends BatcherStats {
  readonly workers: WorkerPoolStats;
  /** The vector cache (L1). */
  readonly cache: VectorCacheStats;
  /** Vectors taken from callers (precomputed) instead of the model. */
  readonly precomputedVectors: number;
}

/**
 * A bi-encoder as a `Scorer`: signals `relevant` (Platt over the cosine) and `similarity` (the
 * cosine), tier 'embedding'; plus `embed` for the vectors themselves.
 */
export interface EmbeddingScorer extends Scorer {
  /** Scores change with it: model id, prefixes and calibration. */
  readonly id: string;
  /** What precomputed embeddings must name (`embeddingModel`). */
  readonly modelId: string;
  readonly dimensions: number;
  readonly signals: readonly string[];
  readonly info: EmbeddingScorerInfo;
  /**
   * The query is embedded once per call (or taken from `options.queryEmbedding`), each passage
   * once (or taken from `passage.embedding`, or from the vector cache); all the texts a call needs
   * go to the batcher as one request, batched with other calls' texts.
   */
  score(
    query: string,
    passages: readonly Passage[],
    options?: EmbeddingScoreOptions,
  ): Promise<ReadonlyArray<DetailedPairScore>>;
  /** L2-normalised vectors of `texts`, in order (fresh arrays: the caller may keep or change them). */
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  stats(): EmbeddingScorerStats;
  /** Predicted ms until `texts` new texts submitted now would be embedded (0 before the first batch). */
  estimateWaitMs(texts: number): number;
  /** Texts tokenizing, queued or running. */
  pendingTexts(): number;
  /**
   * Stops intake (later calls: DisposedError); queued work is rejected with DisposedError; running
   * batches finish for up to closeTimeoutMs; the workers exit. Idempotent.
   */
  close(): Promise<void>;
}
