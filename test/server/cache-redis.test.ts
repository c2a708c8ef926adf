/**
 * The server's score cache over a real redis-server: RELEVANCE_GATE_CACHE_SIGNING_KEY signs the
 * entries, so values written straight into Redis never reach an answer; replicas with the same
 * key share entries; /metrics exports the Redis (L2) counters and read latency. A key that is too
 * short stops the server from starting (without printing the key).
 */
import { Redis } from 'ioredis';
import { Packr } from 'msgpackr';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CACHE_SIGNING_KEY_ENV } from '../../src/server/registry.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { postJson, start } from './helpers.js';

const available = redisServerAvailable();
if (!available) {
  if (process.env.CI) throw new Error('redis-server is not installed, but CI must run the server cache tests');
  console.warn('[test/server/cache-redis.test.ts] SKIPPED: redis-server binary not found');
}

const KEY = 'relevance-gate test deployment signing key';
const FORGED = 0.999;
const PREFIX = 'rg:score:';

let redis: RedisServer;
let raw: Redis;
const servers: RelevanceGateServer[] = [];

const WORDS = ['protein', 'folding', 'proteins', 'fold', 'structure', 'chain', 'amino', 'acid', 'chaperone', 'misfold'];

/** Documents that share more of the query's words the later they come: each gets its own score. */
function documents(tag: string, n = 10): string[] {
  return Array.from({ length: n }, (_, i) => `${tag} notes on ${WORDS.slice(0, i + 1).join(' ')} and the weather`);
}

async function rerankScores(url: string, query: string, docs: string[]): Promise<number[]> {
  const res = await postJson(`${url}/v1/rerank`, { query, documents: docs });
  expect(res.status, res.text).toBe(200);
  const results = (res.body as { results: Array<{ index: number; relevance_score: number }> }).results;
  const scores = new Array<number>(docs.length);
  for (const r of results) scores[r.index] = r.relevance_score;
  return scores;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
  if (m === null) throw new Error(`${name} not in /metrics`);
  return Number(m[1]);
}

async function waitForKeys(min: number): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const keys = await raw.keys(`${PREFIX}*`);
    if (keys.length >= min || Date.now() > deadline) return keys;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startWithKey(key: string | undefined): Promise<RelevanceGateServer> {
  if (key === undefined) delete process.env[CACHE_SIGNING_KEY_ENV];
  else process.env[CACHE_SIGNING_KEY_ENV] = key;
  try {
    // A generous read timeout: a read that times out on a busy test host is scored instead (and
    // counted as an L2 error), which would make the counts below depend on the host's load.
    const server = await start({ cache: { redisUrl: redis.url, redisTimeoutMs: 60 } });
    servers.push(server);
    return server;
  } finally {
    delete process.env[CACHE_SIGNING_KEY_ENV];
  }
}

