/**
 * Admission control: a request the server cannot answer within its budget is refused at once (429
 * with Retry-After) instead of being admitted, queued and failed at its deadline after using the
 * workers. Two levels, both decided from what the server knows when the request arrives
 * (docs/server.md "Under load"):
 *
 * - server-wide (ServerAdmission, checked when the request line and headers arrive, before the
 *   body is read and before Fastify sees the request): a bound on requests being served at once
 *   (`admission.maxConcurrentRequests`), the event loop's standing queue (CoDel's test on how
 *   long requests waited for the loop, lag.ts), and the request's age against its budget: how long
 *   its bytes have waited, or, when the client says when it sent the request (`x-request-start`),
 *   since then.
 * - per model (AdmissionController, checked once the body is parsed and the model and document
 *   count are known): a bound on the (query, document) pairs the model has in flight
 *   (`maxInFlightPairs`), and the model's predicted completion for the request from its measured
 *   capacity: a cross-encoder pool's queue (pairs ahead + its own, at an upper quantile of the time
 *   per pair its recent requests took: QueueRatio), a fast path's service time (a fit of
 *   a + b · pairs on its completed requests: it runs on the event loop, whose wait is the age), a
 *   router's fastest answer (the router's own cost model of its inline tier). A request is
 *   admitted when age + predicted ≤ budget − answer margin.
 *
 * The Retry-After suggested comes from the observed drain rate (pairs finished per second): how
 * long the pairs above the bound take to finish, or the predicted excess over the budget.
 */

/** Retry-After bounds, seconds (HTTP Retry-After is whole seconds; SDKs parse it as an integer). */
export const MIN_RETRY_AFTER_SEC = 1;
export const MAX_RETRY_AFTER_SEC = 30;
const RATE_WINDOW_MS = 250;
const RATE_EWMA_ALPHA = 0.3;

/** Forgetting factor of the completion-time fit: about the last 20 completions count. */
const FORGET = 0.95;
/** Ridge weight (pairs²) pulling the slope toward the departure-interval estimate. */
const RIDGE = 4;
const DEPARTURE_ALPHA = 0.15;
const RESIDUAL_ALPHA = 0.1;
/** Predictions are the fitted mean plus this many residual standard deviations (≈ the 95th percentile). */
export const ADMISSION_PREDICTION_Z = 1.65;
/** Completions the fit needs before it is trusted over the tier's own estimate. */
const MIN_SAMPLES = 5;
/**
 * An idle model (nothing of it in flight) whose prediction refuses every request is sent one
 * anyway this often at most: a prediction is only corrected by new completions, so a stale,
 * pessimistic fit must not refuse forever.
 */
export const ADMISSION_PROBE_INTERVAL_MS = 250;

export interface AdmissionTicket {
  readonly pairs: number;
  /**
   * Releases the pairs. Idempotent. `scoredPairs` (when the call completed with every pair scored):
   * the pairs the model itself scored (cache hits excluded), a completion-time sample of the fit.
   * Without it the call is a censored sample (cut by its deadline, aborted or failed): it counts
   * only when it ran past its prediction (a lower bound of the true completion time).
   */
  release(scoredPairs?: number): void;
}

/** How a model's completion time is predicted (set by the registry per model kind). */
export interface AdmissionOptions {
  /**
   * Pairs already waiting ahead of a new request in the model's queue (a cross-encoder pool's
   * tokenizing, queued and running pairs, whoever submitted them). Absent: the model runs on the
   * event loop and only its own pairs count (the loop's wait is the request's age).
   */
  readonly pairsAhead?: () => number;
  /** The tier's own estimate of ms until `pairs` new pairs would complete, used until the fit has samples. */
  readonly estimateMs?: (pairs: number) => number;
  /**
   * A router: the fastest answer it can give `pairs` pairs now (its inline tier's predicted ms).
   * Replaces the fit: a router answers by the deadline from its inline tier whatever the slow tiers do.
   */
  readonly answerMs?: (pairs: number) => number;
  /** Whether the prediction decides at all (false: the pair bound only, e.g. programmatic scorers). */
  readonly predictive?: boolean;
}

/** Why a request was refused, and for how long the client should wait. */
export interface AdmissionRefusal {
  readonly reason: 'pairs' | 'predicted';
  readonly message: string;
  readonly retryAfterSec: number;
}

