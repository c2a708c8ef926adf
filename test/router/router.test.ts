import { describe, expect, it } from 'vitest';
import { createScoreCache } from '../../src/cache/score-cache.js';
import { OverloadedError } from '../../src/errors.js';
import { createGate } from '../../src/gate/gate.js';
import { PREDICTION_Z, TierCostModel } from '../../src/router/cost-model.js';
import { createRouter } from '../../src/router/router.js';
import { DynamicBatcher } from '../../src/tiers/cross-encoder/batcher.js';
import type { Scorer } from '../../src/types.js';
import { FakeExecutor, pairKey } from '../cross-encoder/fake-executor.js';
import {
  type CountingScorer,
  ce,
  fastTier,
  indexOf,
  instantTier,
  passages,
  routed,
  sleep,
  slowTier,
  fastPath,
} from './fakes.js';

/** A real batcher with one worker over an executor that runs a batch only when released. */
function manualBatcher(): { exec: FakeExecutor; batcher: DynamicBatcher } {
  const exec = new FakeExecutor({ manual: true });
  const batcher = new DynamicBatcher(exec, {
    workers: 1,
    maxInFlight: 1,
    signals: 1,
    maxBatchTokens: 4096,
    maxQueueDelayMs: 0,
    maxPendingPairs: 10_000,
    useTypeIds: true,
  });
  return { exec, batcher };
}

