/**
 * Admission control: a bound on the (query, document) pairs a model has in flight. A request that
 * would exceed it is refused at once (429) instead of queueing without bound behind work that
 * already cannot meet its deadline. The Retry-After it suggests comes from the observed drain
 * rate: how long the pairs above the bound take to finish at the rate pairs have been finishing.
 */

/** Retry-After bounds, seconds (HTTP Retry-After is whole seconds; SDKs parse it as an integer). */
export const MIN_RETRY_AFTER_SEC = 1;
export const MAX_RETRY_AFTER_SEC = 30;
const RATE_WINDOW_MS = 250;
const RATE_EWMA_ALPHA = 0.3;

export interface AdmissionTicket {
  readonly pairs: number;
  /** Idempotent. */
  release(): void;
}

export class AdmissionController {
  private inFlight = 0;
  private windowStart = performance.now();
  private windowPairs = 0;
  /** EWMA of pairs finished per second; 0 until measured. */
  private drainPerSec = 0;

  constructor(readonly maxPairs: number) {}

  get pairsInFlight(): number {
    return this.inFlight;
  }

  /** Pairs finished per second (EWMA over 250 ms windows), 0 before the first window. */
  get drainRate(): number {
    this.roll(performance.now());
    return this.drainPerSec;
  }

  /**
   * Admits `pairs` or returns undefined. A request larger than the whole bound is admitted only
   * when nothing else is in flight, so it is served alone rather than never.
   */
  tryAdmit(pairs: number): AdmissionTicket | undefined {
    const fits = this.inFlight + pairs <= this.maxPairs || (this.inFlight === 0 && pairs > this.maxPairs);
    if (!fits) return undefined;
    this.inFlight += pairs;
    let released = false;
    return {
      pairs,
      release: () => {
        if (released) return;
        released = true;
        this.inFlight -= pairs;
        this.finished(pairs);
      },
    };
  }

  /** Seconds until `pairs` more would fit at the observed drain rate, within [1, 30]. */
  retryAfterSec(pairs: number): number {
    const excess = this.inFlight + pairs - this.maxPairs;
    const rate = this.drainRate;
    if (excess <= 0 || rate <= 0) return MIN_RETRY_AFTER_SEC;
    return Math.min(MAX_RETRY_AFTER_SEC, Math.max(MIN_RETRY_AFTER_SEC, Math.ceil(excess / rate)));
  }

  private finished(pairs: number): void {
    const now = performance.now();
    this.roll(now);
    this.windowPairs += pairs;
  }

  private roll(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < RATE_WINDOW_MS) return;
    const rate = (this.windowPairs * 1000) / elapsed;
    // An idle stretch (nothing in flight) says nothing about capacity: keep the last estimate.
    if (this.windowPairs > 0 || this.inFlight > 0)
      this.drainPerSec =
        this.drainPerSec === 0 ? rate : RATE_EWMA_ALPHA * rate + (1 - RATE_EWMA_ALPHA) * this.drainPerSec;
    this.windowStart = now;
    this.windowPairs = 0;
  }
}
