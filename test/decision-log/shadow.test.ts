/**
 * Shadow models: a configured model decides a sampled share of another's requests in the
 * background, within its in-flight bound; its decisions are logged beside the live ones, and
 * their disagreement counts equal a replay of the live requests from the shadow's signals.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDecisionLog, replayDecisions } from '../../src/decision-log/index.js';
import { resolveServerConfig } from '../../src/server/index.js';
import { postJson, scifactRequests, slowScorer, start } from '../server/helpers.js';
import { signalScorer, tempDir } from './helpers.js';

const work = scifactRequests(20, 10);

describe('shadow models', () => {
  it('log their decisions beside the live ones; disagreements equal a replay from the shadow signals', async () => {
    const t = tempDir();
    try {
      const dir = join(t.dir, 'log');
      const server = await start({
        decisionLog: { dir },
        models: {
          live: { type: 'scorer', scorer: signalScorer('live-model'), policy: { threshold: 0.5 } },
          candidate: {
            type: 'scorer',
            scorer: signalScorer('candidate-model', 0.15),
            policy: { threshold: 0.6, maxKept: 4 },
          },
        },
        shadows: { live: { model: 'candidate', sample: 1, maxInFlight: 64 } },
      });
      const ids: string[] = [];
      for (const r of work) {
        const res = await postJson(`${server.url}/v1/gate`, { model: 'live', query: r.query, passages: r.documents });
        expect(res.status).toBe(200);
        ids.push((res.body as { id: string }).id);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(
        /relevance_gate_shadow_requests_total\{model="live",shadow="candidate",outcome="decided"\} 20/,
      );
      await server.close();

      const { decisions, policies } = await readDecisionLog(dir);
      const shadows = decisions.filter((d) => d.shadowOf !== undefined);
      expect(shadows.map((d) => d.shadowOf).sort()).toEqual([...ids].sort());
      expect(shadows.every((d) => d.model === 'candidate' && d.endpoint === 'shadow')).toBe(true);

      const report = replayDecisions(decisions, policies);
      expect(report.requests).toBe(20); // the live requests only
      expect(report.moves).toEqual([]);
      const disagreement = report.shadow;
      expect(disagreement?.requests).toBe(20);
      expect(disagreement?.disagreements).toBeGreaterThan(0);

      const fromShadow = replayDecisions(decisions, policies, { signals: 'shadow' });
      expect(fromShadow.requests).toBe(20);
      const key = (m: { from: string; to: string; ruleBefore: string; ruleAfter: string; count: number }) =>
        `${m.from}>${m.to}:${m.ruleBefore}>${m.ruleAfter}=${m.count}`;
      expect(fromShadow.moves.map(key).sort()).toEqual((disagreement?.moves ?? []).map(key).sort());
      expect(fromShadow.moves.reduce((n, m) => n + m.count, 0)).toBe(disagreement?.disagreements);
    } finally {
      t.remove();
    }
  });

  it('skip what finds the shadow busy, and never slow the live answer by the shadow', async () => {
    const t = tempDir();
    try {
      const server = await start({
        decisionLog: { dir: join(t.dir, 'log') },
        models: {
          live: { type: 'scorer', scorer: signalScorer('live-model'), policy: { threshold: 0.5 } },
          slow: { type: 'scorer', scorer: slowScorer(1000, 'slow-shadow') },
        },
        shadows: { live: { model: 'slow', sample: 1, maxInFlight: 1 } },
      });
      const started = performance.now();
      const answers = await Promise.all(
        work
          .slice(0, 6)
          .map((r) => postJson(`${server.url}/v1/gate`, { model: 'live', query: r.query, passages: r.documents })),
      );
      const elapsed = performance.now() - started;
      expect(answers.every((a) => a.status === 200)).toBe(true);
      expect(elapsed).toBeLessThan(1000);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(
        /relevance_gate_shadow_requests_total\{model="live",shadow="slow",outcome="busy"\} [1-5]/,
      );
      await server.close();
    } finally {
      t.remove();
    }
  });

  it('are checked at start-up', () => {
    const models = { a: { type: 'scorer' as const, scorer: signalScorer() } };
    expect(() => resolveServerConfig({ models, shadows: { a: { model: 'a' } }, inspector: true })).toThrow(
      /cannot shadow itself/,
    );
    expect(() => resolveServerConfig({ models, shadows: { a: { model: 'nope' } }, inspector: true })).toThrow(
      /not a configured model/,
    );
    expect(() => resolveServerConfig({ models, shadows: { a: { model: 'fast-path' } } })).toThrow(/set decisionLog/);
    expect(resolveServerConfig({ models, shadows: { a: { model: 'fast-path' } }, inspector: true }).shadows.a).toEqual({
      model: 'fast-path',
      sample: 0.1,
      maxInFlight: 1,
      budgetMs: 1000,
    });
  });
});
