/**
 * Drift and health figures of decided requests, and the alert rules over them. A DriftCounter
 * accumulates, per model, what the seeds' failure modes show in: the distribution of every signal
 * (fixed buckets over [0, 1]), the empty-answer and fallback rates, the share of pairs each rule
 * excluded, and the tier mix. Counting is a few array increments per pair (the request path pays
 * it); the server exports the counters to /metrics when scraped. `evaluateDriftAlerts` compares a
 * recent window with its trailing baseline: the same rules docs/decision-log.md gives in PromQL.
 */
import type { GateResult, Route } from '../gate/types.js';
import type { Passage } from '../types.js';

/** Upper bounds of the signal buckets (the last is 1: every probability falls in one). */
export const SIGNAL_BUCKETS: readonly number[] = Object.freeze([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1]);

export interface SignalHistogram {
  readonly count: number;
  readonly sum: number;
  /** Per bucket (not cumulative), SIGNAL_BUCKETS order. */
  readonly buckets: readonly number[];
}

export interface DriftSnapshot {
  readonly requests: number;
  /** Requests with nothing included. */
  readonly emptyAnswers: number;
  /** Requests where fewer than minKept passed (the fallback applied). */
  readonly fallbacks: number;
  readonly pairs: number;
  /** Pairs by route and deciding rule: `route` → rule → count. */
  readonly decided: Readonly<Record<Route, Readonly<Record<string, number>>>>;
  /** Scored pairs by tier label ('cache' for cache hits). */
  readonly tiers: Readonly<Record<string, number>>;
  readonly signals: Readonly<Record<string, SignalHistogram>>;
}

interface MutableHistogram {
  count: number;
  sum: number;
  buckets: number[];
}

function bucketOf(value: number): number {
  // Buckets are tenths: a direct index, clamped (values are probabilities in [0, 1]), corrected
  // where floating point puts a boundary value one bucket high (0.3 * 10 = 3.0000000000000004).
  let i = Math.max(0, Math.min(Math.ceil(value * 10) - 1, 9));
  if (i > 0 && value <= (SIGNAL_BUCKETS[i - 1] as number)) i--;
  return i;
}

export class DriftCounter {
  private requests = 0;
  private emptyAnswers = 0;
  private fallbacks = 0;
  private pairs = 0;
  private readonly decided: Record<Route, Map<string, number>> = {
    included: new Map(),
    conflicting: new Map(),
    excluded: new Map(),
  };
  private readonly tiers = new Map<string, number>();
  private readonly signals = new Map<string, MutableHistogram>();

  observe(result: GateResult<Passage>): void {
    this.requests++;
    if (result.included.length === 0) this.emptyAnswers++;
    if (result.stats.fallbackTriggered) this.fallbacks++;
    for (const [tier, n] of Object.entries(result.tier.counts)) this.tiers.set(tier, (this.tiers.get(tier) ?? 0) + n);
    this.observeItems(result.included);
    this.observeItems(result.conflicting);
    this.observeItems(result.excluded);
  }

  private observeItems(items: GateResult<Passage>['included']): void {
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      this.pairs++;
      const byRule = this.decided[item.route];
      byRule.set(item.rule, (byRule.get(item.rule) ?? 0) + 1);
      const signals = item.signals;
      if (signals === null) continue;
      for (const name in signals) {
        const v = signals[name];
        if (typeof v !== 'number' || !(v >= 0 && v <= 1)) continue;
        let h = this.signals.get(name);
        if (h === undefined) {
          h = { count: 0, sum: 0, buckets: new Array(SIGNAL_BUCKETS.length).fill(0) };
          this.signals.set(name, h);
        }
        h.count++;
        h.sum += v;
        h.buckets[bucketOf(v)]++;
      }
    }
  }

  snapshot(): DriftSnapshot {
    const signals: Record<string, SignalHistogram> = {};
    for (const [name, h] of this.signals) signals[name] = { count: h.count, sum: h.sum, buckets: [...h.buckets] };
    return {
      requests: this.requests,
      emptyAnswers: this.emptyAnswers,
      fallbacks: this.fallbacks,
      pairs: this.pairs,
      decided: {
        included: Object.fromEntries(this.decided.included),
        conflicting: Object.fromEntries(this.decided.conflicting),
        excluded: Object.fromEntries(this.decided.excluded),
      },
      tiers: Object.fromEntries(this.tiers),
      signals,
    };
  }
}

