/**
 * Rank-order early stopping: a ring buffer of pass/fail over the last `window` scored pairs.
 * Stop when passes / window < minRate (strict), checked after each chunk once `window` pairs
 * have been decided. Unscored pairs count as non-passes: a failing scorer is not worth continuing.
 */
import type { EarlyStopPolicy } from '../types.js';

export class EarlyStopWindow {
  private readonly ring: Uint8Array;
  private next = 0;
  private filled = 0;
  private passes = 0;

  constructor(private readonly policy: EarlyStopPolicy) {
    this.ring = new Uint8Array(policy.window);
  }

  record(passed: boolean): void {
    const bit = passed ? 1 : 0;
    if (this.filled === this.ring.length) this.passes -= this.ring[this.next];
    else this.filled++;
    this.ring[this.next] = bit;
    this.passes += bit;
    this.next = this.next + 1 === this.ring.length ? 0 : this.next + 1;
  }

  /** Pass rate over the window, or NaN before `window` pairs were recorded. */
  rate(): number {
    return this.filled < this.ring.length ? Number.NaN : this.passes / this.ring.length;
  }

  shouldStop(): boolean {
    const rate = this.rate();
    return !Number.isNaN(rate) && rate < this.policy.minRate;
  }
}
