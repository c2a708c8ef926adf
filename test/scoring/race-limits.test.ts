import { afterEach, describe, expect, it, vi } from 'vitest';
import { ABORTED, raceLimits, TIMED_OUT } from '../../src/scoring/race-limits.js';

function later<T>(ms: number, value: T): Promise<T> {
  return new Promise((resolve) => setTimeout(() => resolve(value), ms));
}

/** A promise that settles after `turns` microtask turns. */
function afterTurns<T>(turns: number, value: T): Promise<T> {
  let p: Promise<T> = Promise.resolve(value);
  for (let i = 1; i < turns; i++) p = p.then((v) => v);
  return p;
}

describe('raceLimits: answers already there (fast path)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('takes a settled answer without arming a timer or an abort listener', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const controller = new AbortController();
    const listen = vi.spyOn(controller.signal, 'addEventListener');
    expect(await raceLimits(Promise.resolve('v'), controller.signal, Date.now() + 1000, Date.now)).toBe('v');
    expect(await raceLimits(afterTurns(3, 'w'), controller.signal, Date.now() + 1000, Date.now)).toBe('w');
    expect(timers).not.toHaveBeenCalled();
    expect(listen).not.toHaveBeenCalled();
  });

  it('a settled answer wins over a deadline already past; an abort wins over both', async () => {
    expect(await raceLimits(Promise.resolve(1), undefined, Date.now() - 5, Date.now)).toBe(1);
    const controller = new AbortController();
    controller.abort();
    expect(await raceLimits(Promise.resolve(1), controller.signal, undefined, Date.now)).toBe(ABORTED);
  });

  it('rethrows a settled rejection', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    await expect(raceLimits(Promise.reject(new Error('boom')), undefined, Date.now() + 50, Date.now)).rejects.toThrow(
      'boom',
    );
    expect(timers).not.toHaveBeenCalled();
  });

  it('arms the timer for an answer that takes more than a few microtask turns', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    expect(await raceLimits(afterTurns(12, 'slow'), undefined, Date.now() + 1000, Date.now)).toBe('slow');
    expect(timers).toHaveBeenCalledTimes(1);
  });
});

describe('raceLimits: answers still pending', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('settles TIMED_OUT at the deadline and leaves the work running', async () => {
    const t0 = Date.now();
    let settled = false;
    const work = later(300, 'late').then((v) => {
      settled = true;
      return v;
    });
    expect(await raceLimits(work, undefined, t0 + 20, Date.now)).toBe(TIMED_OUT);
    // Timers are millisecond-grained on libuv's cached loop clock: one may fire up to 1 ms early by Date.now.
    expect(Date.now()).toBeGreaterThanOrEqual(t0 + 20 - 1);
    expect(settled).toBe(false); // the race ended at the deadline, the work still runs
    expect(await work).toBe('late');
  });

  it('a deadline already past times out a pending answer at once', async () => {
    let settled = false;
    const work = later(300, 'x').then((v) => {
      settled = true;
      return v;
    });
    expect(await raceLimits(work, undefined, Date.now() - 10, Date.now)).toBe(TIMED_OUT);
    expect(settled).toBe(false); // answered before the work, not after it
  });

  it('settles ABORTED when the signal fires, and removes its listener and timer', async () => {
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    const clear = vi.spyOn(globalThis, 'clearTimeout');
    setTimeout(() => controller.abort(), 10);
    expect(await raceLimits(later(300, 'x'), controller.signal, Date.now() + 5000, Date.now)).toBe(ABORTED);
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
    expect(clear).toHaveBeenCalled();
  });

  it('a signal aborted before the race settles ABORTED without waiting', async () => {
    const controller = new AbortController();
    controller.abort();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    expect(await raceLimits(later(300, 'x'), controller.signal, Date.now() + 5000, Date.now)).toBe(ABORTED);
    expect(timers).toHaveBeenCalledTimes(1); // only later()'s own timer
  });

  it('an answer before the deadline clears the timer and the listener', async () => {
    const controller = new AbortController();
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    const clear = vi.spyOn(globalThis, 'clearTimeout');
    expect(await raceLimits(later(10, 'ok'), controller.signal, Date.now() + 5000, Date.now)).toBe('ok');
    expect(clear).toHaveBeenCalled();
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
  });

  it('a rejection before the deadline is rethrown', async () => {
    const failing = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('late boom')), 10));
    await expect(raceLimits(failing, undefined, Date.now() + 5000, Date.now)).rejects.toThrow('late boom');
  });

  it('measures the deadline on the injected clock', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const clock = (): number => 1_000; // the deadline is 25 ms ahead on this clock
    const race = raceLimits(later(200, 'x'), undefined, 1_025, clock);
    expect(await race).toBe(TIMED_OUT);
    const delays = timers.mock.calls.map((call) => call[1]);
    expect(delays).toContain(25);
  });

  it('a deadline beyond what a timer can hold is no deadline (no 1 ms timer)', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const work = later(15, 'done');
    expect(await raceLimits(work, undefined, Date.now() + 2 ** 31 + 1000, Date.now)).toBe('done');
    // later()'s own timer only: a 2^31 ms delay would have fired after 1 ms.
    expect(timers).toHaveBeenCalledTimes(1);
  });

  it('without deadline or signal it waits for the answer', async () => {
    expect(await raceLimits(later(15, 'w'), undefined, undefined, Date.now)).toBe('w');
  });
});
