/**
 * The gate that gates: an operating point's sufficiency verdict keeps nothing from a list that holds
 * nothing relevant (rule insufficient-context, stats.insufficientContext), its floor drops pairs
 * below it whatever the list, every item carries a calibrated score in the returned order, and a
 * closed scorer is an error, not "nothing relevant".
 */
import { describe, expect, it } from 'vitest';
import {
  clippedLogit,
  listFeatures,
  type ScoreCalibration,
  type Sufficiency,
} from '../../src/operating-points/list-verdict.js';
import {
  createGate,
  createScoreCache,
  DisposedError,
  InvalidPolicyError,
  loadFastPathScorer,
  type OperatingPoints,
  type Passage,
  rerouteResult,
} from '../../src/index.js';
import { ids, passages, tableScorer } from './helpers.js';

const VERDICT: Sufficiency = {
  // Sufficient when the best relevance is at least 0.2 (logit −1.386): margin = maxRelevance + 1.386.
  weights: { maxRelevance: 1, top3Relevance: 0, maxRanking: 0, top3Ranking: 0 },
  bias: -clippedLogit(0.2),
};

function pointsWith(sufficiency: Sufficiency | undefined, floor = 0): OperatingPoints {
  const p = { beta: 2, shift: 0, floor, ...(sufficiency === undefined ? {} : { sufficiency }) };
  return { precise: p, balanced: p, related: p };
}

/** A scorer with `relevant` from the list, by passage index. */
function scorerOf(values: readonly number[], ranking?: readonly number[]) {
  const table: Record<string, { probabilities: Record<string, number> }> = {};
  values.forEach((v, i) => {
    table[`p${i}`] = { probabilities: ranking === undefined ? { relevant: v } : { relevant: v, ranking: ranking[i]! } };
  });
  return tableScorer(table);
}

