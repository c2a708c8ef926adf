import { describe, expect, it } from 'vitest';
import { type CorpusStats, InvalidArgumentError } from '../../src/index.js';
import { BM25_PARAMETERS, FEATURE_NAMES, NUM_FEATURES } from '../../src/features/schema.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { extractFeatures, extractFeaturesAsync, featureRow } from '../../src/features/extract.js';

// A tiny corpus whose statistics are easy to count by hand. Every word below is its own Porter
// stem except where noted, and none is a stop word.
//   d1: title "apple pie"  body "apple banana apple"
//   d2: title ""           body "banana cherry"        ("cherry" stems to "cherri")
//   d3: title "fig"        body "cherry durian fig kiwi"
const corpus = [
  { id: 'd1', title: 'Apple pie', text: 'apple banana apple' },
  { id: 'd2', title: '', text: 'banana cherry' },
  { id: 'd3', title: 'Fig', text: 'cherry durian fig kiwi' },
];
const N = 3;
const avgBody = (3 + 2 + 4) / 3;
const avgTitle = (2 + 0 + 1) / 3;
const idf = (df: number): number => Math.log(1 + (N - df + 0.5) / (df + 0.5));
const { k1, b } = BM25_PARAMETERS;
const bm25Term = (idfValue: number, tf: number, len: number, avg: number): number =>
  (idfValue * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * len) / avg));

const col = (name: string): number => FEATURE_NAMES.indexOf(name);

async function tinyStats(): Promise<CorpusStats> {
  return buildCorpusStats(corpus);
}

describe('corpus statistics of the tiny corpus', () => {
  it('counts document frequencies per field and average lengths', async () => {
    const stats = await tinyStats();
    expect(stats.docCount).toBe(3);
    expect(stats.avgBodyLength).toBeCloseTo(avgBody, 12);
    expect(stats.avgTitleLength).toBeCloseTo(avgTitle, 12);
    expect(stats.documentFrequency('appl')).toEqual({ body: 1, title: 1, any: 1 });
    expect(stats.documentFrequency('banana')).toEqual({ body: 2, title: 0, any: 2 });
    expect(stats.documentFrequency('cherri')).toEqual({ body: 2, title: 0, any: 2 });
    expect(stats.documentFrequency('fig')).toEqual({ body: 1, title: 1, any: 1 });
    expect(stats.documentFrequency('pie')).toEqual({ body: 0, title: 1, any: 1 });
    expect(stats.documentFrequency('unseen')).toEqual({ body: 0, title: 0, any: 0 });
  });
});

describe('BM25 features: exact values computed by hand', () => {
  it('bm25_body, bm25_title and bm25_all', async () => {
    const stats = await tinyStats();
    // Passage body terms: apple apple cherry banana (the "the" is a stop word) → length 4.
    // Title terms: apple → length 1.
    const f = extractFeatures(stats, 'Apple cherries', [
      { title: 'An apple', text: 'apple, APPLE; the cherry banana' },
    ]);
    const bodyExpected = bm25Term(idf(1), 2, 4, avgBody) + bm25Term(idf(2), 1, 4, avgBody);
    const titleExpected = bm25Term(idf(1), 1, 1, avgTitle); // title df(appl) = 1; cherri never in a title → tf 0
    const allExpected = bm25Term(idf(1), 3, 5, avgBody + avgTitle) + bm25Term(idf(2), 1, 5, avgBody + avgTitle);
    expect(f[col('bm25_body')]).toBeCloseTo(bodyExpected, 5);
    expect(f[col('bm25_title')]).toBeCloseTo(titleExpected, 5);
    expect(f[col('bm25_all')]).toBeCloseTo(allExpected, 5);
    expect(f[col('body_length')]).toBe(4);
    expect(f[col('title_length')]).toBe(1);
    expect(f[col('query_length')]).toBe(2);
  });

  it('counts a repeated query term once per occurrence (query term frequency)', async () => {
    const stats = await tinyStats();
    const f = extractFeatures(stats, 'kiwi kiwi', [{ text: 'kiwi' }]);
    expect(f[col('bm25_body')]).toBeCloseTo(2 * bm25Term(idf(1), 1, 1, avgBody), 5);
  });

  it('gives unseen terms the largest IDF (df = 0)', async () => {
    const stats = await tinyStats();
    const f = extractFeatures(stats, 'zebra', [{ text: 'zebra zebra' }]);
    expect(f[col('bm25_body')]).toBeCloseTo(bm25Term(idf(0), 2, 2, avgBody), 5);
    expect(f[col('matched_idf_max')]).toBeCloseTo(idf(0), 5);
  });

  it('IDF coverage and matched IDF sums use the either-field document frequency', async () => {
    const stats = await tinyStats();
    // query terms: appl (df_any 1), banana (2), zebra (0); passage has appl and banana.
    const f = extractFeatures(stats, 'apple banana zebra', [{ text: 'banana and apple' }]);
    const matched = idf(1) + idf(2);
    expect(f[col('matched_idf_sum')]).toBeCloseTo(matched, 5);
    expect(f[col('matched_idf_max')]).toBeCloseTo(idf(1), 5);
    expect(f[col('query_idf_sum')]).toBeCloseTo(matched + idf(0), 5);
    expect(f[col('idf_coverage')]).toBeCloseTo(matched / (matched + idf(0)), 5);
    expect(f[col('query_coverage')]).toBeCloseTo(2 / 3, 6);
  });
});

