/**
 * The approximate query cache through the gate, with a synthetic embedding (a bag of words: word
 * order does not change it, another word does), so it runs everywhere; the real model is in
 * approximate-minilm.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  createGate,
  createScoreCache,
  type Gate,
  type GateResult,
  type Passage,
  type Scorer,
  type ScoreCache,
} from '../../src/index.js';
import { fnv1a, mulberry32 } from '../../src/util/seeded-random.js';

const DIM = 48;

function bagOfWords(text: string): Float32Array {
  const v = new Float32Array(DIM);
  for (const word of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    const random = mulberry32(fnv1a(word));
    for (let i = 0; i < DIM; i++) v[i] += random() - 0.5;
  }
  return v;
}

function countingScorer(id: string): Scorer & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    id,
    calls,
    async score(query: string, passages: readonly Passage[]) {
      calls.push(passages.map((p) => p.id));
      // A score that depends on the exact query text, so a reuse is visible.
      return passages.map((p) => ({ probabilities: { relevant: (fnv1a(query + p.id) % 1000) / 1000 }, tier: 't' }));
    },
  };
}

const passages: Passage[] = Array.from({ length: 10 }, (_, i) => ({ id: `p${i}`, text: `passage number ${i}` }));
const items = (r: GateResult) => [...r.included, ...r.conflicting, ...r.excluded];

function setup(
  options: { threshold?: number; embed?: (q: string) => Promise<Float32Array>; minTermOverlap?: number } = {},
) {
  const cache = createScoreCache({
    maxBytes: 1 << 20,
    approximate: {
      threshold: options.threshold ?? 0.95,
      embed: options.embed ?? (async (q) => bagOfWords(q)),
      ...(options.minTermOverlap === undefined ? {} : { minTermOverlap: options.minTermOverlap }),
    },
  });
  const scorer = countingScorer('model-a');
  const gate = createGate({ scorer, cache, policy: { threshold: 0.5 } });
  return { cache, scorer, gate };
}

async function run(gate: Gate, query: string, list = passages, options = {}) {
  return gate.filter(query, list, options);
}

describe('approximate query cache through the gate', () => {
  it("serves a reordered query's pairs from the earlier query, marked 'approximate' and counted", async () => {
    const { cache, scorer, gate } = setup();
    const first = await run(gate, 'temperate phage transduction bacillus');
    expect(items(first).every((i) => i.cached === false)).toBe(true);
    const second = await run(gate, 'bacillus transduction temperate phage');
    expect(scorer.calls).toHaveLength(1); // nothing scored for the variant
    expect(items(second).every((i) => i.cached === 'approximate')).toBe(true);
    expect(second.stats.cacheHits).toBe(10);
    expect(second.stats.approximateHits).toBe(10);
    // The earlier query's scores, as they were.
    const before = new Map(items(first).map((i) => [i.id, i.signals?.relevant]));
    for (const item of items(second)) expect(item.signals?.relevant).toBe(before.get(item.id));
    const stats = cache.stats();
    expect(stats).toMatchObject({
      approximateEnabled: true,
      approximateHits: 10,
      approximateLookups: 2,
      hits: 0,
      misses: 10,
    });
    expect(stats.approximateQueries).toBe(1);
  });

  it('never writes a reused score under the new query: an exact repeat reuses again, never hits exactly', async () => {
    const { cache, gate } = setup();
    await run(gate, 'alpha beta gamma delta');
    await run(gate, 'delta gamma beta alpha');
    const again = await run(gate, 'delta gamma beta alpha');
    expect(items(again).every((i) => i.cached === 'approximate')).toBe(true);
    expect(cache.stats().l1Hits).toBe(0);
  });

  it('reuses only the pairs the earlier query has; the rest are scored and then remembered', async () => {
    const { scorer, gate } = setup();
    await run(gate, 'alpha beta gamma', passages.slice(0, 5));
    const r = await run(gate, 'gamma beta alpha', passages);
    expect(scorer.calls[1]).toEqual(['p5', 'p6', 'p7', 'p8', 'p9']);
    expect(r.stats.approximateHits).toBe(5);
    expect(
      items(r)
        .filter((i) => i.cached === false)
        .map((i) => i.id)
        .sort(),
    ).toEqual(['p5', 'p6', 'p7', 'p8', 'p9']);
  });

  it('by default reuses only queries with the same content words: a typo is scored fresh even at cosine 1', async () => {
    // An embedding that cannot tell the typo apart: cosine 1 between the two queries.
    const blind = async () => bagOfWords('same vector for every query');
    const strict = setup({ embed: blind });
    await run(strict.gate, 'temperate phage transduction bacillus');
    const typo = await run(strict.gate, 'temperate phgae transduction bacillus');
    expect(strict.scorer.calls).toHaveLength(2);
    expect(items(typo).every((i) => i.cached === false)).toBe(true);
    // Stop words and word forms are not content: "the phages of ..." keeps the same terms.
    const same = await run(strict.gate, 'the temperate phages of transduction in bacillus');
    expect(items(same).every((i) => i.cached === 'approximate')).toBe(true);
    // minTermOverlap 0: the cosine alone decides, and the typo is reused.
    const loose = setup({ embed: blind, minTermOverlap: 0 });
    await run(loose.gate, 'temperate phage transduction bacillus');
    const reused = await run(loose.gate, 'temperate phgae transduction bacillus');
    expect(loose.scorer.calls).toHaveLength(1);
    expect(items(reused).every((i) => i.cached === 'approximate')).toBe(true);
  });

  it('does not reuse a different query below the threshold', async () => {
    const { scorer, gate } = setup();
    await run(gate, 'alpha beta gamma');
    const r = await run(gate, 'completely other words here');
    expect(r.stats.approximateHits).toBe(0);
    expect(scorer.calls).toHaveLength(2);
  });

  it('never reuses across scorers, policies or query classes', async () => {
    const cache = createScoreCache({
      maxBytes: 1 << 20,
      approximate: { threshold: 0.9, embed: async (q) => bagOfWords(q) },
    });
    const a = countingScorer('model-a');
    const b = countingScorer('model-b');
    const gateA = createGate({ scorer: a, cache, policy: { threshold: 0.5 } });
    const gateB = createGate({ scorer: b, cache, policy: { threshold: 0.5 } });
    const gateA2 = createGate({ scorer: a, cache, policy: { threshold: 0.6 } });
    await gateA.filter('alpha beta gamma', passages);
    expect((await gateB.filter('gamma beta alpha', passages)).stats.approximateHits).toBe(0);
    expect((await gateA2.filter('gamma beta alpha', passages)).stats.approximateHits).toBe(0);
    expect(
      (await gateA.filter('gamma beta alpha', passages, { policy: { threshold: 0.7 } })).stats.approximateHits,
    ).toBe(0);
    expect((await gateA.filter('gamma beta alpha', passages, { queryClass: 'x' })).stats.approximateHits).toBe(0);
    // Same scorer, same policy: reused.
    expect((await gateA.filter('beta gamma alpha', passages)).stats.approximateHits).toBe(10);
  });

  it('is off by default: a cache without `approximate` never reuses', async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20 });
    const scorer = countingScorer('model-a');
    const gate = createGate({ scorer, cache });
    await gate.filter('alpha beta gamma', passages);
    const r = await gate.filter('gamma beta alpha', passages, { queryEmbedding: bagOfWords('alpha beta gamma') });
    expect(r.stats.approximateHits).toBe(0);
    expect(scorer.calls).toHaveLength(2);
    expect(cache.approximate).toBe(false);
    expect(cache.stats()).toMatchObject({ approximateEnabled: false, approximateHits: 0 });
  });

  it("takes the caller's embedding (queryEmbedding) without an embed function", async () => {
    const cache = createScoreCache({ maxBytes: 1 << 20, approximate: { threshold: 0.95 } });
    const scorer = countingScorer('model-a');
    const gate = createGate({ scorer, cache });
    await gate.filter('alpha beta', passages); // no embedding: not remembered
    await gate.filter('alpha beta gamma', passages, { queryEmbedding: bagOfWords('alpha beta gamma') });
    const r = await gate.filter('gamma alpha beta', passages, {
      queryEmbedding: Array.from(bagOfWords('gamma alpha beta')),
    });
    expect(r.stats.approximateHits).toBe(10);
    await expect(gate.filter('x', passages, { queryEmbedding: [0, 0] })).rejects.toThrow(/queryEmbedding/);
  });

  it('fails open to scoring when embed throws, rejects, returns junk or never answers', async () => {
    const embeds: Array<(q: string) => Promise<Float32Array>> = [
      () => {
        throw new Error('sync boom');
      },
      async () => {
        throw new Error('async boom');
      },
      async () => new Float32Array(DIM), // the zero vector
      async () => 'not a vector' as unknown as Float32Array,
      () => new Promise<Float32Array>(() => undefined), // never answers
    ];
    for (const embed of embeds) {
      const cache: ScoreCache = createScoreCache({
        maxBytes: 1 << 20,
        approximate: { threshold: 0.9, embed, embedTimeoutMs: 20 },
      });
      const scorer = countingScorer('model-a');
      const gate = createGate({ scorer, cache, policy: { threshold: 0.5 } });
      const first = await gate.filter('alpha beta gamma', passages);
      const second = await gate.filter('gamma beta alpha', passages);
      expect(first.errors).toEqual([]);
      expect(items(second).every((i) => i.cached === false && i.signals !== null)).toBe(true);
      expect(scorer.calls).toHaveLength(2);
      const stats = cache.stats();
      expect(stats.approximateEmbedFailures + stats.approximateEmbedTimeouts).toBeGreaterThan(0);
    }
  });

  it('clear() empties the index with L1: the query is scored again, then reused again', async () => {
    const { cache, scorer, gate } = setup();
    await run(gate, 'alpha beta gamma');
    cache.clear();
    await run(gate, 'alpha beta gamma');
    const r = await run(gate, 'gamma beta alpha');
    expect(r.stats.approximateHits).toBe(10);
    expect(scorer.calls).toHaveLength(2);
  });

  it('checks its options', () => {
    expect(() => createScoreCache({ maxBytes: 1 << 20, approximate: { threshold: 1.5 } })).toThrow(/threshold/);
    expect(() => createScoreCache({ maxBytes: 1 << 20, approximate: { threshold: 0 } })).toThrow(/threshold/);
    expect(() =>
      createScoreCache({ maxBytes: 1 << 20, approximate: { treshold: 0.9 } as unknown as { threshold: number } }),
    ).toThrow(/treshold/);
    expect(() =>
      createScoreCache({ maxBytes: 1 << 20, approximate: { embed: 'no' as unknown as () => Promise<Float32Array> } }),
    ).toThrow(/embed/);
  });
});
