/**
 * Signed L2 entries against a real redis-server: with a signing key, values written straight into
 * Redis under the cache's keys (forged, unsigned, signed with another key, moved to another key,
 * altered) are never served, never promoted to L1, and are counted; entries signed by another
 * instance holding the same key are served. Without a key, the documented trust model holds:
 * whoever can write to Redis decides the scores. L1 copies of L2 entries expire with the L2 TTL.
 */
import { Packr } from 'msgpackr';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CacheSigningKeyError } from '../../src/cache/errors.js';
import { createScoreCache, type ScoreCache, type ScoreCacheOptions } from '../../src/cache/score-cache.js';
import { InvalidArgumentError } from '../../src/errors.js';
import type { Passage } from '../../src/types.js';
import { expectedScore, missScorer, newLog, passagesOf, relevanceOf } from './helpers.js';
import { backendRuns, L2_BACKENDS, type L2Deployment } from './l2-backends.js';

const BACKENDS = L2_BACKENDS.filter((b) => backendRuns(b, 'test/cache/signed-l2.test.ts'));

const KEY = 'a shared secret of this deployment (32+ bytes)';
const OTHER_KEY = Buffer.alloc(32, 7);
const FORGED_SCORE = 0.999;
const N = 40;

let server: L2Deployment;
let caches: ScoreCache[] = [];
let prefixCounter = 0;

type RedisOptions = NonNullable<ScoreCacheOptions['redis']>;

function l2Cache(
  prefix: string,
  redis: Partial<RedisOptions> = {},
  options: Partial<Omit<ScoreCacheOptions, 'redis'>> = {},
): ScoreCache {
  const c = createScoreCache({
    maxBytes: 1 << 20,
    ...options,
    redis: { ...server.connection, prefix, timeoutMs: 250, ...redis },
  });
  caches.push(c);
  return c;
}

/** Resolves `passages`; returns the scores served and how many pairs had to be scored. */
async function resolve(c: ScoreCache, query: string, passages: readonly Passage[]) {
  const log = newLog();
  const out = await c.resolve({ scorerId: 'ce@v1', query, passages }, missScorer(query, passages, log));
  return { scores: out.results.map(relevanceOf), cached: out.cached, scored: log.scoredPairs() };
}

/** What an attacker with write access writes: a value in the cache's own format, scored 0.999. */
function forgedValue(scoredAt = Date.now() - 1000): Buffer {
  const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
  return packr.pack([
    1,
    scoredAt,
    { probabilities: { relevant: FORGED_SCORE, ranking: FORGED_SCORE }, raw: { relevant: 7 }, tier: 'fast-path' },
  ]);
}

async function keysOf(prefix: string): Promise<string[]> {
  return (await server.keys(`${prefix}*`)).sort();
}

async function overwriteAll(prefix: string, value: (i: number) => Buffer) {
  const keys = await keysOf(prefix);
  for (let i = 0; i < keys.length; i++) await server.raw.set(keys[i], value(i), 'PX', 60_000);
  return keys;
}

describe('signing key validation (no Redis needed)', () => {
  it.each([
    ['an empty string', '', 'too-short'],
    ['15 bytes', 'x'.repeat(15), 'too-short'],
    ['an empty Buffer', Buffer.alloc(0), 'too-short'],
    ['a number', 42, 'type'],
    ['null', null, 'type'],
    ['an array', Array.from({ length: 32 }, () => 1), 'type'],
  ])('refuses %s with CacheSigningKeyError (%s)', (_, signingKey, reason) => {
    let error: unknown;
    try {
      createScoreCache({
        maxBytes: 1 << 20,
        redis: { url: 'redis://127.0.0.1:1', signingKey: signingKey as never, connectTimeoutMs: 10 },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CacheSigningKeyError);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as CacheSigningKeyError).reason).toBe(reason);
    if (typeof signingKey === 'string' && signingKey.length > 0)
      expect((error as Error).message).not.toContain(signingKey);
  });

  it('counts a string key in UTF-8 bytes (8 × "é" = 16 bytes is enough)', async () => {
    const c = createScoreCache({
      maxBytes: 1 << 20,
      redis: { url: 'redis://127.0.0.1:1', signingKey: 'é'.repeat(8), connectTimeoutMs: 10 },
    });
    expect(c.stats()).toMatchObject({ l2Enabled: true, l2Signed: true });
    await c.close();
  });
});

