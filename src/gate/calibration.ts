/**
 * Calibrated thresholds: a Platt calibration (src/calibration/platt.ts, P = σ(a·raw + b)) stored
 * with its probability threshold and the model it belongs to, so a threshold tuned on one model
 * can never silently gate another (CalibrationModelMismatchError).
 *
 * File format `relevance-gate/calibrated-threshold@2`. Files of `@1` (P = 1 / (1 + e^{a·raw + b}),
 * `calibration.method`) are still read: parseCalibratedThreshold converts them (a, b → −a, −b).
 */
import { CalibrationFormatError } from '../calibration/errors.js';
import { IDENTITY_PLATT, fitPlatt, plattProbability, toLabel, type PlattParameters } from '../calibration/platt.js';
import { type LabelledScore, thresholdForPrecision } from '../calibration/threshold-for-precision.js';
import { CalibrationModelMismatchError } from './errors.js';

export {
  fitPlatt,
  plattProbability,
  IDENTITY_PLATT,
  type PlattParameters,
  type PlattFit,
} from '../calibration/platt.js';
export {
  thresholdForPrecision,
  type LabelledScore,
  type ThresholdRow,
} from '../calibration/threshold-for-precision.js';

export interface CalibrationFitInfo {
  readonly pairs: number;
  readonly positives: number;
  readonly negatives: number;
  /** Newton iterations used. */
  readonly iterations: number;
  /** ISO time of the fit, or a caller-supplied label (e.g. a data set name and split). */
  readonly fittedAt: string;
  /** Free-form description of the labelled data (collection, split). */
  readonly dataset?: string;
}

export const CALIBRATED_THRESHOLD_FORMAT = 'relevance-gate/calibrated-threshold@2';
/** The previous format: P = 1 / (1 + e^{a·raw + b}); read by converting, never written. */
export const CALIBRATED_THRESHOLD_FORMAT_V1 = 'relevance-gate/calibrated-threshold@1';

export interface CalibratedThreshold {
  readonly format: typeof CALIBRATED_THRESHOLD_FORMAT;
  /** scorer.id of the model the calibration and threshold belong to. */
  readonly model: string;
  /** Probability threshold on the calibrated scale (relevance ≥ threshold passes). */
  readonly threshold: number;
  /** relevance = σ(a·raw + b), raw = the scorer's raw value of the relevance signal. */
  readonly calibration: PlattParameters;
  readonly targetPrecision?: number;
  /** Precision reached on the fitting data at `threshold`, when computed from a target. */
  readonly precisionAtThreshold?: number;
  /** The labelled data of the fit; absent when the calibration ships with the model (calibratedThresholdOf). */
  readonly fittedOn?: CalibrationFitInfo;
}

export interface FitCalibratedThresholdInput {
  /** scorer.id the raw scores came from. */
  readonly model: string;
  readonly raws: ArrayLike<number>;
  readonly labels: ArrayLike<boolean | number>;
  /** Fixed probability threshold; or give targetPrecision to choose it from the data. */
  readonly threshold?: number;
  readonly targetPrecision?: number;
  readonly fittedAt?: string;
  readonly dataset?: string;
}

