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
 */
export interface AnswerLagOptions {
  /** Largest lag the margin absorbs. Default 20 ms. */
  readonly maxMs?: number;
  /** The estimate halves after this long without a later answer. Default 5 min. */
  readonly halfLifeMs?: number;
}

export const DEFAULT_ANSWER_LAG_MAX_MS = 20;
export const DEFAULT_ANSWER_LAG_HALF_LIFE_MS = 300_000;

export class AnswerLag {
  private peakMs = 0;
  private peakAt = 0;
  private readonly maxMs: number;
  private readonly halfLifeMs: number;

  constructor(options: AnswerLagOptions = {}) {
    this.maxMs = options.maxMs ?? DEFAULT_ANSWER_LAG_MAX_MS;
    this.halfLifeMs = options.halfLifeMs ?? DEFAULT_ANSWER_LAG_HALF_LIFE_MS;
  }

  /** A call that had to answer by `answerBy` answered at `end`. */
  observe(answerBy: number, end: number): void {
    const late = end - answerBy;
    if (!(late > 0)) return;
    if (late > this.current(end)) {
      this.peakMs = Math.min(late, this.maxMs);
      this.peakAt = end;
    }
  }

  /** The lag to allow for at `now`, ms (0 until an answer came out late). */
  current(now: number): number {
    if (this.peakMs === 0) return 0;
    const age = now - this.peakAt;
    return age <= 0 ? this.peakMs : this.peakMs * 2 ** (-age / this.halfLifeMs);
  }
}
