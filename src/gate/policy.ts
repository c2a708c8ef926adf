/**
 * Policy validation, merging of per-call overrides, and compilation into the flat form the
 * decision code reads. Compiled once at createGate (and once per call only when the call
 * overrides the policy), so the hot path never re-validates.
 */
import { RELEVANT } from '../signals.js';
import type { Scorer } from '../types.js';
import {
  describeValue,
  nonNegativeInteger,
  type OptionErrorFactory,
  positiveInteger,
  probability as probabilityOption,
} from '../util/validate-options.js';
import { assertCalibratedFor, parseCalibratedThreshold, type PlattParameters } from './calibration.js';
import { InvalidPolicyError } from './errors.js';
import type { AdaptiveThresholdPolicy, ThresholdMode } from './policies/adaptive.js';
import {
  type FieldErrorFactory,
  parseOperatingPoints as parsePoints,
  parseScoreCalibration,
} from '../operating-points/parse.js';
import type { ScoreCalibration } from '../operating-points/types.js';
import {
  OPERATING_POINT_NAMES,
  type OperatingPoint,
  type OperatingPointName,
  type OperatingPoints,
} from './policies/operating-points.js';
import { assertRulesReadDeclaredSignals, compileRules, isRoute, type CompiledRules } from './policies/rules.js';
import type { EarlyStopPolicy, GatePolicy, QueryLengthThreshold, Route, ThresholdFunction } from './types.js';
import { rejectUnknownKeys } from '../util/option-keys.js';

export const DEFAULT_THRESHOLD = 0.5;
export const DEFAULT_RELATED_THRESHOLD = 0.25;
export const DEFAULT_RELEVANCE_SIGNALS: readonly string[] = Object.freeze([RELEVANT]);

/** What policy compilation needs to know of the scorer: its id (calibration), declared signals and shipped decisions. */
export type PolicyScorer = Pick<Scorer, 'id' | 'signals' | 'decisions'>;

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
  /** The mode asked for (or the default resolved for the scorer). */
  readonly mode: 'threshold' | OperatingPointName;
  /** Set in operating-point mode: the call's threshold comes from the scored list. */
  readonly operatingPoint: OperatingPoint | undefined;
  /** How each item's `score` is computed from the list (undefined: the order value itself). */
  readonly scoreCalibration: ScoreCalibration | undefined;
}

/** Every GatePolicy option name; anything else in a policy is rejected as a typo. */
export const KNOWN_POLICY_KEYS: ReadonlySet<string> = new Set([
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
  'operatingPoints',
  'scoreCalibration',
]);

/** Options that ask for an absolute threshold decision: with any of them, the default mode is 'threshold'. */
const THRESHOLD_OPTIONS = [
  'threshold',
  'calibrated',
  'thresholdFn',
  'thresholdByQueryClass',
  'thresholdByQueryLength',
  'rules',
  'earlyStop',
] as const;

/** Operating-point data in a policy: the shared rules, failing with InvalidPolicyError naming the field. */
const pointFieldError: FieldErrorFactory = (field, problem) => new InvalidPolicyError(field, problem);

/** Validates an `operatingPoints` table (src/operating-points/parse.ts). */
export function parseOperatingPoints(value: unknown, field = 'operatingPoints'): OperatingPoints {
  return parsePoints(value, field, pointFieldError);
}

interface ResolvedMode {
  readonly mode: 'threshold' | OperatingPointName;
  readonly thresholdMode: ThresholdMode;
  readonly operatingPoint: OperatingPoint | undefined;
}

/** The mode of a policy for a scorer: see GatePolicy.mode. */
function resolveMode(policy: GatePolicy, scorer: PolicyScorer): ResolvedMode {
  const points = present(policy.operatingPoints)
    ? parseOperatingPoints(policy.operatingPoints)
    : scorer.decisions?.operatingPoints;
  const asked = policy.mode;
  if (
    asked !== undefined &&
    asked !== 'threshold' &&
    !(OPERATING_POINT_NAMES as readonly string[]).includes(asked as string)
  )
    throw new InvalidPolicyError(
      'mode',
      `must be 'precise', 'balanced', 'related' or 'threshold', got ${String(asked as unknown)}`,
    );
  const thresholdOptionSet = THRESHOLD_OPTIONS.some((key) => present(policy[key]));
  const mode = asked ?? (points !== undefined && !thresholdOptionSet ? 'balanced' : 'threshold');
  if (mode === 'threshold') return { mode, thresholdMode: 'threshold', operatingPoint: undefined };
  if (mode === 'related' && (points === undefined || present(policy.relatedThreshold)))
    return { mode, thresholdMode: 'related-threshold', operatingPoint: undefined };
  if (points === undefined) {
    if (mode === 'precise') return { mode, thresholdMode: 'threshold', operatingPoint: undefined };
    throw new InvalidPolicyError(
      'mode',
      `'${mode}' needs operating points: scorer ${JSON.stringify(scorer.id)} declares none (pass policy.operatingPoints, or use 'threshold')`,
    );
  }
  if (present(policy.earlyStop))
    throw new InvalidPolicyError(
      'earlyStop',
      `cannot be combined with mode '${mode}' (an operating point decides on the whole scored list; use mode 'threshold')`,
    );
  return { mode, thresholdMode: 'operating-point', operatingPoint: points[mode] };
}

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

