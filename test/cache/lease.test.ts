/**
 * Redis leases between caches sharing one Redis (a redis-server, then a 3-node Redis Cluster): a
 * cache that finds pairs leased by another waits for that instance's scores instead of calling its
 * scorer; a lease whose holder is gone (hung, dead) ends by itself and the waiter takes the pairs
 * over; a holder whose scoring fails releases at once; the waiter's deadline bounds the wait; with
 * leases off, both score (the behaviour without leases).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createScoreCache, type ScoreCache, type ScoreCacheOptions } from '../../src/cache/score-cache.js';
import type { Passage } from '../../src/types.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf, sleep } from './helpers.js';
import { backendRuns, L2_BACKENDS, type L2Deployment } from './l2-backends.js';

const BACKENDS = L2_BACKENDS.filter((b) => backendRuns(b, 'test/cache/lease.test.ts'));
const N = 12;

let server: L2Deployment;
let caches: ScoreCache[] = [];
let prefixCounter = 0;

function l2Cache(prefix: string, redis: Partial<NonNullable<ScoreCacheOptions['redis']>> = {}): ScoreCache {
  const c = createScoreCache({ maxBytes: 1 << 20, redis: { ...server.connection, prefix, timeoutMs: 250, ...redis } });
  caches.push(c);
  return c;
}

/** Resolves once Redis holds `n` lease keys under `prefix` (the holder's read is done). */
async function leasesTaken(prefix: string, n: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while ((await server.keys(`${prefix}*`)).filter((k) => k.includes('}!')).length < n) {
    if (Date.now() > deadline) throw new Error(`no ${n} leases under ${prefix} within 5 s`);
    await sleep(2);
  }
}

function resolveWith(
  c: ScoreCache,
  query: string,
  passages: readonly Passage[],
  log: { calls: string[][] },
  options: Parameters<typeof missScorer>[3] = {},
  callOptions: { deadline?: number; signal?: AbortSignal } = {},
) {
  return c.resolve({ scorerId: 'ce@v1', query, passages }, missScorer(query, passages, log, options), callOptions);
}

