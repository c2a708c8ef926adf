import { type LoopStallSink, watchLoopStalls } from './loop-stall-watch.js';

/**
 * How late the router's own answers come out, learnt from the calls that ran up to their answer
 * time. A call waiting on a slow tier answers when a timer fires at `deadline − margin`; if the
 * event loop is busy then (a V8 scavenge of 6–11 ms, a mark-compact, the host descheduling the
 * process), the answer leaves that much later. Measured at 1000 req/s on the 2-core dev box, such
 * stalls made 0–2 calls per 60 s answer beyond budget + 2 ms with a fixed 5 ms margin.
 *
 * The estimate is the largest lateness seen, decaying by half every `halfLifeMs`, so a process
 * whose pauses recur keeps the margin that covers them and an isolated stall is forgotten. Only
 * the pauses that happen to land on an answer time are seen, and a process's GC pattern lasts as
 * long as its workload, so the memory is long (half-life 5 min). The
 * router answers at `deadline − (returnMarginMs + estimate)`; the estimate is capped (maxMs, and a
 * quarter of the call's budget) so a pathological stall cannot leave calls no time to work.
 *
 * With `watchEventLoop` the allowance also learns from the loop itself (loop-stall-watch.ts): a
 * stall is then known before it lands on a call's answer time, not after it made that call late.
 */
export interface AnswerLagOptions {
  /** Largest lag the margin absorbs. Default 20 ms. */
  readonly maxMs?: number;
  /** The estimate halves after this long without a later answer. Default 5 min. */
  readonly halfLifeMs?: number;
  /**
   * Also learn from stalls of the event loop itself, sampled by a shared timer 50 times a second
   * (loop-stall-watch.ts), not only from the answers that came out late. Default false.
   */
  readonly watchEventLoop?: boolean;
}

export const DEFAULT_ANSWER_LAG_MAX_MS = 20;
export const DEFAULT_ANSWER_LAG_HALF_LIFE_MS = 300_000;

export class AnswerLag implements LoopStallSink {
  private peakMs = 0;
  private peakAt = 0;
  private readonly maxMs: number;
  private readonly halfLifeMs: number;
  private readonly clock: () => number;
  private readonly unwatch: (() => void) | undefined;

  /** `clock`: the router's clock (ms), the time base of `observe` and `current`. */
  constructor(options: AnswerLagOptions = {}, clock: () => number = Date.now) {
    this.maxMs = options.maxMs ?? DEFAULT_ANSWER_LAG_MAX_MS;
    this.halfLifeMs = options.halfLifeMs ?? DEFAULT_ANSWER_LAG_HALF_LIFE_MS;
    this.clock = clock;
    this.unwatch = options.watchEventLoop === true ? watchLoopStalls(this) : undefined;
  }

  /** A call that had to answer by `answerBy` answered at `end`. */
  observe(answerBy: number, end: number): void {
    this.record(end - answerBy, end);
  }

  onLoopStall(lateMs: number): void {
    this.record(lateMs, this.clock());
  }

  /** Stops learning from the event loop (the router closed). */
  close(): void {
    this.unwatch?.();
  }

  private record(late: number, at: number): void {
    if (!(late > 0)) return;
    if (late > this.current(at)) {
      this.peakMs = Math.min(late, this.maxMs);
      this.peakAt = at;
    }
  }

  /** The lag to allow for at `now`, ms (0 until an answer came out late). */
  current(now: number): number {
    if (this.peakMs === 0) return 0;
    const age = now - this.peakAt;
    return age <= 0 ? this.peakMs : this.peakMs * 2 ** (-age / this.halfLifeMs);
  }
}
