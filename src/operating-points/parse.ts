/**
 * Validation of operating-point data, wherever it comes from (a gate policy, an operating-points
 * file, a model's shipped file): each caller passes its own error factory, so a policy names the
 * field in an InvalidPolicyError and a file in an OperatingPointsFormatError, from one set of rules.
 */
import { describeValue } from '../util/validate-options.js';
import {
  LIST_FEATURE_NAMES,
  type ListFeatureName,
  type ListFeatureWeights,
  OPERATING_POINT_NAMES,
  type OperatingPoint,
  type OperatingPointName,
  type OperatingPoints,
  type ScoreCalibration,
  type Sufficiency,
} from './types.js';

/** Builds the caller's error for `field` (a dotted path) and what is wrong with it. */
export type FieldErrorFactory = (field: string, problem: string) => Error;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finite(field: string, value: unknown, fail: FieldErrorFactory): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw fail(field, `must be a finite number, got ${describeValue(value)}`);
  return value;
}

function positiveFinite(field: string, value: unknown, fail: FieldErrorFactory): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw fail(field, `must be a finite number > 0, got ${describeValue(value)}`);
  return value;
}

function share(field: string, value: unknown, fail: FieldErrorFactory): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1))
    throw fail(field, `must be a number in [0, 1], got ${describeValue(value)}`);
  return value;
}

function onlyKeys(
  table: Record<string, unknown>,
  field: string,
  keys: readonly string[],
  fail: FieldErrorFactory,
): void {
  for (const key of Object.keys(table))
    if (!keys.includes(key)) throw fail(`${field}.${key}`, `is not one of ${keys.join(', ')}`);
}

/** `{ maxRelevance, top3Relevance, maxRanking, top3Ranking }`, each a finite number. */
function parseListWeights(value: unknown, field: string, fail: FieldErrorFactory): ListFeatureWeights {
  if (!isRecord(value)) throw fail(field, `must be { ${LIST_FEATURE_NAMES.join(', ')} } of finite numbers`);
  onlyKeys(value, field, LIST_FEATURE_NAMES, fail);
  const out = {} as Record<ListFeatureName, number>;
  for (const name of LIST_FEATURE_NAMES) out[name] = finite(`${field}.${name}`, value[name], fail);
  return Object.freeze(out);
}

/** An operating point's `sufficiency`: `{ weights, bias }`. */
export function parseSufficiency(value: unknown, field: string, fail: FieldErrorFactory): Sufficiency {
  if (!isRecord(value)) throw fail(field, 'must be { weights, bias }');
  onlyKeys(value, field, ['weights', 'bias'], fail);
  return Object.freeze({
    weights: parseListWeights(value.weights, `${field}.weights`, fail),
    bias: finite(`${field}.bias`, value.bias, fail),
  });
}

/** A `scoreCalibration`: `{ pair > 0, weights, bias }`. */
export function parseScoreCalibration(value: unknown, field: string, fail: FieldErrorFactory): ScoreCalibration {
  if (!isRecord(value)) throw fail(field, 'must be { pair, weights, bias }');
  onlyKeys(value, field, ['pair', 'weights', 'bias'], fail);
  return Object.freeze({
    pair: positiveFinite(`${field}.pair`, value.pair, fail),
    weights: parseListWeights(value.weights, `${field}.weights`, fail),
    bias: finite(`${field}.bias`, value.bias, fail),
  });
}

const POINT_KEYS = ['beta', 'shift', 'floor', 'gamma', 'emptyBelow', 'sufficiency'] as const;

/**
 * An `operatingPoints` table: every name, each `{ beta > 0, shift finite, floor ∈ [0, 1], gamma
 * finite?, emptyBelow ∈ [0, 1]?, sufficiency? }`. A gamma or emptyBelow of 0 is left out, so a
 * point without them reads (and fingerprints) as before they existed.
 */
export function parseOperatingPoints(value: unknown, field: string, fail: FieldErrorFactory): OperatingPoints {
  if (!isRecord(value))
    throw fail(field, `must be { ${OPERATING_POINT_NAMES.join(', ')} } of { ${POINT_KEYS.join(', ')} }`);
  onlyKeys(value, field, OPERATING_POINT_NAMES, fail);
  const out: Partial<Record<OperatingPointName, OperatingPoint>> = {};
  for (const name of OPERATING_POINT_NAMES) {
    const where = `${field}.${name}`;
    const point = value[name];
    if (!isRecord(point)) throw fail(where, `must be { ${POINT_KEYS.join(', ')} }`);
    onlyKeys(point, where, POINT_KEYS, fail);
    const sufficiency =
      point.sufficiency === undefined ? undefined : parseSufficiency(point.sufficiency, `${where}.sufficiency`, fail);
    const gamma = finite(`${where}.gamma`, point.gamma ?? 0, fail);
    const emptyBelow = share(`${where}.emptyBelow`, point.emptyBelow ?? 0, fail);
    out[name] = Object.freeze({
      beta: positiveFinite(`${where}.beta`, point.beta, fail),
      shift: finite(`${where}.shift`, point.shift ?? 0, fail),
      floor: share(`${where}.floor`, point.floor ?? 0, fail),
      ...(gamma === 0 ? {} : { gamma }),
      ...(emptyBelow === 0 ? {} : { emptyBelow }),
      ...(sufficiency === undefined ? {} : { sufficiency }),
    });
  }
  return Object.freeze(out as Record<OperatingPointName, OperatingPoint>);
}
