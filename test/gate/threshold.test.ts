import { describe, expect, it } from 'vitest';
import { createGate } from '../../src/index.js';
import { ids, passages, relevanceScorer } from './helpers.js';

describe('threshold gate', () => {
  it('includes relevance ≥ threshold (inclusive), straddled by 0.01', async () => {
    const scorer = relevanceScorer([0.59, 0.6, 0.61]);
    const gate = createGate({ scorer, policy: { threshold: 0.6 } });
    const r = await gate.filter('q', passages(3));
    expect(ids(r.included)).toEqual(['p2', 'p1']);
    expect(ids(r.excluded)).toEqual(['p0']);
    expect(r.excluded[0].rule).toBe('below-threshold');
    expect(r.included.map((i) => i.rule)).toEqual(['threshold', 'threshold']);
    expect(r.stats).toMatchObject({
      retrieved: 3,
      scored: 3,
      passed: 2,
      returned: 2,
      threshold: 0.6,
      fallbackTriggered: false,
      insufficientContext: false,
    });
  });

  it('orders included by relevance desc with ties broken by input rank', async () => {
    const gate = createGate({ scorer: relevanceScorer([0.7, 0.9, 0.7, 0.95, 0.1]), policy: { threshold: 0.5 } });
    const r = await gate.filter('q', passages(5));
    expect(ids(r.included)).toEqual(['p3', 'p1', 'p0', 'p2']);
    expect(r.included.map((i) => i.rank)).toEqual([3, 1, 0, 2]);
    expect(r.stats.meanRelevance).toBeCloseTo((0.7 + 0.9 + 0.7 + 0.95) / 4, 12);
    expect(r.stats.minRelevance).toBe(0.7);
    expect(r.stats.maxRelevance).toBe(0.95);
  });

  it('items carry signals, rank, the untouched passage object, tier and cached=false', async () => {
    const ps = passages(2).map((p) => ({ ...p, metadata: { source: 'x' } }));
    const gate = createGate({ scorer: relevanceScorer([0.8, 0.2]) });
    const r = await gate.filter('q', ps);
    expect(r.included[0].passage).toBe(ps[0]);
    expect(r.included[0]).toMatchObject({
      id: 'p0',
      route: 'included',
      signals: { relevant: 0.8 },
      relevance: 0.8,
      cached: false,
      rank: 0,
      tier: 'rel-model',
    });
    expect(r.tier).toEqual({ scorer: 'rel-model', name: 'rel-model', counts: { 'rel-model': 2 } });
    expect(r.timings.totalMs).toBeGreaterThanOrEqual(r.timings.scoringMs);
    expect(r.errors).toEqual([]);
  });

  it('caps at maxKept keeping the most relevant; the rest are excluded by max-kept', async () => {
    const gate = createGate({ scorer: relevanceScorer([0.6, 0.9, 0.8, 0.7]), policy: { threshold: 0.5, maxKept: 2 } });
    const r = await gate.filter('q', passages(4));
    expect(ids(r.included)).toEqual(['p1', 'p2']);
    expect(ids(r.excluded)).toEqual(['p0', 'p3']);
    expect(r.excluded.every((i) => i.rule === 'max-kept')).toBe(true);
    expect(r.stats).toMatchObject({ passed: 4, returned: 2 });
  });

  it("fallback 'top' returns the best minKept anyway and flags it", async () => {
    const gate = createGate({
      scorer: relevanceScorer([0.2, 0.4, 0.3, 0.6]),
      policy: { threshold: 0.5, minKept: 3, fallback: 'top' },
    });
    const r = await gate.filter('q', passages(4));
    expect(ids(r.included)).toEqual(['p3', 'p1', 'p2']);
    expect(r.included.map((i) => i.rule)).toEqual(['threshold', 'fallback-top', 'fallback-top']);
    expect(ids(r.excluded)).toEqual(['p0']);
    expect(r.stats).toMatchObject({ passed: 1, returned: 3, fallbackTriggered: true });
  });

  it("fallback 'none' returns nothing when fewer than minKept pass", async () => {
    const gate = createGate({
      scorer: relevanceScorer([0.2, 0.9]),
      policy: { threshold: 0.5, minKept: 2, fallback: 'none' },
    });
    const r = await gate.filter('q', passages(2));
    expect(r.included).toEqual([]);
    expect(r.excluded.find((i) => i.id === 'p1')?.rule).toBe('fallback-none');
    expect(r.stats).toMatchObject({ passed: 1, returned: 0, fallbackTriggered: true, insufficientContext: true });
  });

  it('minKept boundary: exactly minKept passing does not trigger the fallback, one fewer does', async () => {
    const policy = { threshold: 0.5, minKept: 2, fallback: 'top' as const };
    const enough = await createGate({ scorer: relevanceScorer([0.5, 0.51, 0.1]), policy }).filter('q', passages(3));
    expect(enough.stats.fallbackTriggered).toBe(false);
    const short = await createGate({ scorer: relevanceScorer([0.49, 0.51, 0.1]), policy }).filter('q', passages(3));
    expect(short.stats.fallbackTriggered).toBe(true);
    expect(ids(short.included)).toEqual(['p1', 'p0']);
  });

  it('insufficientBelow: flagged when the returned mean is below it (strict), straddled by 0.01', async () => {
    // Fallback returns [0.3, 0.2]: mean 0.25.
    const run = (insufficientBelow: number) =>
      createGate({
        scorer: relevanceScorer([0.3, 0.2]),
        policy: { threshold: 0.9, minKept: 2, insufficientBelow },
      }).filter('q', passages(2));
    expect((await run(0.26)).stats.insufficientContext).toBe(true);
    expect((await run(0.25)).stats.insufficientContext).toBe(false);
    expect((await run(0.24)).stats.insufficientContext).toBe(false);
    expect((await run(0.26)).stats.meanRelevance).toBeCloseTo(0.25, 12);
  });

  it('insufficientContext is set whenever nothing is returned', async () => {
    const r = await createGate({ scorer: relevanceScorer([0.1]), policy: { threshold: 0.5 } }).filter('q', passages(1));
    expect(r.stats).toMatchObject({
      returned: 0,
      insufficientContext: true,
      meanRelevance: null,
      minRelevance: null,
      maxRelevance: null,
    });
  });

  it('empty input: no scorer call, empty groups, zero stats', async () => {
    const scorer = relevanceScorer([]);
    const r = await createGate({ scorer }).filter('q', []);
    expect(r.included).toEqual([]);
    expect(r.excluded).toEqual([]);
    expect(r.stats).toMatchObject({ retrieved: 0, scored: 0, returned: 0, insufficientContext: true });
    expect(r.tier.name).toBe('none');
    expect(scorer.calls).toHaveLength(0);
  });

  it('k = 1', async () => {
    const r = await createGate({ scorer: relevanceScorer([0.7]) }).filter('q', passages(1));
    expect(ids(r.included)).toEqual(['p0']);
    expect(r.stats.retrieved).toBe(1);
  });

  it('k = 1000: every pair decided, order and counts exact', async () => {
    const values = Array.from({ length: 1000 }, (_, i) => ((i * 7919) % 1000) / 1000);
    const scorer = relevanceScorer(values);
    const r = await createGate({ scorer, policy: { threshold: 0.5 } }).filter('q', passages(1000));
    const expected = values.filter((v) => v >= 0.5).length;
    expect(r.stats).toMatchObject({ retrieved: 1000, scored: 1000, passed: expected, returned: expected });
    expect(r.included.length + r.excluded.length).toBe(1000);
    for (let i = 1; i < r.included.length; i++)
      expect(r.included[i - 1].relevance!).toBeGreaterThanOrEqual(r.included[i].relevance!);
    expect(r.excluded.map((i) => i.rank)).toEqual([...r.excluded.map((i) => i.rank)].sort((a, b) => a - b));
    expect(scorer.calls).toHaveLength(1);
  });

  it('relevanceSignal picks the named signal; default falls back to "relevant"', async () => {
    const scorer = {
      id: 'm',
      score: async (_q: string, ps: readonly { id: string }[]) => ps.map(() => ({ relevant: 0.8, other: 0.1 })),
    };
    const byDefault = await createGate({ scorer }).filter('q', passages(1));
    expect(byDefault.included[0].relevance).toBe(0.8);
    const named = await createGate({ scorer, policy: { relevanceSignal: 'other' } }).filter('q', passages(1));
    expect(named.included).toEqual([]);
    expect(named.excluded[0].relevance).toBe(0.1);
  });
});
