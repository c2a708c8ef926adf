/**
 * Platt scaling: P(relevant | raw) = 1 / (1 + exp(a·raw + b)), fitted on labelled (raw, label)
 * pairs with Platt's smoothed targets and the Newton method with backtracking line search of
 * Lin, Lin & Weng (2007, "A note on Platt's probabilistic outputs"). Deterministic: no random
 * initialisation, fixed iteration order, float64 throughout.
 *
 * A CalibratedThreshold stores the calibration with the model it was fitted for, so a threshold
 * tuned on one model can never silently gate another (CalibrationModelMismatchError).
 */
import { CalibrationFormatError, CalibrationModelMismatchError } from './errors.js';

export interface PlattParameters {
  readonly method: 'platt';
  readonly a: number;
  readonly b: number;
}

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

export const CALIBRATED_THRESHOLD_FORMAT = 'relevance-gate/calibrated-threshold@1';

export interface CalibratedThreshold {
  readonly format: typeof CALIBRATED_THRESHOLD_FORMAT;
  /** scorer.id of the model the calibration and threshold belong to. */
  readonly model: string;
  /** Probability threshold on the calibrated scale (relevance ≥ threshold passes). */
  readonly threshold: number;
  readonly calibration: PlattParameters;
  readonly targetPrecision?: number;
  /** Precision reached on the fitting data at `threshold`, when computed from a target. */
  readonly precisionAtThreshold?: number;
  readonly fittedOn: CalibrationFitInfo;
}

const MAX_ITERATIONS = 100;
const MIN_STEP = 1e-10;
const SIGMA = 1e-12;
const GRADIENT_EPS = 1e-5;

/** Probability from a raw score, numerically stable for large |a·raw + b|. */
export function plattProbability(params: PlattParameters, raw: number): number {
  const fApB = params.a * raw + params.b;
  if (fApB >= 0) {
    const e = Math.exp(-fApB);
    return e / (1 + e);
  }
  return 1 / (1 + Math.exp(fApB));
}

function toLabel(value: unknown, index: number): 0 | 1 {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  throw new CalibrationFormatError(`labels[${index}] must be a boolean or 0/1, got ${String(value)}`);
}

function objective(raws: ArrayLike<number>, targets: Float64Array, a: number, b: number): number {
  let f = 0;
  for (let i = 0; i < targets.length; i++) {
    const fApB = raws[i] * a + b;
    const t = targets[i];
    f += fApB >= 0 ? t * fApB + Math.log1p(Math.exp(-fApB)) : (t - 1) * fApB + Math.log1p(Math.exp(fApB));
  }
  return f;
}

export interface PlattFit {
  readonly params: PlattParameters;
  readonly info: Omit<CalibrationFitInfo, 'fittedAt' | 'dataset'>;
}

/**
 * Fits Platt parameters. `raws` must be finite; `labels` booleans or 0/1; at least one positive
 * and one negative are required (otherwise the sigmoid is not identifiable).
 */
export function fitPlatt(raws: ArrayLike<number>, labels: ArrayLike<boolean | number>): PlattFit {
  const n = raws.length;
  if (n !== labels.length)
    throw new CalibrationFormatError(`raws (${n}) and labels (${labels.length}) differ in length`);
  let positives = 0;
  for (let i = 0; i < n; i++) {
    const r = raws[i];
    if (typeof r !== 'number' || !Number.isFinite(r))
      throw new CalibrationFormatError(`raws[${i}] must be a finite number, got ${String(r)}`);
    positives += toLabel(labels[i], i);
  }
  const negatives = n - positives;
  if (positives === 0 || negatives === 0) {
    throw new CalibrationFormatError(
      `calibration needs at least one positive and one negative pair (got ${positives} positive, ${negatives} negative)`,
    );
  }
  const hiTarget = (positives + 1) / (positives + 2);
  const loTarget = 1 / (negatives + 2);
  const targets = new Float64Array(n);
  for (let i = 0; i < n; i++) targets[i] = toLabel(labels[i], i) === 1 ? hiTarget : loTarget;

  let a = 0;
  let b = Math.log((negatives + 1) / (positives + 1));
  let fval = objective(raws, targets, a, b);
  let iterations = 0;
  for (; iterations < MAX_ITERATIONS; iterations++) {
    let h11 = SIGMA;
    let h22 = SIGMA;
    let h21 = 0;
    let g1 = 0;
    let g2 = 0;
    for (let i = 0; i < n; i++) {
      const x = raws[i];
      const fApB = x * a + b;
      let p: number;
      let q: number;
      if (fApB >= 0) {
        const e = Math.exp(-fApB);
        p = e / (1 + e);
        q = 1 / (1 + e);
      } else {
        const e = Math.exp(fApB);
        p = 1 / (1 + e);
        q = e / (1 + e);
      }
      const d2 = p * q;
      h11 += x * x * d2;
      h22 += d2;
      h21 += x * d2;
      const d1 = targets[i] - p;
      g1 += x * d1;
      g2 += d1;
    }
    if (Math.abs(g1) < GRADIENT_EPS && Math.abs(g2) < GRADIENT_EPS) break;
    const det = h11 * h22 - h21 * h21;
    const dA = -(h22 * g1 - h21 * g2) / det;
    const dB = -(-h21 * g1 + h11 * g2) / det;
    const gd = g1 * dA + g2 * dB;
    let step = 1;
    let accepted = false;
    while (step >= MIN_STEP) {
      const newA = a + step * dA;
      const newB = b + step * dB;
      const newF = objective(raws, targets, newA, newB);
      if (newF < fval + 0.0001 * step * gd) {
        a = newA;
        b = newB;
        fval = newF;
        accepted = true;
        break;
      }
      step /= 2;
    }
    if (!accepted) break; // line search failed: the current point is as good as float64 allows
  }
  return { params: { method: 'platt', a, b }, info: { pairs: n, positives, negatives, iterations } };
}

