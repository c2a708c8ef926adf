/**
 * The operating-point vocabulary shared by the gate (which decides by it), the model tiers (which
 * ship their points beside their files) and the fitting tools: names, parameters, the list verdict
 * and the score calibration. Data only; the decision math is in src/gate/policies/operating-points.ts
 * and src/operating-points/list-verdict.ts.
 */

export type OperatingPointName = 'precise' | 'balanced' | 'related';

export const OPERATING_POINT_NAMES: readonly OperatingPointName[] = Object.freeze(['precise', 'balanced', 'related']);

/** The list features, in the order a weight vector reads them (logits of the stored probabilities). */
export const LIST_FEATURE_NAMES = ['maxRelevance', 'top3Relevance', 'maxRanking', 'top3Ranking'] as const;
export type ListFeatureName = (typeof LIST_FEATURE_NAMES)[number];
export type ListFeatureWeights = Readonly<Record<ListFeatureName, number>>;

/**
 * The sufficiency verdict of an operating point: the list is judged to hold something relevant when
 * `bias + Σ weights[f] · feature_f ≥ 0`. When it is not, the point keeps nothing (rule
 * `insufficient-context`) and the result says `insufficientContext`.
 */
export interface Sufficiency {
  readonly weights: ListFeatureWeights;
  readonly bias: number;
}

/**
 * The calibrated score of a pair: σ(pair · logit(order value) + bias + Σ weights[f] · feature_f),
 * where the order value is the pair's `ranking` (relevance when the list has no ranking). `pair` > 0,
 * so within one list the score sorts exactly as the returned order does.
 */
export interface ScoreCalibration {
  readonly pair: number;
  readonly weights: ListFeatureWeights;
  readonly bias: number;
}

export interface OperatingPoint {
  /** The F_beta the cut maximises (> 0): < 1 favours precision, > 1 recall. */
  readonly beta: number;
  /** Added to logit(relevance) before the expected-F computation (finite; 0 = the scorer's probabilities as they are). */
  readonly shift: number;
  /** Pairs with relevance below this never pass (absolute floor in [0, 1]); 0 = no floor. */
  readonly floor: number;
  /**
   * How far the shift follows the list's own confidence: the cut reads logit(p) + shift + gamma ·
   * logit(top), top the list's highest relevance (finite; absent or 0 = a fixed shift). With
   * gamma > 0 a list whose best passage is weak is read more sceptically than one with a clear
   * winner, so one point serves collections whose scores sit on different scales.
   */
  readonly gamma?: number;
  /**
   * Keep nothing when the best cut's expected F_beta is below this ([0, 1]; absent or 0 = the
   * best cut is always kept): a list the point itself expects little of is judged to hold nothing
   * relevant (rule `insufficient-context`), like the sufficiency verdict.
   */
  readonly emptyBelow?: number;
  /**
   * The list-level verdict (src/operating-points/list-verdict.ts): when the scored list is judged to
   * hold nothing relevant, the point keeps nothing (rule `insufficient-context`). Absent: every
   * list is judged sufficient (the cut alone decides).
   */
  readonly sufficiency?: Sufficiency;
}

export type OperatingPoints = Readonly<Record<OperatingPointName, OperatingPoint>>;

/**
 * What a model declares for the gate, read from the operating-points file shipped beside it: its
 * points (the gate's default mode is then `balanced`) and, when fitted, its score calibration.
 */
export interface ModelDecisions {
  readonly operatingPoints: OperatingPoints;
  readonly scoreCalibration?: ScoreCalibration;
}

/** The model part of a scorer id (`fastpath/lexical-v1/<hash>@stats/<hash>` → `fastpath/lexical-v1/<hash>`). */
export function modelIdOf(scorerId: string): string {
  const at = scorerId.indexOf('@');
  return at < 0 ? scorerId : scorerId.slice(0, at);
}
