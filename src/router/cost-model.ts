/**
 * Live cost model of one tier: predicts when n pairs submitted now would complete, from what the
 * router has measured on this tier.
 *
 * Model: completion time of a submission ≈ a + b · x, where x = pairs ahead of it at submission
 * (the router's outstanding pairs, or the tier's own pending count when larger: a tier shared with
 * other callers) plus its own pairs. a is the fixed cost of a round trip (tokenization hop, batch
 * formation, the smallest batch), b the drain time per pair (the tier's parallelism included).
 * Both are fitted online by exponentially weighted least squares (forgetting factor 0.97, about the
 * last 30 submissions) on every submission's observed completion time, so the model follows load
 * changes within a second at bench rates. The slope is shrunk toward a departure-interval estimate
 * of the drain time (each submission contributes (finish − max(submit, previous finish)) / n), which
 * keeps it well-defined when every submission looks alike (same x).
 *
 * Submissions that end without results (cancelled at the deadline) are censored observations: the
 * completion would have come later than they ran. If one ran past its prediction it is added as a
 * sample at its elapsed time (a lower bound, which still pushes the model the right way).
 *
 * Probing (see mayProbe) keeps a pessimistic model from starving an idle tier forever; it backs off
 * exponentially while probes keep confirming the pessimism (cancelled within their prediction).
 *
 * The prediction is the fitted mean plus PREDICTION_Z residual standard deviations (an upper
 * quantile): work is sent only if it is likely, not merely expected, to finish in time.
 *
 * Before the first measurement the tier's own estimator (`estimateMs`, e.g. the cross-encoder
 * batcher's token-based estimate) or `initialMsPerPair` is used.
 */
import type { TierSpec } from './types.js';

const FORGET = 0.97;
const DEPARTURE_ALPHA = 0.15;
/** Ridge weight (pairs²) pulling the slope toward the departure-interval estimate. */
const RIDGE = 4;
const RATIO_ALPHA = 0.1;
const RESIDUAL_ALPHA = 0.1;
/**
 * Predictions are this many residual standard deviations above the fitted mean (≈ the 90th
 * percentile for normal residuals): the router must not send work that finishes in time only
 * on average, or half of it is cancelled at the deadline after using the workers.
 */
export const PREDICTION_Z = 1.3;

export interface Submission {
  readonly pairs: number;
  readonly startedAt: number;
  /** Pairs ahead of this submission, its own included. */
  readonly x: number;
  readonly predictedMs: number;
}

export class TierCostModel {
  outstanding = 0;
  /** Slope b: ms per pair ahead. */
  msPerPair: number;
  /** Intercept a: fixed ms per submission. */
  overheadMs = 0;
  /** EWMA of squared residuals of completions against the fit (ms²). */
  residualVar = 0;
  /** EWMA of observed / predicted completion time of completed submissions (a calibration diagnostic). */
  ratio = 1;
  samples = 0;
  submittedPairs = 0;
  completedPairs = 0;
  failedPairs = 0;
  calls = 0;
  /** performance.now() of the last submission start or settle: how fresh the model's evidence is. */
  lastActivity = 0;
  probes = 0;
  /** Multiplier of the probe interval: doubles (to 64) each time a submission fails within its prediction. */
  probeBackoff = 1;
  private departureMsPerPair: number;
  private lastFinish = 0;
  private s0 = 0;
  private sx = 0;
  private sy = 0;
  private sxx = 0;
  private sxy = 0;

  constructor(private readonly spec: TierSpec) {
    this.msPerPair = spec.initialMsPerPair ?? (spec.inline ? 0.01 : 1);
    this.departureMsPerPair = this.msPerPair;
  }

  /** Pairs ahead of new work: the router's own outstanding pairs or the tier's pending count. */
  ahead(): number {
    return Math.max(this.outstanding, this.spec.pendingPairs?.() ?? 0);
  }