/** Fits Platt scaling and packages it with its threshold and model id. */
export function fitCalibratedThreshold(input: FitCalibratedThresholdInput): CalibratedThreshold {
  if (typeof input.model !== 'string' || input.model.length === 0)
    throw new CalibrationFormatError('model must be a non-empty string (the scorer id)');
  if ((input.threshold === undefined) === (input.targetPrecision === undefined)) {
    throw new CalibrationFormatError('give exactly one of threshold or targetPrecision');
  }
  const fit = fitPlatt(input.raws, input.labels);
  let threshold: number;
  let precisionAtThreshold: number | undefined;
  if (input.threshold !== undefined) {
    if (!(input.threshold >= 0 && input.threshold <= 1))
      throw new CalibrationFormatError(`threshold must be a number in [0, 1], got ${input.threshold}`);
    threshold = input.threshold;
  } else {
    const target = input.targetPrecision as number;
    const pairs: LabelledScore[] = new Array(input.raws.length);
    for (let i = 0; i < pairs.length; i++)
      pairs[i] = { score: plattProbability(fit.params, input.raws[i]), relevant: toLabel(input.labels[i], i) === 1 };
    const chosen = thresholdForPrecision(pairs, target);
    if (chosen === null)
      throw new CalibrationFormatError(`no threshold reaches precision ${target} on these ${pairs.length} pairs`);
    threshold = chosen.threshold;
    precisionAtThreshold = chosen.precision as number;
  }
  const fittedOn: CalibrationFitInfo = {
    ...fit.info,
    fittedAt: input.fittedAt ?? new Date().toISOString(),
    ...(input.dataset !== undefined ? { dataset: input.dataset } : {}),
  };
  return {
    format: CALIBRATED_THRESHOLD_FORMAT,
    model: input.model,
    threshold,
    calibration: fit.params,
    ...(input.targetPrecision !== undefined ? { targetPrecision: input.targetPrecision } : {}),
    ...(precisionAtThreshold !== undefined ? { precisionAtThreshold } : {}),
    fittedOn,
  };
}

/** A scorer that ships its own calibration and threshold, as the fast-path scorer does (meta.json). */
export interface SelfCalibratedScorer {
  readonly id: string;
  readonly meta: {
    readonly calibration?: PlattParameters;
    readonly targetPrecision?: number;
  };
  readonly recommendedThreshold: number | undefined;
}

/**
 * The CalibratedThreshold of a model's own files: its meta.json calibration (σ(margin) when it has
 * none, which is what the model itself computes) and its recommended threshold, or `threshold`.
 * Gating with it as `policy.calibrated` gives exactly the scorer's own probabilities as relevance.
 */
export function calibratedThresholdOf(
  scorer: SelfCalibratedScorer,
  options: { readonly threshold?: number } = {},
): CalibratedThreshold {
  if (typeof scorer !== 'object' || scorer === null || typeof scorer.meta !== 'object' || scorer.meta === null)
    throw new CalibrationFormatError('calibratedThresholdOf needs a scorer with meta (e.g. loadFastPathScorer())');
  const threshold = options.threshold ?? scorer.recommendedThreshold;
  if (threshold === undefined)
    throw new CalibrationFormatError(`scorer ${scorer.id} has no recommended threshold: pass { threshold }`);
  const c = scorer.meta.calibration ?? IDENTITY_PLATT;
  const targetPrecision = options.threshold === undefined ? scorer.meta.targetPrecision : undefined;
  return parseCalibratedThreshold({
    format: CALIBRATED_THRESHOLD_FORMAT,
    model: scorer.id,
    threshold,
    calibration: { type: 'platt', a: c.a, b: c.b },
    ...(targetPrecision !== undefined ? { targetPrecision } : {}),
  });
}

/** Probability from a raw score under a calibrated threshold's Platt parameters. */
export function calibrate(calibrated: CalibratedThreshold, raw: number): number {
  return plattProbability(calibrated.calibration, raw);
}

/** Refuses a calibrated threshold fitted for another model. */
export function assertCalibratedFor(calibrated: CalibratedThreshold, scorerId: string): void {
  if (calibrated.model !== scorerId) throw new CalibrationModelMismatchError(calibrated.model, scorerId);
}

