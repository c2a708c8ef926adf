/**
 * The deadline/abort race shared by the gate (one scorer call) and the router (a call's slow-tier
 * work): settle with the work, or with TIMED_OUT / ABORTED when the deadline or the signal comes
 * first. The work itself is not cancelled here; the caller decides what to do with it.
 */

/** The race's outcome when the deadline passed before the work settled. */
export const TIMED_OUT: unique symbol = Symbol('timed out');
/** The race's outcome when the signal aborted (before the work settled, or with it already settled). */
export const ABORTED: unique symbol = Symbol('aborted');

export type RaceOutcome<T> = T | typeof TIMED_OUT | typeof ABORTED;

/** How many microtask turns a promise gets to settle before a deadline timer is armed. */
const FAST_PATH_TURNS = 4;
/** Node turns delays above 2^31-1 ms into 1 ms; such a deadline is effectively none. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** Records how a promise settled, so the fast path can read it synchronously. */
class Settlement<T> {
  done = false;
  failed = false;
  value: T | undefined;
  error: unknown;
  constructor(promise: Promise<T>) {
    promise.then(
      (value) => {
        this.done = true;
        this.value = value;
      },
      (error: unknown) => {
        this.done = true;
        this.failed = true;
        this.error = error;
      },
    );
  }
}

/**
 * Settles with the promise (rejecting with its error), or with TIMED_OUT / ABORTED when the
 * deadline (`now()` clock, ms) or signal comes first. An answer that is already there (cache hits,
 * in-process tiers) is taken after a few microtask turns without arming a timer or a listener,
 * which would cost more than the gate itself; only an abort overrides such an answer. `turns`:
 * how many microtask turns that answer gets (default FAST_PATH_TURNS).
 */
export async function raceLimits<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  now: () => number,
  turns: number = FAST_PATH_TURNS,
): Promise<RaceOutcome<T>> {
  const early = new Settlement(promise);
  for (let turn = 0; turn < turns && !early.done; turn++) await undefined;
  if (early.done) {
    // The answer is here: only an abort (the caller asked to stop) overrides it.
    if (signal?.aborted) return ABORTED;
    if (early.failed) throw early.error;
    return early.value as T;
  }
  if (signal?.aborted) return ABORTED;
  return slowRace(promise, signal, deadline, now);
}

function slowRace<T>(
  promise: Promise<T>,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  now: () => number,
): Promise<RaceOutcome<T>> {
  return new Promise((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      cleanup();
      resolve(ABORTED);
    };
    const cleanup = (): void => {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const delay = deadline === undefined ? Number.NaN : Math.max(0, deadline - now());
    if (delay <= MAX_TIMER_DELAY_MS) {
      timer = setTimeout(() => {
        cleanup();
        resolve(TIMED_OUT);
      }, delay);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        cleanup();
        resolve(value);
      },
      (error: unknown) => {
        cleanup();
        reject(error);
      },
    );
  });
}
