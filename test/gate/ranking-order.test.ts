import { describe, expect, it } from 'vitest';
import { createGate, createScoreCache, RANKING, rerouteResult } from '../../src/index.js';
import type { Passage, ScorerPairResult } from '../../src/index.js';
import { rerankingModel } from '../../src/adapters/ai-sdk/index.js';
import { admittedItems } from '../../src/context/order.js';
import { ids, passages, tableScorer } from './helpers.js';

/** relevant and ranking per passage p<i>; ranking undefined = the pair has no ranking signal. */
function twoSignalScorer(rows: ReadonlyArray<readonly [number, number | undefined]>, id = 'blend-model') {
  const table: Record<string, ScorerPairResult> = {};
  for (const [i, [relevant, ranking]] of rows.entries())
    table[`p${i}`] = ranking === undefined ? { relevant } : { relevant, [RANKING]: ranking };
  return tableScorer(table, id);
}

// relevance order: p0 > p1 > p2 > p3 > p4; ranking order: p3 > p1 > p0 > p4 > p2.
const ROWS = [
  [0.9, 0.4],
  [0.8, 0.6],
  [0.7, 0.1],
  [0.6, 0.9],
  [0.2, 0.3],
] as const;

describe('the returned order follows the ranking signal; thresholds keep/drop on relevance', () => {
  it('threshold mode: the kept set is decided on relevance, the included list is in ranking order', async () => {
    const gate = createGate({ scorer: twoSignalScorer(ROWS), policy: { threshold: 0.5 } });
    const r = await gate.filter('q', passages(5));
    expect(new Set(ids(r.included))).toEqual(new Set(['p0', 'p1', 'p2', 'p3']));
    expect(ids(r.included)).toEqual(['p3', 'p1', 'p0', 'p2']);
    expect(ids(r.excluded)).toEqual(['p4']);
    // relevance is still what the decision used; stats are unchanged by the order
    expect(r.included.map((i) => i.relevance)).toEqual([0.6, 0.8, 0.9, 0.7]);
    expect(r.stats).toMatchObject({ passed: 4, returned: 4, threshold: 0.5, maxRelevance: 0.9, minRelevance: 0.6 });
  });

  it('maxKept keeps the highest RELEVANCE, then orders those by ranking', async () => {
    const gate = createGate({ scorer: twoSignalScorer(ROWS), policy: { threshold: 0.5, maxKept: 2 } });
    const r = await gate.filter('q', passages(5));
    expect(ids(r.included)).toEqual(['p1', 'p0']); // p0 and p1 have the highest relevance; p1 ranks first
    expect(r.excluded.filter((i) => i.rule === 'max-kept').map((i) => i.id)).toEqual(['p2', 'p3']);
  });

  it('the fallback promotes by relevance and the result is ordered by ranking', async () => {
    const gate = createGate({ scorer: twoSignalScorer(ROWS), policy: { threshold: 0.95, minKept: 2 } });
    const r = await gate.filter('q', passages(5));
    expect(ids(r.included)).toEqual(['p1', 'p0']);
    expect(r.included.map((i) => i.rule)).toEqual(['fallback-top', 'fallback-top']);
  });

  describe('operating points: the ranked cut', () => {
    const points = {
      precise: { beta: 0.5, shift: 0, floor: 0 },
      balanced: { beta: 1, shift: 0, floor: 0 },
      related: { beta: 3, shift: 0, floor: 0 },
    };
    const plain = () =>
      twoSignalScorer(
        ROWS.map(([rel]) => [rel, undefined] as const),
        'plain-model',
      );
    const rankingOrder = ['p3', 'p1', 'p0', 'p4', 'p2'];

    it('keeps as many pairs as the relevance cut, taken from the head of the ranking order', async () => {
      const counts = new Set<number>();
      for (const mode of ['precise', 'balanced', 'related'] as const) {
        const policy = { mode, operatingPoints: points };
        const withRanking = await createGate({ scorer: twoSignalScorer(ROWS), policy }).filter('q', passages(5));
        const without = await createGate({ scorer: plain(), policy }).filter('q', passages(5));
        const k = without.included.length;
        counts.add(k);
        expect(withRanking.included).toHaveLength(k);
        expect(ids(withRanking.included)).toEqual(rankingOrder.slice(0, k));
        expect(withRanking.included.every((i) => i.rule === 'ranked-cut')).toBe(true);
        expect(withRanking.excluded.every((i) => i.rule === 'below-ranked-cut')).toBe(true);
        // the relevance threshold is the same; the ranked cut is the ranking of the last pair kept
        expect(withRanking.stats.threshold).toBe(without.stats.threshold);
        expect(withRanking.stats.rankingCut).toBe(withRanking.included[k - 1]!.signals![RANKING]);
        // without the signal: the relevance head, in relevance order, as before
        expect(without.stats.rankingCut).toBeNull();
        expect(without.included.every((i) => i.rule === 'threshold')).toBe(true);
        expect(without.included.map((i) => i.relevance)).toEqual(
          [...without.included.map((i) => i.relevance as number)].sort((a, b) => b - a),
        );
      }
      // the three points cut at different lengths here, so the test sees more than one k
      expect(counts.size).toBeGreaterThan(1);
    });

    it('reroute re-makes the ranked cut from the stored signals, and across modes', async () => {
      const scorer = twoSignalScorer(ROWS);
      const gate = createGate({ scorer, policy: { mode: 'balanced', operatingPoints: points } });
      const first = await gate.filter('q', passages(5));
      expect(ids(gate.reroute(first).included)).toEqual(ids(first.included));
      const related = gate.reroute(first, { mode: 'related' });
      const fresh = await createGate({
        scorer: twoSignalScorer(ROWS),
        policy: { mode: 'related', operatingPoints: points },
      }).filter('q', passages(5));
      expect(ids(related.included)).toEqual(ids(fresh.included));
      expect(related.stats.rankingCut).toBe(fresh.stats.rankingCut);
      expect(scorer.calls).toHaveLength(1);
    });

    it('maxKept trims the tail of the ranking order, so the kept set stays its head', async () => {
      const policy = { mode: 'related', operatingPoints: points, maxKept: 2 } as const;
      const r = await createGate({ scorer: twoSignalScorer(ROWS), policy }).filter('q', passages(5));
      expect(ids(r.included)).toEqual(['p3', 'p1']);
      expect(r.excluded.some((i) => i.rule === 'max-kept')).toBe(true);
    });

    it('a pair without ranking, or routing rules, keep the relevance head', async () => {
      const rows = ROWS.map((r, i) => (i === 4 ? ([r[0], undefined] as const) : r));
      const policy = { mode: 'balanced', operatingPoints: points } as const;
      const mixed = await createGate({ scorer: twoSignalScorer(rows), policy }).filter('q', passages(5));
      const without = await createGate({ scorer: plain(), policy }).filter('q', passages(5));
      expect(new Set(ids(mixed.included))).toEqual(new Set(ids(without.included)));
      expect(mixed.included.every((i) => i.rule === 'threshold')).toBe(true);
      expect(mixed.stats.rankingCut).toBeNull();
      const rules = [
        { name: 'keep', when: { signal: 'relevant', op: '>=', value: 'threshold' }, route: 'included' },
      ] as const;
      const ruled = await createGate({ scorer: twoSignalScorer(ROWS), policy: { ...policy, rules } }).filter(
        'q',
        passages(5),
      );
      expect(new Set(ids(ruled.included))).toEqual(new Set(ids(without.included)));
      expect(ruled.stats.rankingCut).toBeNull();
    });

    it('ties at the ranked cut are kept together', async () => {
      const tied = tableScorer({
        p0: { relevant: 0.95, ranking: 0.5 },
        p1: { relevant: 0.05, ranking: 0.5 },
        p2: { relevant: 0.04, ranking: 0.1 },
      });
      const policy = { mode: 'precise', operatingPoints: points } as const;
      const r = await createGate({ scorer: tied, policy }).filter('q', passages(3));
      expect(ids(r.included)).toEqual(['p0', 'p1']);
      expect(r.stats.rankingCut).toBe(0.5);
    });
  });

  it('falls back to relevance order when some pair has no ranking signal (a mixed-tier result)', async () => {
    const rows = ROWS.map((r, i) => (i === 1 ? ([r[0], undefined] as const) : r));
    const r = await createGate({ scorer: twoSignalScorer(rows), policy: { threshold: 0.5 } }).filter('q', passages(5));
    expect(ids(r.included)).toEqual(['p0', 'p1', 'p2', 'p3']);
  });

  it('an out-of-range ranking value fails its pair like any invalid signal (never ordered by)', async () => {
    const rows = ROWS.map((r, i) => (i === 0 ? ([r[0], 1.5] as const) : r));
    const r = await createGate({ scorer: twoSignalScorer(rows), policy: { threshold: 0.5 } }).filter('q', passages(5));
    expect(ids(r.included)).toEqual(['p3', 'p1', 'p2']);
    expect(r.excluded.find((i) => i.id === 'p0')).toMatchObject({ rule: 'fail-closed', reason: 'invalid-signal' });
  });

  it('breaks ranking ties by input rank, and keeps fail-open items last', async () => {
    const scorer = tableScorer({
      p0: { relevant: 0.6, ranking: 0.5 },
      p1: { relevant: 0.9, ranking: 0.7 },
      p2: { relevant: 0.8, ranking: 0.5 },
      p3: null,
      p4: { relevant: 0.7, ranking: 0.7 },
    });
    const r = await createGate({ scorer, policy: { threshold: 0.5, failOpen: true } }).filter('q', passages(5));
    expect(ids(r.included)).toEqual(['p1', 'p4', 'p0', 'p2', 'p3']);
    expect(r.included[4]!.rule).toBe('fail-open');
  });

  it('reroute re-orders from the stored signals exactly as a fresh call, without rescoring', async () => {
    const scorer = twoSignalScorer(ROWS);
    const gate = createGate({ scorer, policy: { threshold: 0.5 } });
    const first = await gate.filter('q', passages(5));
    const again = gate.reroute(first);
    expect(ids(again.included)).toEqual(ids(first.included));
    const lower = gate.reroute(first, { threshold: 0.1 });
    expect(ids(lower.included)).toEqual(['p3', 'p1', 'p0', 'p4', 'p2']);
    const standalone = rerouteResult(first, { threshold: 0.65 });
    expect(ids(standalone.included)).toEqual(['p1', 'p0', 'p2']);
    const fresh = await createGate({ scorer: twoSignalScorer(ROWS), policy: { threshold: 0.65 } }).filter(
      'q',
      passages(5),
    );
    expect(ids(standalone.included)).toEqual(ids(fresh.included));
    expect(scorer.calls).toHaveLength(1);
  });

  it('a cached result is ordered the same as a freshly scored one', async () => {
    const scorer = twoSignalScorer(ROWS);
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const gate = createGate({ scorer, cache, policy: { threshold: 0.5 } });
    const first = await gate.filter('q', passages(5));
    const second = await gate.filter('q', passages(5));
    expect(second.stats.cacheHits).toBe(5);
    expect(ids(second.included)).toEqual(ids(first.included));
    expect(ids(second.included)).toEqual(['p3', 'p1', 'p0', 'p2']);
  });

  it('orders the conflicting group by ranking too', async () => {
    const scorer = tableScorer({
      p0: { relevant: 0.9, ranking: 0.2, contradicts_premise: 0.9 },
      p1: { relevant: 0.8, ranking: 0.8, contradicts_premise: 0.9 },
    });
    const rules = [
      { name: 'conflict', when: { signal: 'contradicts_premise', op: '>', value: 0.5 }, route: 'conflicting' },
    ] as const;
    const r = await createGate({ scorer, policy: { rules } }).filter('q', passages(2));
    expect(ids(r.conflicting)).toEqual(['p1', 'p0']);
  });
});

