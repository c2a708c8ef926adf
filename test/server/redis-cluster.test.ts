/**
 * Replicas sharing a 3-node Redis Cluster (`cache.redisCluster`, the `--redis-cluster` flag): what
 * replica A scored, replica B serves from the cluster with no scorer call, for a router model.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Passage, Scorer } from '../../src/index.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { RedisClusterServer, redisClusterAvailable } from '../cache/redis-cluster.js';
import { postJson, start } from './helpers.js';

const available = redisClusterAvailable();
if (!available) {
  if (process.env.CI)
    throw new Error('redis-server / redis-cli are not installed, but CI must run the Redis Cluster tests');
  console.warn('[test/server/redis-cluster.test.ts] SKIPPED: redis-server or redis-cli not found');
}

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

let cluster: RedisClusterServer;
const servers: RelevanceGateServer[] = [];

async function replica(scorer: Scorer): Promise<string> {
  const server = await start({
    cache: { redisCluster: cluster.startupNodes.map((n) => `${n.host}:${n.port}`), redisTimeoutMs: 50 },
    models: {
      remoteish: { type: 'scorer', scorer },
      routed: { type: 'router', tiers: ['remoteish'], routing: 'fixed' },
    },
  });
  servers.push(server);
  return server.url as string;
}

describe.skipIf(!available)('replicas sharing a Redis Cluster', () => {
  beforeAll(async () => {
    cluster = new RedisClusterServer();
    await cluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.destroy();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  it('B answers what A scored from the cluster, every item cached, 0 scorer calls', async () => {
    const scorerA = countingScorer();
    const scorerB = countingScorer();
    const [a, b] = await Promise.all([replica(scorerA), replica(scorerB)]);
    const passages = Array.from({ length: 20 }, (_, i) => `passage ${i} ${'on a cluster '.repeat(i % 4)}`);
    const body = { model: 'routed', query: 'cluster query', passages, policy: { threshold: 0.5 } };
    const fromA = await postJson(`${a}/v1/gate`, body);
    expect(fromA.status, fromA.text).toBe(200);
    expect(scorerA.pairs).toBe(20);
    // A's writes land in the background; B waits on A's leases until they do.
    const fromB = await postJson(`${b}/v1/gate`, body);
    expect(fromB.status, fromB.text).toBe(200);
    expect(scorerB.pairs).toBe(0);
    const items = (fromB.body as { included: { cached: boolean }[]; excluded: { cached: boolean }[] }).included.concat(
      (fromB.body as { excluded: { cached: boolean }[] }).excluded,
    );
    expect(items.length).toBe(20);
    expect(items.every((item) => item.cached)).toBe(true);
    const metrics = await (await fetch(`${b}/metrics`)).text();
    expect(metrics).toMatch(/relevance_gate_cache_l2_connected 1/);
  });
});
