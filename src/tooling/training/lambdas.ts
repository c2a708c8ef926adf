/**
 * LambdaMART gradients (Burges 2010, "From RankNet to LambdaRank to LambdaMART", section 7) for
 * the NDCG of each query's candidate list under the current scores.
 *
 * For every pair (i, j) of one query with grade_i > grade_j, with ρ = 1 / (1 + exp(σ (s_i - s_j)))
 * and |ΔZ| = |NDCG change when i and j swap positions in the current ranking|:
 *   λ_i += σ |ΔZ| ρ,   λ_j -= σ |ΔZ| ρ,   w_i += w_j += σ² |ΔZ| ρ (1 - ρ).
 * λ is the ascent direction (positive = should move up); w is the second derivative used by the
 * Newton leaf step. Gains are linear in the grade (the gain of src/tooling/eval/metrics.ts ndcgAt), the
 * discount 1 / log2(position + 2), normalised by the ideal DCG of the candidate list.
 * Ties in the current scores keep the row order (first-stage order), like rerankOrder.
 */
import { InvalidArgumentError } from '../../errors.js';
import { positiveNumber } from '../../util/validate-options.js';

export interface LambdaQuery {
  /** First row of the query. */
  readonly offset: number;
  /** Rows (candidates) of the query. */
  readonly count: number;
  /** Multiplies the query's λ and w (1 = plain). */
  readonly weight: number;
}

export interface LambdaOptions {
  /** RankNet's sigmoid steepness σ (> 0). */
  readonly sigma: number;
  /**
   * Only pairs where at least one of the two is ranked above this position (0-based) contribute.
   * Infinity = every pair. Focuses the gradient on the top of the list, where nDCG@10 is measured.
   */
  readonly truncation: number;
}

export const DEFAULT_LAMBDA_OPTIONS: LambdaOptions = { sigma: 1, truncation: Number.POSITIVE_INFINITY };

function discount(position: number): number {
  return 1 / Math.log2(position + 2);
}

/** Ideal DCG of a list of grades (all positions): the NDCG normaliser. */
export function idealDcg(grades: ArrayLike<number>, offset: number, count: number): number {
  const sorted: number[] = [];
  for (let i = 0; i < count; i++) sorted.push(grades[offset + i]!);
  sorted.sort((a, b) => b - a);
  let dcg = 0;
  for (let p = 0; p < sorted.length && sorted[p]! > 0; p++) dcg += sorted[p]! * discount(p);
  return dcg;
}

/**
 * Fills lambdas and weights (length = rows) for every query; rows outside the queries are left 0.
 * Queries without a relevant candidate contribute nothing.
 */
export function computeLambdas(
  scores: ArrayLike<number>,
  grades: ArrayLike<number>,
  queries: readonly LambdaQuery[],
  options: LambdaOptions,
  lambdas: Float64Array,
  weights: Float64Array,
): void {
  const { sigma, truncation } = options;
  positiveNumber('sigma', sigma);
  if (!(truncation >= 1)) throw new InvalidArgumentError(`truncation must be >= 1, got ${truncation}`);
  if (lambdas.length !== weights.length)
    throw new InvalidArgumentError('lambdas and weights must have the same length');
  lambdas.fill(0);
  weights.fill(0);
  const discounts: number[] = [];
  for (const q of queries) {
    if (q.offset < 0 || q.count < 0 || q.offset + q.count > lambdas.length) {
      throw new InvalidArgumentError(
        `query rows [${q.offset}, ${q.offset + q.count}) are outside the ${lambdas.length} rows`,
      );
    }
    const ideal = idealDcg(grades, q.offset, q.count);
    if (ideal <= 0 || q.weight === 0) continue;
    // Current ranking: order[p] = row (relative to offset) at position p.
    const order = Array.from({ length: q.count }, (_, i) => i);
    order.sort((a, b) => scores[q.offset + b]! - scores[q.offset + a]! || a - b);
    const scale = q.weight / ideal;
    const limit = Math.min(truncation, q.count);
    // The inner loop runs count² / 2 times per query and round: look discounts up, not log2 them.
    while (discounts.length < q.count) discounts.push(discount(discounts.length));
    for (let pi = 0; pi < limit; pi++) {
      const i = q.offset + order[pi]!;
      const gi = grades[i]!;
      for (let pj = pi + 1; pj < q.count; pj++) {
        const j = q.offset + order[pj]!;
        const gj = grades[j]!;
        if (gi === gj) continue;
        // hi = the more relevant of the two.
        const [hi, lo] = gi > gj ? [i, j] : [j, i];
        const deltaZ = Math.abs((gi - gj) * (discounts[pi]! - discounts[pj]!)) * scale;
        const rho = 1 / (1 + Math.exp(sigma * (scores[hi]! - scores[lo]!)));
        const lambda = sigma * deltaZ * rho;
        const w = sigma * sigma * deltaZ * rho * (1 - rho);
        lambdas[hi]! += lambda;
        lambdas[lo]! -= lambda;
        weights[hi]! += w;
        weights[lo]! += w;
      }
    }
  }
}
