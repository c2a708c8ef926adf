import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { createGate } from '../../src/gate/gate.js';
import { createRouter } from '../../src/router/router.js';
import type { Passage, Scorer, ScoreOptions, ScorerPairResult } from '../../src/types.js';
import { ce, fastTier, instantTier, passages, routed, sleep, fastPath } from './fakes.js';

/** A tier whose calls never settle, recording the options each call got. */
function hangingTier(id: string): Scorer & { options: Array<ScoreOptions | undefined> } {
  const options: Array<ScoreOptions | undefined> = [];
  return {
    id,
    options,
    score: (_q, _ps, opts) => {
      options.push(opts);
      return new Promise<never>(() => undefined);
    },
  };
}

/** A tier whose calls settle only when the test says so. */
function heldTier(id: string, relevance: number): Scorer & { release(): void; calls: number } {
  const waiting: Array<() => void> = [];
  let calls = 0;
  return {
    id,
    get calls() {
      return calls;
    },
    release: () => {
      for (const w of waiting.splice(0)) w();
    },
    score: (_q, ps) => {
      calls++;
      return new Promise<ReadonlyArray<ScorerPairResult>>((resolve) => {
        waiting.push(() => resolve(ps.map(() => ({ probabilities: { relevant: relevance } }))));
      });
    },
  };
}

describe('the router answers at its answer time, whatever a tier does', () => {
  it('an inline tier that never resolves: cascade answers at the deadline with its pairs unscored', async () => {
    const stuck = hangingTier('stuck-fast-path');
    const router = createRouter({
      tiers: [fastPath(stuck), ce(instantTier(), { estimateMs: () => 1 })],
      routing: { mode: 'cascade' },
      returnMarginMs: 2,
    });
    const deadline = Date.now() + 40;
    const out = await router.score('q', passages(5), { deadline });
    expect(out).toEqual(Array(5).fill(null));
    // The inline tier got the answer time as its deadline, so a tier that honours it can stop.
    expect(stuck.options[0]?.deadline).toBe(deadline - 2);
    const stats = router.stats();
    expect(stats.deadlinePairs).toBe(5);
    expect(stats.unscoredPairs).toBe(5);
  });

  it('budget mode: the inline fallback and the slow tier both hang, the call still answers (nothing scored)', async () => {
    const router = createRouter({
      tiers: [fastPath(hangingTier('stuck-fast-path')), ce(hangingTier('stuck-ce'), { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const out = await router.score('q', passages(3), { deadline: Date.now() + 30 });
    expect(out).toEqual([null, null, null]);
    expect(router.stats().deadlinePairs).toBe(3);
  });

  it('budget mode: when the slow tier answers every pair, a hung fallback is not waited for', async () => {
    const router = createRouter({
      tiers: [fastPath(hangingTier('stuck-fast-path')), ce(instantTier(), { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    // A deadline past the test's timeout: waiting for the hung fallback would fail the test.
    const out = await router.score('q', passages(3), { deadline: Date.now() + 600_000 });
    expect(out.map((r) => routed(r).tier)).toEqual(['cross-encoder', 'cross-encoder', 'cross-encoder']);
  });

  it('a slow tier that hangs: the pairs are answered from the fallback, labelled deadline', async () => {
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.4)), ce(hangingTier('stuck-ce'), { estimateMs: () => 1 })],
      routing: { mode: 'cascade' },
    });
    const out = await router.score('q', passages(4), { deadline: Date.now() + 30 });
    expect(out.map((r) => [routed(r).tier, routed(r).degraded])).toEqual(Array(4).fill(['fast-path', 'deadline']));
  });

  it('answers that arrive after the answer time are dropped: the returned array never changes', async () => {
    const held = heldTier('held-ce', 0.9);
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.4)), ce(held, { estimateMs: () => 1 })],
      routing: { mode: 'cascade' },
    });
    const out = await router.score('q', passages(3), { deadline: Date.now() + 25 });
    const before = JSON.stringify(out);
    expect(out.map((r) => routed(r).tier)).toEqual(['fast-path', 'fast-path', 'fast-path']);
    held.release();
    await sleep(5);
    expect(JSON.stringify(out)).toBe(before);
  });

  it('through the gate: an inline tier that hangs gives a result at the deadline, unscored pairs failed closed', async () => {
    const router = createRouter({
      tiers: [fastPath(hangingTier('stuck-fast-path')), ce(hangingTier('stuck-ce'), { estimateMs: () => 1 })],
      routing: { mode: 'cascade' },
    });
    const gate = createGate({ scorer: router });
    const result = await gate.filter('q', passages(4), { budgetMs: 30 });
    expect(result.stats.retrieved).toBe(4);
    expect(result.stats.unscored).toBe(4);
    expect(result.included).toEqual([]);
  });
});

