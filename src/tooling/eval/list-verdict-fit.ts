/**
 * Fitting the list-level judgements of operating points (src/gate/policies/list-verdict.ts) on
 * judged lists: the sufficiency verdict, on real lists (a query's first-stage top gateK in its own
 * collection) against lists that hold nothing relevant (queries retrieved from ANOTHER collection's
 * corpus, and real lists without a relevant candidate), and the score calibration, on the real
 * lists' pairs. Each collection weighs the same, whatever its number of queries, so one large
 * collection does not decide the scale for all.
 */
import { fitLogistic } from '../../calibration/logistic.js';
import { InvalidArgumentError } from '../../errors.js';
import {
  clippedLogit,
  LIST_FEATURE_NAMES,
  type ListFeatureWeights,
  listFeatures,
  type ScoreCalibration,
  type Sufficiency,
  scoreCalibrationOffset,
  calibratedScore,
  sufficiencyMargin,
  weighFeatures,
} from '../../operating-points/list-verdict.js';
import type { OperatingPointName } from '../../gate/policies/operating-points.js';

/** What the fit reads of a list: the gate's stored values and the labels. */
export interface VerdictList {
  readonly relevances: readonly number[];
  readonly relevant: readonly boolean[];
  readonly order?: readonly number[];
}

/**
 * The most real lists (with a relevant candidate) each point's verdict may leave empty on any
 * training collection: `precise` trades more empty answers for fewer junk passages, `related` keeps
 * nearly every real list. The bias is the largest that holds on every training collection.
 */
export const VERDICT_REAL_EMPTY_TARGETS: Readonly<Record<OperatingPointName, number>> = Object.freeze({
  precise: 0.1,
  balanced: 0.05,
  related: 0.02,
});

/** The share of real lists the label-known bound may leave empty (the acceptance line). */
export const BOUND_REAL_EMPTY = 0.1;

const hasRelevant = (list: VerdictList): boolean => list.relevant.some(Boolean);

function featuresOf(list: VerdictList): Float64Array | undefined {
  return listFeatures(list.relevances, list.order);
}

function toWeights(values: readonly number[]): ListFeatureWeights {
  return Object.freeze(Object.fromEntries(LIST_FEATURE_NAMES.map((n, i) => [n, values[i]!]))) as ListFeatureWeights;
}

/**
 * The verdict's feature weights: a logistic regression of "the list holds a relevant candidate"
 * on the list features, per collection half the weight on lists that hold one and half on those
 * that do not (`junk` lists and real lists without a relevant candidate). Undefined when no
 * collection has lists of both kinds.
 */
export function fitVerdictWeights(
  real: Readonly<Record<string, readonly VerdictList[]>>,
  junk: Readonly<Record<string, readonly VerdictList[]>>,
): ListFeatureWeights | undefined {
  const x: number[] = [];
  const y: (0 | 1)[] = [];
  const w: number[] = [];
  for (const name of Object.keys(real).sort()) {
    const positives: Float64Array[] = [];
    const negatives: Float64Array[] = [];
    for (const list of real[name]!) {
      const f = featuresOf(list);
      if (f !== undefined) (hasRelevant(list) ? positives : negatives).push(f);
    }
    for (const list of junk[name] ?? []) {
      const f = featuresOf(list);
      if (f !== undefined) negatives.push(f);
    }
    if (positives.length === 0 || negatives.length === 0) continue;
    for (const [group, label] of [
      [positives, 1],
      [negatives, 0],
    ] as const) {
      for (const f of group) {
        x.push(...f);
        y.push(label);
        w.push(1 / (2 * group.length));
      }
    }
  }
  // The verdict needs, on some collection, lists with a relevant candidate and lists without one.
  if (y.length === 0) return undefined;
  const fit = fitLogistic({ x, dims: LIST_FEATURE_NAMES.length, y, w });
  return toWeights(fit.weights);
}

/**
 * The verdict's bias for `weights`: the largest that leaves at most `maxRealEmpty` of each
 * collection's real lists with a relevant candidate judged insufficient.
 */
export function verdictBias(
  weights: ListFeatureWeights,
  real: Readonly<Record<string, readonly VerdictList[]>>,
  maxRealEmpty: number,
): number {
  if (!(maxRealEmpty >= 0 && maxRealEmpty <= 1))
    throw new InvalidArgumentError(`maxRealEmpty must be in [0, 1], got ${maxRealEmpty}`);
  let cut = Number.POSITIVE_INFINITY;
  for (const lists of Object.values(real)) {
    const scores: number[] = [];
    for (const list of lists) {
      if (!hasRelevant(list)) continue;
      const f = featuresOf(list);
      if (f !== undefined) scores.push(weighFeatures(weights, f));
    }
    if (scores.length === 0) continue;
    scores.sort((a, b) => a - b);
    cut = Math.min(cut, scores[Math.min(scores.length - 1, Math.floor(maxRealEmpty * scores.length))]!);
  }
  if (!Number.isFinite(cut)) throw new InvalidArgumentError('the verdict needs real lists with a relevant candidate');
  return -cut;
}

/**
 * The verdict fitted on one collection's own lists (labels known), its bias set to leave
 * BOUND_REAL_EMPTY of the real lists with a relevant candidate empty: the label-known bound the
 * reports and the balanced contract read. Undefined when the lists cannot fit one (no relevant
 * candidate, no junk list).
 */