describe('coverage, bigram, span and proximity features on hand-checked examples', () => {
  it('finds adjacent query bigrams, the longest in-order span and the covering window', async () => {
    const stats = await tinyStats();
    // Query terms: solar wind speed measur (4 positions, 3 bigrams).
    // Passage terms: solar wind speed high wind measur (positions 0..5).
    const [row] = rows(
      extractFeatures(stats, 'the solar wind speed measurement', [
        { text: 'The solar wind speed was high; wind measurements' },
      ]),
    );
    expect(row!.query_coverage).toBe(1);
    expect(row!.body_coverage).toBe(1);
    expect(row!.title_coverage).toBe(0);
    expect(row!.bigram_matches).toBe(2); // solar-wind, wind-speed; speed-measur is not adjacent
    expect(row!.bigram_share).toBeCloseTo(2 / 3, 6);
    expect(row!.longest_span).toBe(3); // solar wind speed
    expect(row!.longest_span_share).toBeCloseTo(3 / 4, 6);
    expect(row!.min_window_density).toBeCloseTo(4 / 6, 6); // all four terms need positions 0..5
    expect(row!.near_pair_share).toBe(1); // every pair within 8 positions
    expect(row!.match_density).toBeCloseTo(5 / 6, 6);
  });

  it('requires query order for bigrams and spans', async () => {
    const stats = await tinyStats();
    const [row] = rows(extractFeatures(stats, 'wind speed', [{ text: 'speed wind' }]));
    expect(row!.bigram_matches).toBe(0);
    expect(row!.longest_span).toBe(1);
    expect(row!.min_window_density).toBe(1);
    expect(row!.near_pair_share).toBe(1);
  });

  it('stop words between terms do not break adjacency (they are removed on both sides)', async () => {
    const stats = await tinyStats();
    const [row] = rows(extractFeatures(stats, 'effect heat', [{ text: 'the effect of the heat' }]));
    expect(row!.bigram_matches).toBe(1);
    expect(row!.longest_span).toBe(2);
  });

  it('counts pairs as near only within 8 positions', async () => {
    const stats = await tinyStats();
    const filler = Array.from({ length: 9 }, (_, i) => `filler${i}`).join(' ');
    const [far] = rows(extractFeatures(stats, 'alpha beta', [{ text: `alpha ${filler} beta` }]));
    expect(far!.near_pair_share).toBe(0);
    expect(far!.min_window_density).toBeCloseTo(2 / 11, 6);
    const near = Array.from({ length: 7 }, (_, i) => `filler${i}`).join(' ');
    const [close] = rows(extractFeatures(stats, 'alpha beta', [{ text: `alpha ${near} beta` }]));
    expect(close!.near_pair_share).toBe(1);
  });

  it('keeps title and body apart for adjacency but counts coverage over both', async () => {
    const stats = await tinyStats();
    const [row] = rows(extractFeatures(stats, 'wind tunnel', [{ title: 'wind', text: 'tunnel tests' }]));
    expect(row!.query_coverage).toBe(1);
    expect(row!.title_coverage).toBeCloseTo(0.5, 6);
    expect(row!.body_coverage).toBeCloseTo(0.5, 6);
    expect(row!.bigram_matches).toBe(0);
    expect(row!.near_pair_share).toBe(0);
  });
});

