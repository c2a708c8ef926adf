/**
 * Operating points: keep/drop decisions relative to the request's own score list, so they transfer
 * to collections the scorer never saw (an absolute threshold tuned on one corpus does not).
 *
 * The decision is the cut of the list (by relevance, descending) that maximises the EXPECTED F_beta
 * of the kept set, the relevances read as probabilities after a logit shift:
 *   q_i = σ(logit(p_i) + shift),  S = Σ q_i,  E[F_beta](k) ≈ (1 + β²) Σ_{i ≤ k} q_(i) / (k + β² S).
 * The cut adapts to the list: a list with many likely-relevant passages keeps many, a list with one
 * clear winner keeps one. β < 1 favours precision, β > 1 recall. The cut keeps at least the best
 * pair unless `floor` (an absolute relevance floor) removes it; then nothing passes and the policy's
 * explicit fallback (minKept + fallback, insufficientContext) applies.
 *
 * The cut's LENGTH comes from relevance; which pairs fill it comes from the order the gate returns.
 * When every scored pair carries the `ranking` signal (the fast path's BM25 blend), the kept set is
 * the first k of the ranking order, k = the number of pairs at or above the relevance cut: the kept
 * set is then a head of the returned order (a results page cuts the list it shows), and
 * leave-one-collection-out it kept better sets than the relevance head (research/loco/NOTES.md, "The ranked
 * cut"). Without `ranking` the kept set is the relevance head itself.
 *
 * The result is one threshold per call (the relevance at the cut) and, for the ranked cut, one
 * ranking value (the k-th largest; tied pairs are kept together), so the per-pair decision stays a
 * comparison of a stored signal with a per-call value and a stored result can be re-decided from
 * its signals alone (reroute).
 */
import { plattProbability, type PlattParameters } from '../../calibration/platt.js';
import type { SignalProbabilities } from '../../types.js';
import { rankingOf } from '../order.js';
import { listFeatures, type ScoreCalibration, type Sufficiency, sufficiencyMargin } from './list-verdict.js';

export type OperatingPointName = 'precise' | 'balanced' | 'related';

export const OPERATING_POINT_NAMES: readonly OperatingPointName[] = Object.freeze(['precise', 'balanced', 'related']);

export interface OperatingPoint {
  /** The F_beta the cut maximises (> 0): < 1 favours precision, > 1 recall. */
  readonly beta: number;
  /** Added to logit(relevance) before the expected-F computation (finite; 0 = the scorer's probabilities as they are). */
  readonly shift: number;
  /** Pairs with relevance below this never pass (absolute floor in [0, 1]); 0 = no floor. */
  readonly floor: number;
  /**
   * The list-level verdict (src/gate/policies/list-verdict.ts): when the scored list is judged to
   * hold nothing relevant, the point keeps nothing (rule `insufficient-context`). Absent: every
   * list is judged sufficient (the cut alone decides).
   */
  readonly sufficiency?: Sufficiency;
}

export type OperatingPoints = Readonly<Record<OperatingPointName, OperatingPoint>>;

const SHIPPED_LEXICAL_V1_VERDICT_WEIGHTS = Object.freeze({
  maxRelevance: 0.0847127751867073,
  top3Relevance: 0.6458422993467922,
  maxRanking: 2.418362665980578,
  top3Ranking: 2.909879148328503,
});

/** The shipped fast-path model's points: models/fastpath-lexical/operating-points.json (a test keeps them equal). */
const SHIPPED_LEXICAL_V1_POINTS: OperatingPoints = Object.freeze({
  precise: Object.freeze({
    beta: 2,
    shift: -1.75,
    floor: 0.075,
    sufficiency: Object.freeze({ weights: SHIPPED_LEXICAL_V1_VERDICT_WEIGHTS, bias: 1.2526548099906933 }),
  }),
  balanced: Object.freeze({
    beta: 3,
    shift: -0.75,
    floor: 0.05,
    sufficiency: Object.freeze({ weights: SHIPPED_LEXICAL_V1_VERDICT_WEIGHTS, bias: 1.6193671212459895 }),
  }),
  related: Object.freeze({
    beta: 4,
    shift: -1,
    floor: 0.05,
    sufficiency: Object.freeze({ weights: SHIPPED_LEXICAL_V1_VERDICT_WEIGHTS, bias: 2.0591392078701896 }),
  }),
});

/**
 * Operating points of known models, keyed by model id (the scorer id before `@`: the model files,
 * whatever corpus statistics they run with).
 */
