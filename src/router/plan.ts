/**
 * The router's planner, a pure function: from the routing mode, which pairs are still open after
 * the cache probe, the inline tier's relevance where known, the tiers' cost predictions and queue
 * state, and the time left, it decides which pairs go to which tier and which are answered below
 * the best tier (and why). No I/O, no clock, no state: the router executes the plan.
 */
import type { DegradeReason, RoutingMode } from './types.js';
import { largestFitting, orderByThresholdDistance } from './select.js';

/**
 * A pair's cache state after the probe: `miss` (nothing cached), `fallback` (the inline tier's
 * score is cached: it stands in for the inline computation, the pair may still go up a tier),
 * `final` (answered from a slow tier's cached score: never rescored).
 */
export type PairCacheState = 'miss' | 'fallback' | 'final';

/** What the planner needs to know about one tier. */
export interface PlanTier {
  readonly name: string;
  /** In-process fallback tier: never queued, never shed, always fits. */
  readonly inline: boolean;
  /** Pairs the router keeps outstanding on the tier at most. */
  readonly maxQueuedPairs: number;
  /** Pairs the router has outstanding on the tier now. */
  readonly outstandingPairs: number;
  /** The cost model: predicted ms until `pairs` pairs submitted now complete (non-decreasing). */
  readonly predictMs: (pairs: number) => number;
  /** Idle with stale evidence: may be sent work its prediction rejects (a probe). */
  readonly mayProbe: boolean;
}

export interface PlanInput {
  readonly mode: RoutingMode;
  /** Registered tiers, best (highest quality) first; an inline tier, if any, is last. */
  readonly tiers: readonly PlanTier[];
  /** The tier of `fixed` mode (a name in `tiers`). */
  readonly fixedTier: string;
  /** Cascade only: the tier the pairs nearest the threshold go to; default the best tier. */
  readonly cascadeTier?: string;
  /**
   * Cascade only: further stages below `cascadeTier`, in order (e.g. the embedding tier under a
   * cross-encoder): the pairs the one before could not take, nearest the threshold first, as many
   * as each fits. Default none: what the cascade tier cannot take keeps the inline score.
   */
  readonly cascadeStages?: readonly string[];
  /** Cache state per pair, in input order. */
  readonly cache: readonly PairCacheState[];
  /**
   * Cascade only: the inline tier's relevance per pair (NaN where unknown). In cascade mode the
   * router scores every open pair on the inline tier before planning, so this is known.
   */
  readonly relevance?: ArrayLike<number>;
  /** Cascade: the decision threshold the slow tier is spent around. */
  readonly threshold: number;
  /** When the router must answer (deadline − return margin), on the `now` clock; undefined: no limit. */
  readonly answerBy: number | undefined;
  readonly now: number;
  /** Share of the remaining time a prediction may fill. */
  readonly headroom: number;
}

/** Why the plan is what it is. */
export type PlanReason =
  /** Nothing left to score: every pair has a final cached answer. */
  | 'all-cached'
  /** `fixed` mode: every open pair on the fixed tier. */
  | 'fixed'
  /** The best tier is the inline one: nothing to decide. */
  | 'inline-only'
  /** The best tier takes every open pair. */
  | 'fits'
  /** Some or all pairs stay below the best tier: the prediction does not fit the time left. */
  | 'over-budget'
  /** Some or all pairs stay below the best tier: its queue bound is reached. */
  | 'queue-full'
  /**
   * The best tier's prediction does not fit, but it sits idle with stale evidence: it gets work
   * anyway (a probe) so its cost model can learn; the rest, if any, stays below.
   */
  | 'probe';

/** Work for one queued (non-inline) tier. */
export interface PlannedSubmission {
  readonly tier: string;
  /** Pair indices, in the order they are sent. */
  readonly indices: readonly number[];
  /**
   * The degrade label of this submission's answers when it differs from the plan's
   * `submissionDegraded`: 'shed' for a later cascade stage (its pairs were kept off the cascade tier).
   */
  readonly degraded?: DegradeReason;
}

export interface Plan {
  readonly reason: PlanReason;
  /** Slow-tier work. */
  readonly submissions: readonly PlannedSubmission[];
  /** Degrade label of pairs a submission answers: 'shed' when its tier is below the best. */
  readonly submissionDegraded: DegradeReason | undefined;
  /**
   * Pairs the inline tier must score now (budget/fixed mode when it is the chosen tier; in
   * cascade mode it has scored them before planning).
   */
  readonly inlineScore: readonly number[];
  /** Pairs answered from the inline tier's score (fresh or cached), with `inlineDegraded` as label. */
  readonly inlineAnswer: readonly number[];
  readonly inlineDegraded: DegradeReason | undefined;
  /**
   * Pairs kept off the best tier for lack of time or queue room (counted as shed, remembered for
   * background fill): answered by a lower tier.
   */
  readonly shed: readonly number[];
  /** The tier sent work only as a probe (its prediction said it would not fit). */
  readonly probe: string | undefined;
}

const EMPTY: readonly number[] = Object.freeze([]);

/** How many of `wanted` pairs a tier takes now, whether as a probe, and what limited it. */
interface Fit {
  readonly pairs: number;
  readonly probe: boolean;
  readonly limitedBy: 'queue-full' | 'over-budget' | undefined;
}

/**
 * How many of `wanted` pairs the tier is predicted to finish (and may queue) before answerBy.
 * When fewer than `probePairs` fit but the tier may probe and time is left, `probePairs` (capped
 * by the queue room) are allowed.
 */