describe('hard deadline', () => {
  it('answers by the deadline from the fast path when the slow tier is slower, labelled and counted', async () => {
    const slow = slowTier({ latencyMs: 1500 });
    const fast = fastTier(() => 0.3);
    const router = createRouter({
      tiers: [fastPath(fast), ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
      returnMarginMs: 2,
    });
    const t0 = Date.now();
    let slowTierWouldBeDone = false;
    const mark = setTimeout(() => {
      slowTierWouldBeDone = true;
    }, 1500);
    const out = await router.score('q', passages(8), { deadline: t0 + 60 });
    clearTimeout(mark);
    expect(slowTierWouldBeDone).toBe(false); // answered without waiting for the slow tier
    expect(out.map((r) => routed(r).tier)).toEqual(Array(8).fill('fast-path'));
    expect(out.map((r) => routed(r).degraded)).toEqual(Array(8).fill('deadline'));
    expect(out.every((r) => routed(r).probabilities.relevant === 0.3)).toBe(true);
    const stats = router.stats();
    expect(stats.deadlinePairs).toBe(8);
    expect(stats.degradedPairs).toBe(8);
    expect(stats.cancelledPairs).toBe(8);
    expect(stats.byTier).toEqual({ 'fast-path': 8 });
  });

  it('through the gate: a budgetMs call returns on time with every pair scored (none fail closed)', async () => {
    const router = createRouter({
      // The slow tier answers after the test's timeout: only the budget can end the call.
      tiers: [fastPath(fastTier(() => 0.8)), ce(slowTier({ latencyMs: 600_000 }), { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const gate = createGate({ scorer: router, policy: { threshold: 0.5 } });
    const result = await gate.filter('q', passages(5), { budgetMs: 50 });
    expect(result.stats.unscored).toBe(0);
    expect(result.included).toHaveLength(5);
    expect(result.tier.counts).toEqual({ 'fast-path': 5 });
  });

  it('keeps slow-tier answers that arrived and degrades only the late ones', async () => {
    // First call occupies the single worker for 40 ms; the second call's pairs wait behind it.
    const slow = slowTier({ latencyMs: 40 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.2)), ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const now = Date.now();
    const [a, b] = await Promise.all([
      router.score('q', passages(3, 'a'), { deadline: now + 1000 }),
      router.score('q', passages(3, 'b'), { deadline: now + 60 }),
    ]);
    expect(a.map((r) => routed(r).tier)).toEqual(['cross-encoder', 'cross-encoder', 'cross-encoder']);
    expect(b.map((r) => routed(r).tier)).toEqual(['fast-path', 'fast-path', 'fast-path']);
    expect(b.every((r) => routed(r).degraded === 'deadline')).toBe(true);
  });
});

describe('cancellation', () => {
  it('pairs cancelled at the deadline never reach a worker (real batcher, counting executor)', async () => {
    const { exec, batcher } = manualBatcher();
    const ceScorer: Scorer = {
      id: 'batcher-ce',
      async score(query, ps, opts) {
        const logits = await batcher.submit(
          query,
          ps.map((p) => p.text),
          opts ?? {},
        );
        return ps.map((_, i) => ({
          probabilities: { relevant: 1 / (1 + Math.exp(-logits[i])) },
          raw: { relevant: logits[i] },
          tier: 'cross-encoder',
        }));
      },
    };
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.4)), ce(ceScorer, { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const now = Date.now();
    const first = router.score('qa', passages(4, 'a'), { deadline: now + 5000 });
    for (let i = 0; i < 200 && exec.pendingManual === 0; i++) await sleep(5); // A's batch reaches the (blocked) worker
    expect(exec.pendingManual).toBe(1);
    const second = await router.score('qb', passages(6, 'b'), { deadline: Date.now() + 50 });
    expect(second.every((r) => routed(r).tier === 'fast-path' && routed(r).degraded === 'deadline')).toBe(true);
    exec.release();
    const firstOut = await first;
    expect(firstOut.every((r) => routed(r).tier === 'cross-encoder')).toBe(true);
    await sleep(20);
    exec.release();
    // Only A's four pairs ever ran; B's six were dropped from the queue.
    const ran = exec.ranKeys();
    const aKeys = passages(4, 'a').map((p) => pairKey('qa', p.text));
    const bKeys = passages(6, 'b').map((p) => pairKey('qb', p.text));
    expect(aKeys.every((k) => ran.has(k))).toBe(true);
    expect(bKeys.some((k) => ran.has(k))).toBe(false);
    expect(batcher.stats().pairsDropped).toBe(6);
    expect(batcher.stats().pairsRun).toBe(4);
    await batcher.close();
  });

  it('a queued call cancelled at the deadline does not execute on the fake single-worker tier', async () => {
    const slow = slowTier({ latencyMs: 80 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.1)), ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'budget' },
    });
    const now = Date.now();
    const a = router.score('q', passages(2, 'a'), { deadline: now + 2000 });
    const b = router.score('q', passages(2, 'b'), { deadline: now + 30 });
    await Promise.all([a, b]);
    await sleep(120);
    expect(slow.executed).toEqual(['a0', 'a1']);
  });
});

describe('cascade', () => {
  it('sends the pairs nearest the threshold to the slow tier, as many as the cost model fits', async () => {
    // Fast relevance of p_i: these values; threshold 0.5 → distances |v − 0.5|.
    const values = [0.95, 0.52, 0.1, 0.47, 0.7, 0.5, 0.33, 0.61, 0.02, 0.44];
    const fast = fastTier((id) => values[indexOf(id)]);
    const slow = instantTier('fake-ce', () => 0.99);
    let now = 1_000_000;
    const router = createRouter({
      tiers: [fastPath(fast), ce(slow, { estimateMs: (pairs) => pairs * 10 })],
      routing: { mode: 'cascade', threshold: 0.5 },
      clock: () => now,
      returnMarginMs: 0,
      headroom: 1,
      probeIntervalMs: Number.POSITIVE_INFINITY,
    });
    // 55 ms left: 5 pairs × 10 ms fit, 6 do not.
    const out = await router.score('q', passages(10), { deadline: now + 55 });
    expect(slow.calls).toHaveLength(1);
    expect(slow.calls[0]).toEqual(['p5', 'p1', 'p3', 'p9', 'p7']); // distances 0, .02, .03, .06, .11
    const tiers = out.map((r) => routed(r).tier);
    expect(tiers).toEqual([
      'fast-path',
      'cross-encoder',
      'fast-path',
      'cross-encoder',
      'fast-path',
      'cross-encoder',
      'fast-path',
      'cross-encoder',
      'fast-path',
      'cross-encoder',
    ]);
    for (const i of [0, 2, 4, 6, 8]) {
      expect(routed(out[i]).degraded).toBe('shed');
      expect(routed(out[i]).probabilities.relevant).toBe(values[i]);
    }
    expect(router.stats().shedPairs).toBe(5);
    now += 1;
    void now;
  });

  it('never rescores cached pairs, and prefers a cached cross-encoder score over a cached fast-path one', async () => {
    const fast = fastTier(() => 0.5);
    const slow = instantTier('fake-ce', () => 0.77);
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const router = createRouter({
      tiers: [{ ...fastPath(fast), cache: true }, ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'cascade', threshold: 0.5 },
      cache,
    });
    const ps = passages(6);
    await router.score('q', ps.slice(0, 3), { deadline: Date.now() + 1000 });
    expect(slow.executed).toEqual(['p0', 'p1', 'p2']);
    const out = await router.score('q', ps, { deadline: Date.now() + 1000 });
    // p0..p2 from cache (source cross-encoder, its score), p3..p5 scored now.
    expect(slow.executed).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
    expect(
      out.slice(0, 3).map((r) => [routed(r).tier, routed(r).sourceTier, routed(r).probabilities.relevant]),
    ).toEqual(Array(3).fill(['cache', 'cross-encoder', 0.77]));
    expect(out.slice(3).map((r) => routed(r).tier)).toEqual(['cross-encoder', 'cross-encoder', 'cross-encoder']);
    // The fast path only ran on uncached pairs.
    expect(fast.executed).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5']);
    expect(router.stats().cacheHitsBySource).toEqual({ 'cross-encoder': 3 });
  });

  it('cached fast-path scores are reused as the fallback and can still be upgraded to the cross-encoder', async () => {
    const fast = fastTier(() => 0.5);
    const slow = instantTier('fake-ce', () => 0.9);
    let ceMs = 1e6;
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const router = createRouter({
      tiers: [{ ...fastPath(fast), cache: true }, ce(slow, { estimateMs: () => ceMs })],
      routing: { mode: 'cascade' },
      cache,
      probeIntervalMs: Number.POSITIVE_INFINITY,
    });
    const ps = passages(3);
    const a = await router.score('q', ps, { deadline: Date.now() + 100 });
    expect(a.map((r) => [routed(r).tier, routed(r).degraded])).toEqual(Array(3).fill(['fast-path', 'shed']));
    const b = await router.score('q', ps, { deadline: Date.now() + 100 });
    expect(b.map((r) => [routed(r).tier, routed(r).sourceTier, routed(r).degraded])).toEqual(
      Array(3).fill(['cache', 'fast-path', 'shed']),
    );
    expect(fast.executed).toHaveLength(3); // not rescored
    ceMs = 1;
    const c = await router.score('q', ps, { deadline: Date.now() + 100 });
    expect(c.map((r) => routed(r).tier)).toEqual(['cross-encoder', 'cross-encoder', 'cross-encoder']);
    expect(fast.executed).toHaveLength(3);
    const d = await router.score('q', ps, { deadline: Date.now() + 100 });
    expect(d.map((r) => [routed(r).tier, routed(r).sourceTier])).toEqual(Array(3).fill(['cache', 'cross-encoder']));
    expect(slow.executed).toHaveLength(3);
  });

  it('a pair degraded to the fast path is never cached as a cross-encoder score', async () => {
    const fast = fastTier(() => 0.4);
    const slow = slowTier({ latencyMs: 1000, relevance: () => 0.9 });
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const router = createRouter({
      tiers: [fastPath(fast), ce(slow, { estimateMs: () => 1 })],
      routing: { mode: 'cascade' },
      cache,
    });
    const ps = passages(4);
    const out = await router.score('q', ps, { deadline: Date.now() + 40 });
    expect(out.every((r) => routed(r).tier === 'fast-path')).toBe(true);
    expect(cache.lookup({ scorerId: slow.id, query: 'q', passages: ps })).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    // Fast-path results are not cached by default either: the next call goes to the tiers again.
    const again = await router.score('q', ps, { deadline: Date.now() + 40 });
    expect(again.every((r) => routed(r).tier === 'fast-path')).toBe(true);
    expect(fast.executed).toHaveLength(8);
  });
});

describe('budget mode', () => {
  it('picks the best tier whose predicted completion fits, else the next one down', async () => {
    const now = 5_000_000;
    // Each scenario a fresh router: the tiers' own estimators are the model before any measurement.
    const route = async (
      bigMs: number,
      smallMs: number,
    ): Promise<{ tiers: string[]; degraded: Array<string | undefined>; shed: number }> => {
      const router = createRouter({
        tiers: [
          fastPath(fastTier(() => 0.5)),
          { name: 'smallCe', scorer: instantTier('small-ce'), quality: 2, estimateMs: () => smallMs },
          { name: 'bigCe', scorer: instantTier('big-ce'), quality: 3, estimateMs: () => bigMs },
        ],
        routing: { mode: 'budget' },
        clock: () => now,
        returnMarginMs: 0,
        headroom: 1,
        probeIntervalMs: Number.POSITIVE_INFINITY,
      });
      const out = await router.score('q', passages(3), { deadline: now + 100 });
      return {
        tiers: out.map((r) => routed(r).tier),
        degraded: out.map((r) => routed(r).degraded),
        shed: router.stats().shedPairs,
      };
    };
    expect(await route(200, 30)).toEqual({
      tiers: ['smallCe', 'smallCe', 'smallCe'],
      degraded: ['shed', 'shed', 'shed'],
      shed: 3,
    });
    expect(await route(90, 30)).toEqual({
      tiers: ['bigCe', 'bigCe', 'bigCe'],
      degraded: [undefined, undefined, undefined],
      shed: 0,
    });
    expect(await route(150, 150)).toEqual({
      tiers: ['fast-path', 'fast-path', 'fast-path'],
      degraded: ['shed', 'shed', 'shed'],
      shed: 3,
    });
  });

  it('the cost model fits overhead + per-pair drain time from completions', () => {
    const model = new TierCostModel({ name: 'x', scorer: instantTier(), quality: 1, initialMsPerPair: 50 });
    expect(model.predict(10)).toBe(500); // prior
    // Observations from a tier costing 5 ms + 2 ms per pair ahead (own included).
    let t = 0;
    for (const n of [4, 10, 20, 7, 15, 1, 12, 20, 3, 9]) {
      const sub = model.begin(n, t);
      t += 5 + 2 * n;
      model.complete(sub, t);
      t += 50; // idle gap
    }
    // (the slope is shrunk slightly toward the departure-interval estimate, 2–7 ms here)
    expect(model.msPerPair).toBeGreaterThan(1.9);
    expect(model.msPerPair).toBeLessThan(2.3);
    expect(model.overheadMs).toBeGreaterThan(3);
    expect(model.overheadMs).toBeLessThan(6);
    // Predictions are the fitted mean plus 1.3 residual standard deviations.
    const margin = PREDICTION_Z * Math.sqrt(model.residualVar);
    expect(margin).toBeGreaterThan(0);
    expect(Math.abs(model.predict(20) - margin - 45)).toBeLessThan(2);
    // Work outstanding counts as ahead.
    const pending = model.begin(10, t);
    expect(Math.abs(model.predict(20) - margin - 65)).toBeLessThan(4);
    model.fail(pending, t + 1);
    expect(model.failedPairs).toBe(10);
    expect(model.outstanding).toBe(0);
  });

  it('learns the cost from measurements when the tier has no estimator', async () => {
    const slow = slowTier({ latencyMs: 30 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { initialMsPerPair: 0.001 })],
      routing: { mode: 'budget' },
    });
    // Prior says 0.001 ms/pair: the first calls go to the slow tier and teach the model ~3 ms/pair.
    for (let i = 0; i < 3; i++) await router.score('q', passages(10, `w${i}`), { deadline: Date.now() + 1000 });
    const perPair = router.stats().tiers.find((t) => t.name === 'cross-encoder')?.msPerPair ?? 0;
    expect(perPair).toBeGreaterThan(2);
    expect(router.predictMs('cross-encoder', 20)).toBeGreaterThan(40);
    // A 20 ms budget no longer fits 10 pairs: the call stays on the fast path without queueing.
    const before = slow.calls.length;
    const out = await router.score('q', passages(10, 'x'), { deadline: Date.now() + 20 });
    expect(slow.calls.length).toBe(before);
    expect(out.every((r) => routed(r).tier === 'fast-path' && routed(r).degraded === 'shed')).toBe(true);
  });
});

describe('probing', () => {
  it('an idle tier with a stale pessimistic prediction gets a probe, and the model recovers', async () => {
    const slow = instantTier('fake-ce');
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { initialMsPerPair: 1000 })],
      routing: { mode: 'cascade' },
      probeIntervalMs: 30,
    });
    // Fresh model: 1000 ms/pair → nothing fits a 100 ms budget, but the idle tier gets a one-pair probe.
    const first = await router.score('q', passages(4, 'a'), { deadline: Date.now() + 100 });
    expect(first.map((r) => routed(r).tier)).toEqual(['cross-encoder', 'fast-path', 'fast-path', 'fast-path']);
    const tier = router.stats().tiers.find((t) => t.name === 'cross-encoder');
    expect(tier?.probes).toBe(1);
    // The probe measured a fast tier: the next call fits without probing.
    expect(router.predictMs('cross-encoder', 4)).toBeLessThan(50);
    await router.score('q', passages(4, 'b'), { deadline: Date.now() + 100 });
    expect(router.stats().tiers.find((t) => t.name === 'cross-encoder')?.probes).toBe(1);
    expect(slow.executed).toEqual(['a0', 'b0', 'b1', 'b2', 'b3']);
  });

  it('no probe while the tier is busy or recently active', async () => {
    const slow = slowTier({ latencyMs: 200 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { initialMsPerPair: 1000 })],
      routing: { mode: 'cascade' },
      // Generous interval and deadline: a loaded CI machine must not turn this into a second probe.
      probeIntervalMs: 60_000,
    });
    // The model has just been created (lastActivity 0 → stale): one probe goes out...
    const a = router.score('q', passages(2, 'a'), { deadline: Date.now() + 2000 });
    // ...and while it is outstanding nothing else is sent.
    const b = await router.score('q', passages(2, 'b'), { deadline: Date.now() + 100 });
    expect(b.every((r) => routed(r).tier === 'fast-path' && routed(r).degraded === 'shed')).toBe(true);
    await a;
    const c = await router.score('q', passages(2, 'c'), { deadline: Date.now() + 100 });
    expect(c.every((r) => routed(r).tier === 'fast-path')).toBe(true);
    expect(slow.calls).toHaveLength(1);
  });
});

