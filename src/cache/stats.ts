/**
 * What `stats()` reports: the counters the cache's parts increment (one shared object), the L2's
 * counters, and the state of L1, single-flight and L2 read at call time.
 */
import type { QueryIndexStats } from './approximate/query-index.js';
import { emptyL2Latency, zeroL2Counters, type L2Counters, type L2LatencyHistogram, type RedisL2 } from './redis-l2.js';

export interface ScoreCacheStats extends L2Counters {
  /**
   * Pairs answered without this call scoring them: l1Hits + l2Hits + inflightShared + l2LeaseShared
   * (+ duplicates of those).
   */
  hits: number;
  /** Pairs that had to be scored by the call that asked for them (including follower re-scores). */
  misses: number;
  l1Hits: number;
  l2Hits: number;
  /** Pairs taken from a concurrent call's scoring (single-flight followers). */
  inflightShared: number;
  /** Followers whose leader failed, was aborted or got null, and who scored the pair themselves. */
  followerRescores: number;
  /** L1 entries dropped to stay within maxBytes. */
  evictions: number;
  /** Entries found older than ttlMs (dropped on sight). */
  expired: number;
  /** Entries written into L1 (fresh scores, L2 promotions, snapshot loads). */
  stores: number;
  /** Scorer results not cached because they were null. */
  nullResults: number;
  /** Scorer results not cached because they were malformed (non-finite numbers, wrong shape). */
  uncacheable: number;
  /** Current estimated L1 bytes; always ≤ maxBytes. */
  bytes: number;
  maxBytes: number;
  entries: number;
  /** Pairs being scored right now with followers able to join. */
  inflight: number;
  l2Enabled: boolean;
  l2Connected: boolean;
  l2Breaker: 'closed' | 'open' | 'half-open' | 'disabled';
  /** Whether L2 values are signed and verified (`redis.signingKey`). */
  l2Signed: boolean;
  /** Whether calls lease what they score in Redis (`redis.leaseMs` > 0 and Redis runs the lease scripts). */
  l2Leasing: boolean;
  /** How long calls waited for their L2 read (one MGET per call), as a histogram. */
  l2ReadLatency: L2LatencyHistogram;
  /** Whether the cache reuses near-identical queries' scores (the `approximate` option). */
  approximateEnabled: boolean;
  /**
   * Pairs served from a near-identical earlier query's score (`cached: 'approximate'`); neither
   * hits nor misses, so hits + misses + approximateHits = pairs asked for.
   */
  approximateHits: number;
  /** Calls that looked for similar earlier queries (they had an embedding and pairs to score). */
  approximateLookups: number;
  /** Query embeddings that could not be had: embed threw, or returned no usable vector (the pairs were scored). */
  approximateEmbedFailures: number;
  /** Calls that stopped waiting for the query embedding (embedTimeoutMs, deadline) and scored their pairs. */
  approximateEmbedTimeouts: number;
  /** Queries the approximate index remembers, its estimated bytes, and the ones it dropped to stay in bounds. */
  approximateQueries: number;
  approximateBytes: number;
  approximateEvictions: number;
}

/** The counters the cache increments itself (the rest of ScoreCacheStats is derived or comes from L2). */
export type CacheCounters = Pick<
  ScoreCacheStats,
  | 'hits'
  | 'misses'
  | 'l1Hits'
  | 'l2Hits'
  | 'inflightShared'
  | 'followerRescores'
  | 'evictions'
  | 'expired'
  | 'stores'
  | 'nullResults'
  | 'uncacheable'
  | 'approximateHits'
  | 'approximateLookups'
  | 'approximateEmbedFailures'
  | 'approximateEmbedTimeouts'
>;

export function zeroCacheCounters(): CacheCounters {
  return {
    hits: 0,
    misses: 0,
    l1Hits: 0,
    l2Hits: 0,
    inflightShared: 0,
    followerRescores: 0,
    evictions: 0,
    expired: 0,
    stores: 0,
    nullResults: 0,
    uncacheable: 0,
    approximateHits: 0,
    approximateLookups: 0,
    approximateEmbedFailures: 0,
    approximateEmbedTimeouts: 0,
  };
}

/** The state stats() reads besides the counters. */
export interface StatsSources {
  readonly counters: CacheCounters;
  readonly l1: { readonly bytes: number; readonly maxBytes: number; readonly entries: number };
  readonly inflight: number;
  readonly l2: RedisL2 | undefined;
  readonly approximate: { stats(): QueryIndexStats } | undefined;
}

export function collectStats({ counters, l1, inflight, l2, approximate }: StatsSources): ScoreCacheStats {
  const index = approximate?.stats();
  return {
    ...counters,
    ...(l2?.counters ?? zeroL2Counters()),
    bytes: l1.bytes,
    maxBytes: l1.maxBytes,
    entries: l1.entries,
    inflight,
    l2Enabled: l2 !== undefined,
    l2Connected: l2?.connected ?? false,
    l2Breaker: l2?.breakerState ?? 'disabled',
    l2Signed: l2?.signed ?? false,
    l2Leasing: l2?.leasing ?? false,
    l2ReadLatency: l2?.latency ?? emptyL2Latency(),
    approximateEnabled: approximate !== undefined,
    approximateQueries: index?.queries ?? 0,
    approximateBytes: index?.bytes ?? 0,
    approximateEvictions: index?.evictions ?? 0,
  };
}
