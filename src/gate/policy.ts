/**
 * Policy validation, merging of per-call overrides, and compilation into the flat form the
 * decision code reads. Compiled once at createGate (and once per call only when the call
 * overrides the policy), so the hot path never re-validates.
 */
import { assertCalibratedFor, parseCalibratedThreshold, type PlattParameters } from './calibration.js';
import { InvalidPolicyError } from './errors.js';
import type { AdaptiveThresholdPolicy } from './policies/adaptive.js';
import { compileRules, isRoute, type CompiledRules } from './policies/rules.js';
import type { EarlyStopPolicy, GatePolicy, QueryLengthThreshold, Route, ThresholdFunction } from './types.js';

export const DEFAULT_THRESHOLD = 0.5;
export const DEFAULT_RELATED_THRESHOLD = 0.25;
export const DEFAULT_RELEVANCE_SIGNALS: readonly string[] = Object.freeze(['relevant']);

export interface CompiledPolicy extends AdaptiveThresholdPolicy {
  readonly source: GatePolicy;
  readonly relevanceSignals: readonly string[];
  readonly minKept: number;
  /** Infinity when unbounded. */
  readonly maxKept: number;
  readonly fallback: 'top' | 'none';
  /** NaN when unset. */
  readonly insufficientBelow: number;
  readonly rules: CompiledRules | undefined;
  readonly defaultRoute: Route;
  readonly earlyStop: EarlyStopPolicy | undefined;
  readonly failOpen: boolean;
  readonly calibration: PlattParameters | undefined;
}

const KNOWN_KEYS: ReadonlySet<string> = new Set([
  'threshold',
  'relevanceSignal',
  'minKept',
  'maxKept',
  'fallback',
  'insufficientBelow',
  'mode',
  'relatedThreshold',
  'thresholdByQueryClass',
  'thresholdByQueryLength',
  'thresholdFn',
  'rules',
  'defaultRoute',
  'earlyStop',
  'failOpen',
  'calibrated',
]);

/** Override keys set to a value replace the base; `null` unsets; `undefined` keeps the base. */
export function mergePolicy(base: GatePolicy, override: GatePolicy | undefined): GatePolicy {
  if (override === undefined) return base;
  if (typeof override !== 'object' || override === null)
    throw new InvalidPolicyError('(override)', 'must be an object');
  const merged: Record<string, unknown> = { ...base };
  for (const key of Object.keys(override)) {
    const value = (override as Record<string, unknown>)[key];
    if (value !== undefined) merged[key] = value;
  }
  return merged as GatePolicy;
}

function probability(field: string, value: unknown): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1))
    throw new InvalidPolicyError(field, `must be a number in [0, 1], got ${String(value)}`);
  return value;
}

function count(field: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min)
    throw new InvalidPolicyError(field, `must be an integer ≥ ${min}, got ${String(value)}`);
  return value;
}

function present<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