describe('the sufficiency verdict', () => {
  it('keeps nothing from a list whose best pair is weak, and says why', async () => {
    const gate = createGate({ scorer: scorerOf([0.15, 0.1, 0.05]), policy: { operatingPoints: pointsWith(VERDICT) } });
    const r = await gate.filter('q', passages(3));
    expect(r.included).toEqual([]);
    expect(r.stats.insufficientContext).toBe(true);
    expect(r.stats.sufficiency).toBeCloseTo(clippedLogit(0.15) - clippedLogit(0.2), 12);
    expect(r.excluded.map((i) => i.rule)).toEqual([
      'insufficient-context',
      'insufficient-context',
      'insufficient-context',
    ]);
    // Without the verdict the same list keeps its head: the cut is relative to the list.
    const ungated = await createGate({
      scorer: scorerOf([0.15, 0.1, 0.05]),
      policy: { operatingPoints: pointsWith(undefined) },
    }).filter('q', passages(3));
    expect(ungated.included.length).toBeGreaterThan(0);
    expect(ungated.stats.insufficientContext).toBe(false);
    expect(ungated.stats.sufficiency).toBeNull();
  });

  it('lets a list with a strong pair decide by the cut as before', async () => {
    const scorer = scorerOf([0.9, 0.5, 0.05]);
    const r = await createGate({ scorer, policy: { operatingPoints: pointsWith(VERDICT) } }).filter('q', passages(3));
    expect(r.stats.sufficiency).toBeGreaterThan(0);
    expect(r.stats.insufficientContext).toBe(false);
    expect(ids(r.included)).toContain('p0');
    expect(r.excluded.every((i) => i.rule !== 'insufficient-context')).toBe(true);
  });

  it('leaves an explicit fallback in force (minKept promotes the best, flagged)', async () => {
    const gate = createGate({
      scorer: scorerOf([0.15, 0.1, 0.05]),
      policy: { operatingPoints: pointsWith(VERDICT), minKept: 1 },
    });
    const r = await gate.filter('q', passages(3));
    expect(ids(r.included)).toEqual(['p0']);
    expect(r.included[0]!.rule).toBe('fallback-top');
    expect(r.stats.fallbackTriggered).toBe(true);
    expect(r.stats.insufficientContext).toBe(true);
  });

  it('re-decides from stored signals: reroute gives the same verdict, and another point another one', async () => {
    const gate = createGate({ scorer: scorerOf([0.15, 0.1, 0.05]), policy: { operatingPoints: pointsWith(VERDICT) } });
    const r = await gate.filter('q', passages(3));
    const again = gate.reroute(r);
    expect(again.stats).toEqual(r.stats);
    expect(again.excluded.map((i) => i.rule)).toEqual(r.excluded.map((i) => i.rule));
    const lenient = rerouteResult(r, { operatingPoints: pointsWith({ ...VERDICT, bias: -clippedLogit(0.1) }) });
    expect(lenient.included.length).toBeGreaterThan(0);
    expect(lenient.stats.insufficientContext).toBe(false);
  });

  it('reads ranking features when every pair has a ranking, else repeats the relevance ones', () => {
    expect(listFeatures([], undefined)).toBeUndefined();
    const f = listFeatures([0.5, 0.2], undefined)!;
    expect([...f]).toEqual([clippedLogit(0.5), (clippedLogit(0.5) + clippedLogit(0.2)) / 2, f[0], f[1]]);
    const g = listFeatures([0.5, 0.2, 0.1, 0.4], [0.9, 0.1, 0.3, 0.6])!;
    expect(g[2]).toBeCloseTo(clippedLogit(0.9), 12);
    expect(g[3]).toBeCloseTo((clippedLogit(0.9) + clippedLogit(0.6) + clippedLogit(0.3)) / 3, 12);
    // Probabilities of exactly 0 and 1 stay finite.
    expect([...listFeatures([0, 1], [1, 0])!].every(Number.isFinite)).toBe(true);
  });

  it('refuses a malformed verdict with the field named', () => {
    const scorer = scorerOf([0.5]);
    const bad = (sufficiency: unknown) =>
      createGate({ scorer, policy: { operatingPoints: pointsWith(sufficiency as Sufficiency) } });
    expect(() => bad({ weights: VERDICT.weights })).toThrow(/balanced\.sufficiency\.bias|precise\.sufficiency\.bias/);
    expect(() => bad({ weights: { ...VERDICT.weights, maxRelevance: Number.NaN }, bias: 0 })).toThrow(
      InvalidPolicyError,
    );
    expect(() => bad({ weights: { ...VERDICT.weights, typo: 1 }, bias: 0 })).toThrow(/typo/);
    expect(() => bad({ ...VERDICT, extra: 1 })).toThrow(/extra/);
  });
});

describe('the floor', () => {
  it('drops every pair under it, whatever the list', async () => {
    const r = await createGate({
      scorer: scorerOf([0.09, 0.08, 0.07]),
      policy: { operatingPoints: pointsWith(undefined, 0.1) },
    }).filter('q', passages(3));
    expect(r.included).toEqual([]);
    expect(r.stats.insufficientContext).toBe(true);
  });
});

describe('the score', () => {
  const CALIBRATION: ScoreCalibration = {
    pair: 2,
    weights: { maxRelevance: 0, top3Relevance: 0, maxRanking: -0.5, top3Ranking: 0 },
    bias: -1,
  };

  it('is the calibrated order value, sorted as the returned order, for every scored item', async () => {
    const scorer = scorerOf([0.9, 0.6, 0.3, 0.1], [0.7, 0.8, 0.2, 0.4]);
    const gate = createGate({
      scorer,
      policy: { operatingPoints: pointsWith(undefined), scoreCalibration: CALIBRATION },
    });
    const r = await gate.filter('q', passages(4));
    const all = [...r.included, ...r.conflicting, ...r.excluded];
    const offset = CALIBRATION.bias + CALIBRATION.weights.maxRanking * clippedLogit(0.8);
    for (const item of all) {
      const ranking = item.signals!.ranking!;
      expect(item.score).toBeCloseTo(1 / (1 + Math.exp(-(2 * clippedLogit(ranking) + offset))), 12);
    }
    const scores = r.included.map((i) => i.score as number);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    // reroute re-computes the same scores from stored signals
    expect(gate.reroute(r).included.map((i) => i.score)).toEqual(scores);
    // null unsets the calibration: the score is then the ranking itself
    expect(gate.reroute(r, { scoreCalibration: null }).included.map((i) => i.score)).toEqual(
      r.included.map((i) => i.signals!.ranking),
    );
  });

  it('is the order value itself without a calibration, and null for an unscored pair', async () => {
    const scorer = tableScorer({ p0: { relevant: 0.8 }, p1: null });
    const r = await createGate({ scorer, policy: { threshold: 0.5 } }).filter('q', passages(2));
    expect(r.included[0]!.score).toBe(0.8);
    expect(r.excluded[0]!.score).toBeNull();
  });

  it('refuses a calibration that would not sort as the list (pair weight ≤ 0)', () => {
    expect(() =>
      createGate({ scorer: scorerOf([0.5]), policy: { scoreCalibration: { ...CALIBRATION, pair: 0 } } }),
    ).toThrow(/scoreCalibration\.pair/);
  });
});

