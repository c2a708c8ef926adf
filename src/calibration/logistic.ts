/**
 * Weighted logistic regression over a few features: P(y = 1 | x) = σ(b + Σ w_j x_j), fitted by
 * Newton's method (IRLS) with a small ridge penalty on w (never on b) and step halving, so the fit
 * is deterministic and converges on separable data too. Used to fit the list verdict and the score
 * calibration of operating points (src/tooling/eval/list-verdict-fit.ts); a handful of features and a few
 * thousand rows, so a dense d × d solve per step is all it needs.
 */
import { InvalidArgumentError } from '../errors.js';

export interface LogisticFit {
  /** One weight per feature column. */
  readonly weights: readonly number[];
  readonly bias: number;
  readonly iterations: number;
}

export interface LogisticRows {
  /** Row-major features: rows × dims. */
  readonly x: ArrayLike<number>;
  readonly dims: number;
  readonly y: ArrayLike<0 | 1>;
  /** Per-row weight (> 0); default 1. */
  readonly w?: ArrayLike<number>;
}

const MAX_ITERATIONS = 100;
const TOLERANCE = 1e-10;

function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/** log(1 + e^z), stable for large |z|. */
function softplus(z: number): number {
  return z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z));
}

/** Solves A x = b (A symmetric positive definite, n × n row-major) by Gaussian elimination with partial pivoting. */
function solve(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const m = Float64Array.from(a);
  const r = Float64Array.from(b);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let row = col + 1; row < n; row++)
      if (Math.abs(m[row * n + col]!) > Math.abs(m[pivot * n + col]!)) pivot = row;
    if (pivot !== col) {
      for (let k = 0; k < n; k++) {
        const t = m[col * n + k]!;
        m[col * n + k] = m[pivot * n + k]!;
        m[pivot * n + k] = t;
      }
      const t = r[col]!;
      r[col] = r[pivot]!;
      r[pivot] = t;
    }
    const d = m[col * n + col]!;
    if (Math.abs(d) < 1e-300) continue;
    for (let row = col + 1; row < n; row++) {
      const f = m[row * n + col]! / d;
      if (f === 0) continue;
      for (let k = col; k < n; k++) m[row * n + k]! -= f * m[col * n + k]!;
      r[row]! -= f * r[col]!;
    }
  }
  const out = new Float64Array(n);
  for (let row = n - 1; row >= 0; row--) {
    let s = r[row]!;
    for (let k = row + 1; k < n; k++) s -= m[row * n + k]! * out[k]!;
    const d = m[row * n + row]!;
    out[row] = Math.abs(d) < 1e-300 ? 0 : s / d;
  }
  return out;
}

/**
 * Fits σ(b + w·x) to weighted 0/1 labels. `ridge` (≥ 0) is the penalty ½·ridge·|w|² relative to the
 * total row weight. Throws InvalidArgumentError on malformed input or a label set of one class.
 */
export function fitLogistic(rows: LogisticRows, ridge = 1e-3): LogisticFit {
  const { x, dims, y } = rows;
  const n = y.length;
  if (!Number.isInteger(dims) || dims < 1)
    throw new InvalidArgumentError(`dims must be a whole number ≥ 1, got ${dims}`);
  if (x.length !== n * dims) throw new InvalidArgumentError(`x has ${x.length} values for ${n} rows × ${dims} dims`);
  if (rows.w !== undefined && rows.w.length !== n) throw new InvalidArgumentError('w must have one weight per row');
  let total = 0;
  let positive = 0;
  for (let i = 0; i < n; i++) {
    const w = rows.w === undefined ? 1 : rows.w[i]!;
    if (!(w > 0) || !Number.isFinite(w)) throw new InvalidArgumentError(`w[${i}] must be a finite number > 0`);
    if (y[i] !== 0 && y[i] !== 1) throw new InvalidArgumentError(`y[${i}] must be 0 or 1`);
    total += w;
    if (y[i] === 1) positive += w;
  }
  for (let i = 0; i < x.length; i++)
    if (!Number.isFinite(x[i]!)) throw new InvalidArgumentError(`x[${i}] must be finite`);
  if (positive === 0 || positive === total) throw new InvalidArgumentError('logistic fit needs both labels');
  const d = dims + 1; // the bias is the last coordinate
  const lambda = ridge * total;
  const theta = new Float64Array(d);
  theta[dims] = Math.log(positive / (total - positive));
  const loss = (t: Float64Array): number => {
    let f = 0;
    for (let i = 0; i < n; i++) {
      let z = t[dims]!;
      for (let j = 0; j < dims; j++) z += t[j]! * x[i * dims + j]!;
      const w = rows.w === undefined ? 1 : rows.w[i]!;
      f += w * (softplus(z) - (y[i] === 1 ? z : 0));
    }
    for (let j = 0; j < dims; j++) f += 0.5 * lambda * t[j]! * t[j]!;
    return f;
  };
  let current = loss(theta);
  let iterations = 0;
  for (; iterations < MAX_ITERATIONS; iterations++) {
    const grad = new Float64Array(d);
    const hess = new Float64Array(d * d);
    const row = new Float64Array(d);
    row[dims] = 1;
    for (let i = 0; i < n; i++) {
      let z = theta[dims]!;
      for (let j = 0; j < dims; j++) {
        row[j] = x[i * dims + j]!;
        z += theta[j]! * row[j]!;
      }
      const p = sigmoid(z);
      const w = rows.w === undefined ? 1 : rows.w[i]!;
      const e = w * (p - y[i]!);
      const h = w * p * (1 - p);
      for (let j = 0; j < d; j++) {
        grad[j]! += e * row[j]!;
        for (let k = 0; k <= j; k++) hess[j * d + k]! += h * row[j]! * row[k]!;
      }
    }
    for (let j = 0; j < dims; j++) {
      grad[j]! += lambda * theta[j]!;
      hess[j * d + j]! += lambda;
    }
    for (let j = 0; j < d; j++) for (let k = j + 1; k < d; k++) hess[j * d + k] = hess[k * d + j]!;
    for (let j = 0; j < d; j++) hess[j * d + j]! += 1e-9 * total; // keeps the solve defined on separable data
    const step = solve(hess, grad, d);
    let scale = 1;
    let next = theta;
    let nextLoss = current;
    for (let tries = 0; tries < 40; tries++) {
      const candidate = new Float64Array(d);
      for (let j = 0; j < d; j++) candidate[j] = theta[j]! - scale * step[j]!;
      const f = loss(candidate);
      if (f <= current) {
        next = candidate;
        nextLoss = f;
        break;
      }
      scale /= 2;
    }
    const improved = current - nextLoss;
    theta.set(next);
    current = nextLoss;
    if (!(improved > TOLERANCE * Math.max(1, Math.abs(current)))) {
      iterations++;
      break;
    }
  }
  return { weights: Array.from(theta.subarray(0, dims)), bias: theta[dims]!, iterations };
}
