import { describe, expect, it } from 'vitest';
import { FEATURE_NAMES } from '../../src/features/schema.js';
import type { CandidateList } from '../../src/eval/candidates.js';
import type { RankingDataset } from '../../src/training/dataset.js';
import {
  chooseRankingBlend,
  rankingScores,
  RANKING_BLEND_LAMBDAS,
} from '../../src/training/ranking-blend-selection.js';
import { lexicalEvidence, rankingLogit, rankingProbability } from '../../src/tiers/trees/ranking-blend.js';

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

  it('picks the λ with the best worst-collection relative gain; ties keep the smaller λ', () => {
    const sel = chooseRankingBlend(ds, margins)!;
    expect(sel.grid.map((c) => c.lambda)).toEqual([...RANKING_BLEND_LAMBDAS]);
    const bestWorst = Math.max(...sel.grid.map((c) => c.worstGain));
    const first = sel.grid.find((c) => c.worstGain === bestWorst)!;
    expect(sel.blend.lambda).toBe(first.lambda);
    expect(sel.chosen).toBe(first);
    // λ = 0 is the margin: "a" loses against BM25 there, so a λ > 0 must win
    expect(sel.grid[0]!.relativeGain.a).toBeLessThan(0);
    expect(sel.blend.lambda).toBeGreaterThan(0);
    expect(sel.chosen.relativeGain.a).toBeGreaterThanOrEqual(0);
    expect(sel.chosen.relativeGain.b).toBeGreaterThanOrEqual(0);
    // deterministic
    expect(chooseRankingBlend(ds, margins)).toEqual(sel);
  });

  it('λ = 0 when nothing beats the margin', () => {
    const sel = chooseRankingBlend(ds, Float64Array.from([5, 0, 0, -1, -1, 5]))!;
    expect(sel.grid[0]!.worstGain).toBe(Math.max(...sel.grid.map((c) => c.worstGain)));
    expect(sel.blend.lambda).toBe(0);
  });

  it('declares no blend for a dataset without bm25_all / query_idf_sum, and refuses a margin count mismatch', () => {
    const other: RankingDataset = { ...ds, featureNames: FEATURE_NAMES.map((n) => `x_${n}`) };
    expect(chooseRankingBlend(other, margins)).toBeUndefined();
    expect(() => chooseRankingBlend(ds, margins.subarray(1))).toThrow(/margins/);
  });
});