/** Option errors of a policy name the field: `policy.<field>: must be …, got …`. */
const policyError: OptionErrorFactory = (field, requirement, value) =>
  new InvalidPolicyError(field, `must be ${requirement}, got ${describeValue(value)}`);

function probability(field: string, value: unknown): number {
  return probabilityOption(field, value, policyError);
}

function present<T>(value: T | null | undefined): value is T {
  return value !== undefined && value !== null;
}

/**
 * Validates and compiles a policy for `scorer`. When the scorer declares `signals`, a policy that
 * reads a signal outside them (relevanceSignal, a condition rule) is refused with InvalidPolicyError.
 */
export function compilePolicy(policy: GatePolicy, scorer: PolicyScorer): CompiledPolicy {
  if (typeof policy !== 'object' || policy === null) throw new InvalidPolicyError('(policy)', 'must be an object');
  rejectUnknownKeys(
    policy,
    KNOWN_POLICY_KEYS,
    '',
    'a policy option (typo?)',
    (field, problem) => new InvalidPolicyError(field, problem),
  );

  let calibration: PlattParameters | undefined;
  let baseThreshold = DEFAULT_THRESHOLD;
  if (present(policy.calibrated)) {
    if (present(policy.threshold))
      throw new InvalidPolicyError(
        'threshold',
        'cannot be combined with calibrated (the calibrated threshold is the threshold)',
      );
    const calibrated = parseCalibratedThreshold(policy.calibrated);
    assertCalibratedFor(calibrated, scorer.id);
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
  const declared = scorer.signals;
  if (declared !== undefined && !relevanceSignals.some((name) => declared.includes(name))) {
    throw new InvalidPolicyError(
      'relevanceSignal',
      `reads ${relevanceSignals.map((n) => JSON.stringify(n)).join(' or ')}, which scorer ${JSON.stringify(scorer.id)} does not produce (its signals: ${declared.map((n) => JSON.stringify(n)).join(', ') || 'none'})`,
    );
  }

  const minKept = present(policy.minKept) ? nonNegativeInteger('minKept', policy.minKept, policyError) : 0;
  let maxKept = Number.POSITIVE_INFINITY;
  if (present(policy.maxKept)) {
    maxKept = positiveInteger('maxKept', policy.maxKept, policyError);
    if (minKept > maxKept) throw new InvalidPolicyError('minKept', `(${minKept}) must be ≤ maxKept (${maxKept})`);
  }
  const fallback = policy.fallback ?? 'top';
  if (fallback !== 'top' && fallback !== 'none')
    throw new InvalidPolicyError('fallback', `must be 'top' or 'none', got ${String(fallback)}`);
  const insufficientBelow = present(policy.insufficientBelow)
    ? probability('insufficientBelow', policy.insufficientBelow)
    : Number.NaN;

  const { mode, thresholdMode, operatingPoint } = resolveMode(policy, scorer);
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
        const maxWords = nonNegativeInteger(`${field}.maxWords`, bucket.maxWords, policyError);
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
  if (rules !== undefined) assertRulesReadDeclaredSignals(rules, scorer);
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
      window: positiveInteger('earlyStop.window', es.window, policyError),
      minRate: probability('earlyStop.minRate', es.minRate),
      chunk: positiveInteger('earlyStop.chunk', es.chunk, policyError),
    });
  }

  const failOpen = policy.failOpen ?? false;
  if (typeof failOpen !== 'boolean') throw new InvalidPolicyError('failOpen', 'must be a boolean');
  const scoreCalibration = present(policy.scoreCalibration)
    ? parseScoreCalibration(policy.scoreCalibration, 'scoreCalibration', pointFieldError)
    : policy.scoreCalibration === null
      ? undefined
      : scorer.decisions?.scoreCalibration;

  return {
    source: policy,
    baseThreshold,
    thresholdMode,
    mode,
    operatingPoint,
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
    scoreCalibration,
  };
}
