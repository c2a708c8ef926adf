import { describe, expect, it } from 'vitest';
import type { CacheRequest, PairScoreCache, ScoreMisses } from '../../src/cache/cache-port.js';
import { createGate, type ScoreOptions, type ScorerPairResult } from '../../src/index.js';
import { ids, passages, relevanceScorer, tableScorer } from './helpers.js';

/** Minimal in-test cache: keyed on scorer id + query + passage id + text; stores non-null results. */
class FakeCache implements PairScoreCache {
  readonly store = new Map<string, ScorerPairResult>();
  readonly requests: CacheRequest[] = [];
  async resolve(request: CacheRequest, scoreMisses: ScoreMisses, options?: ScoreOptions) {
    this.requests.push(request);
    const key = (i: number) =>
      JSON.stringify([request.scorerId, request.query, request.passages[i].id, request.passages[i].text]);
    const results: ScorerPairResult[] = [];
    const cached: boolean[] = [];
    const misses: number[] = [];
    request.passages.forEach((_, i) => {
      const hit = this.store.get(key(i));
      results.push(hit ?? null);
      cached.push(hit !== undefined);
      if (hit === undefined) misses.push(i);
    });
    if (misses.length > 0) {
      const scored = await scoreMisses(misses, options ?? {});
      misses.forEach((i, j) => {
        results[i] = scored[j];
        if (scored[j] !== null) this.store.set(key(i), scored[j]);
      });
    }
    return { results, cached };
  }
}

describe('cache seam', () => {
  it('scores only the misses; items carry cached flags; stats and tier count hits', async () => {
    const scorer = relevanceScorer([0.9, 0.2, 0.7, 0.6]);
    const cache = new FakeCache();
    const gate = createGate({ scorer, cache });
    const first = await gate.filter('q', passages(2));
    expect(first.included.every((i) => !i.cached)).toBe(true);
    const second = await gate.filter('q', passages(4));
    expect(scorer.calls.map((c) => c.ids)).toEqual([
      ['p0', 'p1'],
      ['p2', 'p3'],
    ]);
    const cachedById = Object.fromEntries([...second.included, ...second.excluded].map((i) => [i.id, i.cached]));
    expect(cachedById).toEqual({ p0: true, p1: true, p2: false, p3: false });
    expect(second.stats).toMatchObject({ scored: 4, cacheHits: 2 });
    expect(second.tier).toEqual({ scorer: 'rel-model', name: 'mixed', counts: { cache: 2, 'rel-model': 2 } });
    expect(ids(second.included)).toEqual(['p0', 'p2', 'p3']);
    expect(cache.requests[1]).toMatchObject({ scorerId: 'rel-model', query: 'q' });
  });

  it('invalid scores are never handed to the cache for storage, and fail closed with their reason', async () => {
    const scorer = tableScorer({ p0: { relevant: Number.NaN }, p1: { relevant: 0.8 } });
    const cache = new FakeCache();
    const gate = createGate({ scorer, cache });
    const r = await gate.filter('q', passages(2));
    expect(r.excluded[0]).toMatchObject({ id: 'p0', reason: 'invalid-signal', cached: false });
    expect(cache.store.size).toBe(1);
    await gate.filter('q', passages(2));
    expect(scorer.calls[1].ids).toEqual(['p0']);
  });

  it('a scorer failure inside scoreMisses keeps the cache hits and fails only the misses', async () => {
    const cache = new FakeCache();
    const good = relevanceScorer([0.9, 0.8]);
    await createGate({ scorer: good, cache }).filter('q', passages(1));
    const failing = {
      id: 'rel-model',
      score: async () => {
        throw new Error('down');
      },
    };
    const r = await createGate({ scorer: failing, cache }).filter('q', passages(2));
    expect(r.included.map((i) => [i.id, i.cached])).toEqual([['p0', true]]);
    expect(r.excluded[0]).toMatchObject({ id: 'p1', reason: 'scorer-error' });
    expect(r.errors[0]).toMatch(/down/);
  });

  it('a wrong count from the scorer behind the cache fails those pairs closed', async () => {
    const cache = new FakeCache();
    const wrong = { id: 'w', score: async () => [{ relevant: 0.9 }] };
    const r = await createGate({ scorer: wrong, cache }).filter('q', passages(3));
    expect(r.excluded.map((i) => i.reason)).toEqual(['scorer-error', 'scorer-error', 'scorer-error']);
    expect(cache.store.size).toBe(0);
  });

  it('a rejecting or malformed cache fails the chunk closed as cache-error', async () => {
    const scorer = relevanceScorer([0.9]);
    const rejecting: PairScoreCache = {
      resolve: async () => {
        throw new Error('redis gone');
      },
    };
    const r = await createGate({ scorer, cache: rejecting }).filter('q', passages(1));
    expect(r.excluded[0].reason).toBe('cache-error');
    expect(r.errors[0]).toMatch(/redis gone/);
    const malformed: PairScoreCache = { resolve: async () => ({ results: [], cached: [] }) };
    expect((await createGate({ scorer, cache: malformed }).filter('q', passages(1))).excluded[0].reason).toBe(
      'cache-error',
    );
  });

  it('a corrupt cached value is validated like a scorer answer', async () => {
    const corrupt: PairScoreCache = {
      resolve: async (req) => ({
        results: req.passages.map(() => ({ relevant: 7 })),
        cached: req.passages.map(() => true),
      }),
    };
    const r = await createGate({ scorer: relevanceScorer([0.9]), cache: corrupt }).filter('q', passages(1));
    expect(r.excluded[0]).toMatchObject({ reason: 'invalid-signal', cached: true });
  });

  it('a hanging cache is bounded by the deadline', async () => {
    const hanging: PairScoreCache = { resolve: () => new Promise(() => undefined) };
    // The cache never answers: that the call returns at all, with the pair cut by the deadline, is the bound.
    const r = await createGate({ scorer: relevanceScorer([0.9]), cache: hanging }).filter('q', passages(1), {
      budgetMs: 20,
    });
    expect(r.excluded[0].reason).toBe('timeout');
  });

  it('early stop goes through the cache chunk by chunk', async () => {
    const scorer = relevanceScorer([0.9, 0.9, 0.9, 0.9]);
    const cache = new FakeCache();
    const gate = createGate({ scorer, cache, policy: { earlyStop: { window: 2, minRate: 0, chunk: 2 } } });
    await gate.filter('q', passages(4));
    expect(cache.requests.map((r) => r.passages.map((p) => p.id))).toEqual([
      ['p0', 'p1'],
      ['p2', 'p3'],
    ]);
  });
});

describe('cache seam contract', () => {
  it('a cache asking to score an out-of-range miss index gets a typed error and the pairs fail closed', async () => {
    const broken: PairScoreCache = {
      resolve: async (req, scoreMisses) => ({
        results: [...(await scoreMisses([5], {}))],
        cached: req.passages.map(() => false),
      }),
    };
    const scorer = relevanceScorer([0.9]);
    const r = await createGate({ scorer, cache: broken }).filter('q', passages(1));
    expect(r.excluded[0].reason).toBe('cache-error');
    expect(r.errors[0]).toMatch(/miss index 5 of 1/);
    expect(scorer.calls).toHaveLength(0);
  });
});
