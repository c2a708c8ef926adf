/**
 * The decision layer: pure functions of stored signals. `decidePair` routes one pair on its own;
 * `finalizeDecisions` applies the set-level policy (minKept fallback, maxKept) and assembles the
 * result. Neither calls a scorer, which is what lets `reroute` change policy without rescoring.
 */
import type { Passage, SignalProbabilities } from '../types.js';
import { plattProbability } from '../calibration/platt.js';
import { orderValue, ordersByRanking, rankingOf } from './order.js';
import type { CompiledPolicy } from './policy.js';
import {
  calibratedScore,
  listFeatures,
  type ScoreCalibration,
  scoreCalibrationOffset,
} from '../operating-points/list-verdict.js';
import { evaluateRules, NO_RULE_MATCHED, RULE_MISSING_SIGNAL } from './policies/rules.js';
import type { GateItem, GateResult, GateStats, GateTier, GateTimings, Route, UnscoredReason } from './types.js';

/** The rule of pairs excluded because the sufficiency verdict judged the list to hold nothing relevant. */
export const INSUFFICIENT_CONTEXT_RULE = 'insufficient-context';

/** The writable form of GateItem used while a call is being decided. */
export interface WorkingItem<P extends Passage = Passage> {
  id: string;
  route: Route;
  rule: string;
  reason: UnscoredReason | undefined;
  signals: SignalProbabilities | null;
  raw: Readonly<Record<string, number>> | undefined;
  tier: string | undefined;
  relevance: number | null;
  score: number | null;
  cached: boolean | 'approximate';
  rank: number;
  passage: P;
}

export function newWorkingItem<P extends Passage>(passage: P, rank: number): WorkingItem<P> {
  // One literal shape for every item keeps property access monomorphic.
  return {
    id: passage.id,
    route: 'excluded',
    rule: 'pending',
    reason: undefined,
    signals: null,
    raw: undefined,
    tier: undefined,
    relevance: null,
    score: null,
    cached: false,
    rank,
    passage,
  };
}

/** Copies an item of a previous result for re-deciding (signals and raw are shared, read-only). */
export function reopenItem<P extends Passage>(item: GateItem<P>): WorkingItem<P> {
  const scoringFailed = item.signals === null;
  return {
    id: item.id,
    route: 'excluded',
    rule: scoringFailed && item.reason === undefined ? 'early-stop' : 'pending',
    // Scoring failures stay (nothing can be re-scored); decision failures are recomputed.
    reason: scoringFailed ? item.reason : undefined,
    signals: item.signals,
    raw: item.raw,
    tier: item.tier,
    relevance: null,
    score: null,
    cached: item.cached,
    rank: item.rank,
    passage: item.passage,
  };
}

/** Per-call decision state: counts and the fallback candidates gathered while deciding. */
export class DecisionState {
  passed = 0;
  /** Excluded pairs that `fallback: 'top'` may promote; only gathered when minKept > 0. */
  readonly fallbackCandidates: WorkingItem[] | undefined;
  constructor(
    readonly policy: CompiledPolicy,
    readonly threshold: number,
    /** An operating point's ranked cut (src/gate/policies/operating-points.ts listCut): pairs pass on `ranking >= rankingCut`. */
    readonly rankingCut: number | undefined = undefined,
    /** The operating point's sufficiency margin for this call (listCut); undefined without a verdict. */
    readonly sufficiency: number | undefined = undefined,
  ) {
    this.fallbackCandidates = policy.minKept > 0 && policy.fallback === 'top' ? [] : undefined;
  }
}

function failPair(item: WorkingItem, reason: UnscoredReason, failOpen: boolean): void {
  item.reason = reason;
  item.route = failOpen ? 'included' : 'excluded';
  item.rule = failOpen ? 'fail-open' : 'fail-closed';
}

/**
 * Marks a pair as unscored for `reason` (scorer error, timeout, ...). Routing happens in decidePair.
 */
export function markUnscored(item: WorkingItem, reason: UnscoredReason): void {
  item.signals = null;
  item.raw = undefined;
  item.tier = undefined;
  item.reason = reason;
}