export const MODEL_OPERATING_POINTS: Readonly<Record<string, OperatingPoints>> = Object.freeze({
  // models/fastpath-lexical (LambdaMART, 348 trees, rankingBlend λ = 15): `relevance-gate fit-points`
  // over its five training collections' validation + test queries (BM25 top 20), each corpus also
  // scored with the other collections' queries (lists that hold nothing relevant) for the verdict.
  'fastpath/lexical-v1/0635ad06af598692b4b9': SHIPPED_LEXICAL_V1_POINTS,
});

/** The model part of a scorer id (`fastpath/lexical-v1/<hash>@stats/<hash>` → `fastpath/lexical-v1/<hash>`). */
export function modelIdOf(scorerId: string): string {
  const at = scorerId.indexOf('@');
  return at < 0 ? scorerId : scorerId.slice(0, at);
}

/** The operating points a scorer declares (by its model id), or undefined. */
export function operatingPointsFor(scorerId: string): OperatingPoints | undefined {
  const id = modelIdOf(scorerId);
  return Object.hasOwn(MODEL_OPERATING_POINTS, id) ? MODEL_OPERATING_POINTS[id] : undefined;
}

const EPS = 1e-9;

function logit(p: number): number {
  const c = Math.min(Math.max(p, EPS), 1 - EPS);
  return Math.log(c / (1 - c));
}

/**
 * The threshold of one call: the relevance at the expected-F_beta-optimal cut of `relevances`
 * (ties: the shortest cut). Returns `point.floor` when no relevance reaches the floor (nothing
 * passes), and 1 when the list is empty. Pure; `relevances` is not modified.
 */