  /** Predicted ms until `pairs` pairs submitted now complete. */
  predict(pairs: number): number {
    if (this.samples === 0) {
      const own = this.spec.estimateMs?.(pairs);
      if (own !== undefined && Number.isFinite(own) && own > 0) return own;
      return (this.ahead() + pairs) * this.msPerPair;
    }
    return this.mean(this.ahead() + pairs) + PREDICTION_Z * Math.sqrt(this.residualVar);
  }

  /** Fitted mean completion time for x pairs ahead (own included). */
  private mean(x: number): number {
    return this.overheadMs + this.msPerPair * x;
  }

  /**
   * A prediction the router acts on only gets corrected by new measurements; if it says "does not
   * fit" while the tier sits idle, nothing would ever be sent again and a stale (pessimistic) model
   * would starve the tier for good. So an idle tier with no activity for `probeIntervalMs` may be
   * sent work anyway (a probe); the deadline fallback bounds what a wrong probe can cost.
   */
  mayProbe(now: number, probeIntervalMs: number): boolean {
    if (this.outstanding > 0 || (this.spec.pendingPairs?.() ?? 0) > 0) return false;
    return now - this.lastActivity >= probeIntervalMs * this.probeBackoff;
  }

  begin(pairs: number, now: number): Submission {
    const predictedMs = this.predict(pairs);
    const x = this.ahead() + pairs;
    this.lastActivity = now;
    this.outstanding += pairs;
    this.submittedPairs += pairs;
    this.calls++;
    return { pairs, startedAt: now, x, predictedMs };
  }

  /** A submission finished with every pair scored. */
  complete(sub: Submission, now: number): void {
    this.lastActivity = now;
    this.outstanding -= sub.pairs;
    this.completedPairs += sub.pairs;
    const elapsed = Math.max(0, now - sub.startedAt);
    if (sub.pairs > 0) {
      const busyFrom = Math.max(sub.startedAt, this.lastFinish);
      const sample = Math.max(0, now - busyFrom) / sub.pairs;
      this.departureMsPerPair =
        this.samples === 0 ? sample : this.departureMsPerPair + DEPARTURE_ALPHA * (sample - this.departureMsPerPair);
    }
    this.lastFinish = Math.max(this.lastFinish, now);
    this.probeBackoff = 1;
    if (sub.predictedMs > 0) this.ratio += RATIO_ALPHA * (elapsed / sub.predictedMs - this.ratio);
    this.addSample(sub.x, elapsed);
  }

  /** A submission that ended without results (cancelled, aborted, failed): a censored observation. */
  fail(sub: Submission, now: number): void {
    this.lastActivity = now;
    this.outstanding -= sub.pairs;
    this.failedPairs += sub.pairs;
    const elapsed = Math.max(0, now - sub.startedAt);
    if (elapsed > sub.predictedMs) this.addSample(sub.x, elapsed);
    // Cancelled before its predicted completion: the (pessimistic) model was not shown wrong, so
    // probing backs off instead of paying a cancelled submission every interval.
    else this.probeBackoff = Math.min(64, this.probeBackoff * 2);
  }

  private addSample(x: number, y: number): void {
    if (this.samples > 0) {
      const r = y - this.mean(x);
      this.residualVar += RESIDUAL_ALPHA * (r * r - this.residualVar);
    }
    this.s0 = this.s0 * FORGET + 1;
    this.sx = this.sx * FORGET + x;
    this.sy = this.sy * FORGET + y;
    this.sxx = this.sxx * FORGET + x * x;
    this.sxy = this.sxy * FORGET + x * y;
    this.samples++;
    const mx = this.sx / this.s0;
    const my = this.sy / this.s0;
    const varX = Math.max(0, this.sxx / this.s0 - mx * mx);
    const cov = this.sxy / this.s0 - mx * my;
    let b = (cov + RIDGE * this.departureMsPerPair) / (varX + RIDGE);
    if (!(b > 0)) b = this.departureMsPerPair > 0 ? this.departureMsPerPair : 1e-3;
    let a = my - b * mx;
    if (a < 0) {
      // Keep the line through the mean with no negative fixed cost.
      a = 0;
      b = mx > 0 ? my / mx : b;
    }
    this.msPerPair = b;
    this.overheadMs = a;
  }
}