export function ownLabelVerdict(real: readonly VerdictList[], junk: readonly VerdictList[]): Sufficiency | undefined {
  if (junk.length === 0 || !real.some(hasRelevant)) return undefined;
  const own = { self: real };
  const weights = fitVerdictWeights(own, { self: junk });
  return weights === undefined ? undefined : { weights, bias: verdictBias(weights, own, BOUND_REAL_EMPTY) };
}

/** True when the verdict judges the list sufficient (always, without a verdict or for an empty list). */
export function judgedSufficient(verdict: Sufficiency | undefined, list: VerdictList): boolean {
  if (verdict === undefined) return true;
  const f = featuresOf(list);
  return f === undefined || sufficiencyMargin(verdict, f) >= 0;
}

/** Share of lists with a relevant candidate judged insufficient, and of junk lists judged insufficient (empty lists count as empty). */
export function verdictRates(
  verdict: Sufficiency,
  real: readonly VerdictList[],
  junk: readonly VerdictList[],
): { readonly realEmpty: number | null; readonly junkEmpty: number | null } {
  const withRelevant = real.filter(hasRelevant);
  const realEmpty = withRelevant.filter((l) => !judgedSufficient(verdict, l)).length;
  const junkEmpty = junk.filter((l) => l.relevances.length === 0 || !judgedSufficient(verdict, l)).length;
  return {
    realEmpty: withRelevant.length === 0 ? null : realEmpty / withRelevant.length,
    junkEmpty: junk.length === 0 ? null : junkEmpty / junk.length,
  };
}

/** One point of the verdict's trade-off curve (the bias chosen for `target` on the fitting lists). */
export interface VerdictCurvePoint {
  readonly target: number;
  readonly realEmpty: number | null;
  readonly junkEmpty: number | null;
}

export const VERDICT_CURVE_TARGETS: readonly number[] = Object.freeze([0, 0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3]);

/** The trade-off curve on (real, junk) of weights whose bias is set on `fitReal` at each target. */
export function verdictCurve(
  weights: ListFeatureWeights,
  fitReal: Readonly<Record<string, readonly VerdictList[]>>,
  real: readonly VerdictList[],
  junk: readonly VerdictList[],
): VerdictCurvePoint[] {
  return VERDICT_CURVE_TARGETS.map((target) => ({
    target,
    ...verdictRates({ weights, bias: verdictBias(weights, fitReal, target) }, real, junk),
  }));
}

/**
 * The score calibration: a logistic regression of each pair's label on the logit of its order
 * value (ranking, else relevance) and its list's features, each collection weighing the same. The
 * pair weight must come out > 0 (the score must sort as the list does); if it does not, the list
 * features are dropped and the pair's value alone is calibrated. Undefined when even that does not
 * rise with relevance (a model whose scores mean nothing, such as a random-weight shape model), or
 * when no list holds a relevant pair.
 */
export function fitScoreCalibration(
  real: Readonly<Record<string, readonly VerdictList[]>>,
): ScoreCalibration | undefined {
  if (!Object.values(real).some((lists) => lists.some(hasRelevant))) return undefined;
  const fitWith = (useList: boolean): ScoreCalibration | undefined => {
    const x: number[] = [];
    const y: (0 | 1)[] = [];
    const w: number[] = [];
    for (const lists of Object.values(real)) {
      let pairs = 0;
      for (const list of lists) pairs += list.relevances.length;
      for (const list of lists) {
        const f = featuresOf(list);
        if (f === undefined) continue;
        const order = list.order ?? list.relevances;
        for (let i = 0; i < order.length; i++) {
          x.push(clippedLogit(order[i]!), ...(useList ? f : [0, 0, 0, 0]));
          y.push(list.relevant[i] ? 1 : 0);
          w.push(1 / pairs);
        }
      }
    }
    const fit = fitLogistic({ x, dims: 1 + LIST_FEATURE_NAMES.length, y, w });
    if (!(fit.weights[0]! > 0)) return undefined;
    return Object.freeze({ pair: fit.weights[0]!, weights: toWeights(fit.weights.slice(1)), bias: fit.bias });
  };
  return fitWith(true) ?? fitWith(false);
}

/** Each pair's calibrated score and label, over lists. */
export function calibratedPairs(
  calibration: ScoreCalibration,
  lists: readonly VerdictList[],
): { readonly scores: number[]; readonly labels: boolean[] } {
  const scores: number[] = [];
  const labels: boolean[] = [];
  for (const list of lists) {
    const f = featuresOf(list);
    if (f === undefined) continue;
    const offset = scoreCalibrationOffset(calibration, f);
    const order = list.order ?? list.relevances;
    for (let i = 0; i < order.length; i++) {
      scores.push(calibratedScore(calibration, offset, order[i]!));
      labels.push(list.relevant[i] === true);
    }
  }
  return { scores, labels };
}

/** Expected calibration error over `bins` equal-width bins: Σ_b (n_b / N) · |mean score − share relevant|. */
export function expectedCalibrationError(scores: readonly number[], labels: readonly boolean[], bins = 10): number {
  if (scores.length !== labels.length) throw new InvalidArgumentError('scores and labels differ in length');
  if (scores.length === 0) return 0;
  const sum = new Float64Array(bins);
  const hits = new Float64Array(bins);
  for (let i = 0; i < scores.length; i++) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor(scores[i]! * bins)));
    sum[b]! += scores[i]!;
    if (labels[i]) hits[b]! += 1;
  }
  let error = 0;
  for (let b = 0; b < bins; b++) error += Math.abs(sum[b]! - hits[b]!);
  return error / scores.length;
}
