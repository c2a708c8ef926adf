/**
 * The rerank protocols (Cohere v1/v2, the Jina-compatible /v1/rerank, TEI) report the order the gate
 * returns: by the `ranking` signal with it as the score when every document has one, else by relevance.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Passage, Scorer, ScorerPairResult } from '../../src/index.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { postJson, start } from './helpers.js';

// relevance order 0 > 1 > 2 > 3, ranking order 3 > 1 > 0 > 2
const REL = [0.9, 0.8, 0.7, 0.6];
const RANK = [0.4, 0.6, 0.1, 0.9];

function scorer(id: string, withRanking: boolean): Scorer {
  return {
    id,
    signals: withRanking ? ['relevant', 'ranking'] : ['relevant'],
    async score(_q: string, passages: readonly Passage[]) {
      return passages.map((p): ScorerPairResult => {
        const i = Number(p.id);
        return withRanking
          ? {
              probabilities: { relevant: REL[i]!, ranking: RANK[i]! },
              raw: { relevant: i, ranking: Math.log(RANK[i]! / (1 - RANK[i]!)) },
            }
          : { probabilities: { relevant: REL[i]! }, raw: { relevant: i } };
      });
    },
  };
}

let server: RelevanceGateServer;
let url: string;
beforeAll(async () => {
  server = await start({
    models: {
      blend: { type: 'scorer', scorer: scorer('blend', true) },
      plain: { type: 'scorer', scorer: scorer('plain', false) },
    },
  });
  url = server.url as string;
});
afterAll(async () => {
  await server?.close();
});

const documents = ['d0', 'd1', 'd2', 'd3'];

describe('rerank order and score follow the ranking signal', () => {
  it('Cohere v1, v2 and TEI: ordered by ranking, scored with it; TEI raw_scores gives its logit', async () => {
    for (const path of ['/v1/rerank', '/v2/rerank']) {
      const res = await postJson(`${url}${path}`, { model: 'blend', query: 'q', documents });
      expect(res.status).toBe(200);
      const results = (res.body as { results: Array<{ index: number; relevance_score: number }> }).results;
      expect(results.map((r) => r.index)).toEqual([3, 1, 0, 2]);
      expect(results.map((r) => r.relevance_score)).toEqual([0.9, 0.6, 0.4, 0.1]);
    }
    const tei = await postJson(`${url}/rerank`, { model: 'blend', query: 'q', texts: documents });
    expect((tei.body as Array<{ index: number; score: number }>).map((r) => [r.index, r.score])).toEqual([
      [3, 0.9],
      [1, 0.6],
      [0, 0.4],
      [2, 0.1],
    ]);
    const raw = await postJson(`${url}/rerank`, { model: 'blend', query: 'q', texts: documents, raw_scores: true });
    for (const r of raw.body as Array<{ index: number; score: number }>)
      expect(r.score).toBeCloseTo(Math.log(RANK[r.index]! / (1 - RANK[r.index]!)), 12);
  });

  it('a scorer without ranking: ordered and scored by relevance, as before', async () => {
    const res = await postJson(`${url}/v1/rerank`, { model: 'plain', query: 'q', documents });
    const results = (res.body as { results: Array<{ index: number; relevance_score: number }> }).results;
    expect(results.map((r) => r.index)).toEqual([0, 1, 2, 3]);
    expect(results.map((r) => r.relevance_score)).toEqual(REL);
  });

  it('/v1/gate keeps relevance as the decision value and reports ranking among the signals, in the returned order', async () => {
    const res = await postJson(`${url}/v1/gate`, {
      model: 'blend',
      query: 'q',
      passages: documents,
      policy: { threshold: 0.65 },
    });
    expect(res.status).toBe(200);
    const body = res.body as {
      included: Array<{ index: number; relevance: number; signals: Record<string, number> }>;
    };
    expect(body.included.map((i) => i.index)).toEqual([1, 0, 2]);
    expect(body.included.map((i) => i.relevance)).toEqual([0.8, 0.9, 0.7]);
    expect(body.included.map((i) => i.signals.ranking)).toEqual([0.6, 0.4, 0.1]);
  });
});