function relevanceOf(item: WorkingItem, policy: CompiledPolicy): number | undefined {
  const names = policy.relevanceSignals;
  const calibration = policy.calibration;
  if (calibration === undefined) {
    const signals = item.signals as SignalProbabilities;
    for (let i = 0; i < names.length; i++) {
      const v = signals[names[i]];
      if (v !== undefined) return v;
    }
    return undefined;
  }
  const raw = item.raw;
  if (raw === undefined) return undefined;
  for (let i = 0; i < names.length; i++) {
    const v = raw[names[i]];
    if (v !== undefined) return plattProbability(calibration, v);
  }
  return undefined;
}

/**
 * Routes one pair from its stored signals. Returns true when the pair itself passed (counts
 * toward minKept and the early-stop pass rate); fail-open inclusions do not count as passes.
 */
export function decidePair(item: WorkingItem, state: DecisionState): boolean {
  const policy = state.policy;
  if (item.signals === null) {
    if (item.reason === undefined) {
      item.route = 'excluded';
      item.rule = 'early-stop';
    } else {
      failPair(item, item.reason, policy.failOpen);
    }
    return false;
  }
  item.reason = undefined;
  const relevance = relevanceOf(item, policy);
  if (relevance === undefined) {
    item.relevance = null;
    failPair(item, 'missing-signal', policy.failOpen);
    return false;
  }
  item.relevance = relevance;
  if (state.sufficiency !== undefined && !(state.sufficiency >= 0)) {
    // The list was judged to hold nothing relevant: no pair passes, whatever its own value. The
    // explicit fallback (minKept) may still promote pairs, as it does below a floor.
    item.route = 'excluded';
    item.rule = INSUFFICIENT_CONTEXT_RULE;
    state.fallbackCandidates?.push(item);
    return false;
  }
  const rules = policy.rules;
  if (rules === undefined) {
    const cut = state.rankingCut;
    // listCut sets a ranked cut only when every pair with a relevance has a ranking; a pair
    // without one (not possible then) is decided on relevance rather than dropped.
    const ranking = cut === undefined ? undefined : rankingOf(item);
    const passes = ranking === undefined ? relevance >= state.threshold : ranking >= (cut as number);
    if (passes) {
      item.route = 'included';
      item.rule = ranking === undefined ? 'threshold' : 'ranked-cut';
      state.passed++;
      return true;
    }
    item.route = 'excluded';
    item.rule = ranking === undefined ? 'below-threshold' : 'below-ranked-cut';
    state.fallbackCandidates?.push(item);
    return false;
  }
  const matched = evaluateRules(rules, item.signals, state.threshold, relevance);
  let route: Route;
  if (matched >= 0) {
    route = rules.routes[matched];
    item.rule = rules.names[matched];
    if (route === 'excluded' && rules.fallbackEligible[matched]) state.fallbackCandidates?.push(item);
  } else if (matched === NO_RULE_MATCHED) {
    route = policy.defaultRoute;
    item.rule = 'default';
    if (route === 'excluded') state.fallbackCandidates?.push(item);
  } else {
    failPair(item, matched === RULE_MISSING_SIGNAL ? 'missing-signal' : 'rule-error', policy.failOpen);
    return false;
  }
  item.route = route;
  if (route === 'included') {
    state.passed++;
    return true;
  }
  return false;
}

function sortKey(item: WorkingItem): number {
  return item.relevance === null || item.rule === 'fail-open' ? Number.NEGATIVE_INFINITY : item.relevance;
}

function byRelevanceDesc(a: WorkingItem, b: WorkingItem): number {
  const ka = sortKey(a);
  const kb = sortKey(b);
  return ka > kb ? -1 : ka < kb ? 1 : a.rank - b.rank;
}

