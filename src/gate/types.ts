/**
 * Public types of the gate: configuration, policy, per-call options and the result shape.
 * Policies are pure functions of the signals stored on result items, so a result can be
 * re-routed under another policy without calling the scorer again.
 */
import type { PairScoreCache } from '../cache/cache-port.js';
import type { Passage, Scorer, SignalProbabilities } from '../types.js';
import type { CalibratedThreshold } from './calibration.js';
import type { OperatingPoint, OperatingPointName, OperatingPoints } from './policies/operating-points.js';
import type { ScoreCalibration } from '../operating-points/list-verdict.js';

export type { OperatingPoint, OperatingPointName, OperatingPoints } from './policies/operating-points.js';

/** An operating point by intent, or 'threshold' (the absolute threshold options). */
export type GateMode = OperatingPointName | 'threshold';

/** Where a passage goes: into the LLM context, into it flagged as conflicting, or nowhere. */
export type Route = 'included' | 'conflicting' | 'excluded';

/**
 * Why a pair has no usable score. `scorer-error`: the scorer threw/rejected or returned the wrong
 * number of results; `scorer-null`: the scorer returned null for the pair; `invalid-signal`: a
 * probability outside [0, 1], NaN, a non-number, or a non-finite raw value; `missing-signal`: the
 * relevance signal or a signal a rule reads is absent; `timeout`: the deadline passed first;
 * `aborted`: the caller's AbortSignal fired first; `cache-error`: the cache rejected or answered
 * malformed; `rule-error`: a predicate rule threw.
 */
export type UnscoredReason =
  | 'scorer-error'
  | 'scorer-null'
  | 'invalid-signal'
  | 'missing-signal'
  | 'timeout'
  | 'aborted'
  | 'cache-error'
  | 'rule-error';

export type Comparison = '>' | '>=' | '<' | '<=';

/** `value: 'threshold'` compares against the call's (query-adaptive) threshold. */
export interface SignalCondition {
  readonly signal: string;
  readonly op: Comparison;
  readonly value: number | 'threshold';
}

export interface RuleContext {
  /** The threshold chosen for this call (after query-adaptive selection). */
  readonly threshold: number;
  /** The pair's relevance (calibrated when the policy has `calibrated`). */
  readonly relevance: number;
}

/** Returns true when the rule matches. Must be pure; a throw fails the pair closed ('rule-error'). */
export type RulePredicate = (signals: SignalProbabilities, context: RuleContext) => boolean;

/**
 * What a condition rule does with a pair that lacks its signal (a router degraded the pair to a
 * tier without it): 'fail-closed' fails the pair ('missing-signal', excluded unless failOpen);
 * 'skip' moves on to the next rule as if this one did not match.
 */
export type MissingSignalBehaviour = 'fail-closed' | 'skip';

export interface RoutingRule {
  readonly name: string;
  readonly when: SignalCondition | RulePredicate;
  readonly route: Route;
  /** Pairs excluded by this rule may be promoted by `fallback: 'top'`. Default false. */
  readonly fallbackEligible?: boolean;
  /**
   * A pair without the condition's signal: 'fail-closed' (default) or 'skip'. Condition rules
   * only; a predicate sees the pair's signals as they are and handles absence itself.
   */
  readonly whenMissing?: MissingSignalBehaviour;
}

export interface EarlyStopPolicy {
  /** How many most recently scored pairs the pass rate is computed over (≥ 1). */
  readonly window: number;
  /** Stop when passes / window < minRate (strict), once at least `window` pairs were scored. 0 never stops. */
  readonly minRate: number;
  /** Pairs scored per scorer call, in input (rank) order (≥ 1). */
  readonly chunk: number;
}

export interface QueryLengthThreshold {
  /** Applies to queries of at most this many whitespace-separated words (buckets strictly ascending). */
  readonly maxWords: number;
  readonly threshold: number;
}

export interface ThresholdContext {
  readonly queryClass: string | undefined;
  readonly queryWords: number;
  /** The policy's base threshold (or the calibrated threshold). */
  readonly baseThreshold: number;
}

/** Chooses a threshold in [0, 1] for a query; anything else is refused with InvalidPolicyError. */
export type ThresholdFunction = (query: string, context: ThresholdContext) => number;

/**
 * Every option is optional; `null` in a per-call override unsets the gate-level value.
 * See docs/gate.md for the exact semantics of each boundary.
 */