describe('/metrics exports the Redis (L2) figures', () => {
  it('names every counter, the connection and signing gauges and the read-latency histogram', async () => {
    const server = await start();
    try {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      for (const name of [
        'cache_l2_hits_total',
        'cache_l2_misses_total',
        'cache_l2_errors_total',
        'cache_l2_timeouts_total',
        'cache_l2_skipped_total',
        'cache_l2_skipped_connecting_total',
        'cache_l2_invalid_entries_total',
        'cache_l2_signature_failures_total',
        'cache_l2_writes_dropped_total',
      ])
        expect(text).toContain(`# TYPE relevance_gate_${name} counter`);
      expect(text).toContain('# TYPE relevance_gate_cache_l2_connected gauge');
      expect(text).toMatch(/^relevance_gate_cache_l2_signed 0$/m);
      expect(text).toContain('# TYPE relevance_gate_cache_l2_read_duration_seconds histogram');
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!available)('server score cache over Redis', () => {
  beforeAll(async () => {
    redis = new RedisServer(await freePort());
    await redis.start();
    raw = new Redis(redis.url);
  });
  afterAll(async () => {
    await raw?.quit();
    await redis?.kill();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    await raw.flushall();
  });

  /** Until the server's cache reports its Redis connection up (a bounded wait). */
  async function waitConnected(url: string): Promise<void> {
    for (let i = 0; i < 100; i++) {
      if ((await metric(url, 'relevance_gate_cache_l2_connected')) === 1) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`${url}: the cache did not connect to Redis`);
  }

  it(`with ${CACHE_SIGNING_KEY_ENV}: forged entries are never served and are counted; signed ones are shared`, async () => {
    const a = await startWithKey(KEY);
    const aUrl = a.url as string;
    const query = 'how do proteins fold into a structure';
    const forgedDocs = documents('forged');
    const sharedDocs = documents('shared');
    const expectedForged = await rerankScores(aUrl, query, forgedDocs);
    await waitForKeys(10);
    // Whoever can write to Redis overwrites every entry there with a valid-looking 0.999.
    const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
    const forgedValue = packr.pack([
      1,
      Date.now() - 1000,
      { probabilities: { relevant: FORGED, ranking: FORGED }, tier: 'fast-path' },
    ]);
    const forgedKeys = await raw.keys(`${PREFIX}*`);
    for (const key of forgedKeys) await raw.set(key, forgedValue, 'PX', 60_000);
    const before = forgedKeys.length;
    const expectedShared = await rerankScores(aUrl, query, sharedDocs);
    await waitForKeys(before + 10);
    expect(await metric(aUrl, 'relevance_gate_cache_l2_signed')).toBe(1);

    const b = await startWithKey(KEY);
    const bUrl = b.url as string;
    await waitConnected(bUrl);
    // The scores served are the model's own (a forged entry would give every document one score).
    expect(new Set(expectedForged).size).toBeGreaterThan(1);
    expect(await rerankScores(bUrl, query, forgedDocs)).toEqual(expectedForged);
    // A replica with the same key is served what the first one scored.
    expect(await rerankScores(bUrl, query, sharedDocs)).toEqual(expectedShared);

    expect(await metric(bUrl, 'relevance_gate_cache_l2_signature_failures_total')).toBeGreaterThanOrEqual(10);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_hits_total')).toBeGreaterThanOrEqual(10);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_invalid_entries_total')).toBe(0);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_errors_total')).toBe(0);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_connected')).toBe(1);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_signed')).toBe(1);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_read_duration_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(await metric(bUrl, 'relevance_gate_cache_l2_read_duration_seconds_sum')).toBeGreaterThan(0);
    const text = await (await fetch(`${bUrl}/metrics`)).text();
    expect(text).toMatch(/^relevance_gate_cache_l2_read_duration_seconds_bucket\{le="\+Inf"\} [1-9]\d*$/m);
    expect(text).toMatch(/^relevance_gate_cache_l2_misses_total \d+$/m);
  });

  it('without a key: the forged score is what Redis says (the documented trust model)', async () => {
    const a = await startWithKey(undefined);
    const docs = documents('unsigned', 4);
    const genuine = await rerankScores(a.url as string, 'protein folding', docs);
    expect(new Set(genuine).size).toBeGreaterThan(1);
    const keys = await waitForKeys(4);
    const packr = new Packr({ useRecords: false, moreTypes: false, mapsAsObjects: true });
    const forged = packr.pack([1, Date.now() - 1000, { probabilities: { relevant: FORGED, ranking: FORGED } }]);
    for (const key of keys) await raw.set(key, forged, 'PX', 60_000);
    const b = await startWithKey(undefined);
    // A cache reads Redis once its connection is up (it connects in the background after start).
    await waitConnected(b.url as string);
    // Every document now gets the forged probability (as the protocol reports it), none its own score.
    const served = await rerankScores(b.url as string, 'protein folding', docs);
    expect(new Set(served).size).toBe(1);
    expect(served[0]).toBeGreaterThan(Math.max(...genuine)); // a forged 0.999 outranks every genuine score
    expect(served).not.toEqual(genuine);
    expect(await metric(b.url as string, 'relevance_gate_cache_l2_hits_total')).toBeGreaterThanOrEqual(4);
    expect(await metric(b.url as string, 'relevance_gate_cache_l2_signed')).toBe(0);
  });

  it('refuses to start with a key shorter than 16 bytes, without printing it', async () => {
    const short = 'tooShortKey';
    let error: unknown;
    try {
      await startWithKey(short);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain(CACHE_SIGNING_KEY_ENV);
    expect((error as Error).message).toContain('16 bytes');
    expect((error as Error).message).not.toContain(short);
  });
});
