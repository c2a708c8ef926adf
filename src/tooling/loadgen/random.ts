/**
 * Seeded randomness for the load generator: a small fast PRNG (mulberry32), exponential
 * inter-arrival times (Poisson process) and a Zipf sampler. Deterministic for a given seed.
 */
import { InvalidArgumentError } from '../../errors.js';

/** Uniform [0, 1) from a 32-bit seed (mulberry32: tiny, fast, good enough for workload draws). */
export { mulberry32 as createRng } from '../../util/seeded-random.js';

/** Exponential inter-arrival gap in ms for a Poisson process of `ratePerSec`. */
export function exponentialGapMs(rng: () => number, ratePerSec: number): number {
  // 1 − u is in (0, 1]: log never sees 0.
  return (-Math.log(1 - rng()) * 1000) / ratePerSec;
}

/**
 * Draws ranks 0..n−1 with P(rank r) ∝ 1 / (r + 1)^s (Zipf). s = 0 is uniform. Precomputes the CDF
 * once (n floats) and draws by binary search: O(log n) per draw, no allocation.
 */
export class ZipfSampler {
  private readonly cdf: Float64Array;

  constructor(
    readonly n: number,
    readonly s: number,
    private readonly rng: () => number,
  ) {
    if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`Zipf n must be a positive integer, got ${n}`);
    if (!(s >= 0) || !Number.isFinite(s))
      throw new InvalidArgumentError(`Zipf s must be a finite number ≥ 0, got ${s}`);
    this.cdf = new Float64Array(n);
    let total = 0;
    for (let r = 0; r < n; r++) {
      total += 1 / (r + 1) ** s;
      this.cdf[r] = total;
    }
    for (let r = 0; r < n; r++) this.cdf[r] /= total;
    this.cdf[n - 1] = 1;
  }

  /** Probability of rank r. */
  probability(r: number): number {
    return r === 0 ? this.cdf[0] : this.cdf[r] - this.cdf[r - 1];
  }

  next(): number {
    const u = this.rng();
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid] > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}

/** A seeded Fisher–Yates permutation of 0..n−1. */
export function permutation(n: number, rng: () => number): Int32Array {
  const p = new Int32Array(n);
  for (let i = 0; i < n; i++) p[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    const t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  return p;
}
