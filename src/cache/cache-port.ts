/**
 * What the gate needs from a score cache. The cache owns keying, single-flight and storage tiers;
 * the gate only says which scorer, query and passages, and how to score the misses.
 */
import type { Passage, ScoreOptions, ScorerPairResult } from '../types.js';

export interface CacheRequest {
  /** Scorer identity (model + version + score-changing settings); part of every key. */
  readonly scorerId: string;
  readonly query: string;
  readonly passages: readonly Passage[];
}

export interface CacheResolution {
  /** One per passage, in input order; null where the scorer could not score the pair. */
  readonly results: ScorerPairResult[];
  /** True where the result came from the cache (L1 or L2) rather than this call's scoring. */
  readonly cached: boolean[];
}

/** Scores the passages at `missIndices` (indices into the request's passages); results in that order. */
export type ScoreMisses = (missIndices: readonly number[], options: ScoreOptions) => Promise<ReadonlyArray<ScorerPairResult>>;

export interface PairScoreCache {
  /**
   * Every pair's score: hits from the cache, misses from `scoreMisses`, called at most once per
   * call with all misses that no concurrent call is already scoring (single-flight). Null results
   * are never stored.
   */
  resolve(request: CacheRequest, scoreMisses: ScoreMisses, options?: ScoreOptions): Promise<CacheResolution>;
}
