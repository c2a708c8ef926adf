/**
 * The L2 read paths. A leading call's read of the pairs L1 missed: one MGET (redis-l2.ts), or,
 * with leases, one script that also leases the pairs nobody has stored and says which ones
 * another instance holds a lease on (the call then waits for those: lease-wait.ts). And a
 * prefetch: a read ahead of a call (a router before it plans) that only fills L1. An entry that is
 * trusted (entry-policy.ts) and younger than the maximum age is promoted to L1 and serves the call
 * (settling the pair's flight); every other pair goes on to be scored.
 */
import type { ScoreOptions } from '../types.js';
import type { CallState } from './call.js';
import type { CacheEntry } from './entry.js';
import type { EntryPolicy } from './entry-policy.js';
import type { L1Cache } from './l1-cache.js';
import type { RedisL2 } from './redis-l2.js';
import type { PendingPair, SingleFlight } from './single-flight.js';
import type { CacheCounters } from './stats.js';

export interface L2ReadParts {
  readonly l2: RedisL2;
  readonly l1: L1Cache;
  readonly policy: EntryPolicy;
  readonly flights: SingleFlight;
  readonly counters: CacheCounters;
  readonly clock: () => number;
}

/** A leading call's pairs after a leasing read: the ones it scores, and the ones another instance is scoring. */
export interface LeasedRead {
  readonly score: PendingPair[];
  readonly wait: PendingPair[];
}

/** A key to prefetch and the signals its entry must carry. */
export interface PrefetchKey {
  readonly key: string;
  readonly required: readonly string[];
}

/** What became of a pair found in L2. */
export type Promotion = 'served' | 'untrusted' | 'expired';

export function budgetOf(options: ScoreOptions): number {
  return options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - Date.now();
}

export class L2ReadPath {
  constructor(private readonly parts: L2ReadParts) {}

  /** Promotes L2 hits to L1 and returns the pairs still to score. */
  async read(call: CallState, pairs: PendingPair[], options: ScoreOptions): Promise<PendingPair[]> {
    const { l2, counters } = this.parts;
    const found = await l2.getMany(
      pairs.map((pair) => pair.key),
      budgetOf(options),
    );
    if (found === undefined) return pairs;
    const now = this.parts.clock();
    const rest: PendingPair[] = [];
    for (let j = 0; j < pairs.length; j++) {
      const pair = pairs[j];
      const entry = found[j];
      if (entry !== undefined && this.serve(call, pair, entry, now) === 'served') {
        counters.l2Hits++;
        counters.hits++;
      } else rest.push(pair);
    }
    return rest;
  }

  /**
   * Like read(), leasing what it scores: pairs without a value are leased for this call (score
   * them) unless another instance holds their lease (wait for them). Sets `call.leasing` when it
   * took a lease. Without Redis (skipped, failed), every pair is to be scored, unleased.
   */
  async readLeasing(call: CallState, pairs: PendingPair[], options: ScoreOptions): Promise<LeasedRead> {
    const { l2, counters } = this.parts;
    const slots = await l2.leaseRead(
      pairs.map((pair) => pair.key),
      budgetOf(options),
      l2.leaseMsFor(options.deadline),
    );
    if (slots === undefined) return { score: pairs, wait: [] };
    const now = this.parts.clock();
    const score: PendingPair[] = [];
    const wait: PendingPair[] = [];
    for (let j = 0; j < pairs.length; j++) {
      const pair = pairs[j];
      const slot = slots[j];
      if (slot === 'peer') {
        wait.push(pair);
        continue;
      }
      if (slot === 'leased') {
        call.leasing = true;
        l2.counters.l2Leases++;
        score.push(pair);
        continue;
      }
      if (slot !== 'invalid' && this.serve(call, pair, slot.entry, now) === 'served') {
        counters.l2Hits++;
        counters.hits++;
      } else score.push(pair);
    }
    return { score, wait };
  }

  /**
   * Reads `keys` from L2 and promotes the trusted, fresh entries to L1 (no call waits on them:
   * a synchronous lookup() sees them next). Resolves with the number promoted; never rejects.
   */
  async prefetch(keys: readonly PrefetchKey[], options: ScoreOptions): Promise<number> {
    const { l2, l1 } = this.parts;
    if (keys.length === 0) return 0;
    const found = await l2.getMany(
      keys.map((k) => k.key),
      budgetOf(options),
    );
    if (found === undefined) return 0;
    const now = this.parts.clock();
    let promoted = 0;
    for (let j = 0; j < keys.length; j++) {
      const entry = found[j];
      if (entry === undefined) continue;
      const verdict = this.check(entry, now, keys[j].required);
      if (verdict !== 'served') continue;
      l1.set(keys[j].key, fromNow(entry, now));
      promoted++;
    }
    l2.counters.l2Prefetched += promoted;
    return promoted;
  }

  /**
   * Serves `pair` of `call` from an entry found in L2 when it is trusted and fresh (promoted to L1,
   * its flight settled); counts it when it is not. The caller counts what it serves.
   */
  serve(call: CallState, pair: PendingPair, entry: CacheEntry, now: number): Promotion {
    const verdict = this.check(entry, now, call.required);
    if (verdict !== 'served') return verdict;
    const promoted = fromNow(entry, now);
    this.parts.l1.set(pair.key, promoted);
    call.results[pair.index] = entry.result;
    call.cached[pair.index] = true;
    this.parts.flights.settlePair(pair, { ok: true, entry: promoted });
    return 'served';
  }

  /** Whether an entry from L2 may serve (counting the ones that may not). */
  private check(entry: CacheEntry, now: number, required: readonly string[]): Promotion {
    const { l2, policy } = this.parts;
    if (!policy.isTrusted(entry, now, required)) {
      // Decodes, but a scorer result like it would not have been cached: drop, count, rescore.
      l2.counters.l2Invalid++;
      return 'untrusted';
    }
    if (policy.isExpired(entry, now)) {
      l2.counters.l2Misses++;
      return 'expired';
    }
    return 'served';
  }
}

/**
 * Scored up to maxClockSkewMs "in the future" by another instance's clock: aged from now, so its
 * L1 copy expires no later than its L2 copy does.
 */
function fromNow(entry: CacheEntry, now: number): CacheEntry {
  return entry.scoredAt > now ? { result: entry.result, scoredAt: now } : entry;
}
