/**
 * L2 from the first call: a cache connects to Redis in the background when it is created, so a
 * second instance sharing the Redis answers from it right after `ready()`; calls made before the
 * connection is up are counted as skips (`l2SkippedConnecting`), never as errors, and do not open
 * the breaker (which used to keep Redis unused for a whole cooldown after start-up).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScoreCache, type ScoreCache } from '../../src/cache/score-cache.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf } from './helpers.js';
import { backendRuns, L2_BACKENDS, type L2Connection, type L2Deployment, unreachable } from './l2-backends.js';

let server: L2Deployment;
let caches: ScoreCache[] = [];
let prefixCounter = 0;

function l2Cache(prefix: string, connection: L2Connection = server.connection): ScoreCache {
  // Default breaker settings: the start-up skips must not depend on a short cooldown.
  const c = createScoreCache({ maxBytes: 1 << 20, redis: { ...connection, prefix, timeoutMs: 250 } });
  caches.push(c);
  return c;
}

const BACKENDS = L2_BACKENDS.filter((b) => backendRuns(b, 'test/cache/redis-first-call.test.ts'));

describe.each(BACKENDS)('Redis L2 from the first call ($name)', (backend) => {
  beforeAll(async () => {
    server = await backend.deploy();
  }, 60_000);
  afterAll(async () => {
    await server?.destroy();
  });
  afterEach(async () => {
    await Promise.all(caches.map((c) => c.close()));
    caches = [];
  });

  it('a second cache answers every pair from L2 right after ready(), with 0 scorer calls', async () => {
    const prefix = `first${prefixCounter++}:`;
    const a = l2Cache(prefix);
    expect(await a.ready()).toBe(true);
    const passages = passagesOf(20);
    const logA = newLog();
    await a.resolve({ scorerId: 'ce@v1', query: 'shared', passages }, missScorer('shared', passages, logA));
    expect(logA.scoredPairs()).toBe(20);
    await a.flush();

    const b = l2Cache(prefix);
    expect(await b.ready()).toBe(true);
    const logB = newLog();
    const out = await b.resolve({ scorerId: 'ce@v1', query: 'shared', passages }, missScorer('shared', passages, logB));
    expect(logB.calls).toEqual([]);
    expect(out.cached.every(Boolean)).toBe(true);
    for (let i = 0; i < passages.length; i++)
      expect(relevanceOf(out.results[i])).toBe(expectedScore('shared', passages[i]));
    expect(b.stats()).toMatchObject({ l2Hits: 20, l2Errors: 0, l2SkippedConnecting: 0, l2Connected: true });
  });

  it('calls before the connection is up are skips, not errors, and leave the breaker closed', async () => {
    const prefix = `first${prefixCounter++}:`;
    const a = l2Cache(prefix);
    await a.ready();
    const passages = passagesOf(20, 'early');
    await a.resolve({ scorerId: 'ce@v1', query: 'early', passages }, missScorer('early', passages, newLog()));
    await a.flush();

    // Called in the same tick as creation: the connection cannot be up yet.
    const b = l2Cache(prefix);
    for (let i = 0; i < 5; i++) {
      const ps = passagesOf(2, `pre${i}-`);
      await b.resolve({ scorerId: 'ce@v1', query: `pre ${i}`, passages: ps }, missScorer(`pre ${i}`, ps, newLog()));
    }
    const before = b.stats();
    expect(before.l2Errors).toBe(0);
    expect(before.l2SkippedConnecting).toBeGreaterThanOrEqual(1);
    expect(before.l2Breaker).toBe('closed');

    // Five early calls used to open the breaker for its 1 s cooldown: L2 would be skipped now.
    expect(await b.ready()).toBe(true);
    const log = newLog();
    await b.resolve({ scorerId: 'ce@v1', query: 'early', passages }, missScorer('early', passages, log));
    expect(log.calls).toEqual([]);
    expect(b.stats()).toMatchObject({ l2Hits: 20, l2Errors: 0, l2Breaker: 'closed' });
  });

  it('a Redis that never answers costs skips only, and ready() resolves false', async () => {
    const c = l2Cache('never:', await unreachable(backend));
    expect(await c.ready(200)).toBe(false);
    const ps = passagesOf(3, 'down');
    const log = newLog();
    await c.resolve({ scorerId: 'ce@v1', query: 'down', passages: ps }, missScorer('down', ps, log));
    expect(log.scoredPairs()).toBe(3);
    expect(c.stats()).toMatchObject({ l2Errors: 0, l2Connected: false });
    expect(c.stats().l2SkippedConnecting).toBeGreaterThanOrEqual(1);
  });
});
