/**
 * One scoring per pair at a time: the first call that misses a pair leads (scores it); calls that
 * miss the same pair meanwhile follow (wait for the leader's outcome). Flights never reject:
 * a failed, aborted or null-scored leader settles its flights with `ok: false`, and followers
 * decide what to do (the score cache re-scores those pairs under the follower's own options).
 */
import type { ScoreOptions } from '../types.js';
import { abortedError } from './call.js';
import type { CacheEntry } from './entry.js';

/** 'approximate': the leader served the pair from a similar query, which followers must not take as this query's score. */
export type FlightFailure = 'failed' | 'aborted' | 'null' | 'uncacheable' | 'approximate';

export type FlightOutcome =
  | { readonly ok: true; readonly entry: CacheEntry }
  | { readonly ok: false; readonly reason: FlightFailure };

export interface Flight {
  readonly promise: Promise<FlightOutcome>;
  /** Set synchronously when the flight settles, so waiters can read partial progress. */
  outcome: FlightOutcome | undefined;
}

/** A pair one call leads or follows: its index in the call's passages, its key and the key's flight. */
export interface PendingPair {
  readonly index: number;
  readonly key: string;
  /** Undefined for a re-score that could not register (another call leads the pair again). */
  readonly flight: Flight | undefined;
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

  /** Settles the flight of `pair`, if it has one. */
  settlePair(pair: PendingPair, outcome: FlightOutcome): void {
    if (pair.flight !== undefined) this.settle(pair.key, pair.flight, outcome);
  }
}

/**
 * Resolves when the flight of every pair (each must have one) settled or the deadline passed;
 * rejects with AbortedError on abort.
 */
export function waitForFlights(pairs: readonly PendingPair[], options: ScoreOptions): Promise<void> {
  const all = Promise.all(pairs.map((pair) => (pair.flight as Flight).promise));
  const { signal, deadline } = options;
  if (signal === undefined && deadline === undefined) return all.then(() => undefined);
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      done();
      reject(abortedError(signal as AbortSignal));
    };
    if (signal !== undefined) {
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    }
    if (deadline !== undefined) {
      timer = setTimeout(
        () => {
          done();
          resolve();
        },
        Math.max(0, deadline - Date.now()),
      );
    }
    void all.then(() => {
      done();
      resolve();
    });
  });
}