describe.each(BACKENDS)('signed L2 entries ($name)', (backend) => {
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

  it('serves an entry signed by another instance with the same key; the stored value is signed', async () => {
    const prefix = `s${prefixCounter++}:`;
    const a = l2Cache(prefix, { signingKey: KEY });
    const b = l2Cache(prefix, { signingKey: Buffer.from(KEY, 'utf8') }); // the same bytes, as a Buffer
    await Promise.all([a.ready(), b.ready()]);
    const passages = passagesOf(N);
    expect((await resolve(a, 'q', passages)).scored).toBe(N);
    await a.flush();
    const stored = await server.raw.getBuffer((await keysOf(prefix))[0]);
    expect(stored?.[0]).toBe(0xc1); // a byte msgpack never starts a value with
    const out = await resolve(b, 'q', passages);
    expect(out.scored).toBe(0);
    expect(out.scores).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(b.stats()).toMatchObject({ l2Hits: N, l2SignatureFailures: 0, l2Invalid: 0, l2Signed: true });
    const latency = b.stats().l2ReadLatency;
    expect(latency.count).toBe(1); // one MGET for the call
    expect(latency.counts.reduce((x, y) => x + y, 0)).toBe(1);
    expect(latency.sumSeconds).toBeGreaterThan(0);
  });

  it('never serves forged values (0 of N), counts every one, promotes none, and rewrites them signed', async () => {
    const prefix = `s${prefixCounter++}:`;
    const writer = l2Cache(prefix, { signingKey: KEY });
    await writer.ready();
    const passages = passagesOf(N);
    await resolve(writer, 'forged query', passages);
    await writer.flush();
    // Every key the cache uses, overwritten five ways an attacker might try.
    const keys = await keysOf(prefix);
    expect(keys).toHaveLength(N);
    const signedOriginals = await Promise.all(keys.map((k) => server.raw.getBuffer(k) as Promise<Buffer>));
    await overwriteAll(prefix, (i) => {
      switch (i % 5) {
        case 0: // the plain unsigned format of a cache without a key
          return forgedValue();
        case 1: {
          // a signed-looking header with a made-up MAC
          const v = forgedValue();
          return Buffer.concat([Buffer.from([0xc1, 1]), Buffer.alloc(32, i), v]);
        }
        case 2: {
          // a real signed value of another key (replayed under this one)
          return signedOriginals[(i + 1) % keys.length];
        }
        case 3: {
          // this key's own signed value with one payload byte changed
          const v = Buffer.from(signedOriginals[i]);
          v[v.length - 2] ^= 0x01;
          return v;
        }
        default: // this key's own signed value, truncated
          return signedOriginals[i].subarray(0, 30);
      }
    });
    const reader = l2Cache(prefix, { signingKey: KEY });
    await reader.ready();
    const out = await resolve(reader, 'forged query', passages);
    expect(out.scores.filter((s) => s === FORGED_SCORE)).toHaveLength(0);
    expect(out.scores).toEqual(passages.map((p) => expectedScore('forged query', p)));
    expect(out.scored).toBe(N);
    expect(out.cached.some(Boolean)).toBe(false);
    const s = reader.stats();
    expect(s).toMatchObject({ l2SignatureFailures: N, l2Hits: 0, l2Invalid: 0, misses: N, stores: N });
    // L1 holds the rescored values only.
    const inL1 = reader.lookup({ scorerId: 'ce@v1', query: 'forged query', passages });
    expect(inL1.map((r) => relevanceOf(r ?? null))).toEqual(out.scores);
    // The fresh scores were written back signed: a third instance is served from Redis again.
    await reader.flush();
    const third = l2Cache(prefix, { signingKey: KEY });
    await third.ready();
    const again = await resolve(third, 'forged query', passages);
    expect(again.scored).toBe(0);
    expect(third.stats()).toMatchObject({ l2Hits: N, l2SignatureFailures: 0 });
  });

  it('refuses entries signed with another key', async () => {
    const prefix = `s${prefixCounter++}:`;
    const foreign = l2Cache(prefix, { signingKey: OTHER_KEY });
    const ours = l2Cache(prefix, { signingKey: KEY });
    await Promise.all([foreign.ready(), ours.ready()]);
    const passages = passagesOf(N);
    // The foreign deployment scores the same pairs with another model version: its scores differ.
    const log = newLog();
    await foreign.resolve(
      { scorerId: 'ce@v1', query: 'q', passages },
      missScorer('q', passages, log, { salt: 'other model ' }),
    );
    await foreign.flush();
    const out = await resolve(ours, 'q', passages);
    expect(out.scored).toBe(N);
    expect(out.scores).toEqual(passages.map((p) => expectedScore('q', p)));
    expect(ours.stats()).toMatchObject({ l2SignatureFailures: N, l2Hits: 0 });
  });

  it('without a key: forged values are served (the documented trust model); a signed value is invalid there', async () => {
    const prefix = `s${prefixCounter++}:`;
    const plain = l2Cache(prefix);
    await plain.ready();
    expect(plain.stats().l2Signed).toBe(false);
    const passages = passagesOf(10);
    await resolve(plain, 'q', passages);
    await plain.flush();
    await overwriteAll(prefix, () => forgedValue());
    const victim = l2Cache(prefix);
    await victim.ready();
    const out = await resolve(victim, 'q', passages);
    expect(out.scores).toEqual(passages.map(() => FORGED_SCORE));
    expect(victim.stats()).toMatchObject({ l2Hits: 10, l2SignatureFailures: 0 });

    // Signed values read by an instance without the key: not entries it can decode, so rescored.
    const signedPrefix = `s${prefixCounter++}:`;
    const signer = l2Cache(signedPrefix, { signingKey: KEY });
    const keyless = l2Cache(signedPrefix);
    await Promise.all([signer.ready(), keyless.ready()]);
    await resolve(signer, 'q', passages);
    await signer.flush();
    const mixed = await resolve(keyless, 'q', passages);
    expect(mixed.scored).toBe(10);
    expect(keyless.stats()).toMatchObject({ l2Invalid: 10, l2Hits: 0 });
  });

  it('counts L2 misses: keys Redis does not have, and entries older than the L2 TTL', async () => {
    const prefix = `s${prefixCounter++}:`;
    const c = l2Cache(prefix, { signingKey: KEY });
    await c.ready();
    await resolve(c, 'fresh', passagesOf(7));
    expect(c.stats()).toMatchObject({ l2Reads: 7, l2Misses: 7, l2Hits: 0 });
  });
});