export interface AdmissionRequest {
  /** How long the request has waited already, ms (its age at the server, queueing estimate included). */
  readonly ageMs: number;
  /** The request's budget, ms. */
  readonly budgetMs: number;
  /** Time kept for writing the answer, ms (the response margin). */
  readonly marginMs: number;
}

/**
 * Time per pair in the queue, as an upper quantile over the model's recent requests: completion ms
 * / (pairs ahead at admission + own pairs). A cross-encoder pool forms batches from every queued
 * request (token budget, age priority) and tokenizes between batches, so one request's completion
 * follows the whole queue it joined rather than its own position: measured on the TinyBERT-L2 pool,
 * completions at the same queue length spread over ±40 % and a least-squares line explained little
 * of them. The quantile of the ratio, fed with every completion (and every request cut at its
 * deadline, at its elapsed time: a lower bound), is what the queue costs per pair with that spread
 * included; it rises at once when completions slow down (a busy host) and falls as they recover.
 */
class QueueRatio {
  private readonly ratios = new Float64Array(QUEUE_RATIO_WINDOW);
  private count = 0;
  private next = 0;
  private cached: number | undefined;

  get samples(): number {
    return this.count;
  }

  /** The upper quantile of ms per pair; undefined before any sample. */
  get msPerPair(): number | undefined {
    if (this.count === 0) return undefined;
    if (this.cached === undefined) {
      const sorted = this.ratios.slice(0, this.count).sort();
      this.cached = sorted[Math.min(this.count - 1, Math.floor(QUEUE_RATIO_QUANTILE * this.count))];
    }
    return this.cached;
  }

  /** A request cut short (deadline, abort, failure): counts only when it says the queue is slower than thought. */
  addCensored(x: number, elapsedMs: number): void {
    const current = this.msPerPair;
    if (current === undefined || elapsedMs / x > current) this.add(x, elapsedMs);
  }

  add(x: number, elapsedMs: number): void {
    if (!(x > 0)) return;
    this.ratios[this.next] = elapsedMs / x;
    this.next = (this.next + 1) % QUEUE_RATIO_WINDOW;
    this.count = Math.min(QUEUE_RATIO_WINDOW, this.count + 1);
    this.cached = undefined;
  }
}

/** Completions QueueRatio keeps, and the quantile it predicts with. */
const QUEUE_RATIO_WINDOW = 128;
export const QUEUE_RATIO_QUANTILE = 0.99;

/**
 * Completion ≈ a + b·x, fitted online by exponentially weighted least squares; the slope is shrunk
 * toward a departure-interval estimate of the time per pair (as the router's cost model does), so
 * it stays defined when every request looks alike.
 */
class CompletionFit {
  samples = 0;
  msPerPair = 0;
  overheadMs = 0;
  residualVar = 0;
  private departure = 0;
  private lastFinish = 0;
  private s0 = 0;
  private sx = 0;
  private sy = 0;
  private sxx = 0;
  private sxy = 0;

  predict(x: number): number {
    return this.overheadMs + this.msPerPair * x + ADMISSION_PREDICTION_Z * Math.sqrt(this.residualVar);
  }

  /** A completion: x pairs (ahead + own scored), started at `startedAt`, finished at `now` (performance.now()). */
  complete(x: number, own: number, startedAt: number, now: number): void {
    if (own > 0) {
      const sample = Math.max(0, now - Math.max(startedAt, this.lastFinish)) / own;
      this.departure = this.samples === 0 ? sample : this.departure + DEPARTURE_ALPHA * (sample - this.departure);
    }
    this.lastFinish = Math.max(this.lastFinish, now);
    this.add(x, Math.max(0, now - startedAt));
  }

  /** A call that ended without a complete answer after `elapsed` ms: counts only when past the prediction. */
  censored(x: number, elapsed: number): void {
    if (this.samples > 0 && elapsed > this.predict(x)) this.add(x, elapsed);
  }

