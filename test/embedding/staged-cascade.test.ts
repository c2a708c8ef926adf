/**
 * The staged cascade fast path → embedding → cross-encoder (`routing.cascadeTier` as a list): the
 * planner gives the pairs nearest the threshold to the first stage as many as it fits, the next
 * nearest to the next stage, and leaves the rest on the inline score; the router labels the later
 * stage's answers `degraded: 'shed'`.
 */
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/errors.js';
import { type PlanTier, planRouting } from '../../src/router/plan.js';
import { createRouter } from '../../src/router/router.js';
import type { RoutedPairScore, TierSpec } from '../../src/router/types.js';
import type { Passage, Scorer } from '../../src/types.js';

const NOW = 1_000_000;

function planTier(name: string, msPerPair: number, inline = false): PlanTier {
  return {
    name,
    inline,
    maxQueuedPairs: 512,
    outstandingPairs: 0,
    predictMs: (pairs) => pairs * msPerPair,
    mayProbe: false,
  };
}

describe('planRouting: staged cascade', () => {
  const tiers = [planTier('cross-encoder', 10), planTier('embedding', 1), planTier('fast-path', 0.01, true)];
  // Pair i's relevance: distance to 0.5 grows with |i - 4.5|... spelled out for clarity.
  const relevance = [0.1, 0.45, 0.9, 0.52, 0.3, 0.7, 0.49, 0.95, 0.6, 0.2];

  it('first stage takes the nearest pairs it fits, the next stage the next nearest, the rest stay inline', () => {
    const plan = planRouting({
      mode: 'cascade',
      tiers,
      fixedTier: 'cross-encoder',
      cascadeTier: 'cross-encoder',
      cascadeStages: ['embedding'],
      cache: Array(10).fill('miss'),
      relevance,
      threshold: 0.5,
      answerBy: NOW + 25,
      now: NOW,
      headroom: 1,
    });
    // Distance order: 6 (0.01), 3 (0.02), 1 (0.05), 8 (0.1), 4 / 5 (0.2), 9 (0.3), 0 (0.4), 2 (0.4), 7 (0.45).
    expect(plan.submissions[0]).toEqual({ tier: 'cross-encoder', indices: [6, 3] });
    expect(plan.submissions[1].tier).toBe('embedding');
    expect(plan.submissions[1].degraded).toBe('shed');
    expect(plan.submissions[1].indices).toHaveLength(8);
    expect(plan.submissions[1].indices.slice(0, 2)).toEqual([1, 8]);
    expect(plan.inlineAnswer).toEqual([]);
    expect(plan.shed).toHaveLength(8);
    expect(plan.reason).toBe('over-budget');
  });

  it('without time for the later stage its pairs keep the inline score', () => {
    const plan = planRouting({
      mode: 'cascade',
      tiers: [planTier('cross-encoder', 10), planTier('embedding', 5), planTier('fast-path', 0.01, true)],
      fixedTier: 'cross-encoder',
      cascadeTier: 'cross-encoder',
      cascadeStages: ['embedding'],
      cache: Array(10).fill('miss'),
      relevance,
      threshold: 0.5,
      answerBy: NOW + 20,
      now: NOW,
      headroom: 1,
    });
    expect(plan.submissions.map((s) => [s.tier, s.indices.length])).toEqual([
      ['cross-encoder', 2],
      ['embedding', 4],
    ]);
    expect(plan.inlineAnswer).toHaveLength(4);
    expect(plan.inlineDegraded).toBe('shed');
  });

  it('a single cascade tier plans exactly as before (no stage, no degraded field)', () => {
    const plan = planRouting({
      mode: 'cascade',
      tiers,
      fixedTier: 'cross-encoder',
      cache: Array(10).fill('miss'),
      relevance,
      threshold: 0.5,
      answerBy: NOW + 25,
      now: NOW,
      headroom: 1,
    });
    expect(plan.submissions).toEqual([{ tier: 'cross-encoder', indices: [6, 3] }]);
    expect(plan.inlineAnswer).toHaveLength(8);
  });
});

function instant(id: string, tier: string, relevanceOf: (p: Passage) => number): Scorer {
  return {
    id,
    async score(_q, passages) {
      return passages.map((p) => ({ probabilities: { relevant: relevanceOf(p) }, tier }));
    },
  };
}

describe('router: fast path → embedding → cross-encoder', () => {
  const passages: Passage[] = Array.from({ length: 10 }, (_, i) => ({ id: String(i), text: `p${i}` }));
  const fastRelevance = (p: Passage) => [0.1, 0.45, 0.9, 0.52, 0.3, 0.7, 0.49, 0.95, 0.6, 0.2][Number(p.id)];
  const specs = (): TierSpec[] => [
    { name: 'fast-path', scorer: instant('fp', 'fast-path', fastRelevance), quality: 1, inline: true },
    { name: 'embedding', scorer: instant('emb', 'embedding', () => 0.7), quality: 1.5, estimateMs: (n) => n * 0.5 },
    { name: 'cross-encoder', scorer: instant('ce', 'cross-encoder', () => 0.8), quality: 2, estimateMs: (n) => n * 30 },
  ];

  it('sends the nearest pairs to the cross-encoder, the next to the embedding tier, labelled shed', async () => {
    const router = createRouter({
      tiers: specs(),
      routing: { mode: 'cascade', cascadeTier: ['cross-encoder', 'embedding'] },
      defaultBudgetMs: 100,
      answerLag: false,
      returnMarginMs: 0,
      probeIntervalMs: Number.POSITIVE_INFINITY,
    });
    try {
      const out = (await router.score('q', passages)) as RoutedPairScore[];
      const byTier = (t: string) => out.flatMap((r, i) => (r.tier === t ? [i] : []));
      const ce = byTier('cross-encoder');
      expect(ce.length).toBeGreaterThan(0);
      expect(ce.length).toBeLessThan(10);
      // The cross-encoder got the pairs nearest the threshold.
      expect(ce).toContain(6);
      const emb = byTier('embedding');
      expect(emb.length).toBe(10 - ce.length);
      for (const i of emb) expect(out[i].degraded).toBe('shed');
      for (const i of ce) expect(out[i].degraded).toBeUndefined();
      expect(router.routing.cascadeTier).toEqual(['cross-encoder', 'embedding']);
      // A view keeps the stages; a per-call override replaces them.
      const single = (await router.score('q', passages, {
        routing: { cascadeTier: 'embedding' },
      })) as RoutedPairScore[];
      expect(single.every((r) => r.tier === 'embedding' && r.degraded === undefined)).toBe(true);
    } finally {
      router.close();
    }
  });

  it('refuses an empty list, a repeated tier, or the inline tier as a stage', () => {
    for (const cascadeTier of [[], ['cross-encoder', 'cross-encoder'], ['cross-encoder', 'fast-path'], ['nope']]) {
      expect(() => createRouter({ tiers: specs(), routing: { mode: 'cascade', cascadeTier } })).toThrow(
        InvalidArgumentError,
      );
    }
  });
});