describe('probing backoff', () => {
  it('backs off while probes keep being cancelled within their prediction', async () => {
    const slow = slowTier({ latencyMs: 1000 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { estimateMs: () => 5000 })],
      routing: { mode: 'budget' },
      probeIntervalMs: 200,
    });
    await router.score('q', passages(2, 'a'), { deadline: Date.now() + 30 }); // probe, cancelled at ~28 ms
    expect(slow.calls).toHaveLength(1);
    await sleep(260); // past the base interval, not past the doubled one (400 ms)
    await router.score('q', passages(2, 'b'), { deadline: Date.now() + 30 });
    expect(slow.calls).toHaveLength(1);
    await sleep(300); // past the doubled interval
    await router.score('q', passages(2, 'c'), { deadline: Date.now() + 30 });
    expect(slow.calls).toHaveLength(2);
    expect(router.stats().tiers.find((t) => t.name === 'cross-encoder')?.probes).toBe(2);
  });
});

describe('background fill', () => {
  it('sends shed pairs of the most frequent query to the idle best tier through the cache', async () => {
    const slow = instantTier('fake-ce', () => 0.95);
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { estimateMs: () => 1e6 })],
      routing: { mode: 'cascade' },
      cache,
      probeIntervalMs: Number.POSITIVE_INFINITY,
      backgroundFill: { maxPairsPerSubmission: 4 },
    });
    const ps = passages(6);
    const first = await router.score('popular', ps, { deadline: Date.now() + 100 });
    expect(first.every((r) => routed(r).tier === 'fast-path' && routed(r).degraded === 'shed')).toBe(true);
    await router.score('rare', passages(2, 'r'), { deadline: Date.now() + 100 });
    await router.score('popular', ps, { deadline: Date.now() + 100 });
    await sleep(20);
    // The idle tier got the shed pairs in batches of at most 4, each pair once.
    expect(slow.calls[0]).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(slow.calls.every((c) => c.length <= 4)).toBe(true);
    expect([...slow.executed].sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'r0', 'r1']);
    const later = await router.score('popular', ps, { deadline: Date.now() + 100 });
    expect(later.map((r) => [routed(r).tier, routed(r).sourceTier])).toEqual(Array(6).fill(['cache', 'cross-encoder']));
    // (background completions also teach the cost model: a later foreground call may fit again)
    const stats = router.stats();
    expect(stats.backgroundPairs).toBeGreaterThanOrEqual(6);
    expect(stats.backgroundSubmissions).toBeGreaterThanOrEqual(2);
  });

  it('is never enabled without a cache', async () => {
    const slow = instantTier('fake-ce');
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(slow, { estimateMs: () => 1e6 })],
      routing: { mode: 'cascade' },
      probeIntervalMs: Number.POSITIVE_INFINITY,
      backgroundFill: true,
    });
    await router.score('q', passages(4), { deadline: Date.now() + 100 });
    await sleep(10);
    expect(slow.calls).toHaveLength(0);
  });
});

