import { afterEach, describe, expect, it, vi } from 'vitest';
import { AbortedError } from '../../src/errors.js';
import { createRouter } from '../../src/router/router.js';
import type { Scorer } from '../../src/types.js';
import { ce, fastTier, instantTier, passages, routed, sleep, slowTier, fastPath } from './fakes.js';

describe('the router’s deadline race', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('answers already there are taken without arming a deadline timer', async () => {
    const router = createRouter({
      tiers: [
        fastPath(fastTier(() => 0.5)),
        ce(
          instantTier('fake-ce', () => 0.8),
          { estimateMs: () => 1 },
        ),
      ],
      routing: { mode: 'cascade' },
    });
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const out = await router.score('q', passages(4), { deadline: Date.now() + 1000 });
    expect(out.map((r) => routed(r).tier)).toEqual(Array(4).fill('cross-encoder'));
    expect(timers).not.toHaveBeenCalled();
  });

  it('a caller abort during slow-tier work rejects at once and cancels the queued work', async () => {
    const slow = slowTier({ latencyMs: 150 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const first = router.score('q', passages(2, 'a'), { deadline: Date.now() + 5000 }); // occupies the worker
    const controller = new AbortController();
    const second = router.score('q', passages(2, 'b'), { deadline: Date.now() + 5000, signal: controller.signal });
    let firstDone = false;
    void first.then(() => {
      firstDone = true;
    });
    await sleep(10);
    controller.abort();
    await expect(second).rejects.toThrow(AbortedError);
    // At once: before the slow tier finished the work ahead of it.
    expect(firstDone).toBe(false);
    expect((await first).map((r) => routed(r).tier)).toEqual(['cross-encoder', 'cross-encoder']);
    await sleep(20);
    expect(slow.executed).toEqual(['a0', 'a1']); // b's call was dropped from the queue
  });

  it('a deadline beyond what a timer can hold waits for the slow tier (no early degrade)', async () => {
    // A tier that takes 30 ms and leaves deadlines to the router.
    const slow: Scorer = {
      id: 'slow-ce',
      score: async (_q, ps) => {
        await sleep(30);
        return ps.map(() => ({ probabilities: { relevant: 0.9 } }));
      },
    };
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const out = await router.score('q', passages(3), { deadline: Date.now() + 2 ** 31 + 10_000 });
    expect(out.map((r) => [routed(r).tier, routed(r).degraded])).toEqual(Array(3).fill(['cross-encoder', undefined]));
    expect(router.stats().deadlinePairs).toBe(0);
  });
});
