/**
 * What the gate needs from a score cache. The cache owns keying, single-flight and storage tiers;
 * the gate only says which scorer, query and passages, and how to score the misses.
 * resolve() may call scoreMisses again, for pairs it waited on (a concurrent call's, or another
 * instance's through a Redis lease) that were not delivered.
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
  /**
   * How this request uses the cache's shared L2 (Redis), where it has one. `read: false`: its
   * misses are not looked up there (the caller has just read them, e.g. with `prefetch`), which
   * also means no lease. `lease: false`: it takes no lease on the pairs it scores and waits for no
   * other instance's, for a scorer that is cheaper than a Redis round trip. Default: both.
   */
  readonly l2?: CacheL2Use;
  /**
   * Takes part in approximate reuse, when the cache has it (createScoreCache's `approximate`): its
   * missing pairs may be served from a near-identical earlier query's scores. Absent: exact only.
   */
  readonly approximate?: CacheApproximateUse;
}

/** CacheRequest.approximate: what a request shares with the earlier queries it may reuse. */
export interface CacheApproximateUse {
  /**
   * What besides the scorer (and its metadata keys) two requests must share for one to reuse the
   * other's scores: the gate puts its policy and query class here, so no decision is ever made
   * from scores reused across policies.
   */
  readonly scope: string;
  /** The query's embedding when the caller has one (else the cache's `approximate.embed` makes it). */
  readonly embedding?: Float32Array | readonly number[];
}

/** Where a pair's result came from: false = scored by this call, true = the exact cache, 'approximate' = a similar query's score. */
export type CachedMark = boolean | 'approximate';

/** CacheRequest.l2: how one request uses the shared L2. */
export interface CacheL2Use {
  /** Look the request's misses up in Redis (default true); false also means no lease. */
  readonly read?: boolean;
  /** Lease the pairs it scores, and wait for pairs other instances lease (default true). */
  readonly lease?: boolean;
}

/** Options of ScoreCache.prefetch. */
export interface PrefetchOptions {
  /** The caller's deadline (Date.now() clock): the read waits at most half the time left when that is under the L2 timeout. */
  readonly deadline?: number;
}

export interface CacheResolution {
  /** One per passage, in input order; null where the scorer could not score the pair. */
  readonly results: ScorerPairResult[];
  /**
   * True where the result came from the cache (L1 or L2) rather than this call's scoring;
   * 'approximate' where it is a near-identical earlier query's score for the passage.
   */
  readonly cached: CachedMark[];
}

/** Scores the passages at `missIndices` (indices into the request's passages); results in that order. */
export type ScoreMisses = (
  missIndices: readonly number[],
  options: ScoreOptions,
) => Promise<ReadonlyArray<ScorerPairResult>>;

export interface PairScoreCache {
  /** True when the cache reuses near-identical queries' scores for requests that say `approximate`. */
  readonly approximate?: boolean;
  /**
   * Every pair's score: hits from the cache, misses from `scoreMisses`, called once per call with
   * all misses that no concurrent call (nor, through a Redis lease, another instance) is already
   * scoring (single-flight). At most two more calls follow: one for pairs this call waited on
   * whose leading call failed, was aborted, got null, or had not answered by this call's deadline,
   * one for pairs another instance leased and did not store in time; those are re-scored under this
   * call's own options (another caller's failure never fails this call). Null results are never stored.
   */
  resolve(request: CacheRequest, scoreMisses: ScoreMisses, options?: ScoreOptions): Promise<CacheResolution>;
}
