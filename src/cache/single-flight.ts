/**
 * One scoring per pair at a time: the first call that misses a pair leads (scores it); calls that
 * miss the same pair meanwhile follow (wait for the leader's outcome). Flights never reject:
 * a failed, aborted or null-scored leader settles its flights with `ok: false`, and followers
 * decide what to do (the score cache re-scores those pairs under the follower's own options).
 */
import type { CacheEntry } from './entry.js';

export type FlightFailure = 'failed' | 'aborted' | 'null' | 'uncacheable';

export type FlightOutcome =
  | { readonly ok: true; readonly entry: CacheEntry }
  | { readonly ok: false; readonly reason: FlightFailure };

export interface Flight {
  readonly promise: Promise<FlightOutcome>;
  /** Set synchronously when the flight settles, so waiters can read partial progress. */
  outcome: FlightOutcome | undefined;
}

interface FlightRecord extends Flight {
  readonly resolve: (outcome: FlightOutcome) => void;
}

export class SingleFlight {
  private readonly flights = new Map<string, FlightRecord>();

  get size(): number {
    return this.flights.size;
  }

  get(key: string): Flight | undefined {
    return this.flights.get(key);
  }

  /** Registers a new flight for `key` (none must be registered); the caller must later settle() it. */
  start(key: string): Flight {
    let resolve!: (outcome: FlightOutcome) => void;
    const promise = new Promise<FlightOutcome>((r) => {
      resolve = r;
    });
    const record: FlightRecord = { promise, outcome: undefined, resolve };
    this.flights.set(key, record);
    return record;
  }

  /** Settles `flight` (once; later calls are ignored) and unregisters it if it is still the key's flight. */
  settle(key: string, flight: Flight, outcome: FlightOutcome): void {
    if (flight.outcome !== undefined) return;
    flight.outcome = outcome;
    if (this.flights.get(key) === flight) this.flights.delete(key);
    (flight as FlightRecord).resolve(outcome);
  }
}