export interface GatePolicy {
  /** Relevance ≥ threshold passes (inclusive). Default 0.5. Exclusive with `calibrated`. */
  readonly threshold?: number;
  /**
   * Signal name(s) read as relevance; the first present name is used. Default ['relevant']. When
   * the scorer declares `signals`, at least one of these must be among them.
   */
  readonly relevanceSignal?: string | readonly string[];
  /** If fewer than minKept pass, `fallback` applies. Default 0. */
  readonly minKept?: number;
  /** At most this many included (the highest relevance). Default unbounded. */
  readonly maxKept?: number | null;
  /** 'top': include the best fallback-eligible pairs up to minKept and flag it; 'none': include nothing. Default 'top'. */
  readonly fallback?: 'top' | 'none';
  /** insufficientContext when the returned set's mean relevance < this (strict). */
  readonly insufficientBelow?: number | null;
  /**
   * The operating point, chosen by intent: 'precise' (high precision, may return little),
   * 'balanced' (an LLM context), 'related' ("show me everything related"), or 'threshold' (the
   * absolute threshold options below). An operating point decides relative to the request's own
   * scored list (docs/gate.md, "Operating points") and replaces every threshold option. Default:
   * 'balanced' for a scorer that declares operating points (the shipped fast-path model) when no
   * threshold option (threshold, calibrated, thresholdFn, thresholdByQueryClass,
   * thresholdByQueryLength, rules, earlyStop) is set; 'threshold' otherwise.
   * For a scorer without operating points (and no `operatingPoints` option), 'precise' is the
   * absolute threshold and 'related' uses relatedThreshold, as before; 'balanced' is refused.
   */
  readonly mode?: GateMode;
  /**
   * Absolute threshold of 'related' for scorers without operating points. Given explicitly, it makes
   * 'related' absolute for every scorer. Default 0.25.
   */
  readonly relatedThreshold?: number;
  /**
   * Operating-point parameters for this scorer (overrides the table of known models), e.g. fitted
   * with `relevance-gate fit-points` on your own labelled data and read with loadOperatingPoints.
   * null unsets.
   */
  readonly operatingPoints?: OperatingPoints | null;
  /**
   * How each item's `score` (what the rerank surfaces return) is computed: a calibrated probability
   * of relevance that sorts in the returned order (src/gate/policies/list-verdict.ts). Default: the
   * scorer's own (the shipped fast-path model's, or an operating-points file's); null unsets, and
   * `score` is then the order value itself (ranking, else relevance).
   */
  readonly scoreCalibration?: ScoreCalibration | null;
  /** Threshold per caller-supplied query class (FilterOptions.queryClass). */
  readonly thresholdByQueryClass?: Readonly<Record<string, number>> | null;
  /** Threshold by query length: first bucket with words ≤ maxWords. */
  readonly thresholdByQueryLength?: readonly QueryLengthThreshold[] | null;
  /** Threshold callback; takes precedence over the class and length maps. */
  readonly thresholdFn?: ThresholdFunction | null;
  /**
   * Ordered routing rules, first match wins; when set they replace the threshold decision. When
   * the scorer declares `signals`, a condition rule on a signal outside them is refused.
   */
  readonly rules?: readonly RoutingRule[] | null;
  /** Route when no rule matches. Default 'excluded' (fallback-eligible). */
  readonly defaultRoute?: Route;
  /** Rank-order early stopping; also sets the chunking of `stream`. */
  readonly earlyStop?: EarlyStopPolicy | null;
  /** Include unscored pairs (flagged with their reason) instead of excluding them. Default false. */
  readonly failOpen?: boolean;
  /** Threshold + Platt calibration fitted for this scorer: relevance = calibrate(raw[relevance signal]). */
  readonly calibrated?: CalibratedThreshold | null;
}

export interface GateConfig {
  readonly scorer: Scorer;
  readonly policy?: GatePolicy;
  readonly cache?: PairScoreCache;
  /** Clock for deadlines and budgets (Date.now() scale). Default Date.now. */
  readonly clock?: () => number;
  /** Largest k accepted per call. Default 10,000. */
  readonly maxPassages?: number;
  /** Tier label for pairs whose scorer result names none. Default scorer.id. */
  readonly tierName?: string;
}

export interface FilterOptions {
  readonly signal?: AbortSignal;
  /** Absolute deadline in ms on the clock (Date.now() by default). */
  readonly deadline?: number;
  /** Relative budget in ms; with `deadline` too, the earlier one wins. */
  readonly budgetMs?: number;
  /** Overrides merged over the gate's policy for this call only. */
  readonly policy?: GatePolicy;
  /** Caller-supplied query class for thresholdByQueryClass / thresholdFn. */
  readonly queryClass?: string;
  /**
   * The query's embedding, for a cache with approximate reuse (createScoreCache's `approximate`):
   * from the model that cache names (`approximate.model`); used instead of its `embed`. Ignored by
   * a gate without such a cache.
   */
  readonly queryEmbedding?: Float32Array | readonly number[];
}

export interface GateItem<P extends Passage = Passage> {
  readonly id: string;
  readonly route: Route;
  /** The rule that decided the route (a rule name, or 'threshold', 'below-threshold', 'ranked-cut', 'below-ranked-cut', 'insufficient-context', 'max-kept', 'fallback-top', 'fallback-none', 'fail-closed', 'fail-open', 'early-stop', 'default'). */
  readonly rule: string;
  /** Why the pair is unscored (fail-closed / fail-open), if it is. */
  readonly reason: UnscoredReason | undefined;
  /** The scorer's probabilities, or null when unscored or skipped by early stop. */
  readonly signals: SignalProbabilities | null;
  readonly raw: Readonly<Record<string, number>> | undefined;
  readonly tier: string | undefined;
  /** The relevance the decision used (calibrated when configured); null when unavailable. */
  readonly relevance: number | null;
  /**
   * The pair's score as the rerank surfaces return it: a calibrated probability of relevance
   * (policy `scoreCalibration`) that sorts exactly as `included` is ordered; without a calibration,
   * the order value itself (the `ranking` signal when the result is ordered by it, else relevance).
   * null when the pair has no relevance (unscored, skipped, fail-open).
   */
  readonly score: number | null;
  /**
   * true: the score came from the cache (L1, Redis, a concurrent call); 'approximate': it is the
   * score a near-identical earlier query got for this passage (docs/cache.md, *Approximate query
   * cache*); false: scored for this call.
   */
  readonly cached: boolean | 'approximate';
  /** Position in the caller's input array. */
  readonly rank: number;
  /** The caller's passage object, untouched. */
  readonly passage: P;
}

