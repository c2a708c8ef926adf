import { describe, expect, it } from 'vitest';
import { FEATURE_NAMES } from '../../src/features/schema.js';
import type { CandidateList } from '../../src/tooling/eval/candidates.js';
import type { RankingDataset } from '../../src/tooling/training/dataset.js';
import {
  chooseRankingBlend,
  rankingScores,
  RANKING_BLEND_LAMBDAS,
} from '../../src/tooling/training/ranking-blend-selection.js';
import { lexicalEvidence, rankingLogit, rankingProbability } from '../../src/tiers/fast-path/ranking-blend.js';

const NF = FEATURE_NAMES.length;
const BM25 = FEATURE_NAMES.indexOf('bm25_all');
const IDF = FEATURE_NAMES.indexOf('query_idf_sum');

interface Cand {
  readonly grade: number;
  readonly bm25: number;
}

/** A dataset of queries (per collection), candidates in BM25 order, query_idf_sum 10 everywhere. */
function dataset(queries: ReadonlyArray<{ collection: string; cands: readonly Cand[] }>): RankingDataset {
  const rows = queries.reduce((n, q) => n + q.cands.length, 0);
  const features = new Float32Array(rows * NF).fill(Number.NaN);
  const grades = new Int32Array(rows);
  const groups: Array<{ collection: string; list: CandidateList; offset: number }> = [];
  let r = 0;
  queries.forEach((q, qi) => {
    const offset = r;
    const judgments = new Map<string, number>();
    const candidates = q.cands.map((c, i) => {
      features[r * NF + BM25] = c.bm25;
      features[r * NF + IDF] = 10;
      grades[r] = c.grade;
      r++;
      const docId = `q${qi}d${i}`;
      if (c.grade > 0) judgments.set(docId, c.grade);
      return { docId, bm25: c.bm25, rank: i + 1, grade: c.grade };
    });
    groups.push({
      collection: q.collection,
      list: { queryId: `q${qi}`, queryText: 'q', candidates, judgments },
      offset,
    });
  });
  return { featureNames: FEATURE_NAMES, numRows: rows, features, grades, groups };
}

