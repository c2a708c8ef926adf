/**
 * The router's answer-time race: every phase of a call (the inline tier's scores, the fallback,
 * the slow-tier jobs) is awaited only until the call's answer time, through the shared deadline
 * race (scoring/race-limits.ts). A phase that completes within a few microtask turns (an
 * in-process tier, cache hits) is taken as it is without arming a timer: a timer per call would
 * cost more than the fast path itself.
 */
import { type RaceOutcome, raceLimits } from '../scoring/race-limits.js';

/**
 * Microtask turns a phase gets before the timer is armed: enough for an in-process tier called
 * through the cache (async scorer, cache resolution, result mapping), not enough for any I/O or
 * worker round trip, which needs a macrotask.
 */
const INLINE_TURNS = 16;

/** Settles with `work`, or with TIMED_OUT / ABORTED when `answerBy` or the signal comes first. */
export function raceAnswer<T>(
  work: Promise<T>,
  signal: AbortSignal | undefined,
  answerBy: number | undefined,
  clock: () => number,
): Promise<RaceOutcome<T>> {
  return raceLimits(work, signal, answerBy, clock, INLINE_TURNS);
}
