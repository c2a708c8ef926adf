/**
 * Live cost model of one tier: predicts when n pairs submitted now would complete, from what the
 * router has measured on this tier.
 *
 * - msPerPair: a departure-interval estimate. Each finished submission of n pairs contributes
 *   (finish − max(submit, previous finish)) / n: under load the tier is never idle, so this is the
 *   tier's real drain rate (parallelism included); when idle it is the call's own latency per pair.
 * - queue depth: pairs the router has outstanding on the tier, or the tier's own pending count
 *   (`pendingPairs`) when that is larger (a tier shared with other callers).
 * - prediction: the tier's own estimator when it has one (the cross-encoder batcher knows tokens,
 *   padding and workers), else (ahead + n) × msPerPair; either way multiplied by an EWMA of
 *   observed/predicted completion times, so systematic error (a busy event loop, a shared CPU)
 *   corrects itself.
 */
import type { TierSpec } from './types.js';

const ALPHA = 0.15;
const RATIO_MIN = 0.05;
const RATIO_MAX = 20;

export interface Submission {
  readonly pairs: number;
  readonly startedAt: number;
  readonly predictedMs: number;
}

export class TierCostModel {
  outstanding = 0;
  msPerPair: number;
  ratio = 1;
  submittedPairs = 0;
  completedPairs = 0;
  failedPairs = 0;
  calls = 0;
  /** performance.now() of the last submission start or settle: how fresh the model's evidence is. */
  lastActivity = 0;
  probes = 0;
  private lastFinish = 0;
  private measured = false;

  constructor(private readonly spec: TierSpec) {
    this.msPerPair = spec.initialMsPerPair ?? (spec.inline ? 0.01 : 1);
  }

  /** Raw prediction (before the ratio correction) for `pairs` pairs submitted now. */
  private rawPredict(pairs: number): number {
    const own = this.spec.estimateMs?.(pairs);
    if (own !== undefined && Number.isFinite(own) && own > 0) return own;
    const ahead = Math.max(this.outstanding, this.spec.pendingPairs?.() ?? 0);
    return (ahead + pairs) * this.msPerPair;
  }

  /** Predicted ms until `pairs` pairs submitted now complete. */
  predict(pairs: number): number {
    return this.rawPredict(pairs) * this.ratio;
  }

  /**
   * A prediction the router acts on only gets corrected by new measurements; if it says "does not
   * fit" while the tier sits idle, nothing would ever be sent again and a stale (pessimistic) model
   * would starve the tier for good. So an idle tier with no activity for `probeIntervalMs` may be
   * sent work anyway (a probe); the deadline fallback bounds what a wrong probe can cost.
   */
  mayProbe(now: number, probeIntervalMs: number): boolean {
    if (this.outstanding > 0 || (this.spec.pendingPairs?.() ?? 0) > 0) return false;
    return now - this.lastActivity >= probeIntervalMs;
  }

  begin(pairs: number, now: number): Submission {
    this.lastActivity = now;
    const predictedMs = this.rawPredict(pairs);
    this.outstanding += pairs;
    this.submittedPairs += pairs;
    this.calls++;
    return { pairs, startedAt: now, predictedMs };
  }

  /** A submission finished with every pair scored. */
  complete(sub: Submission, now: number): void {
    this.lastActivity = now;
    this.outstanding -= sub.pairs;
    this.completedPairs += sub.pairs;
    const elapsed = Math.max(0, now - sub.startedAt);
    const busyFrom = Math.max(sub.startedAt, this.lastFinish);
    this.lastFinish = Math.max(this.lastFinish, now);
    if (sub.pairs > 0) {
      const sample = Math.max(0, now - busyFrom) / sub.pairs;
      this.msPerPair = this.measured ? this.msPerPair + ALPHA * (sample - this.msPerPair) : sample;
      this.measured = true;
    }
    if (sub.predictedMs > 0 && elapsed > 0) {
      const r = Math.min(RATIO_MAX, Math.max(RATIO_MIN, elapsed / sub.predictedMs));
      this.ratio += ALPHA * (r - this.ratio);
    }
  }

  /**
   * A submission that ended without results (cancelled at the deadline, aborted, failed). If it
   * ran past its prediction, that is evidence the prediction was low: the ratio learns from it
   * (as a lower bound), otherwise nothing is learnt.
   */
  fail(sub: Submission, now: number): void {
    this.lastActivity = now;
    this.outstanding -= sub.pairs;
    this.failedPairs += sub.pairs;
    const elapsed = Math.max(0, now - sub.startedAt);
    if (sub.predictedMs > 0 && elapsed > sub.predictedMs) {
      const r = Math.min(RATIO_MAX, elapsed / sub.predictedMs);
      this.ratio += ALPHA * (r - this.ratio);
    }
  }
}