describe('overload protection', () => {
  it('sheds new work to the fast path when the slow tier queue bound is reached', async () => {
    const { exec, batcher } = manualBatcher();
    const ceScorer: CountingScorer = {
      id: 'batcher-ce',
      calls: [],
      executed: [],
      async score(query, ps, opts) {
        this.calls.push(ps.map((p) => p.id));
        const logits = await batcher.submit(
          query,
          ps.map((p) => p.text),
          opts ?? {},
        );
        return ps.map((_, i) => ({ probabilities: { relevant: logits[i] > 0 ? 1 : 0 }, tier: 'cross-encoder' }));
      },
    };
    const router = createRouter({
      tiers: [fastPath(fastTier(() => 0.5)), ce(ceScorer, { estimateMs: () => 1, maxQueuedPairs: 30 })],
      routing: { mode: 'cascade' },
    });
    const first = router.score('q1', passages(20, 'a'), { deadline: Date.now() + 5000 });
    await sleep(5);
    // 20 outstanding of 30: cascade sends only 10 more, budget sends none.
    const second = router.score('q2', passages(20, 'b'), { deadline: Date.now() + 5000 });
    await sleep(5);
    const third = await router.score('q3', passages(20, 'c'), { deadline: Date.now() + 5000 });
    expect(ceScorer.calls.map((c) => c.length)).toEqual([20, 10]);
    expect(third.every((r) => routed(r).tier === 'fast-path' && routed(r).degraded === 'shed')).toBe(true);
    const budget = await router.score('q4', passages(5, 'd'), {
      deadline: Date.now() + 5000,
      routing: { mode: 'budget' },
    });
    expect(budget.every((r) => routed(r).tier === 'fast-path' && routed(r).degraded === 'shed')).toBe(true);
    expect(router.stats().shedPairs).toBe(10 + 20 + 5);
    for (let i = 0; i < 5; i++) {
      exec.release();
      await sleep(5);
    }
    const [a, b] = await Promise.all([first, second]);
    expect(a.every((r) => routed(r).tier === 'cross-encoder')).toBe(true);
    expect(b.filter((r) => routed(r).tier === 'cross-encoder')).toHaveLength(10);
    await batcher.close();
  });

  it('an OverloadedError from the tier degrades to the fast path as shed; other errors as error', async () => {
    const overloaded: Scorer = { id: 'o', score: () => Promise.reject(new OverloadedError('full')) };
    const broken: Scorer = { id: 'b', score: () => Promise.reject(new Error('boom')) };
    for (const [scorer, reason] of [
      [overloaded, 'shed'],
      [broken, 'error'],
    ] as const) {
      const router = createRouter({
        tiers: [fastPath(fastTier(() => 0.6)), ce(scorer, { estimateMs: () => 1 })],
        routing: { mode: 'budget' },
      });
      const out = await router.score('q', passages(3), { deadline: Date.now() + 500 });
      expect(out.map((r) => [routed(r).tier, routed(r).degraded])).toEqual(Array(3).fill(['fast-path', reason]));
      expect(router.stats().degradedPairs).toBe(3);
    }
  });
});

