/** Abortable, deadline-bounded waiting shared by the pool, the rate limiter and the retry loop. */
import { AbortedError, DeadlineExceededError } from '../../errors.js';

/** Node turns delays above 2^31−1 ms into 1 ms: a deadline further away than this is effectively none. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

export function abortError(signal: AbortSignal): AbortedError {
  return new AbortedError('the operation was aborted', { cause: signal.reason });
}

/**
 * Resolves after `ms`; rejects with AbortedError when `signal` fires first. Never waits past
 * `deadline` (absolute, on `clock`): if the wait would end after it, rejects with
 * DeadlineExceededError at once instead of sleeping for nothing.
 */
export function sleep(
  ms: number,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  clock: () => number,
  what: string,
): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  if (deadline !== undefined && clock() + ms >= deadline)
    return Promise.reject(new DeadlineExceededError(`${what} would end after the deadline`));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal));
    };
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.min(ms, MAX_TIMER_DELAY_MS),
    );
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