/** JSON of a calibrated threshold (always the current format). */
export function serializeCalibratedThreshold(calibrated: CalibratedThreshold): string {
  return JSON.stringify(parseCalibratedThreshold(calibrated), null, 2);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finite(obj: Record<string, unknown>, key: string, where: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new CalibrationFormatError(`${where}${key} must be a finite number, got ${String(v)}`);
  return v;
}

function parseCalibration(cal: unknown, legacy: boolean): PlattParameters {
  if (!isRecord(cal)) throw new CalibrationFormatError('calibration must be an object');
  if (legacy) {
    if (cal.method !== 'platt') throw new CalibrationFormatError("calibration.method must be 'platt'");
    // @1 stored P = 1 / (1 + e^{a·raw + b}) = σ(−a·raw − b).
    return { type: 'platt', a: -finite(cal, 'a', 'calibration.'), b: -finite(cal, 'b', 'calibration.') };
  }
  if (cal.type !== 'platt') throw new CalibrationFormatError("calibration.type must be 'platt'");
  return { type: 'platt', a: finite(cal, 'a', 'calibration.'), b: finite(cal, 'b', 'calibration.') };
}

function parseFitInfo(fitted: unknown): CalibrationFitInfo {
  if (!isRecord(fitted)) throw new CalibrationFormatError('fittedOn must be an object');
  const pairs = finite(fitted, 'pairs', 'fittedOn.');
  const positives = finite(fitted, 'positives', 'fittedOn.');
  const negatives = finite(fitted, 'negatives', 'fittedOn.');
  const iterations = finite(fitted, 'iterations', 'fittedOn.');
  if (typeof fitted.fittedAt !== 'string') throw new CalibrationFormatError('fittedOn.fittedAt must be a string');
  if (fitted.dataset !== undefined && typeof fitted.dataset !== 'string')
    throw new CalibrationFormatError('fittedOn.dataset must be a string');
  return {
    pairs,
    positives,
    negatives,
    iterations,
    fittedAt: fitted.fittedAt,
    ...(fitted.dataset !== undefined ? { dataset: fitted.dataset as string } : {}),
  };
}

/**
 * Validates a CalibratedThreshold (a JSON string or a parsed object) and returns a clean copy in
 * the current format; an `@1` file is converted to the σ(a·raw + b) convention.
 */
export function parseCalibratedThreshold(input: unknown): CalibratedThreshold {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch (cause) {
      throw new CalibrationFormatError('calibrated threshold is not valid JSON', { cause });
    }
  }
  if (!isRecord(value)) throw new CalibrationFormatError('calibrated threshold must be an object');
  const legacy = value.format === CALIBRATED_THRESHOLD_FORMAT_V1;
  if (value.format !== CALIBRATED_THRESHOLD_FORMAT && !legacy) {
    throw new CalibrationFormatError(
      `not a calibrated threshold (format ${JSON.stringify(value.format)}, expected ${CALIBRATED_THRESHOLD_FORMAT})`,
    );
  }
  if (typeof value.model !== 'string' || value.model.length === 0)
    throw new CalibrationFormatError('model must be a non-empty string');
  const threshold = finite(value, 'threshold', '');
  if (threshold < 0 || threshold > 1) throw new CalibrationFormatError('threshold must be a number in [0, 1]');
  const calibration = parseCalibration(value.calibration, legacy);
  // @1 files always carried fittedOn; @2 omits it for a model's own calibration.
  const fittedOn = legacy || value.fittedOn !== undefined ? parseFitInfo(value.fittedOn) : undefined;
  let targetPrecision: number | undefined;
  if (value.targetPrecision !== undefined) {
    targetPrecision = finite(value, 'targetPrecision', '');
    if (targetPrecision < 0 || targetPrecision > 1)
      throw new CalibrationFormatError('targetPrecision must be a number in [0, 1]');
  }
  const precisionAtThreshold =
    value.precisionAtThreshold === undefined ? undefined : finite(value, 'precisionAtThreshold', '');
  return {
    format: CALIBRATED_THRESHOLD_FORMAT,
    model: value.model,
    threshold,
    calibration,
    ...(targetPrecision !== undefined ? { targetPrecision } : {}),
    ...(precisionAtThreshold !== undefined ? { precisionAtThreshold } : {}),
    ...(fittedOn !== undefined ? { fittedOn } : {}),
  };
}
