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
import { listFeatures, sufficiencyMargin } from '../../operating-points/list-verdict.js';
import type { OperatingPoint, Sufficiency } from '../../operating-points/types.js';

export {
  modelIdOf,
  OPERATING_POINT_NAMES,
  type OperatingPoint,
  type OperatingPointName,
  type OperatingPoints,
} from '../../operating-points/types.js';

const EPS = 1e-9;

/** The logit the cut reads relevances through (clipped at 1e-9, so 0 and 1 stay finite). */
export function cutLogit(p: number): number {
  const c = Math.min(Math.max(p, EPS), 1 - EPS);
  return Math.log(c / (1 - c));
}

/** The expected-F_beta-best cut of one call's list (operatingPointCut). */
export interface ExpectedFCut {
  /** The relevance at the cut: pairs at or above it pass (`point.floor` when none reaches the floor, 1 for an empty list). */
  readonly threshold: number;
  /** The cut's expected F_beta under the shifted probabilities; 0 when nothing reaches the floor or the list is empty. */
  readonly expectedF: number;
}

/** Where searchExpectedFCut leaves its answer (reused across calls: the fit runs it millions of times). */
export interface ExpectedFSearch {
  /** Index of the last pair kept (descending order); -1 when no pair may be kept. */
  best: number;
  /** The cut's expected F_beta; -Infinity when no pair may be kept. */
  value: number;
}

/**
 * The expected-F_beta-best cut of one list (ties: the shortest cut): `logits` descending (cutLogit
 * of the relevances), each read as probability sigmoid(logit + shift); only the first `reach`
 * pairs may be kept (the floor), the expectation counts all `n`. `q` is scratch of length ≥ n.
 * The gate's cut (operatingPointCut) and the fit's grid (list-confidence-fit.ts) both run this.
 */
export function searchExpectedFCut(
  logits: ArrayLike<number>,
  n: number,
  shift: number,
  beta: number,
  reach: number,
  q: Float64Array,
  out: ExpectedFSearch,
): void {
  const b2 = beta * beta;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const v = 1 / (1 + Math.exp(-(logits[i]! + shift)));
    q[i] = v;
    total += v;
  }
  out.best = -1;
  out.value = Number.NEGATIVE_INFINITY;
  let cum = 0;
  for (let k = 0; k < reach; k++) {
    cum += q[k]!;
    const value = ((1 + b2) * cum) / (k + 1 + b2 * total);
    if (value > out.value) {
      out.value = value;
      out.best = k;
    }
  }
}

/** The shift a point applies to a list whose highest logit is `topLogit`: shift + gamma · logit(top). */
export function listShift(point: Pick<OperatingPoint, 'shift' | 'gamma'>, topLogit: number | undefined): number {
  const gamma = point.gamma ?? 0;
  return topLogit === undefined || gamma === 0 ? point.shift : point.shift + gamma * topLogit;
}

/**
 * The expected-F_beta-optimal cut of `relevances` (ties: the shortest cut) and its expected value.
 * The shift is `point.shift + point.gamma · logit(top)`, top the highest relevance. Pure;
 * `relevances` is not modified.
 */
export function operatingPointCut(point: OperatingPoint, relevances: ArrayLike<number>): ExpectedFCut {
  const n = relevances.length;
  const sorted = new Float64Array(n);
  for (let i = 0; i < n; i++) sorted[i] = relevances[i]!;
  sorted.sort();
  sorted.reverse();
  const logits = sorted.map(cutLogit);
  let reach = 0;
  while (reach < n && sorted[reach]! >= point.floor) reach++;
  const search: ExpectedFSearch = { best: -1, value: Number.NEGATIVE_INFINITY };
  searchExpectedFCut(logits, n, listShift(point, logits[0]), point.beta, reach, new Float64Array(n), search);
  // Nothing reaches the floor (every relevance is below it), or an empty list.
  if (search.best < 0) return { threshold: n === 0 ? 1 : point.floor, expectedF: 0 };
  return { threshold: sorted[search.best]!, expectedF: search.value };
}

/** The threshold of one call: operatingPointCut's `threshold`. */
export function operatingPointThreshold(point: OperatingPoint, relevances: ArrayLike<number>): number {
  return operatingPointCut(point, relevances).threshold;
}

/**
 * The list-level margin of a point (≥ 0: the list may keep something): the smaller of the
 * sufficiency verdict's margin and, with `emptyBelow`, the cut's expected F_beta less it.
 * undefined when the point has neither or the list is empty.
 */
export function listMargin(
  point: OperatingPoint,
  cut: ExpectedFCut,
  relevances: ArrayLike<number>,
  ranking: ArrayLike<number> | undefined,
): number | undefined {
  if (relevances.length === 0) return undefined;
  const verdict = point.sufficiency;
  const features = verdict === undefined ? undefined : listFeatures(relevances, ranking);
  const byVerdict = features === undefined ? undefined : sufficiencyMargin(verdict as Sufficiency, features);
  const emptyBelow = point.emptyBelow ?? 0;
  const byConfidence = emptyBelow > 0 ? cut.expectedF - emptyBelow : undefined;
  if (byVerdict === undefined) return byConfidence;
  return byConfidence === undefined ? byVerdict : Math.min(byVerdict, byConfidence);
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
  /** The list's margin (listMargin, `stats.sufficiency`); undefined without a verdict or `emptyBelow`, or without a scored pair. */
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
  const cut = operatingPointCut(point, relevances);
  const threshold = cut.threshold;
  const sufficiency = listMargin(point, cut, relevances, ranking);
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
