/**
 * List-level judgements read from the stored signals of one call's scored pairs: the sufficiency
 * verdict (does the list hold anything relevant at all?) and the calibrated score the rerank
 * surfaces return. Both are linear in a handful of list features, fitted with the operating points
 * (`relevance-gate fit-points`) on real lists and on lists that hold nothing relevant, so a scorer's
 * own scale is learned, not assumed.
 *
 * Why list features: a relevance probability alone cannot tell "the best of a good list" from "the
 * best of twenty off-topic passages"; the cut of an operating point is relative to the list and so
 * always keeps its head. The verdict looks at how strong the head is (its best and top-three
 * relevance and ranking values, in logit space), which is what separates a list with an answer from
 * the closest words a corpus happens to have.
 *
 * Every value is a pure function of stored signals, so `reroute` and a cache hit re-make the same
 * decision without rescoring.
 */
import { LIST_FEATURE_NAMES, type ListFeatureWeights, type ScoreCalibration, type Sufficiency } from './types.js';

export {
  LIST_FEATURE_NAMES,
  type ListFeatureName,
  type ListFeatureWeights,
  type ScoreCalibration,
  type Sufficiency,
} from './types.js';

/** Logits are clipped here, so a probability of exactly 0 or 1 stays finite. */
const LOGIT_CLIP = 1e-6;

export function clippedLogit(p: number): number {
  const c = Math.min(Math.max(p, LOGIT_CLIP), 1 - LOGIT_CLIP);
  return Math.log(c / (1 - c));
}

/** Mean of the k largest of `values` (k capped at the list's length). */
function topMean(sorted: Float64Array, k: number): number {
  const n = Math.min(k, sorted.length);
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  return sum / n;
}

function descendingLogits(values: ArrayLike<number>): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = clippedLogit(values[i]!);
  out.sort();
  out.reverse();
  return out;
}

/**
 * The list features of one call (LIST_FEATURE_NAMES order), or undefined for an empty list. Without
 * a ranking (a scorer that emits only `relevant`) the ranking features repeat the relevance ones, so
 * one fitted vector reads any scorer's lists the same way.
 */
export function listFeatures(
  relevances: ArrayLike<number>,
  ranking: ArrayLike<number> | undefined,
): Float64Array | undefined {
  if (relevances.length === 0) return undefined;
  const rel = descendingLogits(relevances);
  const ord = ranking === undefined || ranking.length !== relevances.length ? rel : descendingLogits(ranking);
  return Float64Array.of(rel[0]!, topMean(rel, 3), ord[0]!, topMean(ord, 3));
}

/** Σ weights[f] · features[f] in LIST_FEATURE_NAMES order. */
export function weighFeatures(weights: ListFeatureWeights, features: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < LIST_FEATURE_NAMES.length; i++) sum += weights[LIST_FEATURE_NAMES[i]!] * features[i]!;
  return sum;
}

/** The verdict's margin (≥ 0: sufficient). */
export function sufficiencyMargin(verdict: Sufficiency, features: ArrayLike<number>): number {
  return verdict.bias + weighFeatures(verdict.weights, features);
}

/** The list part of a score calibration: everything but the pair's own term. */
export function scoreCalibrationOffset(calibration: ScoreCalibration, features: ArrayLike<number>): number {
  return calibration.bias + weighFeatures(calibration.weights, features);
}

/** The calibrated score of one pair given its list's offset (scoreCalibrationOffset). */
export function calibratedScore(calibration: ScoreCalibration, offset: number, orderValue: number): number {
  const z = calibration.pair * clippedLogit(orderValue) + offset;
  return 1 / (1 + Math.exp(-z));
}
