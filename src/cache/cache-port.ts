/**
 * What the gate needs from a score cache. The cache owns keying, single-flight and storage tiers;
 * the gate only says which scorer, query and passages, and how to score the misses.
 * resolve() may call scoreMisses a second time, for followers of a single flight that re-score.
 */
import type { Passage, ScoreOptions, ScorerPairResult } from '../types.js';

export interface CacheRequest {
  /** Scorer identity (model + version + score-changing settings); part of every key. */
  readonly scorerId: string;
  /** The scorer's `metadataKeys`: their values are part of each pair's key. */
  readonly metadataKeys?: readonly string[];
  readonly query: string;
  readonly passages: readonly Passage[];
  /**
   * Signals an entry must carry (any of) to serve this request or be stored from it; default the
   * cache's `requiredSignals`. A scorer whose signals are not the relevance signal (an NLI or
   * injection model inside a composite tier) passes its own, so the default cache serves it too.
   */
  readonly requiredSignals?: readonly string[];
}

export interface CacheResolution {
  /** One per passage, in input order; null where the scorer could not score the pair. */
  readonly results: ScorerPairResult[];
  /** True where the result came from the cache (L1 or L2) rather than this call's scoring. */
  readonly cached: boolean[];
}

/** Scores the passages at `missIndices` (indices into the request's passages); results in that order. */
export type ScoreMisses = (
  missIndices: readonly number[],
  options: ScoreOptions,
) => Promise<ReadonlyArray<ScorerPairResult>>;

export interface PairScoreCache {
  /**
   * Every pair's score: hits from the cache, misses from `scoreMisses`, called once per call with
   * all misses that no concurrent call is already scoring (single-flight). At most one more call
   * follows, only for pairs this call waited on whose leading call failed, was aborted, got null,
   * or had not answered by this call's deadline: those are re-scored under this call's own options
   * (another caller's failure never fails this call). Null results are never stored.
   */
  resolve(request: CacheRequest, scoreMisses: ScoreMisses, options?: ScoreOptions): Promise<CacheResolution>;
}
