import { describe, expect, it } from 'vitest';
import { createGate, type Scorer } from '../../src/index.js';
import { sleep } from './helpers.js';

describe('request isolation', () => {
  it('concurrent calls on one gate never mix passages, signals or stats', async () => {
    // Relevance is a function of (query, passage id), answered after a random delay.
    const relevance = (q: string, id: string) => ((q.length * 31 + Number(id.split('-')[1]) * 17) % 100) / 100;
    const scorer: Scorer = {
      id: 'iso',
      score: async (q, ps) => {
        await sleep(Math.floor(Math.random() * 5));
        return ps.map((p) => ({ relevant: relevance(q, p.id) }));
      },
    };
    const gate = createGate({ scorer, policy: { threshold: 0.4, earlyStop: { window: 50, minRate: 0, chunk: 3 } } });
    const requests = Array.from({ length: 40 }, (_, r) => {
      const query = 'q'.repeat(r + 1);
      const ps = Array.from({ length: 5 + (r % 7) }, (_, i) => ({ id: `${r}-${i}`, text: `t${i}` }));
      return { query, ps };
    });
    const results = await Promise.all(requests.map(({ query, ps }) => gate.filter(query, ps, { budgetMs: 5_000 })));
    results.forEach((res, r) => {
      const { query, ps } = requests[r];
      expect(res.query).toBe(query);
      const all = [...res.included, ...res.excluded];
      expect(all).toHaveLength(ps.length);
      for (const item of all) {
        expect(item.passage).toBe(ps[item.rank]);
        expect(item.id).toBe(ps[item.rank].id);
        expect(item.relevance).toBe(relevance(query, item.id));
        expect(item.route).toBe(relevance(query, item.id) >= 0.4 ? 'included' : 'excluded');
      }
      expect(res.stats.retrieved).toBe(ps.length);
    });
  });
});
