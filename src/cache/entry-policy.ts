/**
 * When a stored entry may be served: not older than the cache's maximum age (ttlMs, capped by the
 * L2 TTL) and, for entries from outside the process (Redis, snapshot files), trusted: not scored
 * further in the future than the allowed clock skew, and carrying a required signal.
 */
import { hasAnySignal, type CacheEntry } from './entry.js';

export class EntryPolicy {
  constructor(
    /** Age at which an entry expires; undefined: never. */
    readonly maxAgeMs: number | undefined,
    readonly maxClockSkewMs: number,
    /** The cache's requiredSignals (a request may ask for others). */
    readonly requiredSignals: readonly string[],
  ) {}

  isExpired(entry: CacheEntry, now: number): boolean {
    return this.maxAgeMs !== undefined && now - entry.scoredAt >= this.maxAgeMs;
  }

  /** An entry read from outside (L2, snapshot) is trusted if not scored in the future and it has a required signal. */
  isTrusted(entry: CacheEntry, now: number, required: readonly string[] = this.requiredSignals): boolean {
    return entry.scoredAt <= now + this.maxClockSkewMs && hasAnySignal(entry.result, required);
  }
}