  private add(x: number, y: number): void {
    if (this.samples > 0) {
      const r = y - (this.overheadMs + this.msPerPair * x);
      this.residualVar += RESIDUAL_ALPHA * (r * r - this.residualVar);
    }
    this.s0 = this.s0 * FORGET + 1;
    this.sx = this.sx * FORGET + x;
    this.sy = this.sy * FORGET + y;
    this.sxx = this.sxx * FORGET + x * x;
    this.sxy = this.sxy * FORGET + x * y;
    this.samples++;
    const mx = this.sx / this.s0;
    const my = this.sy / this.s0;
    const varX = Math.max(0, this.sxx / this.s0 - mx * mx);
    const cov = this.sxy / this.s0 - mx * my;
    let b = (cov + RIDGE * this.departure) / (varX + RIDGE);
    if (!(b > 0)) b = this.departure > 0 ? this.departure : 1e-4;
    let a = my - b * mx;
    if (a < 0) {
      a = 0;
      b = mx > 0 ? my / mx : b;
    }
    this.msPerPair = b;
    this.overheadMs = a;
  }
}

export class AdmissionController {
  private inFlight = 0;
  private requests = 0;
  private windowStart = performance.now();
  private windowPairs = 0;
  /** EWMA of pairs finished per second; 0 until measured. */
  private drainPerSec = 0;
  private readonly fit = new CompletionFit();
  private readonly queue = new QueueRatio();
  private lastAdmit = Number.NEGATIVE_INFINITY;
  private readonly options: AdmissionOptions;

  constructor(
    readonly maxPairs: number,
    options: AdmissionOptions = {},
  ) {
    this.options = options;
  }

  get pairsInFlight(): number {
    return this.inFlight;
  }

  /** Requests of this model admitted and not released. */
  get requestsInFlight(): number {
    return this.requests;
  }

  /** Pairs finished per second (EWMA over 250 ms windows), 0 before the first window. */
  get drainRate(): number {
    this.roll(performance.now());
    return this.drainPerSec;
  }

  /**
   * What admission has measured of the model: ms per pair (a queued model: the upper quantile of
   * its queue's time per pair; else the fit's slope), the fit's fixed ms, completions learnt from.
   */
  get capacity(): { readonly msPerPair: number; readonly overheadMs: number; readonly samples: number } {
    if (this.options.pairsAhead !== undefined)
      return { msPerPair: this.queue.msPerPair ?? 0, overheadMs: 0, samples: this.queue.samples };
    return { msPerPair: this.fit.msPerPair, overheadMs: this.fit.overheadMs, samples: this.fit.samples };
  }

  /** Pairs ahead of a new request in the model's queue (0 for a model that runs on the event loop). */
  pairsAhead(): number {
    return this.options.pairsAhead?.() ?? 0;
  }

  /**
   * Predicted ms until a request of `pairs` pairs admitted now completes; undefined when nothing is
   * known yet (no completions and no estimate from the tier) or the model is not predictive.
   */
  predictMs(pairs: number): number | undefined {
    if (this.options.predictive === false) return undefined;
    const answer = this.options.answerMs;
    if (answer !== undefined) {
      const ms = answer(pairs);
      return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
    }
    const x = this.pairsAhead() + pairs;
    const queued = this.options.pairsAhead !== undefined;
    const samples = queued ? this.queue.samples : this.fit.samples;
    const fitted = (): number => (queued ? x * (this.queue.msPerPair as number) : this.fit.predict(x));
    if (samples >= MIN_SAMPLES) return fitted();
    const own = this.options.estimateMs?.(pairs);
    if (own !== undefined && Number.isFinite(own) && own > 0) return own;
    return samples > 0 ? fitted() : undefined;
  }

  /**
   * Admits `pairs` or returns undefined (the pair bound only). A request larger than the whole
   * bound is admitted only when nothing else is in flight, so it is served alone rather than never.
   */
  tryAdmit(pairs: number): AdmissionTicket | undefined {
    const fits = this.inFlight + pairs <= this.maxPairs || (this.inFlight === 0 && pairs > this.maxPairs);
    if (!fits) return undefined;
    return this.ticket(pairs);
  }

