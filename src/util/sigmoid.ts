/**
 * The logistic function σ(x) = 1 / (1 + e^−x) in float64: the one implementation behind every
 * probability the engine computes from a raw score (Platt calibration, the fast path's margins,
 * the cross-encoder's logits).
 */

/** Below this, e^−x overflows float64 (e^709.78 ≈ 1.8e308) while σ(x) = e^x / (1 + e^x) = e^x to the last bit. */
const OVERFLOW_BOUND = -709;

/**
 * σ(x), numerically stable over the whole float64 range: 1 / (1 + e^−x) is accurate to a few ulps
 * wherever e^−x is finite (it never cancels: 1 + e^−x ≥ 1), and below OVERFLOW_BOUND the exact
 * limit e^x is returned instead of 1/∞. Keep this exact expression: the shipped fast-path model's
 * recommended threshold is a probability computed with it, so a pair scored exactly at the
 * threshold stays on the same side of it.
 */
export function sigmoid(x: number): number {
  if (x < OVERFLOW_BOUND) return Math.exp(x);
  return 1 / (1 + Math.exp(-x));
}
