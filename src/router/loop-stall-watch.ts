/**
 * A process-wide watch of event-loop stalls, for the answer-lag allowance (answer-lag.ts).
 *
 * The allowance learns from the router's own answers, but only calls that wait until their answer
 * time see a stall, and they are few (fewer than 1 % at 1000 req/s): the first stall that lands on
 * one is also the first the router hears of, and that call is late. This watch samples the loop
 * itself: an unref'd timer every `WATCH_PERIOD_MS` measures how late it fired, and every lateness
 * above `WATCH_FLOOR_MS` (timer granularity) is passed to the subscribed allowances, so a process
 * whose loop stalls (GC, the host not scheduling it) answers early enough before a call is hurt.
 *
 * One timer serves every router of the process (the stalls are the process's, not a router's).
 * Subscribers are held weakly: a router that is dropped without `close()` stops being fed, and the
 * timer stops when nobody listens. Cost: 50 timer wake-ups per second while any router watches.
 */

export interface LoopStallSink {
  /** The loop ran `lateMs` later than a timer asked for. */
  onLoopStall(lateMs: number): void;
}

export const WATCH_PERIOD_MS = 20;
/** Lateness at or below this is timer granularity, not a stall. */
export const WATCH_FLOOR_MS = 2;

const sinks = new Set<WeakRef<LoopStallSink>>();
let timer: ReturnType<typeof setTimeout> | undefined;
let expectedAt = 0;

function schedule(): void {
  expectedAt = performance.now() + WATCH_PERIOD_MS;
  timer = setTimeout(tick, WATCH_PERIOD_MS);
  timer.unref();
}

function tick(): void {
  const lateMs = performance.now() - expectedAt;
  for (const ref of sinks) {
    const sink = ref.deref();
    if (sink === undefined) sinks.delete(ref);
    else if (lateMs > WATCH_FLOOR_MS) sink.onLoopStall(lateMs);
  }
  if (sinks.size === 0) timer = undefined;
  else schedule();
}

/** Feeds `sink` every stall from now on; returns the function that stops it. */
export function watchLoopStalls(sink: LoopStallSink): () => void {
  const ref = new WeakRef(sink);
  sinks.add(ref);
  if (timer === undefined) schedule();
  return () => {
    sinks.delete(ref);
    if (sinks.size === 0 && timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
  };
}

/** Subscribers still held (for tests). */
export function loopStallWatchers(): number {
  return sinks.size;
}