  /**
   * Admits a request of `pairs` pairs with `request.ageMs` spent and `request.budgetMs` to spend, or
   * says why not: the pair bound is full, or its predicted completion leaves it no time within the
   * budget. An idle model is sent a request now and then whatever its prediction (a probe).
   */
  admit(pairs: number, request: AdmissionRequest): AdmissionTicket | AdmissionRefusal {
    const fits = this.inFlight + pairs <= this.maxPairs || (this.inFlight === 0 && pairs > this.maxPairs);
    if (!fits)
      return {
        reason: 'pairs',
        message: `${this.inFlight} pairs in flight (bound ${this.maxPairs})`,
        retryAfterSec: this.retryAfterSec(pairs),
      };
    const predicted = this.predictMs(pairs);
    if (predicted !== undefined) {
      const left = request.budgetMs - request.marginMs - request.ageMs;
      const now = performance.now();
      const idle = this.inFlight === 0 && this.pairsAhead() === 0;
      if (predicted > left && !(idle && now - this.lastAdmit >= ADMISSION_PROBE_INTERVAL_MS)) {
        const excess = predicted - Math.max(0, left);
        return {
          reason: 'predicted',
          message: `predicted to complete in ${Math.round(predicted)} ms (${this.pairsAhead()} pairs ahead), ${Math.max(0, Math.round(left))} ms of the ${request.budgetMs} ms budget left after ${Math.round(request.ageMs)} ms of waiting`,
          retryAfterSec: clampRetry(Math.ceil(excess / 1000)),
        };
      }
    }
    return this.ticket(pairs);
  }

  /** Seconds until `pairs` more would fit at the observed drain rate, within [1, 30]. */
  retryAfterSec(pairs: number): number {
    const excess = this.inFlight + pairs - this.maxPairs;
    const rate = this.drainRate;
    if (excess <= 0 || rate <= 0) return MIN_RETRY_AFTER_SEC;
    return clampRetry(Math.ceil(excess / rate));
  }

  private ticket(pairs: number): AdmissionTicket {
    const startedAt = performance.now();
    const x = this.pairsAhead() + pairs;
    this.lastAdmit = startedAt;
    this.inFlight += pairs;
    this.requests++;
    let released = false;
    return {
      pairs,
      release: (scoredPairs?: number) => {
        if (released) return;
        released = true;
        this.inFlight -= pairs;
        this.requests--;
        const now = performance.now();
        if (this.options.answerMs === undefined) {
          if (scoredPairs === undefined) {
            this.fit.censored(x, now - startedAt);
            this.queue.addCensored(x, now - startedAt);
          } else {
            // Cache hits cost (almost) nothing: the sample is the pairs the model scored.
            this.fit.complete(x - pairs + scoredPairs, scoredPairs, startedAt, now);
            if (scoredPairs > 0) this.queue.add(x - pairs + scoredPairs, now - startedAt);
          }
        }
        this.finished(pairs, now);
      },
    };
  }

  private finished(pairs: number, now: number): void {
    this.roll(now);
    this.windowPairs += pairs;
  }

  private roll(now: number): void {
    const elapsed = now - this.windowStart;
    if (elapsed < RATE_WINDOW_MS) return;
    const rate = (this.windowPairs * 1000) / elapsed;
    // An idle stretch (nothing in flight) says nothing about capacity: keep the last estimate.
    if (this.windowPairs > 0 || this.inFlight > 0)
      this.drainPerSec =
        this.drainPerSec === 0 ? rate : RATE_EWMA_ALPHA * rate + (1 - RATE_EWMA_ALPHA) * this.drainPerSec;
    this.windowStart = now;
    this.windowPairs = 0;
  }
}

function clampRetry(sec: number): number {
  return Math.min(MAX_RETRY_AFTER_SEC, Math.max(MIN_RETRY_AFTER_SEC, sec));
}

/** Clock of the `x-request-start` header values: what the number means. */
export const REQUEST_START_HEADER = 'x-request-start';

/**
 * The client's send time from `x-request-start` as Unix epoch ms, or undefined when absent or not
 * readable. Accepted forms (as load balancers write it): `t=<value>` or a bare number, the value
 * in seconds (nginx `t=${msec}`: 1700000000.123), milliseconds or microseconds since the epoch,
 * told apart by magnitude.
 */
export function parseRequestStart(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const raw = (Array.isArray(header) ? header[0] : header).trim();
  const text = raw.startsWith('t=') ? raw.slice(2) : raw;
  if (!/^\d+(\.\d+)?$/.test(text)) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) return undefined;
  if (n < 1e11) return n * 1000; // seconds
  if (n < 1e14) return n; // milliseconds
  if (n < 1e17) return n / 1000; // microseconds
  return undefined;
}

/** What the server knows of a request when its first bytes are handled. */
export interface ArrivalStamp {
  /** Date.now() when the request is taken to have arrived: its deadline counts from here. */
  readonly arrivalMs: number;
  /** How long it waited for the event loop in the turn that handles it now, ms. */
  readonly loopWaitMs: number;
  /**
   * A further wait the server cannot see but estimates (bytes readable before the event-loop turn
   * that handled them began): counted in the request's age at admission, not in its deadline.
   */
  readonly unseenMs: number;
}