function fitTier(tier: PlanTier, wanted: number, input: PlanInput, probePairs: number): Fit {
  if (tier.inline) return { pairs: wanted, probe: false, limitedBy: undefined };
  const room = Math.max(0, Math.min(wanted, tier.maxQueuedPairs - tier.outstandingPairs));
  const queueLimited = room < wanted ? 'queue-full' : undefined;
  if (input.answerBy === undefined) return { pairs: room, probe: false, limitedBy: queueLimited };
  const remaining = input.answerBy - input.now;
  const fitting = largestFitting(room, remaining * input.headroom, tier.predictMs);
  const probeSize = Math.min(room, probePairs);
  if (fitting < probeSize && remaining > 0 && tier.mayProbe)
    return {
      pairs: probeSize,
      probe: true,
      limitedBy: probeSize < wanted ? (queueLimited ?? 'over-budget') : undefined,
    };
  return { pairs: fitting, probe: false, limitedBy: fitting < room ? 'over-budget' : queueLimited };
}

/** Indices of the pairs without a final cached answer, in input order. */
export function openPairs(cache: readonly PairCacheState[]): number[] {
  const open: number[] = [];
  for (let i = 0; i < cache.length; i++) if (cache[i] !== 'final') open.push(i);
  return open;
}

function plan(fields: Partial<Plan> & Pick<Plan, 'reason'>): Plan {
  return {
    submissions: [],
    submissionDegraded: undefined,
    inlineScore: EMPTY,
    inlineAnswer: EMPTY,
    inlineDegraded: undefined,
    shed: EMPTY,
    probe: undefined,
    ...fields,
  };
}

function findTier(tiers: readonly PlanTier[], name: string): PlanTier {
  const tier = tiers.find((t) => t.name === name);
  if (tier === undefined) throw new RangeError(`plan: unknown tier ${JSON.stringify(name)}`);
  return tier;
}

/** The plan of one call. */
export function planRouting(input: PlanInput): Plan {
  const open = openPairs(input.cache);
  if (open.length === 0) return plan({ reason: 'all-cached' });
  const best = input.tiers[0];

  if (input.mode === 'fixed') {
    const tier = findTier(input.tiers, input.fixedTier);
    if (tier.inline) return plan({ reason: 'fixed', inlineScore: open, inlineAnswer: open });
    return plan({ reason: 'fixed', submissions: [{ tier: tier.name, indices: open }] });
  }

  if (input.mode === 'cascade') {
    const target = input.cascadeTier === undefined ? best : findTier(input.tiers, input.cascadeTier);
    if (target.inline) return plan({ reason: 'inline-only', inlineAnswer: open });
    const relevance = input.relevance ?? new Float64Array(input.cache.length).fill(Number.NaN);
    const order = orderByThresholdDistance(open, relevance, input.threshold);
    // A cascade probe is one pair: enough to refresh the model, cheap if the model was right.
    const f = fitTier(target, order.length, input, 1);
    const chosen = order.slice(0, f.pairs);
    const shed = order.slice(f.pairs);
    const submissions: PlannedSubmission[] = chosen.length > 0 ? [{ tier: target.name, indices: chosen }] : [];
    // Later stages take what the one before could not, nearest the threshold first (never probing:
    // the cascade tier's probe is the one the plan reports).
    let rest = shed;
    for (const name of input.cascadeStages ?? []) {
      if (rest.length === 0) break;
      const stage = findTier(input.tiers, name);
      if (stage.inline) continue;
      const fs = fitTier(stage, rest.length, input, 0);
      if (fs.pairs > 0) submissions.push({ tier: stage.name, indices: rest.slice(0, fs.pairs), degraded: 'shed' });
      rest = rest.slice(fs.pairs);
    }
    return plan({
      reason: f.probe ? 'probe' : (f.limitedBy ?? 'fits'),
      submissions,
      inlineAnswer: rest,
      inlineDegraded: rest.length > 0 ? 'shed' : undefined,
      shed,
      probe: f.probe ? target.name : undefined,
    });
  }

  // budget: the best tier predicted to take every open pair; the inline tier always fits.
  let chosen: PlanTier | undefined;
  let probe = false;
  let bestLimit: Fit['limitedBy'];
  for (const tier of input.tiers) {
    const f = fitTier(tier, open.length, input, open.length);
    if (tier === best) bestLimit = f.limitedBy;
    if (tier.inline || f.pairs === open.length) {
      chosen = tier;
      probe = f.probe;
      break;
    }
  }
  // Nothing fits and there is no inline tier: the lowest tier takes the work (no lower one exists).
  const lastResort = chosen === undefined;
  chosen ??= input.tiers[input.tiers.length - 1];
  const belowBest = chosen !== best;
  let reason: PlanReason;
  if (lastResort || belowBest) reason = bestLimit ?? 'over-budget';
  else if (best.inline) reason = 'inline-only';
  else reason = probe ? 'probe' : 'fits';
  const shed = belowBest ? open : EMPTY;
  const probeName = probe ? chosen.name : undefined;
  if (chosen.inline) {
    return plan({
      reason,
      inlineScore: open,
      inlineAnswer: open,
      inlineDegraded: belowBest ? 'shed' : undefined,
      shed,
      probe: probeName,
    });
  }
  return plan({
    reason,
    submissions: [{ tier: chosen.name, indices: open }],
    submissionDegraded: belowBest ? 'shed' : undefined,
    shed,
    probe: probeName,
  });
}