export function compilePolicy(policy: GatePolicy, scorerId: string): CompiledPolicy {
  if (typeof policy !== 'object' || policy === null) throw new InvalidPolicyError('(policy)', 'must be an object');
  for (const key of Object.keys(policy)) {
    if (!KNOWN_KEYS.has(key)) throw new InvalidPolicyError(key, 'is not a policy option (typo?)');
  }

  let calibration: PlattParameters | undefined;
  let baseThreshold = DEFAULT_THRESHOLD;
  if (present(policy.calibrated)) {
    if (present(policy.threshold))
      throw new InvalidPolicyError(
        'threshold',
        'cannot be combined with calibrated (the calibrated threshold is the threshold)',
      );
    const calibrated = parseCalibratedThreshold(policy.calibrated);
    assertCalibratedFor(calibrated, scorerId);
    calibration = calibrated.calibration;
    baseThreshold = calibrated.threshold;
  } else if (present(policy.threshold)) {
    baseThreshold = probability('threshold', policy.threshold);
  }

  let relevanceSignals = DEFAULT_RELEVANCE_SIGNALS;
  if (present(policy.relevanceSignal)) {
    const names = typeof policy.relevanceSignal === 'string' ? [policy.relevanceSignal] : policy.relevanceSignal;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== 'string' || n.length === 0)) {
      throw new InvalidPolicyError(
        'relevanceSignal',
        'must be a non-empty string or a non-empty array of non-empty strings',
      );
    }
    relevanceSignals = Object.freeze([...names]);
  }

  const minKept = present(policy.minKept) ? count('minKept', policy.minKept, 0) : 0;
  let maxKept = Number.POSITIVE_INFINITY;
  if (present(policy.maxKept)) {
    maxKept = count('maxKept', policy.maxKept, 1);
    if (minKept > maxKept) throw new InvalidPolicyError('minKept', `(${minKept}) must be ≤ maxKept (${maxKept})`);
  }
  const fallback = policy.fallback ?? 'top';
  if (fallback !== 'top' && fallback !== 'none')
    throw new InvalidPolicyError('fallback', `must be 'top' or 'none', got ${String(fallback)}`);
  const insufficientBelow = present(policy.insufficientBelow)
    ? probability('insufficientBelow', policy.insufficientBelow)
    : Number.NaN;

  const mode = policy.mode ?? 'precise';
  if (mode !== 'precise' && mode !== 'related')
    throw new InvalidPolicyError('mode', `must be 'precise' or 'related', got ${String(mode)}`);
  const relatedThreshold = present(policy.relatedThreshold)
    ? probability('relatedThreshold', policy.relatedThreshold)
    : DEFAULT_RELATED_THRESHOLD;

  let thresholdByQueryClass: Readonly<Record<string, number>> | undefined;
  if (present(policy.thresholdByQueryClass)) {
    const map = policy.thresholdByQueryClass;
    if (typeof map !== 'object' || Array.isArray(map))
      throw new InvalidPolicyError('thresholdByQueryClass', 'must be an object mapping class → threshold');
    const copy: Record<string, number> = Object.create(null) as Record<string, number>;
    for (const key of Object.keys(map)) copy[key] = probability(`thresholdByQueryClass.${key}`, map[key]);
    thresholdByQueryClass = Object.freeze(copy);
  }

  let thresholdByQueryLength: readonly QueryLengthThreshold[] | undefined;
  if (present(policy.thresholdByQueryLength)) {
    const buckets = policy.thresholdByQueryLength;
    if (!Array.isArray(buckets) || buckets.length === 0)
      throw new InvalidPolicyError('thresholdByQueryLength', 'must be a non-empty array of { maxWords, threshold }');
    let previous = -1;
    thresholdByQueryLength = Object.freeze(
      buckets.map((bucket: QueryLengthThreshold, i: number) => {
        const field = `thresholdByQueryLength[${i}]`;
        if (typeof bucket !== 'object' || bucket === null)
          throw new InvalidPolicyError(field, 'must be { maxWords, threshold }');
        const maxWords = count(`${field}.maxWords`, bucket.maxWords, 0);
        if (maxWords <= previous)
          throw new InvalidPolicyError(`${field}.maxWords`, 'buckets must be strictly ascending in maxWords');
        previous = maxWords;
        return Object.freeze({ maxWords, threshold: probability(`${field}.threshold`, bucket.threshold) });
      }),
    );
  }

  let thresholdFn: ThresholdFunction | undefined;
  if (present(policy.thresholdFn)) {
    if (typeof policy.thresholdFn !== 'function')
      throw new InvalidPolicyError('thresholdFn', 'must be a function (query, context) => threshold');
    thresholdFn = policy.thresholdFn;
  }

  const rules = present(policy.rules) ? compileRules(policy.rules) : undefined;
  const defaultRoute = policy.defaultRoute ?? 'excluded';
  if (!isRoute(defaultRoute))
    throw new InvalidPolicyError(
      'defaultRoute',
      `must be 'included', 'conflicting' or 'excluded', got ${String(defaultRoute)}`,
    );

  let earlyStop: EarlyStopPolicy | undefined;
  if (present(policy.earlyStop)) {
    const es = policy.earlyStop;
    if (typeof es !== 'object') throw new InvalidPolicyError('earlyStop', 'must be { window, minRate, chunk }');
    earlyStop = Object.freeze({
      window: count('earlyStop.window', es.window, 1),
      minRate: probability('earlyStop.minRate', es.minRate),
      chunk: count('earlyStop.chunk', es.chunk, 1),
    });
  }

  const failOpen = policy.failOpen ?? false;
  if (typeof failOpen !== 'boolean') throw new InvalidPolicyError('failOpen', 'must be a boolean');

  return {
    source: policy,
    baseThreshold,
    mode,
    relatedThreshold,
    thresholdFn,
    thresholdByQueryClass,
    thresholdByQueryLength,
    relevanceSignals,
    minKept,
    maxKept,
    fallback,
    insufficientBelow,
    rules,
    defaultRoute,
    earlyStop,
    failOpen,
    calibration,
  };
}
