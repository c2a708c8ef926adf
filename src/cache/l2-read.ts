/**
 * The L2 read path of a leading call: one MGET (redis-l2.ts) for the pairs L1 missed. An entry
 * that is trusted (entry-policy.ts) and younger than the maximum age is promoted to L1, serves the
 * call and settles the pair's flight; every other pair goes on to be scored.
 */
import type { ScoreOptions } from '../types.js';
import type { CallState } from './call.js';
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

export class L2ReadPath {
  constructor(private readonly parts: L2ReadParts) {}

  /** Promotes L2 hits to L1 and returns the pairs still to score. */
  async read(call: CallState, pairs: PendingPair[], options: ScoreOptions): Promise<PendingPair[]> {
    const { l2, l1, policy, flights, counters } = this.parts;
    const budgetMs = options.deadline === undefined ? Number.POSITIVE_INFINITY : options.deadline - Date.now();
    const found = await l2.getMany(
      pairs.map((pair) => pair.key),
      budgetMs,
    );
    if (found === undefined) return pairs;
    const now = this.parts.clock();
    const rest: PendingPair[] = [];
    for (let j = 0; j < pairs.length; j++) {
      const pair = pairs[j];
      const entry = found[j];
      if (entry === undefined) {
        rest.push(pair);
        continue;
      }
      if (!policy.isTrusted(entry, now, call.required)) {
        // Decodes, but a scorer result like it would not have been cached: drop, count, rescore.
        l2.counters.l2Invalid++;
        rest.push(pair);
        continue;
      }
      if (policy.isExpired(entry, now)) {
        l2.counters.l2Misses++;
        rest.push(pair);
        continue;
      }
      // Scored up to maxClockSkewMs "in the future" by another instance's clock: age it from now,
      // so its L1 copy expires no later than its L2 copy does.
      const promoted = entry.scoredAt > now ? { result: entry.result, scoredAt: now } : entry;
      l1.set(pair.key, promoted);
      call.results[pair.index] = entry.result;
      call.cached[pair.index] = true;
      counters.l2Hits++;
      counters.hits++;
      flights.settlePair(pair, { ok: true, entry: promoted });
    }
    return rest;
  }
}
