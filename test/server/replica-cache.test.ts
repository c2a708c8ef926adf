/**
 * Two replicas (in-process servers) sharing one redis-server: what replica A scored, replica B
 * serves from Redis with no scorer call, and `/v1/gate` says so in every item with `cached: true`:
 * for a router model (whose router holds the cache, the gate in front of it none, and labels the
 * pairs tier `cache`; `cached` used to say false there) and for a tier model served on its own
 * (whose gate holds the cache).
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Passage, Scorer } from '../../src/index.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { freePort, RedisServer, redisServerAvailable } from '../cache/redis-server.js';
import { postJson, start } from './helpers.js';

const available = redisServerAvailable();
if (!available) {
  if (process.env.CI) throw new Error('redis-server is not installed, but CI must run the replica cache tests');
  console.warn('[test/server/replica-cache.test.ts] SKIPPED: redis-server binary not found');
}

interface ItemJson {
  index: number;
  tier: string | null;
  cached: boolean;
  relevance: number | null;
}
interface GateJson {
  included: ItemJson[];
  conflicting: ItemJson[];
  excluded: ItemJson[];
  stats: { cacheHits: number };
}

/** A scorer counting the pairs it scores; the score depends on the passage text only. */
function countingScorer(): Scorer & { pairs: number } {
  const scorer = {
    id: 'counting@v1',
    pairs: 0,
    async score(_query: string, passages: readonly Passage[]) {
      scorer.pairs += passages.length;
      return passages.map((p) => ({ probabilities: { relevant: (p.text.length % 97) / 100 } }));
    },
  };
  return scorer;
}

let redis: RedisServer;
let raw: Redis;
const servers: RelevanceGateServer[] = [];

async function replica(scorer: Scorer): Promise<string> {
  const server = await start({
    cache: { redisUrl: redis.url, redisTimeoutMs: 20 },
    models: {
      remoteish: { type: 'scorer', scorer },
      routed: { type: 'router', tiers: ['remoteish'], routing: 'fixed' },
    },
  });
  servers.push(server);
  return server.url as string;
}

async function gate(url: string, model: string, query: string, passages: string[]): Promise<ItemJson[]> {
  const res = await postJson(`${url}/v1/gate`, { model, query, passages, policy: { threshold: 0.5 } });
  expect(res.status, res.text).toBe(200);
  const body = res.body as GateJson;
  return [...body.included, ...body.conflicting, ...body.excluded].sort((x, y) => x.index - y.index);
}

const passages = Array.from({ length: 20 }, (_, i) => `passage ${i} ${'about replicas '.repeat(i % 5)}`);

describe.skipIf(!available)('replicas sharing one Redis', () => {
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

  for (const model of ['routed', 'remoteish'])
    it(`${model}: B answers what A scored from Redis, every item cached: true`, async () => {
      const scorerA = countingScorer();
      const scorerB = countingScorer();
      const [a, b] = await Promise.all([replica(scorerA), replica(scorerB)]);
      const query = `shared work ${model}`;
      const fromA = await gate(a, model, query, passages);
      expect(scorerA.pairs).toBe(20);
      expect(fromA.every((item) => item.cached === false)).toBe(true);
      // A's writes reach Redis in the background (value keys; its lease keys, `…}!…`, go as they land).
      const deadline = Date.now() + 5000;
      const values = async () => (await raw.keys('rg:score:*')).filter((k) => !k.includes('}!')).length;
      while ((await values()) < 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const fromB = await gate(b, model, query, passages);
      expect(scorerB.pairs).toBe(0);
      // A router labels cached answers `cache`; a gate with its own cache keeps the scorer's tier.
      const tier = model === 'routed' ? 'cache' : 'counting@v1';
      expect(fromB.map((item) => item.tier)).toEqual(passages.map(() => tier));
      expect(fromB.map((item) => item.cached)).toEqual(passages.map(() => true));
      expect(fromB.map((item) => item.relevance)).toEqual(fromA.map((item) => item.relevance));
      // From B's L1 now: still cached.
      const again = await gate(b, model, query, passages);
      expect(again.every((item) => item.cached && item.tier === tier)).toBe(true);
      expect(scorerB.pairs).toBe(0);
    });
});