describe('the shipped model by default', () => {
  it("keeps nothing of the newcomer's five off-topic passages, and keeps the answer when it is there", async () => {
    const scorer = await loadFastPathScorer();
    try {
      const gate = createGate({ scorer });
      expect(gate.mode).toBe('balanced');
      const query = 'what is the boiling point of water at high altitude?';
      const junk: Passage[] = [
        'Bananas are yellow and rich in potassium.',
        'The cat sat on the mat.',
        'Stock prices fell sharply on Monday as investors sold technology shares.',
        'Knitting a scarf takes patience and good wool.',
        'The Roman empire fell in 476 AD.',
      ].map((text, i) => ({ id: `j${i}`, text }));
      for (const mode of ['precise', 'balanced', 'related'] as const) {
        const r = await gate.filter(query, junk, { policy: { mode } });
        expect(r.included).toEqual([]);
        expect(r.stats.insufficientContext).toBe(true);
        expect(r.excluded.every((i) => i.rule === 'insufficient-context')).toBe(true);
      }
      const answer = {
        id: 'answer',
        text: 'Water boils at a lower temperature at high altitude because the air pressure is lower: about 90 degrees Celsius at 3000 m.',
      };
      const r = await gate.filter(query, [...junk, answer]);
      expect(ids(r.included)).toEqual(['answer']);
      expect(r.stats.insufficientContext).toBe(false);
      // The score a user thresholds: the answer far above the junk.
      expect(r.included[0]!.score).toBeGreaterThan(0.3);
      expect(Math.max(...r.excluded.map((i) => i.score as number))).toBeLessThan(0.05);
    } finally {
      scorer.model.dispose();
    }
  });
});

describe('a closed scorer', () => {
  it('rejects the call with DisposedError instead of excluding every pair', async () => {
    const scorer = await loadFastPathScorer();
    const gate = createGate({ scorer });
    scorer.model.dispose();
    await expect(gate.filter('q', passages(3))).rejects.toBeInstanceOf(DisposedError);
    await expect(gate.filter('q', passages(3), { budgetMs: 1000 })).rejects.toBeInstanceOf(DisposedError);
    const stream = gate.stream('q', passages(3));
    await expect(stream.result).rejects.toBeInstanceOf(DisposedError);
  });

  it('rejects through a cache too, while a failing scorer still fails closed', async () => {
    const closed = {
      id: 'closed',
      score: async (): Promise<never> => {
        throw new DisposedError('test scorer');
      },
    };
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    try {
      await expect(createGate({ scorer: closed, cache }).filter('q', passages(2))).rejects.toBeInstanceOf(
        DisposedError,
      );
    } finally {
      await cache.close();
    }
    const failing = {
      id: 'failing',
      score: async (): Promise<never> => {
        throw new Error('boom');
      },
    };
    const r = await createGate({ scorer: failing }).filter('q', passages(2));
    expect(r.excluded.map((i) => i.rule)).toEqual(['fail-closed', 'fail-closed']);
    expect(r.errors[0]).toMatch(/boom/);
  });
});