export function operatingPointThreshold(point: OperatingPoint, relevances: ArrayLike<number>): number {
  const n = relevances.length;
  const sorted = new Float64Array(n);
  for (let i = 0; i < n; i++) sorted[i] = relevances[i]!;
  sorted.sort();
  sorted.reverse();
  const b2 = point.beta * point.beta;
  const q = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = 1 / (1 + Math.exp(-(logit(sorted[i]!) + point.shift)));
    q[i] = v;
    total += v;
  }
  let best = -1;
  let bestValue = Number.NEGATIVE_INFINITY;
  let cum = 0;
  for (let k = 0; k < n; k++) {
    if (sorted[k]! < point.floor) break;
    cum += q[k]!;
    const value = ((1 + b2) * cum) / (k + 1 + b2 * total);
    if (value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  // Nothing reaches the floor (every relevance is below it), or an empty list.
  if (best < 0) return n === 0 ? 1 : point.floor;
  return sorted[best]!;
}

/** What listThreshold reads of a compiled policy. */
export interface ListThresholdPolicy {
  readonly operatingPoint: OperatingPoint | undefined;
  readonly relevanceSignals: readonly string[];
  readonly calibration: PlattParameters | undefined;
  /** Routing rules, when the policy has them (they read relevance against the threshold: no ranked cut). */
  readonly rules?: unknown;
}

/** What listThreshold reads of a scored pair (a gate item): its stored signals. */
export interface StoredSignals {
  readonly signals: SignalProbabilities | null;
  readonly raw: Readonly<Record<string, number>> | undefined;
}

/** The relevance the decision reads from stored signals (as decidePair does), or undefined. */
function storedRelevance(item: StoredSignals, policy: ListThresholdPolicy): number | undefined {
  const names = policy.relevanceSignals;
  if (item.signals === null) return undefined;
  if (policy.calibration === undefined) {
    for (let i = 0; i < names.length; i++) {
      const v = item.signals[names[i]!];
      if (v !== undefined) return v;
    }
    return undefined;
  }
  const raw = item.raw;
  if (raw === undefined) return undefined;
  for (let i = 0; i < names.length; i++) {
    const v = raw[names[i]!];
    if (v !== undefined) return plattProbability(policy.calibration, v);
  }
  return undefined;
}

/**
 * The ranked cut's value: the k-th largest of `ranking` (k = the pairs at or above `threshold` in
 * `relevances`, parallel arrays), so `ranking >= value` keeps the first k of the ranking order
 * (more only on ties). undefined when nothing reaches the threshold (nothing passes either way).
 */
export function rankedCutValue(
  threshold: number,
  relevances: ArrayLike<number>,
  ranking: ArrayLike<number>,
): number | undefined {
  const n = relevances.length;
  let k = 0;
  for (let i = 0; i < n; i++) if (relevances[i]! >= threshold) k++;
  if (k === 0) return undefined;
  const sorted = Float64Array.from({ length: n }, (_, i) => ranking[i]!);
  sorted.sort();
  return sorted[n - k]!;
}

/** The per-call values an operating point decides with (see the module comment). */
export interface ListCut {
  /** Relevance at the expected-F cut (`stats.threshold`). */
  readonly threshold: number;
  /** The ranking value at the ranked cut (`stats.rankingCut`); undefined: decided on relevance. */
  readonly rankingCut: number | undefined;
  /** The sufficiency verdict's margin (`stats.sufficiency`); undefined without a verdict or scored pair. */
  readonly sufficiency: number | undefined;
  /** False when the verdict judged the list to hold nothing relevant: nothing passes. */
  readonly sufficient: boolean;
}

/**
 * The cut of a call in operating-point mode, from the stored signals of its pairs (pairs without a
 * relevance are left out); `{ threshold: fallback }` when the policy has no operating point. The
 * ranked cut applies when every pair with a relevance has a valid `ranking` and the policy routes
 * by threshold (no rules: rules compare relevance with the threshold themselves). A pure function
 * of stored signals, so `reroute` re-makes the same decision without rescoring.
 */
export function listCut(
  policy: ListThresholdPolicy,
  items: ReadonlyArray<StoredSignals | undefined>,
  fallback: number,
): ListCut {
  const point = policy.operatingPoint;
  if (point === undefined)
    return { threshold: fallback, rankingCut: undefined, sufficiency: undefined, sufficient: true };
  const { relevances, ranking } = storedLists(policy, items);
  const threshold = operatingPointThreshold(point, relevances);
  const verdict = point.sufficiency;
  const features = verdict === undefined ? undefined : listFeatures(relevances, ranking);
  const sufficiency = features === undefined ? undefined : sufficiencyMargin(verdict as Sufficiency, features);
  const sufficient = sufficiency === undefined || sufficiency >= 0;
  const ranked = policy.rules === undefined && relevances.length > 0;
  return {
    threshold,
    rankingCut: ranked && ranking !== undefined ? rankedCutValue(threshold, relevances, ranking) : undefined,
    sufficiency,
    sufficient,
  };
}

/**
 * The stored relevances of a call's scored pairs (pairs without one left out) and, when every one
 * of them has a valid `ranking`, their rankings (parallel); ranking undefined otherwise.
 */
export function storedLists(
  policy: ListThresholdPolicy,
  items: ReadonlyArray<StoredSignals | undefined>,
): { readonly relevances: number[]; readonly ranking: number[] | undefined } {
  const relevances: number[] = [];
  const ranking: number[] = [];
  let ranked = true;
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (item === undefined) continue;
    const r = storedRelevance(item, policy);
    if (r === undefined || !(r >= 0 && r <= 1)) continue;
    relevances.push(r);
    if (!ranked) continue;
    const z = rankingOf(item);
    if (z === undefined) ranked = false;
    else ranking.push(z);
  }
  return { relevances, ranking: ranked ? ranking : undefined };
}

/**
 * Score calibrations of known models, keyed by model id like MODEL_OPERATING_POINTS: what the rerank
 * surfaces return as a pair's score (src/gate/policies/list-verdict.ts ScoreCalibration).
 */
const SHIPPED_LEXICAL_V1_SCORE_CALIBRATION: ScoreCalibration = Object.freeze({
  pair: 3.9868417642914924,
  weights: Object.freeze({
    maxRelevance: -0.569218553308891,
    top3Relevance: 1.0812610282888104,
    maxRanking: -1.3941253560762752,
    top3Ranking: -0.8934144451312775,
  }),
  bias: 0.0027393459632159144,
});

export const MODEL_SCORE_CALIBRATIONS: Readonly<Record<string, ScoreCalibration>> = Object.freeze({
  'fastpath/lexical-v1/0635ad06af598692b4b9': SHIPPED_LEXICAL_V1_SCORE_CALIBRATION,
});

/** The score calibration a scorer declares (by its model id), or undefined. */
export function scoreCalibrationFor(scorerId: string): ScoreCalibration | undefined {
  const id = modelIdOf(scorerId);
  return Object.hasOwn(MODEL_SCORE_CALIBRATIONS, id) ? MODEL_SCORE_CALIBRATIONS[id] : undefined;
}