/** The counts of `later` minus those of `earlier` (two snapshots of one counter): a window. */
export function windowBetween(earlier: DriftSnapshot, later: DriftSnapshot): DriftSnapshot {
  const sub = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): Record<string, number> => {
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(a)) out[k] = v - (b[k] ?? 0);
    return out;
  };
  const signals: Record<string, SignalHistogram> = {};
  for (const [name, h] of Object.entries(later.signals)) {
    const e = earlier.signals[name];
    signals[name] = {
      count: h.count - (e?.count ?? 0),
      sum: h.sum - (e?.sum ?? 0),
      buckets: h.buckets.map((n, i) => n - (e?.buckets[i] ?? 0)),
    };
  }
  return {
    requests: later.requests - earlier.requests,
    emptyAnswers: later.emptyAnswers - earlier.emptyAnswers,
    fallbacks: later.fallbacks - earlier.fallbacks,
    pairs: later.pairs - earlier.pairs,
    decided: {
      included: sub(later.decided.included, earlier.decided.included),
      conflicting: sub(later.decided.conflicting, earlier.decided.conflicting),
      excluded: sub(later.decided.excluded, earlier.decided.excluded),
    },
    tiers: sub(later.tiers, earlier.tiers),
    signals,
  };
}

export type DriftAlertName =
  | 'excluded-share'
  | 'empty-answers'
  | 'fallback-rate'
  | 'rule-excluded-share'
  | 'tier-mix'
  | 'signal-mean';

export interface DriftTolerances {
  /** Absolute change of the share of pairs excluded. Default 0.2. */
  readonly excludedShare: number;
  /** Absolute change of the share of requests with nothing included. Default 0.1. */
  readonly emptyAnswers: number;
  /** Absolute change of the share of requests where the fallback applied. Default 0.1. */
  readonly fallbackRate: number;
  /** Absolute change of the share of pairs one rule excluded. Default 0.2. */
  readonly ruleExcludedShare: number;
  /** Absolute change of one tier's share of scored pairs. Default 0.25. */
  readonly tierShare: number;
  /** Absolute change of a signal's mean. Default 0.1. */
  readonly signalMean: number;
  /** Fewer requests than this in either window: no alert (too little to tell). Default 50. */
  readonly minRequests: number;
}

export const DEFAULT_DRIFT_TOLERANCES: DriftTolerances = Object.freeze({
  excludedShare: 0.2,
  emptyAnswers: 0.1,
  fallbackRate: 0.1,
  ruleExcludedShare: 0.2,
  tierShare: 0.25,
  signalMean: 0.1,
  minRequests: 50,
});

export interface DriftAlert {
  readonly alert: DriftAlertName;
  /** The rule, tier or signal the alert is about; undefined for request-level ones. */
  readonly subject: string | undefined;
  readonly baseline: number;
  readonly current: number;
}

function share(part: number, whole: number): number {
  return whole === 0 ? 0 : part / whole;
}

function sumValues(values: Readonly<Record<string, number>>): number {
  let s = 0;
  for (const v of Object.values(values)) s += v;
  return s;
}

/**
 * The alerts that fire when `current` (a recent window) moved from `baseline` (its trailing
 * window) by more than the tolerances. Empty when either window has fewer than minRequests.
 */
export function evaluateDriftAlerts(
  baseline: DriftSnapshot,
  current: DriftSnapshot,
  tolerances: Partial<DriftTolerances> = {},
): DriftAlert[] {
  const t = { ...DEFAULT_DRIFT_TOLERANCES, ...tolerances };
  if (baseline.requests < t.minRequests || current.requests < t.minRequests) return [];
  const alerts: DriftAlert[] = [];
  const check = (alert: DriftAlertName, subject: string | undefined, b: number, c: number, tolerance: number) => {
    if (Math.abs(c - b) > tolerance) alerts.push({ alert, subject, baseline: b, current: c });
  };
  check(
    'excluded-share',
    undefined,
    share(sumValues(baseline.decided.excluded), baseline.pairs),
    share(sumValues(current.decided.excluded), current.pairs),
    t.excludedShare,
  );
  check(
    'empty-answers',
    undefined,
    share(baseline.emptyAnswers, baseline.requests),
    share(current.emptyAnswers, current.requests),
    t.emptyAnswers,
  );
  check(
    'fallback-rate',
    undefined,
    share(baseline.fallbacks, baseline.requests),
    share(current.fallbacks, current.requests),
    t.fallbackRate,
  );
  const rules = new Set([...Object.keys(baseline.decided.excluded), ...Object.keys(current.decided.excluded)]);
  for (const rule of [...rules].sort())
    check(
      'rule-excluded-share',
      rule,
      share(baseline.decided.excluded[rule] ?? 0, baseline.pairs),
      share(current.decided.excluded[rule] ?? 0, current.pairs),
      t.ruleExcludedShare,
    );
  const tierTotalB = sumValues(baseline.tiers);
  const tierTotalC = sumValues(current.tiers);
  const tiers = new Set([...Object.keys(baseline.tiers), ...Object.keys(current.tiers)]);
  for (const tier of [...tiers].sort())
    check(
      'tier-mix',
      tier,
      share(baseline.tiers[tier] ?? 0, tierTotalB),
      share(current.tiers[tier] ?? 0, tierTotalC),
      t.tierShare,
    );
  for (const name of Object.keys(current.signals).sort()) {
    const b = baseline.signals[name];
    const c = current.signals[name];
    if (b === undefined || b.count === 0 || c.count === 0) continue;
    check('signal-mean', name, b.sum / b.count, c.sum / c.count, t.signalMean);
  }
  return alerts;
}