/** Sorts by `compare`; insertion sort for the usual small k (no allocation), Array.sort above 32. */
function sortItems(items: WorkingItem[], compare: (a: WorkingItem, b: WorkingItem) => number): void {
  const n = items.length;
  if (n > 32) {
    items.sort(compare);
    return;
  }
  for (let i = 1; i < n; i++) {
    const item = items[i];
    let j = i - 1;
    while (j >= 0 && compare(items[j], item) > 0) {
      items[j + 1] = items[j];
      j--;
    }
    items[j + 1] = item;
  }
}

/** Relevance desc, ties by input rank, fail-open last. */
export function sortByRelevance(items: WorkingItem[]): void {
  sortItems(items, byRelevanceDesc);
}

/** Ranking desc, ties by input rank, fail-open last. */
function byRankingDesc(a: WorkingItem, b: WorkingItem): number {
  const ka = orderValue(a, true) ?? Number.NEGATIVE_INFINITY;
  const kb = orderValue(b, true) ?? Number.NEGATIVE_INFINITY;
  return ka > kb ? -1 : ka < kb ? 1 : a.rank - b.rank;
}

/**
 * Orders the returned groups (already relevance-sorted): by the `ranking` signal when every item of
 * both groups with a relevance has one (a scorer whose best order is not its relevance order, e.g.
 * the fast path's BM25 blend), ties by input rank, fail-open items last; otherwise both stay in
 * relevance order (src/gate/order.ts: a router that degraded some pairs to a tier without `ranking`
 * must not mix two scales). Keep/drop has been decided before: this changes the order only.
 */
export function orderForReturn(included: WorkingItem[], conflicting: WorkingItem[]): void {
  if (!ordersByRanking([included, conflicting])) return;
  sortItems(included, byRankingDesc);
  sortItems(conflicting, byRankingDesc);
}

const EMPTY_ERRORS: readonly string[] = Object.freeze([]);

/**
 * Sets every decided item's `score`: the order value (ranking when every item with a relevance has
 * one, else relevance), through the calibration when there is one. The calibration's list part is
 * computed once from the same stored values, so the score is a pure function of stored signals.
 */
function assignScores(items: WorkingItem[], calibration: ScoreCalibration | undefined): void {
  const byRanking = ordersByRanking([items]);
  if (calibration === undefined) {
    for (let i = 0; i < items.length; i++) items[i].score = orderValue(items[i], byRanking);
    return;
  }
  const relevances: number[] = [];
  const ranking: number[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const value = orderValue(item, byRanking);
    if (value === null) continue;
    relevances.push(item.relevance as number);
    if (byRanking) ranking.push(value);
  }
  const features = listFeatures(relevances, byRanking ? ranking : undefined);
  if (features === undefined) return;
  const offset = scoreCalibrationOffset(calibration, features);
  for (let i = 0; i < items.length; i++) {
    const value = orderValue(items[i], byRanking);
    items[i].score = value === null ? null : calibratedScore(calibration, offset, value);
  }
}

export interface FinalizeInput<P extends Passage> {
  readonly query: string;
  readonly queryClass: string | undefined;
  readonly items: WorkingItem<P>[];
  readonly state: DecisionState;
  readonly scorerId: string;
  readonly defaultTier: string;
  readonly timings: GateTimings;
  readonly errors: string[] | undefined;
}

