import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { AnswerLag } from '../../src/router/answer-lag.js';
import { createRouter } from '../../src/router/router.js';
import type { Scorer } from '../../src/types.js';
import { ce, fastTier, hangingTier, passages } from './fakes.js';

/** Blocks the event loop for `ms` (what a long GC pause does to the router's answer timer). */
function stallAt(at: number, ms: number): void {
  setTimeout(
    () => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        // busy: the answer timer cannot fire
      }
    },
    Math.max(0, at - Date.now()),
  );
}

const tiers = (slow: Scorer) => [
  { name: 'fast-path', scorer: fastTier(() => 0.5), quality: 1, inline: true },
  ce(slow, { estimateMs: () => 1 }),
];

describe('answer-lag estimate', () => {
  it('takes the largest lateness, halves it every half-life, caps it, and ignores answers on time', () => {
    const lag = new AnswerLag({ maxMs: 20, halfLifeMs: 1000 });
    expect(lag.current(0)).toBe(0);
    lag.observe(100, 99); // early: nothing learnt
    lag.observe(100, 100);
    expect(lag.current(100)).toBe(0);
    lag.observe(100, 108);
    expect(lag.current(108)).toBe(8);
    expect(lag.current(1108)).toBeCloseTo(4, 10);
    lag.observe(1100, 1103); // 3 ms late, below the decayed 4: the estimate stays
    expect(lag.current(1108)).toBeCloseTo(4, 10);
    lag.observe(2000, 2050);
    expect(lag.current(2050)).toBe(20);
  });

  it('validates its options', () => {
    const bad = (answerLag: unknown) => () =>
      createRouter({ tiers: tiers(hangingTier()), answerLag: answerLag as never });
    expect(bad('yes')).toThrow(InvalidArgumentError);
    expect(bad({ maxMs: -1 })).toThrow(InvalidArgumentError);
    expect(bad({ halfLifeMs: 0 })).toThrow(InvalidArgumentError);
    expect(bad({ maxMS: 5 })).toThrow(/answerLag\.maxMS is not an option/);
    expect(bad({ watchEventLoop: 'yes' })).toThrow(/watchEventLoop must be a boolean/);
    expect(bad({ watchEventLoop: true })).not.toThrow();
    expect(bad(false)).not.toThrow();
  });
});

describe('the router answers earlier once its answers came out late', () => {
  it('after a 15 ms stall at the answer time, the next call answers ≥ 8 ms earlier, within a quarter of its budget', async () => {
    const slow = hangingTier();
    const router = createRouter({ tiers: tiers(slow), routing: { mode: 'cascade', threshold: 0 }, returnMarginMs: 2 });
    const d1 = Date.now() + 60;
    stallAt(d1 - 2 - 1, 15);
    await router.score('q', passages(4), { deadline: d1 });
    const late = Date.now() - (d1 - 2);
    expect(late).toBeGreaterThanOrEqual(8);
    const learnt = router.stats().answerLagMs;
    expect(learnt).toBeGreaterThanOrEqual(8);
    expect(learnt).toBeLessThanOrEqual(20);

    const d2 = Date.now() + 80;
    await router.score('q2', passages(4), { deadline: d2 });
    const answeredAt = Date.now();
    // The slow tier was given the earlier answer time, and the call answered by it.
    expect(slow.deadlines[1]).toBeLessThanOrEqual(d2 - 2 - 8);
    expect(slow.deadlines[1]).toBeGreaterThanOrEqual(d2 - 2 - 20);
    expect(answeredAt).toBeLessThan(d2 - 2);

    // A short budget: the allowance is capped at a quarter of it.
    const d3 = Date.now() + 20;
    await router.score('q3', passages(4), { deadline: d3 });
    expect(slow.deadlines[2]).toBeGreaterThanOrEqual(d3 - 2 - 5 - 1);
  });

  it('answerLag: false keeps the fixed margin after the same stall', async () => {
    const slow = hangingTier();
    const router = createRouter({
      tiers: tiers(slow),
      routing: { mode: 'cascade', threshold: 0 },
      returnMarginMs: 2,
      answerLag: false,
    });
    const d1 = Date.now() + 60;
    stallAt(d1 - 2 - 1, 15);
    await router.score('q', passages(4), { deadline: d1 });
    expect(router.stats().answerLagMs).toBe(0);
    const d2 = Date.now() + 80;
    await router.score('q2', passages(4), { deadline: d2 });
    expect(slow.deadlines[1]).toBe(d2 - 2);
  });
});
