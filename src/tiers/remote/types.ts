/** The protocol names of the remote tier (shared by its options and its errors) and the scorer's interface. */
import type { Scorer, ScoreOptions } from '../../types.js';

/**
 * The backend's API: `cohere` (POST /v2/rerank: Cohere, Jina, infinity, vLLM, `relevance-gate
 * serve`), `tei` (text-embeddings-inference POST /rerank), `kserve` (KServe v2 / Triton infer).
 */
export type RemoteProtocol = 'cohere' | 'tei' | 'kserve';

/** Counters of a remote scorer since its creation. */
export interface RemoteScorerStats {
  /** Scoring requests sent (each batch of each call, refused ones included; kserve's metadata GETs not). */
  requests: number;
  /** Calls answered. */
  calls: number;
  /** Calls that failed (aborts and deadlines included). */
  failedCalls: number;
  /** The per-request cap now: maxBatch, or less once the server's max_batch_size or a 413/422 lowered it. */
  maxBatch: number;
  /** Times a 413/422 (or Triton's batch-size refusal) lowered the cap. */
  batchShrinks: number;
}

/** A Scorer backed by an HTTP rerank API or inference server. */
export interface RemoteScorer extends Scorer {
  /** The protocol it speaks. */
  readonly protocol: RemoteProtocol;
  /** Requests, calls, failures and the learned per-request cap. */
  stats(): RemoteScorerStats;
  /**
   * Resolves once the backend can be asked, within the options' deadline and signal. kserve: the
   * tokenizer is loaded, the server ready (`GET /v2/health/ready`), the model's metadata and
   * configuration read (what the first call would otherwise do); a typed error says what failed.
   * cohere and tei: at once (their APIs have no readiness endpoint in common).
   */
  ready(options?: ScoreOptions): Promise<void>;
}
