import { describe, expect, it } from 'vitest';
import {
  averagePrecision,
  dcgAt,
  keptSetStats,
  meanOf,
  ndcgAt,
  thresholdForPrecision,
  thresholdGrid,
  thresholdSweep,
} from '../../src/tooling/eval/metrics.js';
import { InvalidArgumentError } from '../../src/errors.js';

const j = (entries: Array<[string, number]>): Map<string, number> => new Map(entries);

describe('nDCG@k', () => {
  it('matches a hand-computed graded example (linear gains, log2 discount)', () => {
    // ranking d1(g3) d2(0) d3(2) d4(unjudged) d5(1); d6 (g2) judged relevant but not retrieved.
    const judg = j([
      ['d1', 3],
      ['d3', 2],
      ['d5', 1],
      ['d6', 2],
      ['d2', 0],
    ]);
    const ranking = ['d1', 'd2', 'd3', 'd4', 'd5'];
    const dcg = 3 / 1 + 2 / 2 + 1 / Math.log2(6); // ranks 1, 3, 5 → log2(2)=1, log2(4)=2, log2(6)
    expect(dcgAt(ranking, judg, 10)).toBeCloseTo(dcg, 12);
    // ideal: 3, 2, 2, 1 at ranks 1..4 → 3 + 2/log2(3) + 2/2 + 1/log2(5)
    const idcg = 3 + 2 / Math.log2(3) + 1 + 1 / Math.log2(5);
    expect(ndcgAt(ranking, judg, 10)).toBeCloseTo(dcg / idcg, 12);
    // numeric anchor for the same example, computed by hand: 4.386853 / 5.692535
    expect(ndcgAt(ranking, judg, 10)).toBeCloseTo(0.770634, 5);
  });

  it('cuts at k, both in DCG and in the ideal ranking', () => {
    const judg = j([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    expect(ndcgAt(['x', 'a'], judg, 1)).toBe(0);
    expect(ndcgAt(['a', 'x'], judg, 1)).toBe(1);
    // k = 2, ranking x a: dcg = 1/log2(3); idcg = 1 + 1/log2(3)
    expect(ndcgAt(['x', 'a'], judg, 2)).toBeCloseTo(1 / Math.log2(3) / (1 + 1 / Math.log2(3)), 12);
  });

  it('is 1 for the ideal order and null without relevant judgments', () => {
    expect(
      ndcgAt(
        ['b', 'a'],
        j([
          ['a', 1],
          ['b', 2],
        ]),
      ),
    ).toBe(1);
    expect(ndcgAt(['a'], j([['a', 0]]))).toBeNull();
    expect(ndcgAt([], j([['a', 1]]))).toBe(0);
    expect(() => ndcgAt(['a'], j([['a', 1]]), 0)).toThrow(InvalidArgumentError);
  });
});

describe('average precision', () => {
  it('matches a hand-computed example with a relevant doc not retrieved', () => {
    // relevant at ranks 1 and 3, one more relevant never retrieved: (1/1 + 2/3) / 3
    expect(
      averagePrecision(
        ['r1', 'n', 'r2', 'n2'],
        j([
          ['r1', 1],
          ['r2', 2],
          ['r3', 1],
        ]),
      ),
    ).toBeCloseTo((1 + 2 / 3) / 3, 12);
    expect(averagePrecision(['a'], j([]))).toBeNull();
  });
  it('meanOf skips nulls', () => {
    expect(meanOf([0.5, null, 1])).toBe(0.75);
    expect(meanOf([null])).toBeNull();
  });
});

describe('threshold sweep', () => {
  const pairs = [
    { score: 0.9, relevant: true },
    { score: 0.8, relevant: false },
    { score: 0.7, relevant: true },
    { score: 0.7, relevant: false },
    { score: 0.2, relevant: true },
    { score: 0.1, relevant: false },
  ];

  it('keeps score >= threshold and computes precision/recall/F1', () => {
    const rows = thresholdSweep(pairs, [0, 0.7, 0.75, 0.95]);
    expect(rows[0]).toMatchObject({ threshold: 0, kept: 6, relevantKept: 3, precision: 0.5, recall: 1 });
    expect(rows[0]!.f1).toBeCloseTo(2 / 3, 12);
    // 0.7 keeps both tied 0.7 pairs (>=): 4 kept, 2 relevant
    expect(rows[1]).toMatchObject({ kept: 4, relevantKept: 2, precision: 0.5 });
    expect(rows[1]!.recall).toBeCloseTo(2 / 3, 12);
    expect(rows[2]).toMatchObject({ kept: 2, relevantKept: 1, precision: 0.5 });
    expect(rows[3]).toMatchObject({ kept: 0, precision: null, recall: 0, f1: null });
  });

  it('grid is 0..1 inclusive', () => {
    const g = thresholdGrid(100);
    expect(g).toHaveLength(101);
    expect(g[0]).toBe(0);
    expect(g[37]).toBe(0.37);
    expect(g[100]).toBe(1);
  });

  it('rejects non-finite scores', () => {
    expect(() => thresholdSweep([{ score: Number.NaN, relevant: true }], [0.5])).toThrow(InvalidArgumentError);
  });
});

describe('threshold for a target precision', () => {
  const pairs = [
    { score: 0.9, relevant: true },
    { score: 0.8, relevant: false },
    { score: 0.7, relevant: true },
    { score: 0.7, relevant: false },
    { score: 0.6, relevant: true },
    { score: 0.1, relevant: false },
  ];

  it('picks the highest recall with precision >= target, highest threshold among equal recall', () => {
    // cuts: 0.9 → P 1, R 1/3; 0.8 → P .5, R 1/3; 0.7 → P .5, R 2/3; 0.6 → P .6, R 1; 0.1 → P .5, R 1
    expect(thresholdForPrecision(pairs, 0.6)).toMatchObject({ threshold: 0.6, kept: 5, relevantKept: 3, recall: 1 });
    expect(thresholdForPrecision(pairs, 0.61)).toMatchObject({ threshold: 0.9, kept: 1, recall: 1 / 3 });
    // target 0.5: recall 1 is reached at 0.6 and at 0.1; the higher threshold wins
    expect(thresholdForPrecision(pairs, 0.5)!.threshold).toBe(0.6);
  });

  it('never splits a tie and returns null when unreachable', () => {
    // a tied pair at the top: cutting inside the tie would give P=1, but ties go together → P=.5
    const tied = [
      { score: 0.9, relevant: true },
      { score: 0.9, relevant: false },
    ];
    expect(thresholdForPrecision(tied, 0.9)).toBeNull();
    expect(thresholdForPrecision([{ score: 0.5, relevant: false }], 0.1)).toBeNull();
    expect(() => thresholdForPrecision(tied, 1.5)).toThrow(InvalidArgumentError);
  });
});

describe('gate stats', () => {
  it('pools over queries and counts queries with nothing kept', () => {
    const q1 = [
      { score: 0.9, relevant: true },
      { score: 0.4, relevant: true },
      { score: 0.3, relevant: false },
    ];
    const q2 = [
      { score: 0.2, relevant: false },
      { score: 0.1, relevant: true },
    ];
    const s = keptSetStats([q1, q2], 0.4);
    expect(s.precisionAll).toBeCloseTo(3 / 5, 12);
    expect(s.precisionKept).toBe(1); // kept: 0.9 and 0.4, both relevant
    expect(s.recallKept).toBeCloseTo(2 / 3, 12);
    expect(s.keptPerQuery).toBe(1);
    expect(s.candidatesPerQuery).toBe(2.5);
    expect(s.queriesWithNothingKept).toBe(1);
    expect(keptSetStats([q1], 1).precisionKept).toBeNull();
  });
});
