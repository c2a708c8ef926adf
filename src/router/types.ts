/**
 * Public types of the tier router: how tiers are registered, how a call is routed, and what the
 * router reports. See docs/router.md.
 */
import type { AnswerLagOptions } from './answer-lag.js';
import type { CacheRequest, PairScoreCache, PrefetchOptions } from '../cache/cache-port.js';
import type { DetailedPairScore, Scorer, ScoreOptions, TierName } from '../types.js';
import type { BackgroundFillOptions } from './background-fill.js';

/**
 * - `fixed`: every uncached pair on one tier (`fixedTier`), no fallback, no shedding.
 * - `budget`: per request, the highest-quality tier whose predicted completion fits the budget;
 *   otherwise the next one down (the inline tier always fits).
 * - `cascade`: the inline (fast) tier on every uncached pair, then the best tier on the pairs whose
 *   fast score is nearest the decision threshold, as many as are predicted to fit.
 */
export type RoutingMode = 'fixed' | 'budget' | 'cascade';

export interface RoutingOptions {
  readonly mode: RoutingMode;
  /** Tier name for `fixed` mode; default the highest-quality tier. */
  readonly fixedTier?: TierName;
  /**
   * Tier `cascade` sends the pairs nearest the threshold to; default the highest-quality tier.
   * With the fast path, a cross-encoder and an LLM judge, `cascadeTier: 'cross-encoder'` keeps the judge
   * out of the cascade (it then serves `fixed`/`budget` views or direct calls).
   * A list is a staged cascade: `['cross-encoder', 'embedding']` sends the pairs nearest the
   * threshold to the cross-encoder as many as it is predicted to finish in time, the next nearest
   * to the embedding tier as many as it fits, and the rest keep the inline tier's score (pairs of a
   * later stage are labelled `degraded: 'shed'`, as kept off the first stage).
   */
  readonly cascadeTier?: TierName | readonly TierName[];
  /** Decision threshold (probability) that `cascade` spends the slow tier around. Default 0.5. */
  readonly threshold?: number;
  /** Signal(s) read as relevance for `cascade`; the first present name is used. Default ['relevant']. */
  readonly signal?: string | readonly string[];
}

/** A scorer tier as the router sees it. */
export interface TierSpec {
  /** Label on results and in stats, e.g. 'fast-path' or 'cross-encoder'. Must not be 'cache'. */
  readonly name: TierName;
  readonly scorer: Scorer;
  /** Higher is better (more accurate). Tiers must have distinct qualities. */
  readonly quality: number;
  /**
   * The tier answers in-process within microseconds (the tree fast path): it is never queued or
   * shed, and it is what pairs fall back to. At most one inline tier; it must be the lowest.
   */
  readonly inline?: boolean;
  /** Store this tier's results in the router's cache under `scorer.id`. Default: true unless inline. */
  readonly cache?: boolean;
  /** Pairs the router keeps outstanding on this tier at most; beyond it new work is shed. Default 512. */
  readonly maxQueuedPairs?: number;
  /**
   * The tier's own prediction of ms until `pairs` new pairs submitted now complete (e.g. the
   * cross-encoder batcher's estimateWaitMs). Return 0 when it has no measurement yet.
   */
  readonly estimateMs?: (pairs: number) => number;
  /** Pairs waiting at the tier from every caller (for tiers shared beyond this router). */
  readonly pendingPairs?: () => number;
  /** Cost per pair (ms) assumed until the first measurement. Default 1 (inline tiers: 0.01). */
  readonly initialMsPerPair?: number;
}

/**
 * The cache the router needs: the gate's port plus a synchronous L1 probe (ScoreCache has both),
 * and, optionally, a shared L2 it can read ahead of planning.
 */