describe('the returned order reaches the context builder and the AI SDK adapter', () => {
  const scorer = () =>
    tableScorer({
      p0: { relevant: 0.9, ranking: 0.2, contradicts_premise: 0 },
      p1: { relevant: 0.8, ranking: 0.8, contradicts_premise: 0.9 },
      p2: { relevant: 0.7, ranking: 0.5, contradicts_premise: 0 },
    });
  const rules = [
    { name: 'conflict', when: { signal: 'contradicts_premise', op: '>', value: 0.5 }, route: 'conflicting' },
    { name: 'keep', when: { signal: 'relevant', op: '>=', value: 0.5 }, route: 'included' },
  ] as const;

  it('admittedItems merges included and conflicting by ranking when every item has it', async () => {
    const r = await createGate({ scorer: scorer(), policy: { rules } }).filter('q', passages(3));
    expect(ids(r.included)).toEqual(['p2', 'p0']);
    expect(ids(r.conflicting)).toEqual(['p1']);
    expect(ids(admittedItems(r, true))).toEqual(['p1', 'p2', 'p0']);
    expect(ids(admittedItems(r, false))).toEqual(['p2', 'p0']);
  });

  it('AI SDK rerank: ranking order, scored with the ranking signal (descending), relevance in the metadata', async () => {
    // the adapter's passages carry the document text; answer by it
    const table = scorer();
    const textScorer = {
      id: 'by-text',
      score: (q: string, ps: readonly Passage[]) =>
        table.score(
          q,
          ps.map((p) => ({ ...p, id: p.text })),
        ),
    };
    const model = rerankingModel(createGate({ scorer: textScorer, policy: { rules } }));
    const out = await model.doRerank({ documents: { type: 'text', values: ['p0', 'p1', 'p2'] }, query: 'q' });
    expect(out.ranking).toEqual([
      { index: 1, relevanceScore: 0.8 },
      { index: 2, relevanceScore: 0.5 },
      { index: 0, relevanceScore: 0.2 },
    ]);
  });
});
