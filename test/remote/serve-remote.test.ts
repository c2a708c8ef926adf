/**
 * A serve config model `{ "type": "remote", ... }`: one `relevance-gate serve` answering through
 * another (standing in for the GPU host), alone and as the best tier of a router; the config
 * refuses what it cannot use, and the API key comes from the environment variable it names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scorer } from '../../src/index.js';
import type { RelevanceGateServer, ServerConfigInput } from '../../src/server/index.js';
import { postJson, scifactRequests, start } from '../server/helpers.js';

const perPair: Scorer & { pairs: number } = {
  id: 'per-pair@v1',
  pairs: 0,
  async score(_query, ps) {
    perPair.pairs += ps.length;
    return ps.map((p) => ({ relevant: (p.text.length % 89) / 100 }));
  },
};

const [sample] = scifactRequests(1, 12);
let backend: RelevanceGateServer;
let front: RelevanceGateServer;

async function rerank(url: string, model: string): Promise<number[]> {
  const res = await postJson(`${url}/v2/rerank`, { model, query: sample.query, documents: sample.documents });
  expect(res.status, res.text).toBe(200);
  const out = new Array<number>(sample.documents.length);
  for (const r of (res.body as { results: Array<{ index: number; relevance_score: number }> }).results)
    out[r.index] = r.relevance_score;
  return out;
}

beforeAll(async () => {
  // No cache on the backend: every pair the front sends is scored there.
  backend = await start({ cache: { enabled: false }, models: { 'per-pair': { type: 'scorer', scorer: perPair } } });
  front = await start({
    cache: { enabled: false },
    models: {
      gpu: {
        type: 'remote',
        protocol: 'tei',
        url: backend.url as string,
        model: 'per-pair',
        maxBatch: 5,
        budgetMs: 10_000,
      },
      cascade: { type: 'router', tiers: ['fast-path', 'gpu'], routing: 'fixed', fixedTier: 'gpu', budgetMs: 10_000 },
    },
  });
});

afterAll(async () => {
  await Promise.all([front?.close(), backend?.close()]);
});

describe('serve config: type remote', () => {
  it('serves the backend model through the remote tier, alone and as a router tier', async () => {
    const direct = await rerank(backend.url as string, 'per-pair');
    const before = perPair.pairs;
    expect(await rerank(front.url as string, 'gpu')).toEqual(direct);
    expect(perPair.pairs - before).toBe(sample.documents.length);
    const res = await postJson(`${front.url}/v1/gate`, {
      model: 'cascade',
      query: sample.query,
      passages: sample.documents,
    });
    expect(res.status, res.text).toBe(200);
    const body = res.body as { included: Array<{ tier: string }>; excluded: Array<{ tier: string }> };
    expect([...body.included, ...body.excluded].every((i) => i.tier === 'gpu')).toBe(true);
  });

  it('refuses a bad remote model, and an apiKeyEnv that is not set', async () => {
    // As a JSON file would give them: unchecked shapes.
    const input = (models: Record<string, unknown>) => ({ models }) as unknown as ServerConfigInput;
    await expect(start(input({ r: { type: 'remote', protocol: 'grpc', url: 'http://x' } }))).rejects.toThrow(
      /models\.r\.protocol/,
    );
    await expect(start(input({ r: { type: 'remote', protocol: 'tei' } }))).rejects.toThrow(/models\.r\.url/);
    await expect(
      start({ models: { r: { type: 'remote', protocol: 'tei', url: 'http://x', apiKeyEnv: 'RG_TEST_NO_SUCH_KEY' } } }),
    ).rejects.toThrow(/RG_TEST_NO_SUCH_KEY is not set/);
  });
});