describe('edge cases', () => {
  it('empty query: query features are 0, lengths are set, no NaN outside passthrough', async () => {
    const stats = await tinyStats();
    for (const q of ['', '   ', 'the of and', '🚀']) {
      const [row] = rows(extractFeatures(stats, q, [{ title: 'Apple pie', text: 'apple banana' }]));
      for (const name of FEATURE_NAMES.slice(0, -3)) {
        expect(Number.isNaN(row![name]), `${name} for ${JSON.stringify(q)}`).toBe(false);
      }
      expect(row!.query_length).toBe(0);
      expect(row!.bm25_all).toBe(0);
      expect(row!.query_coverage).toBe(0);
      expect(row!.body_length).toBe(2);
      expect(row!.title_length).toBe(2);
    }
  });

  it('empty passage: every text feature is 0', async () => {
    const stats = await tinyStats();
    const [row] = rows(extractFeatures(stats, 'apple banana', [{ text: '' }]));
    for (const name of FEATURE_NAMES.slice(0, -3)) {
      if (name === 'query_length' || name === 'query_idf_sum') continue;
      expect(row![name], name).toBe(0);
    }
    expect(row!.query_length).toBe(2);
  });

  it('empty batch gives an empty array; statistics of an empty corpus work', async () => {
    const stats = await tinyStats();
    expect(extractFeatures(stats, 'apple', []).length).toBe(0);
    const empty = await buildCorpusStats([]);
    const [row] = rows(extractFeatures(empty, 'apple', [{ text: 'apple' }]));
    expect(row!.bm25_body).toBeGreaterThan(0);
    expect(Number.isFinite(row!.bm25_body)).toBe(true);
  });

  it('passes caller-supplied features through and fills NaN when missing', async () => {
    const stats = await tinyStats();
    const f = extractFeatures(
      stats,
      'apple',
      [{ text: 'apple' }, { text: 'kiwi' }],
      [{ retrieval_score: 12.5, retrieval_rank: 1 }, { embedding_similarity: -0.25 }],
    );
    const [r0, r1] = rows(f);
    expect(r0!.retrieval_score).toBe(12.5);
    expect(r0!.retrieval_rank).toBe(1);
    expect(Number.isNaN(r0!.embedding_similarity)).toBe(true);
    expect(Number.isNaN(r1!.retrieval_score)).toBe(true);
    expect(r1!.embedding_similarity).toBe(-0.25);
    const dense = new Float32Array([1, 2, 3, Number.NaN, 5, 6]);
    const [d0, d1] = rows(extractFeatures(stats, 'apple', [{ text: 'apple' }, { text: 'kiwi' }], dense));
    expect([d0!.retrieval_score, d0!.retrieval_rank, d0!.embedding_similarity]).toEqual([1, 2, 3]);
    expect(Number.isNaN(d1!.retrieval_score)).toBe(true);
    expect(d1!.embedding_similarity).toBe(6);
  });

  it('async extraction gives the same rows as inline extraction', async () => {
    const stats = await tinyStats();
    const passages = [
      { title: 'Apple pie', text: 'apple banana apple' },
      { text: 'cherry durian fig kiwi' },
      { text: '' },
    ];
    const sync = extractFeatures(stats, 'apple fig pie', passages, [
      { retrieval_rank: 1 },
      undefined,
      { retrieval_rank: 3 },
    ]);
    const asyncRows = await extractFeaturesAsync(stats, 'apple fig pie', passages, [
      { retrieval_rank: 1 },
      undefined,
      { retrieval_rank: 3 },
    ]);
    expect(Array.from(asyncRows)).toEqual(Array.from(sync));
    expect(sync.length).toBe(3 * NUM_FEATURES);
  });

  it('rejects malformed input with InvalidArgumentError', async () => {
    const stats = await tinyStats();
    const bad: Array<() => unknown> = [
      () => extractFeatures({} as CorpusStats, 'q', [{ text: 'a' }]),
      () => extractFeatures(stats, 42 as unknown as string, [{ text: 'a' }]),
      () => extractFeatures(stats, 'q', 'abc' as unknown as []),
      () => extractFeatures(stats, 'q', [null as unknown as { text: string }]),
      () => extractFeatures(stats, 'q', [{ text: 5 as unknown as string }]),
      () => extractFeatures(stats, 'q', [{ text: 'a', title: 7 as unknown as string }]),
      () => extractFeatures(stats, 'q', [{ text: 'a' }], [{}, {}]),
      () => extractFeatures(stats, 'q', [{ text: 'a' }], [{ retrieval_score: 'high' as unknown as number }]),
      () => extractFeatures(stats, 'q', [{ text: 'a' }], [{ retrieval_score: Infinity }]),
      () => extractFeatures(stats, 'q', [{ text: 'a' }], new Float32Array(2)),
    ];
    for (const call of bad) expect(call).toThrow(InvalidArgumentError);
    await expect(extractFeaturesAsync(stats, 'q', [{ text: 1 as unknown as string }])).rejects.toThrow(
      InvalidArgumentError,
    );
  });
});

function rows(f: Float32Array): Array<Record<string, number>> {
  const out: Array<Record<string, number>> = [];
  for (let i = 0; i < f.length / NUM_FEATURES; i++) out.push(featureRow(f, i, FEATURE_NAMES));
  return out;
}