export interface RouterCache extends PairScoreCache {
  lookup(request: CacheRequest): ReadonlyArray<DetailedPairScore | Readonly<Record<string, number>> | undefined>;
  /** True when the cache has an L2 shared with other instances (Redis): the router then calls prefetch before it plans. */
  readonly shared?: boolean;
  /**
   * Reads what L1 lacks of `requests` from the shared L2 into L1, so lookup() finds what other
   * instances scored; resolves with the pairs found. Must not reject, and must respect the deadline.
   */
  prefetch?(requests: readonly CacheRequest[], options?: PrefetchOptions): Promise<number>;
}

export interface RouterConfig {
  /** One or more tiers. */
  readonly tiers: readonly TierSpec[];
  /** Default routing for every call; per call via `score(..., { routing })` or `view(routing)`. Default cascade (fixed with one tier). */
  readonly routing?: RoutingOptions;
  /** Per-tier score cache (keys include the tier scorer's id). Do NOT also give the gate a cache. */
  readonly cache?: RouterCache;
  /** Budget assumed by budget/cascade calls that carry no deadline. Default 100 ms. */
  readonly defaultBudgetMs?: number;
  /** The router answers this long before the caller's deadline, so the answer reaches the caller in time. Default 2 ms. */
  readonly returnMarginMs?: number;
  /**
   * Answer-lag allowance (answer-lag.ts): the router also answers as early as its own answers
   * have recently come out late (event-loop stalls: GC, descheduling), so the caller still gets
   * the answer by the deadline. Default on (max 20 ms, half-life 5 min); false: the fixed margin only.
   * `{ watchEventLoop: true }` also learns from the event loop's own stalls (sampled 50 times a second),
   * so the allowance is in place before a stall lands on an answer; `relevance-gate serve` turns it on.
   */
  readonly answerLag?: boolean | AnswerLagOptions;
  /** Share of the remaining time a prediction may fill for work to be sent to a slow tier. Default 0.8. */
  readonly headroom?: number;
  /**
   * A slow tier that sat idle this long may be sent work its (possibly stale) prediction rejects,
   * so the cost model keeps learning; the deadline fallback bounds the cost. Default 250 ms;
   * Infinity disables probing.
   */
  readonly probeIntervalMs?: number;
  /**
   * Idle-time refinement (background-fill.ts): pairs answered below the best tier are sent to it
   * in small batches whenever it is idle, through the cache, so later requests for the same query
   * get the better score from the cache. Needs a cache and a cacheable best tier. Default off.
   */
  readonly backgroundFill?: boolean | BackgroundFillOptions;
  /** Clock of deadlines (Date.now() scale). Default Date.now. */
  readonly clock?: () => number;
  /** Scorer id of the router. Default derived from the tiers' ids. */
  readonly id?: string;
}

/** Per-call options: the usual limits plus a routing override merged over the router's. */
export interface RouterScoreOptions extends ScoreOptions {
  readonly routing?: Partial<RoutingOptions>;
}

/** Why a pair was answered below the best tier. */
export type DegradeReason = 'shed' | 'deadline' | 'error';

/** One pair's result from the router: the tier that produced it, and for cache hits the tier the score came from. */
export interface RoutedPairScore extends DetailedPairScore {
  readonly tier: TierName;
  /** For tier 'cache': the tier that originally scored the pair. */
  readonly sourceTier?: TierName;
  /** Set when the pair was answered below the best tier of a budget/cascade call. */
  readonly degraded?: DegradeReason;
}

export interface TierLoadStats {
  readonly name: TierName;
  readonly quality: number;
  readonly inline: boolean;
  /** Pairs submitted by the router and not yet settled. */
  readonly outstandingPairs: number;
  /** Live cost model (see cost-model.ts): completion ≈ overheadMs + msPerPair × (pairs ahead + own pairs). */
  readonly msPerPair: number;
  readonly overheadMs: number;
  /** Standard deviation of completions around the fit, ms (predictions add 1.3 of them). */
  readonly residualMs: number;
  /** Submissions the model has learnt from. */
  readonly samples: number;
  /** EWMA of observed / predicted completion time of completed submissions (calibration diagnostic). */
  readonly predictionRatio: number;
  /** Predicted ms for 20 new pairs now. */
  readonly predictedMsFor20: number;
  readonly submittedPairs: number;
  readonly completedPairs: number;
  /** Pairs whose submission failed or was cancelled (deadline / abort / error). */
  readonly failedPairs: number;
  readonly calls: number;
  /** Submissions sent although the prediction said they would not fit (idle tier, stale model). */
  readonly probes: number;
}

