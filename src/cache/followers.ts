/**
 * Followers of single flights: what a call that waited on other calls' scoring takes from them.
 * A pair whose leader scored it is shared (`inflightShared`); one whose leader failed, was
 * aborted, got null or had not finished is taken from L1 if someone has stored it since, and
 * otherwise comes back to be re-scored by the follower, which leads it (registers a flight) when
 * no other call does, so later calls can join.
 */
import type { CallState } from './call.js';
import type { L1Cache } from './l1-cache.js';
import type { PendingPair, SingleFlight } from './single-flight.js';
import type { CacheCounters } from './stats.js';

export interface FollowerParts {
  readonly l1: L1Cache;
  readonly flights: SingleFlight;
  readonly counters: CacheCounters;
  readonly clock: () => number;
}

export class Followers {
  constructor(private readonly parts: FollowerParts) {}

  /**
   * Fills `call` with the pairs (each with a flight) whose outcome is known by now, and returns
   * the ones this call must score itself. Call it once the flights settled or the call's deadline
   * passed (waitForFlights).
   */
  collect(call: CallState, pairs: readonly PendingPair[]): PendingPair[] {
    const { l1, flights, counters } = this.parts;
    const retry: PendingPair[] = [];
    const now = this.parts.clock();
    for (const pair of pairs) {
      const outcome = pair.flight?.outcome;
      if (outcome?.ok) {
        call.results[pair.index] = outcome.entry.result;
        call.cached[pair.index] = true;
        counters.inflightShared++;
        counters.hits++;
        continue;
      }
      // Someone may have scored it since; otherwise lead it ourselves so later calls can join.
      const entry = l1.get(pair.key, now);
      if (entry !== undefined) {
        call.results[pair.index] = entry.result;
        call.cached[pair.index] = true;
        counters.l1Hits++;
        counters.hits++;
        continue;
      }
      counters.followerRescores++;
      const flight = flights.get(pair.key) === undefined ? flights.start(pair.key) : undefined;
      retry.push({ index: pair.index, key: pair.key, flight });
    }
    return retry;
  }
}
