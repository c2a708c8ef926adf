/**
 * Two routers (two instances) whose caches share one real redis-server: B plans from what A stored
 * (its L2 is read before planning, so a pair A scored on the slow tier is neither scored again on
 * any tier nor sent anywhere), and B waits on A's lease for pairs A is scoring right now instead of
 * sending them to its own slow tier. The inline tier never leases.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScoreCache, type ScoreCache } from '../../src/cache/score-cache.js';
import { createRouter } from '../../src/router/router.js';
import type { Router } from '../../src/router/types.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { ce, type CountingScorer, fastPath, fastTier, passages, routed, sleep, slowTier } from './fakes.js';

const available = redisServerAvailable();
if (!available) {
  if (process.env.CI) throw new Error('redis-server is not installed, but CI must run the shared-L2 router tests');
  console.warn('[test/router/shared-l2.test.ts] SKIPPED: redis-server binary not found');
}

let redis: RedisServer;
let closers: Array<() => Promise<void> | void> = [];
let prefixCounter = 0;

interface Instance {
  readonly router: Router;
  readonly cache: ScoreCache;
  readonly fast: CountingScorer;
  readonly slow: CountingScorer;
}

/** One instance: a cascade router (inline fast path, cached; a slow tier) over a cache on the shared Redis. */
async function instance(prefix: string, slowLatencyMs: number): Promise<Instance> {
  const cache = createScoreCache({ maxBytes: 1 << 20, redis: { url: redis.url, prefix, timeoutMs: 250 } });
  const fast = fastTier(() => 0.5); // every pair at the threshold: all go to the slow tier when they fit
  const slow = slowTier({ latencyMs: slowLatencyMs, relevance: () => 0.8 });
  const router = createRouter({
    tiers: [{ ...fastPath(fast), cache: true }, ce(slow, { estimateMs: () => 1 })],
    routing: { mode: 'cascade', threshold: 0.5 },
    cache,
    answerLag: false,
  });
  closers.push(
    () => router.close(),
    () => cache.close(),
  );
  await cache.ready();
  return { router, cache, fast, slow };
}

async function leaseKeys(prefix: string): Promise<number> {
  const { Redis } = await import('ioredis');
  const raw = new Redis(redis.url);
  try {
    return (await raw.keys(`${prefix}*`)).filter((k) => k.includes('}!')).length;
  } finally {
    raw.disconnect();
  }
}

describe.skipIf(!available)('routers sharing one Redis', () => {
  beforeAll(async () => {
    redis = new RedisServer(await freePort());
    await redis.start();
  });
  afterAll(async () => {
    await redis?.kill();
  });
  afterEach(async () => {
    for (const close of closers.reverse()) await close();
    closers = [];
  });

  it('B plans from what A stored: no tier of B scores those pairs, every answer is cache from the slow tier', async () => {
    const prefix = `route${prefixCounter++}:`;
    const a = await instance(prefix, 20);
    const b = await instance(prefix, 20);
    const ps = passages(8);
    const fromA = await a.router.score('shared query', ps, { deadline: Date.now() + 2000 });
    expect(a.slow.executed).toHaveLength(8);
    expect(fromA.map((r) => routed(r).tier)).toEqual(ps.map(() => 'cross-encoder'));
    await a.cache.flush();
    // The inline tier leased nothing; the slow tier's pairs were leased, and the leases dropped on store.
    expect(a.cache.stats().l2Leases).toBe(8);
    expect(await leaseKeys(prefix)).toBe(0);

    const fromB = await b.router.score('shared query', ps, { deadline: Date.now() + 2000 });
    expect(b.slow.calls).toEqual([]);
    expect(b.fast.calls).toEqual([]); // planned from L2: the inline tier was not even needed
    expect(fromB.map((r) => [routed(r).tier, routed(r).sourceTier])).toEqual(ps.map(() => ['cache', 'cross-encoder']));
    expect(fromB.map((r) => routed(r).probabilities.relevant)).toEqual(ps.map(() => 0.8));
    // Both tiers' entries were read before planning, in parallel (what is final was not known yet).
    expect(b.cache.stats().l2Prefetched).toBe(16);
  });

  it("B waits on A's lease for pairs A is scoring now: B's slow tier is not called", async () => {
    const prefix = `route${prefixCounter++}:`;
    const a = await instance(prefix, 150);
    const b = await instance(prefix, 150);
    const ps = passages(8, 'w');
    const fromA = a.router.score('in flight', ps, { deadline: Date.now() + 3000 });
    const until = Date.now() + 3000;
    while ((await leaseKeys(prefix)) < 8 && Date.now() < until) await sleep(2);
    const fromB = await b.router.score('in flight', ps, { deadline: Date.now() + 3000 });
    await fromA;
    expect(a.slow.executed).toHaveLength(8);
    expect(b.slow.calls).toEqual([]);
    expect(fromB.map((r) => [routed(r).tier, routed(r).sourceTier])).toEqual(ps.map(() => ['cache', 'cross-encoder']));
    expect(b.cache.stats()).toMatchObject({ l2LeaseWaits: 8, l2LeaseShared: 8, l2Leases: 0 });
  });
});