describe.each(BACKENDS)('Redis leases between instances ($name)', (backend) => {
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

  it('a scorer that answers faster than a lease costs stops being leased after its first call', async () => {
    const prefix = `lease${prefixCounter++}:`;
    const a = l2Cache(prefix);
    await a.ready();
    // First call: the scorer's pace is unknown, so its pairs are leased.
    await resolveWith(a, 'fast 1', passagesOf(N), newLog());
    expect(a.stats().l2Leases).toBe(N);
    // It answered at once: later calls read and write Redis without leases.
    await resolveWith(a, 'fast 2', passagesOf(N), newLog());
    expect(a.stats().l2Leases).toBe(N);
    expect(a.stats().l2Misses).toBe(2 * N);
    // A slow scorer (another id) is still leased.
    await a.resolve(
      { scorerId: 'slow@v1', query: 'slow', passages: passagesOf(4) },
      missScorer('slow', passagesOf(4), newLog(), { delayMs: 10 }),
    );
    await a.resolve(
      { scorerId: 'slow@v1', query: 'slow 2', passages: passagesOf(4) },
      missScorer('slow 2', passagesOf(4), newLog(), { delayMs: 10 }),
    );
    expect(a.stats().l2Leases).toBe(N + 8);
  });

  it("a second cache waits on a peer's lease instead of calling its scorer, and gets the peer's scores", async () => {
    const prefix = `lease${prefixCounter++}:`;
    const a = l2Cache(prefix);
    const b = l2Cache(prefix);
    await Promise.all([a.ready(), b.ready()]);
    const passages = passagesOf(N);
    const logA = newLog();
    const logB = newLog();
    const fromA = resolveWith(a, 'shared', passages, logA, { delayMs: 200 });
    await leasesTaken(prefix, N);
    const t0 = performance.now();
    const fromB = await resolveWith(b, 'shared', passages, logB, {}, { deadline: Date.now() + 5000 });
    const waitedMs = performance.now() - t0;
    await fromA;
    expect(logA.scoredPairs()).toBe(N);
    expect(logB.calls).toEqual([]);
    expect(fromB.cached.every(Boolean)).toBe(true);
    expect(fromB.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('shared', p)));
    // Served when A's scores landed, not at the end of the lease (1 s by default).
    expect(waitedMs).toBeLessThan(800);
    expect(a.stats()).toMatchObject({ l2Leases: N, l2LeaseWaits: 0 });
    expect(b.stats()).toMatchObject({ l2LeaseWaits: N, l2LeaseShared: N, l2LeaseTakeovers: 0, l2LeaseGiveUps: 0 });
    expect(b.stats()).toMatchObject({ hits: N, misses: 0, l2Leases: 0 });
    // The store dropped A's leases with the values: only values remain.
    await a.flush();
    const keys = await server.keys(`${prefix}*`);
    expect(keys.filter((k) => k.includes('}!'))).toEqual([]);
    expect(keys).toHaveLength(N);
  });

  it('calls of one instance waiting on the same peer lease share one wait (single flight), no scorer call', async () => {
    const prefix = `lease${prefixCounter++}:`;
    const a = l2Cache(prefix);
    const b = l2Cache(prefix);
    await Promise.all([a.ready(), b.ready()]);
    const passages = passagesOf(N);
    const fromA = resolveWith(a, 'q', passages, newLog(), { delayMs: 150 });
    await leasesTaken(prefix, N);
    const logB = newLog();
    const [first, second] = await Promise.all([
      resolveWith(b, 'q', passages, logB),
      resolveWith(b, 'q', passages.slice(0, 4), logB),
    ]);
    await fromA;
    expect(logB.calls).toEqual([]);
    expect(first.cached.every(Boolean) && second.cached.every(Boolean)).toBe(true);
    expect(b.stats()).toMatchObject({ l2LeaseWaits: N, l2LeaseShared: N, inflightShared: 4 });
  });

  it('an expired lease of a dead peer does not block: the waiter takes the pairs over and scores them', async () => {
    const prefix = `lease${prefixCounter++}:`;
    // The holder never answers and never releases (as if its process had died): only expiry ends its lease.
    const dead = l2Cache(prefix, { leaseMs: 300 });
    const b = l2Cache(prefix, { leaseMs: 300 });
    await Promise.all([dead.ready(), b.ready()]);
    const passages = passagesOf(N);
    const hang = new AbortController();
    const held = resolveWith(dead, 'q', passages, newLog(), { delayMs: 60_000 }, { signal: hang.signal });
    held.catch(() => undefined);
    await leasesTaken(prefix, N);
    const logB = newLog();
    const t0 = performance.now();
    const out = await resolveWith(b, 'q', passages, logB, {}, { deadline: Date.now() + 10_000 });
    const tookMs = performance.now() - t0;
    expect(logB.scoredPairs()).toBe(N);
    expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(tookMs).toBeGreaterThan(150); // it did wait for the lease...
    expect(tookMs).toBeLessThan(2000); // ...only until it expired, not for the 10 s deadline
    expect(b.stats()).toMatchObject({ l2LeaseWaits: N, l2LeaseTakeovers: N, l2LeaseShared: 0, l2Leases: N });
    await b.flush();
    // B's scores are in Redis, its takeover leases dropped with them.
    const keys = await server.keys(`${prefix}*`);
    expect(keys.filter((k) => k.includes('}!'))).toEqual([]);
    expect(keys).toHaveLength(N);
    hang.abort();
  });

  it('a holder whose scoring fails releases its leases: the waiter takes over at once', async () => {
    const prefix = `lease${prefixCounter++}:`;
    const a = l2Cache(prefix); // default 1 s leases: a takeover well before that is a release
    const b = l2Cache(prefix);
    await Promise.all([a.ready(), b.ready()]);
    const passages = passagesOf(N);
    const failing = resolveWith(a, 'q', passages, newLog(), {
      delayMs: 100,
      intercept: () => {
        throw new Error('model crashed');
      },
    });
    failing.catch(() => undefined);
    await leasesTaken(prefix, N);
    const logB = newLog();
    const t0 = performance.now();
    const out = await resolveWith(b, 'q', passages, logB, {}, { deadline: Date.now() + 5000 });
    expect(performance.now() - t0).toBeLessThan(700);
    await expect(failing).rejects.toThrow('model crashed');
    expect(logB.scoredPairs()).toBe(N);
    expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(b.stats()).toMatchObject({ l2LeaseTakeovers: N });
  });

  it("the waiter's deadline bounds the wait: half the time left, then it scores the pairs itself (no lease) before the deadline", async () => {
    const prefix = `lease${prefixCounter++}:`;
    const slow = l2Cache(prefix, { leaseMs: 5000 });
    const b = l2Cache(prefix, { timeoutMs: 20 }); // a read timeout well under the 400 ms budget, or L2 is skipped
    await Promise.all([slow.ready(), b.ready()]);
    const passages = passagesOf(N);
    const hang = new AbortController();
    const held = resolveWith(slow, 'q', passages, newLog(), { delayMs: 60_000 }, { signal: hang.signal });
    held.catch(() => undefined);
    await leasesTaken(prefix, N);
    const logB = newLog();
    const t0 = performance.now();
    const out = await resolveWith(b, 'q', passages, logB, { delayMs: 30 }, { deadline: Date.now() + 400 });
    const tookMs = performance.now() - t0;
    // It waited about half of the 400 ms, then scored the pairs itself (30 ms) before the
    // deadline: a holder that never delivers costs duplicate work, not the request's budget
    // (waiting to the deadline, as before, ends after it: ~430 ms).
    expect(tookMs).toBeGreaterThan(150);
    expect(tookMs).toBeLessThan(400);
    expect(logB.scoredPairs()).toBe(N);
    expect(out.results.map(relevanceOf)).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(b.stats()).toMatchObject({ l2LeaseWaits: N, l2LeaseGiveUps: N, l2Leases: 0 });
    hang.abort();
  });

  it("an abort of the waiter rejects at once; the holder's lease and scores are unaffected", async () => {
    const prefix = `lease${prefixCounter++}:`;
    const a = l2Cache(prefix);
    const b = l2Cache(prefix);
    await Promise.all([a.ready(), b.ready()]);
    const passages = passagesOf(N);
    const fromA = resolveWith(a, 'q', passages, newLog(), { delayMs: 200 });
    await leasesTaken(prefix, N);
    const stop = new AbortController();
    const waiting = resolveWith(b, 'q', passages, newLog(), {}, { signal: stop.signal });
    await sleep(20);
    stop.abort();
    await expect(waiting).rejects.toThrow(/abort/i);
    expect((await fromA).cached.some(Boolean)).toBe(false);
    // A later call of B finds A's scores.
    await a.flush();
    const logB = newLog();
    await resolveWith(b, 'q', passages, logB);
    expect(logB.calls).toEqual([]);
  });

  it('leaseMs 0 (or a request with lease: false): no lease, both instances score (as without leases)', async () => {
    const prefix = `lease${prefixCounter++}:`;
    const a = l2Cache(prefix, { leaseMs: 0 });
    const b = l2Cache(prefix, { leaseMs: 0 });
    await Promise.all([a.ready(), b.ready()]);
    expect(a.stats().l2Leasing).toBe(false);
    const passages = passagesOf(N);
    const logA = newLog();
    const logB = newLog();
    await Promise.all([
      resolveWith(a, 'q', passages, logA, { delayMs: 100 }),
      sleep(30).then(() => resolveWith(b, 'q', passages, logB)),
    ]);
    expect(logA.scoredPairs() + logB.scoredPairs()).toBe(2 * N);
    expect((await server.keys(`${prefix}*`)).filter((k) => k.includes('}!'))).toEqual([]);

    const leasing = l2Cache(`lease${prefixCounter++}:`);
    await leasing.ready();
    const log = newLog();
    await leasing.resolve(
      { scorerId: 'ce@v1', query: 'q', passages, l2: { lease: false } },
      missScorer('q', passages, log),
    );
    expect(log.scoredPairs()).toBe(N);
    expect(leasing.stats()).toMatchObject({ l2Leases: 0, l2Reads: N, l2Misses: N });
  });
});