/**
 * The lowest calibrated-probability threshold whose precision on the given pairs is ≥ target
 * (maximises recall under the precision constraint). Throws when no threshold reaches it.
 */
export function thresholdForPrecision(
  probabilities: ArrayLike<number>,
  labels: ArrayLike<boolean | number>,
  targetPrecision: number,
): { threshold: number; precision: number; recall: number } {
  if (!(targetPrecision > 0 && targetPrecision <= 1))
    throw new CalibrationFormatError(`targetPrecision must be in (0, 1], got ${targetPrecision}`);
  const n = probabilities.length;
  if (n !== labels.length)
    throw new CalibrationFormatError(`probabilities (${n}) and labels (${labels.length}) differ in length`);
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => probabilities[y] - probabilities[x] || x - y);
  let totalPositives = 0;
  for (let i = 0; i < n; i++) totalPositives += toLabel(labels[i], i);
  let tp = 0;
  let best: { threshold: number; precision: number; recall: number } | undefined;
  for (let j = 0; j < n; j++) {
    const i = order[j];
    tp += toLabel(labels[i], i);
    // Only cut between distinct values: a threshold admits every pair with an equal probability.
    if (j + 1 < n && probabilities[order[j + 1]] === probabilities[i]) continue;
    const precision = tp / (j + 1);
    if (precision >= targetPrecision)
      best = { threshold: probabilities[i], precision, recall: totalPositives === 0 ? 0 : tp / totalPositives };
  }
  if (best === undefined)
    throw new CalibrationFormatError(`no threshold reaches precision ${targetPrecision} on these ${n} pairs`);
  return best;
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
      throw new CalibrationFormatError(`threshold must be in [0, 1], got ${input.threshold}`);
    threshold = input.threshold;
  } else {
    const probabilities = new Float64Array(input.raws.length);
    for (let i = 0; i < probabilities.length; i++) probabilities[i] = plattProbability(fit.params, input.raws[i]);
    const chosen = thresholdForPrecision(probabilities, input.labels, input.targetPrecision as number);
    threshold = chosen.threshold;
    precisionAtThreshold = chosen.precision;
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

/** Probability from a raw score under a calibrated threshold's Platt parameters. */
export function calibrate(calibrated: CalibratedThreshold, raw: number): number {
  return plattProbability(calibrated.calibration, raw);
}

/** Refuses a calibrated threshold fitted for another model. */
export function assertCalibratedFor(calibrated: CalibratedThreshold, scorerId: string): void {
  if (calibrated.model !== scorerId) throw new CalibrationModelMismatchError(calibrated.model, scorerId);
}

export function serializeCalibratedThreshold(calibrated: CalibratedThreshold): string {
  return JSON.stringify(parseCalibratedThreshold(calibrated), null, 2);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finite(obj: Record<string, unknown>, key: string, where: string): number {
  const v = obj[key];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new CalibrationFormatError(`${where}${key} must be a finite number`);
  return v;
}

/** Validates a CalibratedThreshold (a JSON string or a parsed object) and returns a clean copy. */
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
  if (value.format !== CALIBRATED_THRESHOLD_FORMAT) {
    throw new CalibrationFormatError(
      `not a calibrated threshold (format ${JSON.stringify(value.format)}, expected ${CALIBRATED_THRESHOLD_FORMAT})`,
    );
  }
  if (typeof value.model !== 'string' || value.model.length === 0)
    throw new CalibrationFormatError('model must be a non-empty string');
  const threshold = finite(value, 'threshold', '');
  if (threshold < 0 || threshold > 1) throw new CalibrationFormatError('threshold must be in [0, 1]');
  const cal = value.calibration;
  if (!isRecord(cal) || cal.method !== 'platt') throw new CalibrationFormatError("calibration.method must be 'platt'");
  const a = finite(cal, 'a', 'calibration.');
  const b = finite(cal, 'b', 'calibration.');
  const fitted = value.fittedOn;
  if (!isRecord(fitted)) throw new CalibrationFormatError('fittedOn must be an object');
  const pairs = finite(fitted, 'pairs', 'fittedOn.');
  const positives = finite(fitted, 'positives', 'fittedOn.');
  const negatives = finite(fitted, 'negatives', 'fittedOn.');
  const iterations = finite(fitted, 'iterations', 'fittedOn.');
  if (typeof fitted.fittedAt !== 'string') throw new CalibrationFormatError('fittedOn.fittedAt must be a string');
  if (fitted.dataset !== undefined && typeof fitted.dataset !== 'string')
    throw new CalibrationFormatError('fittedOn.dataset must be a string');
  let targetPrecision: number | undefined;
  if (value.targetPrecision !== undefined) {
    targetPrecision = finite(value, 'targetPrecision', '');
    if (targetPrecision <= 0 || targetPrecision > 1)
      throw new CalibrationFormatError('targetPrecision must be in (0, 1]');
  }
  const precisionAtThreshold =
    value.precisionAtThreshold === undefined ? undefined : finite(value, 'precisionAtThreshold', '');
  return {
    format: CALIBRATED_THRESHOLD_FORMAT,
    model: value.model,
    threshold,
    calibration: { method: 'platt', a, b },
    ...(targetPrecision !== undefined ? { targetPrecision } : {}),
    ...(precisionAtThreshold !== undefined ? { precisionAtThreshold } : {}),
    fittedOn: {
      pairs,
      positives,
      negatives,
      iterations,
      fittedAt: fitted.fittedAt,
      ...(fitted.dataset !== undefined ? { dataset: fitted.dataset as string } : {}),
    },
  };
}