export interface RouterStats {
  readonly calls: number;
  readonly pairs: number;
  /** Pairs answered per label ('cache', tier names); unscored pairs are not counted. */
  readonly byTier: Readonly<Record<string, number>>;
  /** Cache hits by the tier that originally scored the pair. */
  readonly cacheHitsBySource: Readonly<Record<string, number>>;
  /** Pairs answered below the best tier in budget/cascade calls (shed + deadline + error). */
  readonly degradedPairs: number;
  /** Pairs never sent to a slow tier because the prediction or the queue bound said they would not fit. */
  readonly shedPairs: number;
  /** Pairs sent to a slow tier, not answered by the deadline, answered from a lower tier. */
  readonly deadlinePairs: number;
  /** Pairs whose slow-tier work failed, answered from a lower tier. */
  readonly errorPairs: number;
  /** Pairs whose pending slow-tier work the router cancelled (AbortSignal) at the deadline. */
  readonly cancelledPairs: number;
  /** Pairs the router could not answer at all (null results). */
  readonly unscoredPairs: number;
  /** Calls that answered later than their answer time + 1 ms (event-loop lag). */
  readonly lateCalls: number;
  /** The answer-lag allowance now, ms: how much earlier than deadline − returnMarginMs calls answer. */
  readonly answerLagMs: number;
  /** Pairs sent to the best tier in the background (idle-time refinement) and the submissions. */
  readonly backgroundPairs: number;
  readonly backgroundSubmissions: number;
  readonly tiers: readonly TierLoadStats[];
}

/** What `router.warmUp()` did, per tier. */
export interface RouterWarmUp {
  readonly tiers: ReadonlyArray<{ readonly name: TierName; readonly ms: number; readonly error?: string }>;
}

export interface Router extends Scorer {
  readonly id: string;
  readonly routing: RoutingOptions;
  /**
   * The union of the tiers' declared signals (best tier's first), so createGate can check a policy
   * against it; undefined when any tier declares none. A pair answered below the best tier may
   * still lack a signal only the best tier produces.
   */
  readonly signals?: readonly string[];
  score(
    query: string,
    passages: Parameters<Scorer['score']>[1],
    options?: RouterScoreOptions,
  ): ReturnType<Scorer['score']>;
  /**
   * A Scorer with the same tiers, cache and cost models, routing with `routing` merged over the
   * router's. A fixed view declares its tier's signals, any other view the router's.
   */
  view(routing: Partial<RoutingOptions>): Scorer;
  /** Predicted completion (ms) of `pairs` pairs submitted now on the named tier. */
  predictMs(tier: TierName, pairs: number): number;
  stats(): RouterStats;
  /**
   * Runs one synthetic batch (8 passages of about 60 words) on each tier, straight to the tier's
   * scorer: no cache, no counters, no cost-model sample. Call it once after creating the router and
   * before serving, so the first real call does not pay the tiers' cold start (first inference
   * allocations, lazy code paths) against its budget. Sends real work to every tier it names
   * (an LLM-judge tier makes a real request): pass `tiers` to choose. Never throws: a tier's failure
   * is reported, and a tier that does not answer within `timeoutMs` (default 30 s) is reported
   * as such.
   */
  warmUp(options?: { readonly tiers?: readonly TierName[]; readonly timeoutMs?: number }): Promise<RouterWarmUp>;
  /** Zeroes the counters (not the cost models). */
  resetStats(): void;
  /** Stops background work (call before closing the cache or the tiers). Scoring still works. */
  close(): void;
}
