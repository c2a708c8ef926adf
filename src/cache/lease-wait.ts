/**
 * Waiting on another instance's leases: pairs a peer sharing the Redis is scoring right now are
 * looked up again (the lease script, redis-l2.ts) after 1, 2, 4, then every 5 ms until each one's
 * value is there (served from it), its lease is gone without one (the holder died, failed or
 * released it: this call leases and scores it), or the wait ends (half the time left before
 * the call's deadline, the longest a peer's lease can last, Redis failing, this call's own
 * scoring failing): those pairs this call scores itself, unleased. An abort rejects at once. No
 * pair ever waits on a lease that nobody will end: leases expire by themselves.
 */
import type { ScoreOptions } from '../types.js';
import { abortedError, type CallState } from './call.js';
import { budgetOf, type L2ReadPath } from './l2-read.js';
import type { RedisL2 } from './redis-l2.js';
import type { PendingPair } from './single-flight.js';
import type { CacheCounters } from './stats.js';

/**
 * The most of the time left before the call's deadline that a wait may take: the rest stays for
 * scoring the pairs itself when the holder does not deliver (died, lost its store to a Redis
 * restart), so such a pair costs duplicate work, not the request's budget.
 */
const WAIT_SHARE_OF_TIME_LEFT = 0.5;

/** First look again after this long (ms); each later one after twice as long, up to POLL_MAX_MS. */
const POLL_FIRST_MS = 1;
const POLL_MAX_MS = 5;

export interface LeaseWaitParts {
  readonly l2: RedisL2;
  readonly read: L2ReadPath;
  readonly counters: CacheCounters;
  readonly clock: () => number;
}

export class LeaseWait {
  constructor(
    private readonly parts: LeaseWaitParts,
    /** The longest a peer's lease lasts (this cache's leaseMs): no wait outlives it. */
    private readonly maxWaitMs: number,
  ) {}

  /**
   * Waits for the peers leasing `pairs`; fills `call` with what they stored and returns the pairs
   * this call must score itself (after a takeover, `call.leasing` is set). Rejects only on abort.
   */
  async wait(call: CallState, pairs: readonly PendingPair[], options: ScoreOptions): Promise<PendingPair[]> {
    const { l2, read, counters } = this.parts;
    l2.counters.l2LeaseWaits += pairs.length;
    const started = Date.now();
    const deadlineShare =
      options.deadline === undefined
        ? Number.POSITIVE_INFINITY
        : started + Math.max(0, options.deadline - started) * WAIT_SHARE_OF_TIME_LEFT;
    const stopAt = Math.min(deadlineShare, started + this.maxWaitMs);
    let waiting: readonly PendingPair[] = pairs;
    const mine: PendingPair[] = [];
    let delay = POLL_FIRST_MS;
    try {
      while (waiting.length > 0 && !call.failed) {
        const left = stopAt - Date.now();
        if (left <= 0) break;
        await sleep(Math.min(delay, left), options.signal);
        delay = Math.min(delay * 2, POLL_MAX_MS);
        if (call.failed) break;
        const slots = await l2.leaseRead(
          waiting.map((pair) => pair.key),
          budgetOf(options),
          l2.leaseMsFor(options.deadline),
          true,
        );
        if (slots === undefined) break; // Redis failed or the deadline is too near for a read
        const now = this.parts.clock();
        const next: PendingPair[] = [];
        for (let j = 0; j < waiting.length; j++) {
          const pair = waiting[j];
          const slot = slots[j];
          if (slot === 'peer') next.push(pair);
          else if (slot === 'leased') {
            call.leasing = true;
            l2.counters.l2Leases++;
            l2.counters.l2LeaseTakeovers++;
            mine.push(pair);
          } else if (slot !== 'invalid' && read.serve(call, pair, slot.entry, now) === 'served') {
            l2.counters.l2LeaseShared++;
            counters.hits++;
          } else {
            l2.counters.l2LeaseGiveUps++;
            mine.push(pair);
          }
        }
        waiting = next;
      }
    } catch (error) {
      l2.counters.l2LeaseGiveUps += waiting.length;
      throw error;
    }
    l2.counters.l2LeaseGiveUps += waiting.length;
    mine.push(...waiting);
    return mine;
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortedError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