describe('fixed mode and configuration', () => {
  it('fixed routing uses one tier only, with no fallback', async () => {
    const fast = fastTier(() => 0.5);
    const slow = instantTier();
    const router = createRouter({
      tiers: [fastPath(fast), ce(slow)],
      routing: { mode: 'fixed', fixedTier: 'cross-encoder' },
    });
    const out = await router.score('q', passages(4));
    expect(out.map((r) => routed(r).tier)).toEqual(Array(4).fill('cross-encoder'));
    expect(fast.executed).toHaveLength(0);
    const viaView = await router.view({ fixedTier: 'fast-path' }).score('q', passages(2));
    expect(viaView.map((r) => routed(r).tier)).toEqual(['fast-path', 'fast-path']);
    const broken = createRouter({
      tiers: [fastPath(fast), ce({ id: 'b', score: () => Promise.reject(new Error('boom')) })],
      routing: { mode: 'fixed' },
    });
    await expect(broken.score('q', passages(2))).rejects.toThrow('boom');
  });

  it('through the gate, per-pair tier labels reach the result', async () => {
    const values = [0.9, 0.5, 0.1];
    const now = Date.now(); // a frozen clock: the cost model sees exactly the budget
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const router = createRouter({
      tiers: [
        fastPath(fastTier((id) => values[indexOf(id)])),
        ce(
          instantTier('fake-ce', () => 0.8),
          { estimateMs: (n) => n * 10 },
        ),
      ],
      routing: { mode: 'cascade', threshold: 0.5 },
      cache,
      headroom: 1,
      probeIntervalMs: Number.POSITIVE_INFINITY,
      clock: () => now,
    });
    const gate = createGate({ scorer: router, clock: () => now });
    const r1 = await gate.filter('q', passages(3), { budgetMs: 16 });
    // One pair fits (10 ms each, ~14 ms left after the 2 ms return margin): the one nearest the threshold (p1).
    expect(r1.tier.counts).toEqual({ 'cross-encoder': 1, 'fast-path': 2 });
    const byId = new Map([...r1.included, ...r1.excluded].map((i) => [i.id, i.tier]));
    expect(byId.get('p1')).toBe('cross-encoder');
    const r2 = await gate.filter('q', passages(3), { budgetMs: 500 });
    expect(r2.tier.counts).toEqual({ cache: 1, 'cross-encoder': 2 });
  });

  it('rejects bad configuration with typed errors', () => {
    const s = instantTier();
    expect(() => createRouter({ tiers: [] })).toThrow(/non-empty/);
    expect(() => createRouter({ tiers: [ce(s), { ...ce(s), quality: 3 }] })).toThrow(/twice/);
    expect(() => createRouter({ tiers: [{ ...fastPath(s), quality: 5 }, ce(s)] })).toThrow(/lowest/);
    expect(() => createRouter({ tiers: [{ ...ce(s), name: 'cache' }] })).toThrow(/cache/);
    expect(() => createRouter({ tiers: [ce(s)], routing: { mode: 'fixed', fixedTier: 'nope' } })).toThrow(
      /not a registered tier/,
    );
    expect(() => createRouter({ tiers: [ce(s)], routing: { mode: 'fast' as never } })).toThrow(/routing.mode/);
    expect(() => createRouter({ tiers: [ce(s)], headroom: 2 })).toThrow(/headroom/);
  });
});
