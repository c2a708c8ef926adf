/**
 * How long each scorer takes per scoreMisses call (an exponentially weighted mean), so the cache
 * leases only for scorers slower than a lease costs. A lease makes a peer that wants the same pair
 * wait at least one poll (1 ms, then 2, 4, 5) and a Redis round trip; for a scorer that answers in
 * well under that (the tree fast path) scoring the pair again is cheaper than waiting for it.
 */

/** Scorers faster than this per call are not leased. */
export const LEASE_MIN_SCORE_MS = 2;
/** Weight of the newest call in the mean. */
const ALPHA = 0.2;
/** Scorer ids remembered (a cache serves a few models; the bound keeps a hostile id stream small). */
const MAX_SCORERS = 256;

export class ScorerPace {
  private readonly meanMs = new Map<string, number>();

  record(scorerId: string, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    const prev = this.meanMs.get(scorerId);
    if (prev === undefined && this.meanMs.size >= MAX_SCORERS) {
      const oldest = this.meanMs.keys().next().value;
      if (oldest !== undefined) this.meanMs.delete(oldest);
    }
    this.meanMs.set(scorerId, prev === undefined ? ms : prev + ALPHA * (ms - prev));
  }

  /** True until the scorer is known to be fast: an unknown scorer may be slow. */
  worthLeasing(scorerId: string): boolean {
    const mean = this.meanMs.get(scorerId);
    return mean === undefined || mean >= LEASE_MIN_SCORE_MS;
  }
}
