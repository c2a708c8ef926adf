/**
 * What the server knows of its event loop, for deadlines and admission:
 *
 * - `peakMs`: how late a 10 ms timer has fired recently (a decaying peak). The server asks the gate
 *   to answer earlier by that much, because a deadline timer on a loop that is running late fires
 *   late too; on a busy host the margin grows, on a quiet one it stays ~0.
 * - `turnWait()`: how long the bytes of a request being handled now have waited for the loop. Node
 *   handles, in one turn of its event loop, every socket that was readable when the turn's poll
 *   began, one after the other; under saturation a turn holds hundreds of requests and the last of
 *   them waited the whole turn before its first line of code ran. The first request handled in a
 *   turn marks the turn's start (and a setImmediate its end): a request handled later in the same
 *   turn has waited at least since then (`waitedMs`). Before the turn its bytes may have waited
 *   for the previous one to finish: when that turn ended just before this one began (the loop
 *   never went idle), up to its whole length (`unseenMs`, a pessimistic estimate admission adds).
 * - `utilisation` / `delayMs`: event-loop utilisation (perf_hooks eventLoopUtilization) and the
 *   largest event-loop delay (monitorEventLoopDelay) over the last 100 ms window.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const SAMPLE_MS = 10;
/** Per-sample decay of the peak: about 0.5 s half-life at 10 ms sampling. */
const DECAY = 0.986;
const WINDOW_MS = 100;
/** A turn that began within this long of the previous turn's end found the loop busy: its bytes may have waited for that turn. */
const BUSY_GAP_MS = 2;

/** The event loop as deadlines and admission see it (see the module doc). */
export interface LagTracker {
  /** Recent peak lateness of the sampling timer, ms. */
  readonly peakMs: number;
  /** Event-loop utilisation (0..1) over the last window. */
  readonly utilisation: number;
  /** Largest event-loop delay over the last window, ms (the histogram's resolution subtracted). */
  readonly delayMs: number;
  /**
   * For a request whose first bytes are handled now: ms since the current event-loop turn began
   * handling requests (`waitedMs`), and the estimated wait before that turn (`unseenMs`).
   */
  turnWait(): { readonly waitedMs: number; readonly unseenMs: number };
  stop(): void;
}

export function createLagTracker(): LagTracker {
  let peak = 0;
  let expected = performance.now() + SAMPLE_MS;
  let lastDelay = 0;
  let lastUtilisation = 0;
  const histogram = monitorEventLoopDelay({ resolution: SAMPLE_MS });
  histogram.enable();
  let elu = performance.eventLoopUtilization();
  let windowStart = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - expected);
    expected = now + SAMPLE_MS;
    peak = Math.max(late, peak * DECAY);
    if (now - windowStart >= WINDOW_MS) {
      windowStart = now;
      const next = performance.eventLoopUtilization();
      lastUtilisation = performance.eventLoopUtilization(next, elu).utilization;
      elu = next;
      lastDelay = histogram.count > 0 ? Math.max(0, histogram.max / 1e6 - SAMPLE_MS) : 0;
      histogram.reset();
    }
  }, SAMPLE_MS);
  timer.unref();

  // Turn tracking: the start of the current turn's request handling, the end and length of the last.
  let turnStart = -1;
  let lastTurnEnd = Number.NEGATIVE_INFINITY;
  let lastTurnMs = 0;
  const endTurn = (): void => {
    const now = performance.now();
    lastTurnMs = now - turnStart;
    lastTurnEnd = now;
    turnStart = -1;
  };
  let unseenOfTurn = 0;

  return {
    get peakMs() {
      return peak;
    },
    get utilisation() {
      return lastUtilisation;
    },
    get delayMs() {
      return lastDelay;
    },
    turnWait() {
      const now = performance.now();
      if (turnStart < 0) {
        turnStart = now;
        unseenOfTurn = now - lastTurnEnd <= BUSY_GAP_MS ? lastTurnMs : 0;
        setImmediate(endTurn);
      }
      return { waitedMs: now - turnStart, unseenMs: unseenOfTurn };
    },
    stop() {
      clearInterval(timer);
      histogram.disable();
    },
  };
}
