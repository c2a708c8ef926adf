/**
 * Client-side rate limits: requests per minute and tokens per minute, each a GCRA (generic cell
 * rate algorithm, the virtual-scheduling form of a token bucket) that allows short bursts of up to
 * BURST_MS worth of the rate. A request reserves its slot when it asks, so waiting callers are
 * served in order without a queue. A request that would have to wait past its deadline is refused
 * at once (DeadlineExceededError) and reserves nothing.
 *
 * A 429 from the endpoint pauses every request until its Retry-After (pauseUntil): the server's
 * limit is shared by all our calls, so hammering it with the others would only earn more 429s.
 */
import { DeadlineExceededError } from '../../errors.js';
import { sleep } from './timing.js';

/** Burst tolerance: up to this many ms worth of the rate may be spent at once. */
export const BURST_MS = 2000;

class Gcra {
  /** ms per unit (request or token). */
  private readonly interval: number;
  /** Theoretical arrival time of the next unit. */
  private tat = Number.NEGATIVE_INFINITY;
  constructor(perMinute: number) {
    this.interval = 60_000 / perMinute;
  }

  /** Earliest time `now` or later at which a request may start. */
  allowedAt(now: number): number {
    return Math.max(now, this.tat - BURST_MS);
  }

  reserve(at: number, units: number): void {
    this.tat = Math.max(this.tat, at) + units * this.interval;
  }

  /** Corrects a reservation by `units` (negative: refund), e.g. once actual token usage is known. */
  adjust(units: number, now: number): void {
    if (this.tat === Number.NEGATIVE_INFINITY) return;
    this.tat = Math.max(now - BURST_MS, this.tat + units * this.interval);
  }

  /** ms until `units` more could start, if reserved now. */
  delayFor(units: number, now: number): number {
    const tat = Math.max(this.tat, now) + Math.max(0, units - 1) * this.interval;
    return Math.max(0, tat - BURST_MS - now);
  }
}

export interface RateLimiterOptions {
  readonly requestsPerMinute?: number;
  readonly tokensPerMinute?: number;
  readonly clock: () => number;
}

export class RateLimiter {
  private readonly requests: Gcra | undefined;
  private readonly tokens: Gcra | undefined;
  private readonly clock: () => number;
  private pausedUntil = 0;
  /** Total ms callers were made to wait (stats). */
  waitedMs = 0;
  /** Requests refused because the wait would pass their deadline. */
  refused = 0;

  constructor(options: RateLimiterOptions) {
    this.requests = options.requestsPerMinute === undefined ? undefined : new Gcra(options.requestsPerMinute);
    this.tokens = options.tokensPerMinute === undefined ? undefined : new Gcra(options.tokensPerMinute);
    this.clock = options.clock;
  }

  /** Waits until one request of about `tokens` tokens may be sent, then reserves it. */
  async acquire(tokens: number, signal: AbortSignal | undefined, deadline: number | undefined): Promise<void> {
    const now = this.clock();
    let at = Math.max(now, this.pausedUntil);
    if (this.requests !== undefined) at = Math.max(at, this.requests.allowedAt(now));
    if (this.tokens !== undefined) at = Math.max(at, this.tokens.allowedAt(now));
    if (deadline !== undefined && at >= deadline) {
      this.refused++;
      throw new DeadlineExceededError('the rate limit allows the next request only after the deadline');
    }
    this.requests?.reserve(at, 1);
    this.tokens?.reserve(at, tokens);
    const wait = at - now;
    if (wait <= 0) return;
    this.waitedMs += wait;
    try {
      await sleep(wait, signal, undefined, this.clock, 'rate-limit wait');
    } catch (error) {
      // Not sent: give the reservation back so later requests do not pay for it.
      this.requests?.adjust(-1, this.clock());
      this.tokens?.adjust(-tokens, this.clock());
      throw error;
    }
  }

  /** Corrects the token reservation of a sent request once its real usage is known. */
  settleTokens(estimated: number, actual: number): void {
    if (actual !== estimated) this.tokens?.adjust(actual - estimated, this.clock());
  }

  /** No request starts before `until` (a 429's Retry-After). */
  pauseUntil(until: number): void {
    if (until > this.pausedUntil) this.pausedUntil = until;
  }

  /** ms until `requests` more requests of `tokensEach` could start (cost prediction). */
  delayFor(requests: number, tokensEach: number): number {
    const now = this.clock();
    let d = Math.max(0, this.pausedUntil - now);
    if (this.requests !== undefined) d = Math.max(d, this.requests.delayFor(requests, now));
    if (this.tokens !== undefined) d = Math.max(d, this.tokens.delayFor(requests * tokensEach, now));
    return d;
  }
}