describe('chooseRankingBlend (validation λ of the ranking signal)', () => {
  // Collection "a": the margin puts the relevant candidate last, its BM25 (first-stage order) puts it
  // first; collection "b": the margin is right, BM25 wrong. The worst-collection rule needs a λ that
  // helps "a" without losing "b".
  const ds = dataset([
    {
      collection: 'a',
      cands: [
        { grade: 1, bm25: 20 },
        { grade: 0, bm25: 2 },
        { grade: 0, bm25: 1 },
      ],
    },
    {
      collection: 'b',
      cands: [
        { grade: 0, bm25: 20 },
        { grade: 0, bm25: 19 },
        { grade: 1, bm25: 18 },
      ],
    },
  ]);
  // margins: a: relevant low; b: relevant high by a wide gap
  const margins = Float64Array.from([-0.2, 0, 0.1, -1, -1, 2]);

  it('scores rows as the scorer does', () => {
    const s = rankingScores(ds, margins, 2);
    for (let r = 0; r < ds.numRows; r++) {
      const e = lexicalEvidence(ds.features[r * NF + BM25]!, ds.features[r * NF + IDF]!);
      expect(s[r]).toBe(rankingProbability(rankingLogit(margins[r]!, e, 2)));
      expect(s[r]).toBeGreaterThanOrEqual(0);
      expect(s[r]).toBeLessThanOrEqual(1);
    }
  });

  /** The rule, restated: the best = first highest worst gain; chosen = the largest λ where every collection is within its standard error. */
  function expectOneStandardErrorRule(sel: NonNullable<ReturnType<typeof chooseRankingBlend>>): void {
    const bestWorst = Math.max(...sel.grid.map((c) => c.worstGain));
    const best = sel.grid.find((c) => c.worstGain === bestWorst)!;
    expect(sel.best).toBe(best);
    const within = sel.grid.filter((c) =>
      Object.keys(best.relativeGain).every((n) => c.relativeGain[n]! >= best.relativeGain[n]! - best.standardError[n]!),
    );
    expect(sel.chosen).toBe(within[within.length - 1]);
    expect(sel.blend.lambda).toBe(sel.chosen.lambda);
    expect(sel.chosen.lambda).toBeGreaterThanOrEqual(best.lambda);
  }

  it('picks the largest λ within one standard error of the best worst-collection gain', () => {
    const sel = chooseRankingBlend(ds, margins)!;
    expect(sel.grid.map((c) => c.lambda)).toEqual([...RANKING_BLEND_LAMBDAS]);
    expectOneStandardErrorRule(sel);
    // one query per collection: no spread, so the standard error is 0 and only ties widen the choice
    for (const c of sel.grid) expect(Object.values(c.standardError)).toEqual([0, 0]);
    // λ = 0 is the margin: "a" loses against BM25 there, so a λ > 0 must win
    expect(sel.grid[0]!.relativeGain.a).toBeLessThan(0);
    expect(sel.blend.lambda).toBeGreaterThan(0);
    expect(sel.chosen.relativeGain.a).toBeGreaterThanOrEqual(0);
    expect(sel.chosen.relativeGain.b).toBeGreaterThanOrEqual(0);
    // λ = 1000 is BM25's order: it ties the worst collection ("a" at 0) but gives up "b"'s gain,
    // more than b's (zero) standard error: not chosen
    expect(sel.grid[sel.grid.length - 1]!.relativeGain.b).toBe(0);
    expect(sel.grid[sel.grid.length - 1]!.worstGain).toBe(sel.best.worstGain);
    expect(sel.chosen.relativeGain.b).toBeGreaterThan(0);
    expect(sel.blend.lambda).toBeLessThan(1000);
    // deterministic
    expect(chooseRankingBlend(ds, margins)).toEqual(sel);
  });

  it("the standard error comes from the worst collection's paired per-query differences to BM25", () => {
    // One collection, two queries of two candidates (one relevant): q1 BM25 right, margin wrong by a
    // little; q2 BM25 wrong, margin right by a lot. nDCG@10 is 1 (relevant first) or 1/log2(3).
    const two = dataset([
      {
        collection: 'a',
        cands: [
          { grade: 1, bm25: 20 },
          { grade: 0, bm25: 2 },
        ],
      },
      {
        collection: 'a',
        cands: [
          { grade: 0, bm25: 20 },
          { grade: 1, bm25: 19 },
        ],
      },
    ]);
    const sel = chooseRankingBlend(two, Float64Array.from([-0.1, 0, -5, 5]))!;
    const low = 1 / Math.log2(3);
    const base = (1 + low) / 2;
    // λ = 0: q1 loses (1 → low), q2 gains (low → 1): mean gain 0, differences ±(1 − low)
    const d = 1 - low;
    const sd0 = Math.sqrt(((d - 0) ** 2 + (-d - 0) ** 2) / 1);
    expect(sel.grid[0]!.worstGain).toBeCloseTo(0, 12);
    expect(sel.grid[0]!.standardError.a).toBeCloseTo(sd0 / Math.sqrt(2) / base, 12);
    // λ = 1: both right: differences (0, 1 − low)
    const one = sel.grid.find((c) => c.lambda === 1)!;
    const sd1 = Math.sqrt(((0 - d / 2) ** 2 + (d - d / 2) ** 2) / 1);
    expect(one.worstGain).toBeCloseTo(d / 2 / base, 12);
    expect(one.standardError.a).toBeCloseTo(sd1 / Math.sqrt(2) / base, 12);
    expectOneStandardErrorRule(sel);
  });

  it('a λ that ties the worst collection but costs another one its gain is not chosen', () => {
    // "a": margin and BM25 both right (gain 0 at every λ), the worst collection everywhere; "b": the
    // margin is right and BM25 wrong, so BM25's order (λ = 1000) would give up b's gain
    const sel = chooseRankingBlend(ds, Float64Array.from([5, 0, 0, -1, -1, 5]))!;
    for (const c of sel.grid) expect(c.worstGain).toBe(0);
    expect(sel.best.lambda).toBe(0);
    expectOneStandardErrorRule(sel);
    expect(sel.grid[sel.grid.length - 1]!.relativeGain.b).toBe(0);
    expect(sel.chosen.relativeGain.b).toBe(sel.best.relativeGain.b);
    expect(sel.chosen.relativeGain.b).toBeGreaterThan(0);
    expect(sel.blend.lambda).toBeLessThan(1000);
  });

  it('declares no blend for a dataset without bm25_all / query_idf_sum, and refuses a margin count mismatch', () => {
    const other: RankingDataset = { ...ds, featureNames: FEATURE_NAMES.map((n) => `x_${n}`) };
    expect(chooseRankingBlend(other, margins)).toBeUndefined();
    expect(() => chooseRankingBlend(ds, margins.subarray(1))).toThrow(/margins/);
  });
});
