/**
 * Platt scaling, THE calibration convention of the engine: P(relevant | raw) = σ(a·raw + b).
 * A fast-path model's meta.json `calibration: { type: 'platt', a, b }`, a CalibratedThreshold's
 * `calibration`, and what fitPlatt returns are the same object under the same formula, so a
 * model's own calibration handed to the gate reproduces the model's probabilities exactly.
 *
 * Fitting follows Lin, Lin & Weng (2007, "A note on Platt's probabilistic outputs"): Platt's
 * smoothed targets, Newton's method with backtracking line search. Deterministic: no random
 * initialisation, fixed iteration order, float64 throughout.
 */
import { sigmoid } from '../util/sigmoid.js';
import { CalibrationFormatError } from './errors.js';

/** P(relevant | raw) = σ(a·raw + b). a > 0 when higher raw scores mean more relevant. */
export interface PlattParameters {
  readonly type: 'platt';
  readonly a: number;
  readonly b: number;
}

/** The identity on the logit scale: σ(raw). What a model without a calibration applies to its margin. */
export const IDENTITY_PLATT: PlattParameters = Object.freeze({ type: 'platt', a: 1, b: 0 });

/** σ(a·raw + b) in float64. */
export function plattProbability(params: Pick<PlattParameters, 'a' | 'b'>, raw: number): number {
  return sigmoid(params.a * raw + params.b);
}

export interface PlattFit {
  readonly params: PlattParameters;
  readonly info: {
    readonly pairs: number;
    readonly positives: number;
    readonly negatives: number;
    /** Newton iterations used. */
    readonly iterations: number;
  };
}

const MAX_ITERATIONS = 100;
const MIN_STEP = 1e-10;
const SIGMA = 1e-12;
const GRADIENT_EPS = 1e-5;

/** A label as 0/1; booleans or the numbers 0 and 1. */
export function toLabel(value: unknown, index: number): 0 | 1 {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  throw new CalibrationFormatError(`labels[${index}] must be a boolean or 0/1, got ${String(value)}`);
}

/*
 * The Newton iteration below is written, as in Lin et al., in the published variables
 * (A, B) = (−a, −b), i.e. P = 1 / (1 + exp(A·raw + B)); fitPlatt negates the result once at the
 * end. Negation is exact in float64, so the returned (a, b) are bit-for-bit the negated published
 * iterates, which keeps models trained before the convention was unified reproducible.
 */
function objective(raws: ArrayLike<number>, targets: Float64Array, A: number, B: number): number {
  let f = 0;
  for (let i = 0; i < targets.length; i++) {
    const fApB = raws[i] * A + B;
    const t = targets[i];
    f += fApB >= 0 ? t * fApB + Math.log1p(Math.exp(-fApB)) : (t - 1) * fApB + Math.log1p(Math.exp(fApB));
  }
  return f;
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

  let A = 0;
  let B = Math.log((negatives + 1) / (positives + 1));
  let fval = objective(raws, targets, A, B);
  let iterations = 0;
  for (; iterations < MAX_ITERATIONS; iterations++) {
    let h11 = SIGMA;
    let h22 = SIGMA;
    let h21 = 0;
    let g1 = 0;
    let g2 = 0;
    for (let i = 0; i < n; i++) {
      const x = raws[i];
      const fApB = x * A + B;
      // p = P(relevant) and q = 1 − p from one exponential (both are needed for the Hessian).
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
      const newA = A + step * dA;
      const newB = B + step * dB;
      const newF = objective(raws, targets, newA, newB);
      if (newF < fval + 0.0001 * step * gd) {
        A = newA;
        B = newB;
        fval = newF;
        accepted = true;
        break;
      }
      step /= 2;
    }
    if (!accepted) break; // line search failed: the current point is as good as float64 allows
  }
  return { params: { type: 'platt', a: -A, b: -B }, info: { pairs: n, positives, negatives, iterations } };
}