export interface GateStats {
  readonly retrieved: number;
  /** Pairs with a valid score (fresh or cached). */
  readonly scored: number;
  /** Pairs answered from the cache, approximate reuses included. */
  readonly cacheHits: number;
  /** Of cacheHits: pairs answered with a near-identical earlier query's score (`cached: 'approximate'`). */
  readonly approximateHits: number;
  /** Pairs whose own decision was 'included' (before maxKept and fallback). */
  readonly passed: number;
  /** included.length */
  readonly returned: number;
  readonly conflicting: number;
  readonly excluded: number;
  readonly skippedByEarlyStop: number;
  /** Pairs without a usable score (fail closed or fail open), early-stop skips not counted. */
  readonly unscored: number;
  readonly failedOpen: number;
  readonly unscoredByReason: Readonly<Partial<Record<UnscoredReason, number>>>;
  /** Over included items with a relevance; null when there are none. */
  readonly meanRelevance: number | null;
  readonly minRelevance: number | null;
  readonly maxRelevance: number | null;
  readonly fallbackTriggered: boolean;
  readonly insufficientContext: boolean;
  /** The threshold used for this call (an operating point's: the relevance at its cut). */
  readonly threshold: number;
  /**
   * An operating point's ranked cut: the `ranking` value of the last pair kept, when every scored
   * pair carries `ranking` (the kept set is then a head of the returned order); null otherwise.
   */
  readonly rankingCut: number | null;
  /**
   * The operating point's list judgement for this call (its margin: ≥ 0 the list holds something
   * relevant, < 0 it does not and nothing passed, rule `insufficient-context`): the smaller of the
   * sufficiency verdict's margin and, for a point with `emptyBelow`, the cut's expected F_beta less
   * `emptyBelow`. null when the point has neither, in threshold mode, or when nothing was scored.
   */
  readonly sufficiency: number | null;
}

export interface GateTier {
  /** scorer.id */
  readonly scorer: string;
  /** The single tier label of all scored pairs, 'mixed', or 'none' when nothing was scored. */
  readonly name: string;
  /** Scored pairs per tier label; cache hits count under 'cache'. */
  readonly counts: Readonly<Record<string, number>>;
}

export interface GateTimings {
  readonly queueMs?: number;
  readonly scoringMs: number;
  readonly totalMs: number;
}

export interface GateResult<P extends Passage = Passage> {
  readonly query: string;
  readonly queryClass: string | undefined;
  /**
   * Ordered by the `ranking` signal desc when every item has one (the fast path with a ranking
   * blend), else by relevance desc; ties: input rank; fail-open items last. Which items are here
   * (threshold, operating point, maxKept, fallback) is decided on relevance either way.
   */
  readonly included: ReadonlyArray<GateItem<P>>;
  /** Ordered as `included` (by `ranking` when every item has it, else relevance; ties: input rank). */
  readonly conflicting: ReadonlyArray<GateItem<P>>;
  /** In input rank order. */
  readonly excluded: ReadonlyArray<GateItem<P>>;
  readonly stats: GateStats;
  readonly tier: GateTier;
  readonly timings: GateTimings;
  /** Scorer/cache failures of this call (messages), e.g. a wrong result count. */
  readonly errors: readonly string[];
}

/** Included items as they are decided; `result` settles with the full result once the call ends. */
export interface GateStream<P extends Passage = Passage> extends AsyncIterable<GateItem<P>> {
  readonly result: Promise<GateResult<P>>;
}

export interface RerouteOptions {
  readonly queryClass?: string;
}

export interface Gate {
  readonly scorer: Scorer;
  /** How a call that sets no policy decides: an operating point's name, or 'threshold' (an absolute threshold). */
  readonly mode: GateMode;
  /** The operating point behind `mode` (its beta, shift, floor); undefined in threshold mode. */
  readonly operatingPoint: OperatingPoint | undefined;
  filter<P extends Passage>(query: string, passages: readonly P[], options?: FilterOptions): Promise<GateResult<P>>;
  stream<P extends Passage>(query: string, passages: readonly P[], options?: FilterOptions): GateStream<P>;
  /** Re-decides a previous result under the gate's policy merged with `policy`; never calls the scorer. */
  reroute<P extends Passage>(previous: GateResult<P>, policy?: GatePolicy, options?: RerouteOptions): GateResult<P>;
}
