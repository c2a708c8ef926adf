/**
 * L2 against a real Redis started by this file on free ports: one redis-server, then a 3-node
 * Redis Cluster (l2-backends.ts), the same tests for each. Skipped (with a message) only when the
 * binaries are missing, and never under CI, where .ci/run installs them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScoreCache, type ScoreCache, type ScoreCacheOptions } from '../../src/cache/score-cache.js';
import type { Passage } from '../../src/types.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, sleep } from './helpers.js';
import { backendRuns, L2_BACKENDS, type L2Deployment } from './l2-backends.js';

let server: L2Deployment;
let caches: ScoreCache[] = [];
let prefixCounter = 0;

function l2Cache(prefix: string, redis: Partial<NonNullable<ScoreCacheOptions['redis']>> = {}): ScoreCache {
  const c = createScoreCache({
    maxBytes: 1 << 20,
    redis: { ...server.connection, prefix, timeoutMs: 250, cooldownMs: 150, reconnectMaxDelayMs: 150, ...redis },
  });
  caches.push(c);
  return c;
}

async function resolveAll(c: ScoreCache, query: string, passages: readonly Passage[]) {
  const log = newLog();
  const out = await c.resolve({ scorerId: 'ce@v1', query, passages }, missScorer(query, passages, log));
  for (let i = 0; i < passages.length; i++) expect(relevanceOf(out.results[i])).toBe(expectedScore(query, passages[i]));
  return { ...out, log };
}

describe.each(L2_BACKENDS.filter((b) => backendRuns(b, 'test/cache/redis.test.ts')))('Redis L2 ($name)', (backend) => {
  beforeAll(async () => {
    server = await backend.deploy();
  }, 60_000);
  afterAll(async () => {
    await server?.destroy();
  });
  afterEach(async () => {
    server.resume();
    await Promise.all(caches.map((c) => c.close()));
    caches = [];
    await server.start(); // a failed test must not leave the next one without a server
  });

  it('serves a pair scored by one instance to another through Redis, then from L1', async () => {
    const prefix = `t${prefixCounter++}:`;
    const a = l2Cache(prefix);
    const b = l2Cache(prefix);
    expect(await a.ready()).toBe(true);
    expect(await b.ready()).toBe(true);
    const passages = passagesOf(20);
    expect((await resolveAll(a, 'shared query', passages)).log.scoredPairs()).toBe(20);
    await a.flush();
    expect(a.stats().l2Writes).toBe(20);
    const fromL2 = await resolveAll(b, 'shared query', passages);
    expect(fromL2.log.calls).toEqual([]);
    expect(fromL2.cached.every(Boolean)).toBe(true);
    expect(fromL2.results[3]).toEqual({
      probabilities: { relevant: expectedScore('shared query', passages[3]) },
      raw: { relevant: 0.5 },
      tier: 'test',
    });
    expect(b.stats()).toMatchObject({ l2Hits: 20, l1Hits: 0, l2Errors: 0 });
    await resolveAll(b, 'shared query', passages);
    expect(b.stats()).toMatchObject({ l2Hits: 20, l1Hits: 20 });
    const keys = await server.keys(`${prefix}*`);
    const ttl = await server.raw.pttl(keys[0]);
    expect(keys).toHaveLength(20);
    // One request's pairs share a hash tag (its scope): one slot of a Redis Cluster.
    expect(new Set(keys.map((k) => /\{[0-9a-f]{32}\}/.exec(k)?.[0])).size).toBe(1);
    expect(ttl).toBeGreaterThan(23 * 3600 * 1000); // default 24 h
  });

  it('treats foreign values under its keys as misses', async () => {
    const prefix = `t${prefixCounter++}:`;
    const a = l2Cache(prefix);
    const b = l2Cache(prefix);
    await Promise.all([a.ready(), b.ready()]);
    const passages = passagesOf(5);
    await resolveAll(a, 'q', passages);
    await a.flush();
    for (const key of await server.keys(`${prefix}*`)) await server.raw.set(key, 'not msgpack of an entry');
    const out = await resolveAll(b, 'q', passages);
    expect(out.log.scoredPairs()).toBe(5);
    expect(b.stats()).toMatchObject({ l2Invalid: 5, l2Hits: 0 });
  });

  it('keeps serving from L1 without errors while Redis is down, and uses L2 again once it is back', async () => {
    const prefix = `t${prefixCounter++}:`;
    const a = l2Cache(prefix);
    const b = l2Cache(prefix);
    await Promise.all([a.ready(), b.ready()]);
    const warm = passagesOf(10, 'warm');
    await resolveAll(a, 'q', warm);

    await server.kill();
    for (let i = 0; i < 30; i++) {
      const hit = await resolveAll(a, 'q', warm); // L1 hits keep working
      const miss = await resolveAll(a, `down ${i}`, passagesOf(5, `d${i}-`)); // misses are scored, no error
      expect(hit.cached.every(Boolean)).toBe(true);
      expect(miss.log.scoredPairs()).toBe(5);
    }
    const down = a.stats();
    expect(down.l2Errors).toBeGreaterThan(0);
    expect(down.l2Skipped).toBeGreaterThan(0); // the breaker skipped Redis entirely
    // The client notices the dead socket on its own schedule (under load, after our calls).
    const seenDown = Date.now() + 3000;
    while (a.stats().l2Connected && Date.now() < seenDown) await sleep(10);
    expect(a.stats().l2Connected, JSON.stringify(a.stats())).toBe(false);

    await server.start(); // same port, empty
    const deadline = Date.now() + 8000;
    let round = 0;
    for (;;) {
      const passages = passagesOf(4, `back${round}-`);
      await resolveAll(a, `back ${round}`, passages);
      await a.flush();
      const out = await resolveAll(b, `back ${round}`, passages);
      if (out.log.scoredPairs() === 0) break;
      if (Date.now() > deadline) throw new Error(`L2 not used again 8 s after restart: ${JSON.stringify(b.stats())}`);
      round++;
      await sleep(50);
    }
    if (process.env.RG_DEBUG) console.log('rounds', round, JSON.stringify(down), JSON.stringify(a.stats()));
    expect(b.stats().l2Hits).toBeGreaterThanOrEqual(4);
    expect(a.stats().l2Connected).toBe(true);
    expect(a.stats().l2Breaker).toBe('closed');
  });

  it('bounds each call by the L2 timeout while Redis hangs, then skips it until it answers again', async () => {
    const prefix = `t${prefixCounter++}:`;
    const a = l2Cache(prefix, { timeoutMs: 20, cooldownMs: 200 });
    await a.ready();
    server.pause();
    // Every call completes (scored here) while Redis never answers: reads time out or are skipped.
    for (let i = 0; i < 12; i++) {
      const out = await resolveAll(a, `hung ${i}`, passagesOf(3, `h${i}-`));
      expect(out.log.scoredPairs()).toBe(3);
    }
    const s = a.stats();
    expect(s.l2Timeouts, JSON.stringify(s)).toBeGreaterThanOrEqual(3);
    expect(s.l2Skipped).toBeGreaterThan(0);
    server.resume();
    await sleep(250); // cooldown passes; the next read is the probe
    const passages = passagesOf(3, 'resumed-');
    await resolveAll(a, 'resumed', passages);
    expect(a.stats().l2Breaker).toBe('closed');
  });
});