describe('router.warmUp', () => {
  it('runs one synthetic batch on every tier, straight to the tier: no counters, no cost-model sample', async () => {
    const fast = fastTier(() => 0.5);
    const slow = instantTier('fake-ce');
    const router = createRouter({ tiers: [fastPath(fast), ce(slow)], routing: { mode: 'cascade' } });
    const report = await router.warmUp();
    expect(report.tiers.map((t) => t.name)).toEqual(['cross-encoder', 'fast-path']);
    expect(report.tiers.every((t) => t.error === undefined && t.ms >= 0)).toBe(true);
    expect(fast.calls).toHaveLength(1);
    expect(slow.calls).toHaveLength(1);
    expect(slow.calls[0].length).toBeGreaterThan(1);
    const stats = router.stats();
    expect(stats.calls).toBe(0);
    expect(stats.tiers.every((t) => t.samples === 0 && t.calls === 0)).toBe(true);
  });

  it('reports a failing tier instead of throwing, and warms only the tiers asked for', async () => {
    const failing: Scorer = {
      id: 'broken-ce',
      score: async () => {
        throw new Error('no model');
      },
    };
    const fast = fastTier(() => 0.5);
    const router = createRouter({ tiers: [fastPath(fast), ce(failing)], routing: { mode: 'cascade' } });
    const report = await router.warmUp();
    expect(report.tiers.find((t) => t.name === 'cross-encoder')?.error).toMatch(/no model/);
    const only = await router.warmUp({ tiers: ['fast-path'] });
    expect(only.tiers.map((t) => t.name)).toEqual(['fast-path']);
    expect(fast.calls).toHaveLength(2);
    await expect(router.warmUp({ tiers: ['judge'] })).rejects.toThrow(InvalidArgumentError);
  });

  it('a tier that never answers is reported after timeoutMs instead of holding the warm-up', async () => {
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(hangingTier('stuck-ce'))],
      routing: { mode: 'cascade' },
    });
    const report = await router.warmUp({ timeoutMs: 20 });
    expect(report.tiers.find((t) => t.name === 'cross-encoder')?.error).toMatch(/DeadlineExceededError/);
    expect(report.tiers.find((t) => t.name === 'fast-path')?.error).toBeUndefined();
    await expect(router.warmUp({ timeoutMs: -1 })).rejects.toThrow(InvalidArgumentError);
  });
});

describe('the gate takes an answer given in the same event-loop turn as its deadline', () => {
  it('after a stall, a scorer whose timer runs just after the gate deadline timer still scores its pairs', async () => {
    // The scorer answers from a 25 ms timer (like a router's answer timer); the gate's deadline is
    // 20 ms away. A 60 ms stall makes both timers due in the same turn, the gate's first.
    const scorer: Scorer = {
      id: 'answer-timer',
      score: (_q, ps: readonly Passage[]) =>
        new Promise((resolve) => setTimeout(() => resolve(ps.map(() => ({ probabilities: { relevant: 0.9 } }))), 25)),
    };
    const gate = createGate({ scorer });
    const t0 = performance.now();
    const pending = gate.filter('q', passages(3), { deadline: Date.now() + 20 });
    await sleep(2);
    while (performance.now() - t0 < 60) {
      /* the event loop is blocked: both timers come due */
    }
    const result = await pending;
    expect(result.stats.unscored).toBe(0);
    expect(result.included).toHaveLength(3);
  });
});