export interface ServerAdmissionOptions {
  readonly maxConcurrentRequests: number;
  /** Longest wait in an event-loop turn under a standing queue, ms (config admission.maxQueueMs). */
  readonly maxQueueMs: number;
  /** Honour `x-request-start`. */
  readonly requestStartHeader: boolean;
  /** Shed by age at arrival. */
  readonly predictive: boolean;
  /**
   * A client start time older than this (ms) is not a send time of this request (a value in the
   * wrong unit, a stuck clock): ignored. Default 60,000 (the largest budget by default).
   */
  readonly maxStartAgeMs?: number;
}

/** The event-loop view admission needs (lag.ts). */
export interface LoopView {
  /** The waits of a request whose bytes are handled now (see lag.ts). */
  turnWait(): { readonly waitedMs: number; readonly unseenMs: number };
}

/**
 * How long every request's wait for the event loop must stay above `maxQueueMs` before the waits
 * count as a standing queue (CoDel's interval, halved: the onset of an overload builds a backlog
 * of about this length before the first refusal).
 */
export const STANDING_QUEUE_INTERVAL_MS = 50;

/**
 * Server-wide admission: the concurrent-request bound, the age of requests at arrival, and the
 * event loop's standing queue. The queue test is CoDel's: the loop is overloaded when every
 * request's wait for it (its wait within the turn that handles it plus the turn before, when the
 * loop never idled in between) has stayed above `maxQueueMs` for STANDING_QUEUE_INTERVAL_MS: a
 * burst (many requests at once on an idle loop, one large request that held it) drains by itself
 * and is not refused for its wait; under a standing queue each turn serves its first
 * `maxQueueMs` of requests and refuses the rest at once, so the loop stays at most a few turns
 * behind its arrivals and every answer, 200 or 429, comes that soon.
 */
export class ServerAdmission {
  private inFlight = 0;
  /** performance.now() since when every wait was above maxQueueMs; -1 after a wait at or below it. */
  private aboveSince = -1;
  private standing = false;

  constructor(
    readonly options: ServerAdmissionOptions,
    private readonly loop: LoopView,
  ) {}

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Whether the event loop holds a standing queue now (see the class doc). */
  get standingQueue(): boolean {
    return this.standing;
  }

  /**
   * Stamps a request whose headers were just parsed: arrival = now − the time its bytes waited in
   * this event-loop turn, or the client's `x-request-start` when that is earlier (and not in the
   * future). Its wait feeds the standing-queue test.
   */
  stamp(requestStart: string | string[] | undefined): ArrivalStamp {
    const now = Date.now();
    const { waitedMs, unseenMs } = this.loop.turnWait();
    this.observeWait(waitedMs + unseenMs, performance.now());
    const own = now - waitedMs;
    if (this.options.requestStartHeader) {
      const client = parseRequestStart(requestStart);
      // The client's time covers the wait before this turn too; a time ahead of ours is skew: ignored.
      if (client !== undefined && client <= now && now - client <= (this.options.maxStartAgeMs ?? 60_000))
        return { arrivalMs: Math.min(own, client), loopWaitMs: waitedMs, unseenMs: 0 };
    }
    return { arrivalMs: own, loopWaitMs: waitedMs, unseenMs };
  }

  private observeWait(waitMs: number, now: number): void {
    if (waitMs <= this.options.maxQueueMs) {
      this.aboveSince = -1;
      this.standing = false;
      return;
    }
    if (this.aboveSince < 0) this.aboveSince = now;
    this.standing = now - this.aboveSince >= STANDING_QUEUE_INTERVAL_MS;
  }

  /**
   * Whether a request that waited `loopWaitMs` within its event-loop turn is refused for the
   * loop's queue: a standing queue, and a wait past `maxQueueMs`.
   */
  queued(loopWaitMs: number): boolean {
    return this.standing && loopWaitMs > this.options.maxQueueMs;
  }

  /** Takes a slot of the concurrent-request bound, or returns false when it is full. */
  enter(): boolean {
    if (this.inFlight >= this.options.maxConcurrentRequests) return false;
    this.inFlight++;
    return true;
  }

  leave(): void {
    if (this.inFlight > 0) this.inFlight--;
  }
}
