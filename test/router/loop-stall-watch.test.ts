import { afterEach, describe, expect, it } from 'vitest';
import { AnswerLag } from '../../src/router/answer-lag.js';
import {
  loopStallWatchers,
  WATCH_FLOOR_MS,
  WATCH_PERIOD_MS,
  watchLoopStalls,
} from '../../src/router/loop-stall-watch.js';
import { createRouter } from '../../src/router/router.js';
import { ce, fastTier, hangingTier, passages } from './fakes.js';

/** Holds the event loop for `ms` (what a GC pause or the host not scheduling the process does). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // the loop cannot run timers
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

describe('event-loop stall watch', () => {
  it('reports a stall of the loop with its length, and nothing while the loop runs freely', async () => {
    const seen: number[] = [];
    // Held here: the watch holds its sinks weakly (a dropped router stops being fed).
    const sink = { onLoopStall: (ms: number) => seen.push(ms) };
    stops.push(watchLoopStalls(sink));
    await sleep(3 * WATCH_PERIOD_MS);
    const quiet = seen.length;
    busy(80);
    await sleep(2 * WATCH_PERIOD_MS);
    // The 80 ms stall shows as at least 80 − 20 ms of the next tick's lateness (a tick is due every 20 ms).
    expect(seen.slice(quiet).some((ms) => ms >= 60 && ms < 1000)).toBe(true);
    // Only lateness above the timer's granularity is reported.
    expect(seen.every((ms) => ms > WATCH_FLOOR_MS)).toBe(true);
    expect(sink.onLoopStall).toBeTypeOf('function');
  });

  it('stops feeding a sink once its stop function ran, and stops its timer when nobody listens', async () => {
    const before = loopStallWatchers();
    const seen: number[] = [];
    const sink = { onLoopStall: (ms: number) => seen.push(ms) };
    const stop = watchLoopStalls(sink);
    expect(loopStallWatchers()).toBe(before + 1);
    stop();
    expect(loopStallWatchers()).toBe(before);
    busy(40);
    await sleep(3 * WATCH_PERIOD_MS);
    expect(seen).toEqual([]);
    expect(sink.onLoopStall).toBeTypeOf('function');
  });

  it('an allowance with watchEventLoop learns a stall that no answer saw; without it, it stays 0', async () => {
    const watching = new AnswerLag({ maxMs: 20, watchEventLoop: true });
    const plain = new AnswerLag({ maxMs: 20 });
    stops.push(() => watching.close());
    await sleep(2 * WATCH_PERIOD_MS);
    busy(60);
    await sleep(2 * WATCH_PERIOD_MS);
    expect(watching.current(Date.now())).toBeCloseTo(20, 2); // capped at maxMs
    expect(plain.current(Date.now())).toBe(0);
  });
});

describe('a router watching the event loop', () => {
  it('answers its next call earlier after a stall between calls, and close() stops the watch', async () => {
    const slow = hangingTier();
    const before = loopStallWatchers();
    const router = createRouter({
      tiers: [
        { name: 'fast-path', scorer: fastTier(() => 0.5), quality: 1, inline: true },
        ce(slow, { estimateMs: () => 1 }),
      ],
      routing: { mode: 'cascade', threshold: 0 },
      returnMarginMs: 2,
      answerLag: { watchEventLoop: true },
    });
    stops.push(() => router.close());
    expect(loopStallWatchers()).toBe(before + 1);
    await sleep(2 * WATCH_PERIOD_MS);
    busy(60); // no call in flight: only the watch can see it
    await sleep(2 * WATCH_PERIOD_MS);
    expect(router.stats().answerLagMs).toBeGreaterThanOrEqual(15);
    const deadline = Date.now() + 100;
    await router.score('q', passages(4), { deadline });
    // The slow tier was given an answer time at least 15 ms before deadline − margin.
    expect(slow.deadlines[0]).toBeLessThanOrEqual(deadline - 2 - 15);
    expect(Date.now()).toBeLessThan(deadline - 2);
    router.close();
    expect(loopStallWatchers()).toBe(before);
  });
});
