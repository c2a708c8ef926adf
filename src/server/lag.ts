/**
 * Event-loop lag tracker: how late a 10 ms timer has fired recently (a decaying peak). The server
 * asks the gate to answer earlier by that much, because a deadline timer on a loop that is
 * running late fires late too; on a busy host the margin grows, on a quiet one it stays ~0.
 */

const SAMPLE_MS = 10;
/** Per-sample decay of the peak: about 0.5 s half-life at 10 ms sampling. */
const DECAY = 0.986;

export interface LagTracker {
  /** Recent peak lateness of the sampling timer, ms. */
  readonly peakMs: number;
  stop(): void;
}

export function createLagTracker(): LagTracker {
  let peak = 0;
  let expected = performance.now() + SAMPLE_MS;
  const timer = setInterval(() => {
    const now = performance.now();
    const late = Math.max(0, now - expected);
    expected = now + SAMPLE_MS;
    peak = Math.max(late, peak * DECAY);
  }, SAMPLE_MS);
  timer.unref();
  return {
    get peakMs() {
      return peak;
    },
    stop() {
      clearInterval(timer);
    },
  };
}
