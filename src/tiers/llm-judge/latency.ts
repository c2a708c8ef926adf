/**
 * What the judge has measured about its endpoint's latency: an EWMA of successful request
 * durations (the cost prediction) and the fastest of the last few (the least time a new request
 * needs: with less left before the deadline it is not sent at all).
 */
const ALPHA = 0.2;
const RECENT = 32;

export class LatencyTracker {
  private mean: number;
  private readonly recent = new Float64Array(RECENT);
  private count = 0;

  constructor(private readonly priorMs: number) {
    this.mean = priorMs;
  }

  record(ms: number): void {
    this.mean = this.count === 0 ? ms : this.mean + ALPHA * (ms - this.mean);
    this.recent[this.count % RECENT] = ms;
    this.count++;
  }

  get samples(): number {
    return this.count;
  }

  /** Expected ms of one request (the prior until the first measurement). */
  expectedMs(): number {
    return this.mean;
  }

  /** Fastest of the last RECENT successful requests; 0 before any (never skips a request then). */
  floorMs(): number {
    const n = Math.min(this.count, RECENT);
    if (n === 0) return 0;
    let min = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) if (this.recent[i] < min) min = this.recent[i];
    return min;
  }

  /** The prior is kept for reporting. */
  get prior(): number {
    return this.priorMs;
  }
}