describe.each(BACKENDS)('L1 copies expire with the L2 TTL (fake clock, $name)', (backend) => {
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

  it('an entry promoted from Redis leaves L1 when its L2 TTL has passed, and is rescored', async () => {
    const prefix = `e${prefixCounter++}:`;
    const t0 = 1_700_000_000_000;
    let now = t0;
    const clock = () => now;
    const ttlMs = 10_000;
    const writer = l2Cache(prefix, { signingKey: KEY, ttlMs }, { clock });
    const reader = l2Cache(prefix, { signingKey: KEY, ttlMs }, { clock });
    await Promise.all([writer.ready(), reader.ready()]);
    const passages = passagesOf(5);
    await resolve(writer, 'q', passages);
    await writer.flush();

    now = t0 + 1000;
    expect((await resolve(reader, 'q', passages)).scored).toBe(0);
    expect(reader.stats()).toMatchObject({ l2Hits: 5, stores: 5 });

    now = t0 + ttlMs - 1; // still within its L2 lifetime: served from L1, Redis not asked
    expect((await resolve(reader, 'q', passages)).scored).toBe(0);
    expect(reader.stats()).toMatchObject({ l1Hits: 5, l2Reads: 5 });

    now = t0 + ttlMs; // its L2 TTL is over: L1 drops it; the Redis copy (real time, still there) is too old
    const late = await resolve(reader, 'q', passages);
    expect(late.scored).toBe(5);
    expect(reader.stats()).toMatchObject({ expired: 5, l2Reads: 10, l2Misses: 5, l2Hits: 5 });
  });

  it('an entry scored "in the future" by another clock expires in L1 no later than its L2 TTL from now', async () => {
    const prefix = `e${prefixCounter++}:`;
    const t0 = 1_700_000_000_000;
    let writerNow = t0 + 800; // the writer's clock runs 800 ms ahead (within maxClockSkewMs)
    let readerNow = t0;
    const ttlMs = 5_000;
    const writer = l2Cache(prefix, { signingKey: KEY, ttlMs }, { clock: () => writerNow });
    const reader = l2Cache(prefix, { signingKey: KEY, ttlMs }, { clock: () => readerNow });
    await Promise.all([writer.ready(), reader.ready()]);
    const passages = passagesOf(3);
    await resolve(writer, 'q', passages);
    await writer.flush();
    expect((await resolve(reader, 'q', passages)).scored).toBe(0); // promoted at t0
    readerNow = t0 + ttlMs; // ttl after promotion (the writer's scoredAt + ttl would be 800 ms later)
    writerNow = readerNow;
    // L1 drops its copies; Redis, asked again, still has them (by their own clock 800 ms younger).
    expect((await resolve(reader, 'q', passages)).scored).toBe(0);
    expect(reader.stats()).toMatchObject({ expired: 3, l2Hits: 6, l1Hits: 0 });
  });

  it('with Redis and no cache ttlMs, a score made here also leaves L1 at the L2 TTL', async () => {
    const prefix = `e${prefixCounter++}:`;
    let now = 1_700_000_000_000;
    const c = l2Cache(prefix, { ttlMs: 60_000 }, { clock: () => now });
    await c.ready();
    const passages = passagesOf(4);
    expect((await resolve(c, 'q', passages)).scored).toBe(4);
    now += 59_999;
    expect((await resolve(c, 'q', passages)).scored).toBe(0);
    now += 1;
    expect((await resolve(c, 'q', passages)).scored).toBe(4);
    expect(c.stats().expired).toBe(4);
  });

  it('the cache ttlMs still applies when it is shorter than the L2 TTL', async () => {
    const prefix = `e${prefixCounter++}:`;
    let now = 1_700_000_000_000;
    const c = l2Cache(prefix, { ttlMs: 60_000 }, { clock: () => now, ttlMs: 1_000 });
    await c.ready();
    const passages = passagesOf(2);
    await resolve(c, 'q', passages);
    now += 1_000;
    expect((await resolve(c, 'q', passages)).scored).toBe(2);
  });
});