/** Applies minKept/fallback and maxKept (by relevance), orders the groups (orderForReturn), and computes stats. */
export function finalizeDecisions<P extends Passage>(input: FinalizeInput<P>): GateResult<P> {
  const { items, state } = input;
  const policy = state.policy;
  let included: WorkingItem<P>[] = [];
  const conflicting: WorkingItem<P>[] = [];
  let excluded: WorkingItem<P>[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item.route === 'included') included.push(item);
    else if (item.route === 'conflicting') conflicting.push(item);
    else excluded.push(item);
  }

  let excludedChanged = false;
  let fallbackTriggered = false;
  if (state.passed < policy.minKept) {
    fallbackTriggered = true;
    if (policy.fallback === 'top') {
      const candidates = state.fallbackCandidates as WorkingItem<P>[];
      sortByRelevance(candidates);
      const wanted = Math.min(policy.minKept - state.passed, candidates.length);
      for (let i = 0; i < wanted; i++) {
        candidates[i].route = 'included';
        candidates[i].rule = 'fallback-top';
        included.push(candidates[i]);
      }
      excludedChanged = wanted > 0;
    } else {
      for (let i = 0; i < included.length; i++) {
        included[i].route = 'excluded';
        included[i].rule = 'fallback-none';
      }
      excludedChanged = included.length > 0;
      included = [];
    }
  }
  // maxKept trims the tail of the order the pairs passed in: relevance, or ranking for a ranked cut
  // (so the kept set stays a head of the returned order).
  if (state.rankingCut !== undefined && ordersByRanking([included])) sortItems(included, byRankingDesc);
  else sortByRelevance(included);
  if (included.length > policy.maxKept) {
    for (let i = policy.maxKept; i < included.length; i++) {
      included[i].route = 'excluded';
      included[i].rule = 'max-kept';
    }
    included.length = policy.maxKept;
    excludedChanged = true;
  }
  if (excludedChanged) {
    excluded = [];
    for (let i = 0; i < items.length; i++) if (items[i].route === 'excluded') excluded.push(items[i]);
  }
  if (conflicting.length > 1) sortByRelevance(conflicting);
  // maxKept and the fallback chose by relevance; the returned order follows the ranking signal.
  orderForReturn(included, conflicting);
  assignScores(items, policy.scoreCalibration);

  let sum = 0;
  let withRelevance = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let failedOpen = 0;
  for (let i = 0; i < included.length; i++) {
    const item = included[i];
    if (item.rule === 'fail-open') {
      failedOpen++;
      continue;
    }
    const r = item.relevance as number;
    sum += r;
    withRelevance++;
    if (r < min) min = r;
    if (r > max) max = r;
  }
  const mean = withRelevance === 0 ? null : sum / withRelevance;
  for (let i = 0; i < excluded.length; i++) if (excluded[i].rule === 'fail-open') failedOpen++;

  let scored = 0;
  let cacheHits = 0;
  let approximateHits = 0;
  let unscored = 0;
  let skipped = 0;
  const unscoredByReason: Partial<Record<UnscoredReason, number>> = {};
  const tierCounts: Record<string, number> = {};
  let tierName: string | undefined;
  let tiers = 0;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item.cached) {
      cacheHits++;
      if (item.cached === 'approximate') approximateHits++;
    }
    if (item.reason !== undefined) {
      unscored++;
      unscoredByReason[item.reason] = (unscoredByReason[item.reason] ?? 0) + 1;
      continue;
    }
    if (item.signals === null) {
      skipped++;
      continue;
    }
    scored++;
    const label = item.cached ? 'cache' : (item.tier ?? input.defaultTier);
    const c = tierCounts[label];
    if (c === undefined) {
      tierCounts[label] = 1;
      tierName = tiers === 0 ? label : 'mixed';
      tiers++;
    } else tierCounts[label] = c + 1;
  }

  const stats: GateStats = {
    retrieved: items.length,
    scored,
    cacheHits,
    approximateHits,
    passed: state.passed,
    returned: included.length,
    conflicting: conflicting.length,
    excluded: excluded.length,
    skippedByEarlyStop: skipped,
    unscored,
    failedOpen,
    unscoredByReason,
    meanRelevance: mean,
    minRelevance: withRelevance === 0 ? null : min,
    maxRelevance: withRelevance === 0 ? null : max,
    fallbackTriggered,
    insufficientContext:
      withRelevance === 0 ||
      (mean as number) < policy.insufficientBelow ||
      (state.sufficiency !== undefined && !(state.sufficiency >= 0)),
    threshold: state.threshold,
    rankingCut: state.rankingCut ?? null,
    sufficiency: state.sufficiency ?? null,
  };
  const tier: GateTier = { scorer: input.scorerId, name: tierName ?? 'none', counts: tierCounts };
  return {
    query: input.query,
    queryClass: input.queryClass,
    included,
    conflicting,
    excluded,
    stats,
    tier,
    timings: input.timings,
    errors: input.errors ?? EMPTY_ERRORS,
  };
}
