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
 * leave-one-collection-out it kept better sets than the relevance head (docs/eval.md, "The ranked
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

export type OperatingPointName = 'precise' | 'balanced' | 'related';

export const OPERATING_POINT_NAMES: readonly OperatingPointName[] = Object.freeze(['precise', 'balanced', 'related']);

export interface OperatingPoint {
  /** The F_beta the cut maximises (> 0): < 1 favours precision, > 1 recall. */
  readonly beta: number;
  /** Added to logit(relevance) before the expected-F computation (finite; 0 = the scorer's probabilities as they are). */
  readonly shift: number;
  /** Pairs with relevance below this never pass (absolute floor in [0, 1]); 0 = no floor. */
  readonly floor: number;
}

export type OperatingPoints = Readonly<Record<OperatingPointName, OperatingPoint>>;

/** The shipped fast-path model's points (scripts/loco-gate.ts --shipped). */
const SHIPPED_LEXICAL_V1_POINTS: OperatingPoints = Object.freeze({
  precise: Object.freeze({ beta: 2, shift: -1.75, floor: 0 }),
  balanced: Object.freeze({ beta: 3, shift: -0.75, floor: 0 }),
  related: Object.freeze({ beta: 4, shift: -1, floor: 0 }),
});

/**
 * Operating points of known models, keyed by model id (the scorer id before `@`: the model files,
 * whatever corpus statistics they run with). Fitted by `npx tsx scripts/loco-gate.ts` on the
 * validation + test queries of the training collections (docs/eval.md, "Operating points").
 */
export const MODEL_OPERATING_POINTS: Readonly<Record<string, OperatingPoints>> = Object.freeze({
  // models/fastpath-lexical (LambdaMART, 348 trees; meta.json calibration a = 0.5048, b = -1.1895;
  // rankingBlend λ = 15), fitted on the validation + test queries of its five training collections
  // (BM25 top 20). The fit reads `relevant` only (the count k), which the ranking blend does not
  // change (same model.json and calibration as the entries below), so the points are the same; the
  // ranked cut then fills k from each model's own `ranking` order.
  'fastpath/lexical-v1/0635ad06af598692b4b9': SHIPPED_LEXICAL_V1_POINTS,
  // The same trees and calibration with the ranking blend's earlier λ (4), chosen by the best
  // worst-collection gain alone, before the one-standard-error rule.
  'fastpath/lexical-v1/c2e25cdc465299c54fae': SHIPPED_LEXICAL_V1_POINTS,
  // The same trees and calibration without the ranking blend (the model shipped before it).
  'fastpath/lexical-v1/311fc4b5a56e7b15deef': SHIPPED_LEXICAL_V1_POINTS,
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
  if (point === undefined) return { threshold: fallback, rankingCut: undefined };
  const relevances: number[] = [];
  const ranking: number[] = [];
  let ranked = policy.rules === undefined;
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
  const threshold = operatingPointThreshold(point, relevances);
  if (!ranked || relevances.length === 0) return { threshold, rankingCut: undefined };
  return { threshold, rankingCut: rankedCutValue(threshold, relevances, ranking) };
}
