/**
 * Vector arithmetic of the embedding tier, and the checks on vectors a caller passes in. Every
 * vector the tier stores or compares is L2-normalised float32, so cosine similarity is a dot
 * product (accumulated in float64).
 */
import { EmbeddingDimensionError, EmbeddingValueError } from './errors.js';

/** What a caller may pass as a precomputed embedding. */
export type EmbeddingInput = Float32Array | readonly number[];

/**
 * A caller's vector as an L2-normalised Float32Array (a copy: the caller's array is never kept or
 * changed). Refuses anything but a Float32Array / Float64Array / array of numbers of exactly
 * `dimensions` finite values, not all zero.
 */
export function checkedUnitVector(value: unknown, dimensions: number, field: string): Float32Array {
  let length: number;
  if (value instanceof Float32Array || value instanceof Float64Array || Array.isArray(value)) {
    length = value.length;
  } else {
    throw new EmbeddingValueError(
      field,
      `must be a Float32Array or an array of numbers, got ${value === null ? 'null' : ArrayBuffer.isView(value) ? value.constructor.name : typeof value}`,
    );
  }
  if (length !== dimensions) throw new EmbeddingDimensionError(field, dimensions, length);
  const source = value as ArrayLike<unknown>;
  const out = new Float32Array(dimensions);
  let sum = 0;
  for (let i = 0; i < dimensions; i++) {
    const v = source[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new EmbeddingValueError(field, `[${i}] must be a finite number, got ${String(v)}`);
    }
    sum += v * v;
  }
  if (!(sum > 0) || !Number.isFinite(sum)) {
    throw new EmbeddingValueError(
      field,
      sum === 0 ? 'is the zero vector (it has no direction)' : 'overflows when normalised',
    );
  }
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < dimensions; i++) out[i] = (source[i] as number) * inv;
  return out;
}

/**
 * Row `row` of a model output ([rows × dimensions], float64) as an L2-normalised Float32Array;
 * null when the row holds a non-finite value or is all zeros (the model failed on that text).
 */
export function unitRow(values: Float64Array, row: number, dimensions: number): Float32Array | null {
  const from = row * dimensions;
  let sum = 0;
  for (let i = 0; i < dimensions; i++) {
    const v = values[from + i];
    if (!Number.isFinite(v)) return null;
    sum += v * v;
  }
  if (!(sum > 0) || !Number.isFinite(sum)) return null;
  const inv = 1 / Math.sqrt(sum);
  const out = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) out[i] = values[from + i] * inv;
  return out;
}

/** Cosine similarity of two unit vectors (their dot product in float64), clamped to [-1, 1]. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
  return Math.min(1, Math.max(-1, dot));
}
