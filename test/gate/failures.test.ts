import { describe, expect, it } from 'vitest';
import { createGate, type Scorer, type ScorerPairResult } from '../../src/index.js';
import { ids, passages, sleep, slowScorer, tableScorer } from './helpers.js';

function fixedScorer(
  results: () => Promise<ReadonlyArray<ScorerPairResult>> | ReadonlyArray<ScorerPairResult>,
  id = 'fixed',
): Scorer {
  return { id, score: async () => results() };
}

describe('fail closed', () => {
  it('NaN, out-of-range, non-number and null results are unscored → excluded with the reason', async () => {
    const scorer = tableScorer({
      p0: { relevant: Number.NaN },
      p1: { relevant: 1.01 },
      p2: { relevant: -0.01 },
      p3: { relevant: '0.9' as never },
      p4: null,
      p5: { relevant: 0.9 },
      p6: { probabilities: { relevant: 0.9 }, raw: { relevant: Number.POSITIVE_INFINITY } },
      p7: { probabilities: { relevant: 0.8 }, raw: { relevant: 2.1 }, tier: 'fast-path' },
      p8: { other: 0.9 },
    });
    const r = await createGate({ scorer, policy: { threshold: 0.5 } }).filter('q', passages(9));
    expect(ids(r.included)).toEqual(['p5', 'p7']);
    const reasons = Object.fromEntries(r.excluded.map((i) => [i.id, [i.rule, i.reason]]));
    expect(reasons).toEqual({
      p0: ['fail-closed', 'invalid-signal'],
      p1: ['fail-closed', 'invalid-signal'],
      p2: ['fail-closed', 'invalid-signal'],
      p3: ['fail-closed', 'invalid-signal'],
      p4: ['fail-closed', 'scorer-null'],
      p6: ['fail-closed', 'invalid-signal'],
      p8: ['fail-closed', 'missing-signal'],
    });
    expect(r.excluded.find((i) => i.id === 'p0')?.signals).toBeNull();
    expect(r.included[1]).toMatchObject({ raw: { relevant: 2.1 }, tier: 'fast-path' });
    expect(r.stats).toMatchObject({
      retrieved: 9,
      scored: 2,
      unscored: 7,
      unscoredByReason: { 'invalid-signal': 5, 'scorer-null': 1, 'missing-signal': 1 },
    });
    expect(r.tier).toEqual({ scorer: 'table-model', name: 'mixed', counts: { 'fast-path': 1, 'table-model': 1 } });
  });

  it('boundary probabilities 0 and 1 are valid', async () => {
    const r = await createGate({
      scorer: tableScorer({ p0: { relevant: 1 }, p1: { relevant: 0 } }),
      policy: { threshold: 0 },
    }).filter('q', passages(2));
    expect(r.stats.returned).toBe(2);
  });

  it('a scorer that rejects, throws synchronously, or returns the wrong count fails every pair closed and records it', async () => {
    const rejecting = fixedScorer(() => Promise.reject(new Error('model crashed')));
    const syncThrow: Scorer = {
      id: 'sync',
      score: () => {
        throw new Error('sync boom');
      },
    };
    const wrongCount = fixedScorer(() => [{ relevant: 0.9 }]);
    const notArray = fixedScorer(() => ({ relevant: 0.9 }) as never);
    for (const [scorer, message] of [
      [rejecting, /model crashed/],
      [syncThrow, /sync boom/],
      [wrongCount, /returned 1 results for 3 passages/],
      [notArray, /returned object results/],
    ] as const) {
      const r = await createGate({ scorer }).filter('q', passages(3));
      expect(r.included).toEqual([]);
      expect(r.excluded.map((i) => i.reason)).toEqual(['scorer-error', 'scorer-error', 'scorer-error']);
      expect(r.stats).toMatchObject({ scored: 0, unscored: 3, unscoredByReason: { 'scorer-error': 3 } });
      expect(r.errors).toHaveLength(1);
      expect(r.errors[0]).toMatch(message);
    }
  });

  it('deadline: filter returns by the deadline with pending pairs failed closed as timeout', async () => {
    let seen: { deadline?: number } | undefined;
    const slow: Scorer = {
      id: 'slow',
      score: async (_q, ps, options) => {
        seen = options;
        await sleep(400);
        scorerDone = true;
        return ps.map(() => ({ relevant: 0.9 }));
      },
    };
    let scorerDone = false;
    const gate = createGate({ scorer: slow });
    const start = Date.now();
    const r = await gate.filter('q', passages(3), { budgetMs: 40 });
    // Answered at the deadline, not when the scorer finished.
    // Timers are millisecond-grained on libuv's cached loop clock: one may fire up to 1 ms early by Date.now.
    expect(Date.now()).toBeGreaterThanOrEqual((seen?.deadline ?? Number.POSITIVE_INFINITY) - 1);
    expect(scorerDone).toBe(false);
    expect(seen?.deadline).toBeGreaterThanOrEqual(start + 40);
    expect(r.excluded.map((i) => i.reason)).toEqual(['timeout', 'timeout', 'timeout']);
    expect(r.stats).toMatchObject({ returned: 0, unscored: 3, unscoredByReason: { timeout: 3 } });
  });

  it('an absolute deadline already past never calls the scorer; the earlier of deadline and budget wins', async () => {
    const scorer = tableScorer({ p0: { relevant: 0.9 } });
    const gate = createGate({ scorer });
    const r = await gate.filter('q', passages(1), { deadline: Date.now() - 1 });
    expect(r.excluded[0].reason).toBe('timeout');
    expect(scorer.calls).toHaveLength(0);
    const r2 = await gate.filter('q', passages(1), { deadline: Date.now() + 10_000, budgetMs: 0 });
    expect(r2.excluded[0].reason).toBe('timeout');
    const r3 = await gate.filter('q', passages(1), { deadline: Date.now() + 10_000, budgetMs: 10_000 });
    expect(r3.included).toHaveLength(1);
    expect(scorer.calls[0].options?.deadline).toBeGreaterThan(Date.now());
  });

  it('the clock option drives deadlines', async () => {
    const scorer = tableScorer({ p0: { relevant: 0.9 } });
    const gate = createGate({ scorer, clock: () => 1_000 });
    expect((await gate.filter('q', passages(1), { deadline: 1_000 })).excluded[0].reason).toBe('timeout');
    expect((await gate.filter('q', passages(1), { deadline: 1_001 })).included).toHaveLength(1);
  });

  it('abort: pending pairs fail closed as aborted, the scorer sees the signal, a late rejection is not unhandled', async () => {
    const controller = new AbortController();
    let seenSignal: AbortSignal | undefined;
    const slow: Scorer = {
      id: 'slow',
      score: async (_q, _ps, options) => {
        seenSignal = options?.signal;
        await sleep(100);
        throw new Error('late failure after abort');
      },
    };
    const pending = createGate({ scorer: slow }).filter('q', passages(2), { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    const r = await pending;
    expect(seenSignal).toBe(controller.signal);
    expect(r.excluded.map((i) => i.reason)).toEqual(['aborted', 'aborted']);
    await sleep(120); // the scorer rejects now; vitest fails the run on an unhandled rejection
  });

  it('an already aborted signal never calls the scorer', async () => {
    const scorer = tableScorer({ p0: { relevant: 0.9 } });
    const r = await createGate({ scorer }).filter('q', passages(1), { signal: AbortSignal.abort() });
    expect(r.excluded[0]).toMatchObject({ reason: 'aborted', rule: 'fail-closed' });
    expect(scorer.calls).toHaveLength(0);
  });
});

describe('fail open (explicit)', () => {
  it('includes unscored pairs flagged with their reason, after the scored ones, and reports them', async () => {
    const scorer = tableScorer({
      p0: { relevant: Number.NaN },
      p1: { relevant: 0.3 },
      p2: { relevant: 0.8 },
      p3: null,
    });
    const r = await createGate({ scorer, policy: { threshold: 0.5, failOpen: true } }).filter('q', passages(4));
    expect(r.included.map((i) => [i.id, i.rule, i.reason])).toEqual([
      ['p2', 'threshold', undefined],
      ['p0', 'fail-open', 'invalid-signal'],
      ['p3', 'fail-open', 'scorer-null'],
    ]);
    expect(r.stats).toMatchObject({ passed: 1, returned: 3, failedOpen: 2, unscored: 2, meanRelevance: 0.8 });
  });

  it('fail-open does not apply to early-stop skips', async () => {
    const scorer = tableScorer({ p0: { relevant: 0.1 }, p1: { relevant: 0.1 }, p2: { relevant: 0.9 } });
    const r = await createGate({
      scorer,
      policy: { failOpen: true, earlyStop: { window: 2, minRate: 0.5, chunk: 1 } },
    }).filter('q', passages(3));
    expect(r.excluded.find((i) => i.id === 'p2')).toMatchObject({ rule: 'early-stop', reason: undefined });
    expect(r.stats).toMatchObject({ skippedByEarlyStop: 1, unscored: 0, failedOpen: 0 });
  });

  it('a scorer error with failOpen includes all pairs flagged scorer-error', async () => {
    const scorer = fixedScorer(() => Promise.reject(new Error('x')));
    const r = await createGate({ scorer, policy: { failOpen: true } }).filter('q', passages(2));
    expect(r.included.map((i) => i.reason)).toEqual(['scorer-error', 'scorer-error']);
    expect(r.stats.insufficientContext).toBe(true);
  });
});

describe('deadline edge cases', () => {
  it('a deadline beyond the timer range does not fire early', async () => {
    const r = await createGate({ scorer: slowScorer(20) }).filter('q', passages(1), { deadline: Date.now() + 1e12 });
    expect(r.included).toHaveLength(1);
  });
});

describe('scorers that honour limits themselves', () => {
  it('DeadlineExceededError → timeout, AbortedError / AbortError → aborted (not scorer-error)', async () => {
    const { DeadlineExceededError, AbortedError } = await import('../../src/index.js');
    const cases: Array<[Error, string]> = [
      [new DeadlineExceededError(), 'timeout'],
      [new AbortedError(), 'aborted'],
      [Object.assign(new Error('aborted'), { name: 'AbortError' }), 'aborted'],
      [new TypeError('bug'), 'scorer-error'],
    ];
    for (const [error, reason] of cases) {
      const scorer: Scorer = {
        id: 's',
        score: async () => {
          throw error;
        },
      };
      const r = await createGate({ scorer }).filter('q', passages(2));
      expect(r.excluded.map((i) => i.reason)).toEqual([reason, reason]);
      expect(r.errors.length).toBe(reason === 'scorer-error' ? 1 : 0);
    }
  });
});
