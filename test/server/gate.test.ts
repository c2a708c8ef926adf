/**
 * The engine's own protocol: full decisions per passage, per-request policy overrides and budget,
 * degraded pairs of a router model, and the NDJSON / SSE stream with rank-order early stopping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { gatedScorer, libraryScores, postJson, scifactRequests, slowScorer, start } from './helpers.js';

let server: RelevanceGateServer;
let url: string;
const ranked = gatedScorer('ranked');
ranked.release();
const [sample] = scifactRequests(1, 10);

interface GateItemJson {
  index: number;
  id: string;
  route: string;
  rule: string;
  reason: string | null;
  relevance: number | null;
  tier: string | null;
  degraded: string | null;
  cached: boolean;
}
interface GateJson {
  id: string;
  model: string;
  included: GateItemJson[];
  conflicting: GateItemJson[];
  excluded: GateItemJson[];
  stats: { retrieved: number; skippedByEarlyStop: number; unscored: number; threshold: number };
  degraded_pairs: number;
  deadline_expired_pairs: number;
  budget_ms: number;
}

beforeAll(async () => {
  server = await start({
    models: {
      ranked: { type: 'scorer', scorer: ranked, policy: { threshold: 0.5 } },
      slow: { type: 'scorer', scorer: slowScorer(400) },
      slowTier: { type: 'scorer', scorer: slowScorer(400, 'slow-tier'), quality: 5 },
      routed: { type: 'router', tiers: ['fast-path', 'slowTier'], routing: 'cascade', budgetMs: 60 },
      // A threshold option (early stop) puts the fast path in threshold mode: the recommended threshold.
      'fast-path-early': { type: 'fast-path', policy: { earlyStop: { window: 4, minRate: 0.25, chunk: 4 } } },
    },
  });
  url = server.url as string;
});

afterAll(async () => {
  await server?.close();
});

const all = (r: GateJson): GateItemJson[] => [...r.included, ...r.conflicting, ...r.excluded];

describe('POST /v1/gate', () => {
  it('returns every passage decision with the library relevance', async () => {
    const expected = await libraryScores(sample.query, sample.documents, 'relevance');
    const res = await postJson(`${url}/v1/gate`, { query: sample.query, passages: sample.documents });
    expect(res.status).toBe(200);
    const body = res.body as GateJson;
    expect(body.model).toBe('fast-path');
    const items = all(body);
    expect(items.map((i) => i.index).sort((a, b) => a - b)).toEqual(sample.documents.map((_, i) => i));
    for (const item of items) {
      expect(item.relevance).toBe(expected[item.index]);
      expect(item.tier).toBe('fast-path');
      expect(['included', 'excluded', 'conflicting']).toContain(item.route);
      expect(typeof item.rule).toBe('string');
    }
    expect(body.stats.retrieved).toBe(sample.documents.length);
  });

  it("decides by the fast path's default operating point, as the library does; a threshold override decides on it", async () => {
    const { createGate, loadFastPathScorer } = await import('../../src/index.js');
    const library = await createGate({ scorer: await loadFastPathScorer() }).filter(
      sample.query,
      sample.documents.map((text, i) => ({ id: String(i), text })),
    );
    const res = await postJson(`${url}/v1/gate`, { query: sample.query, passages: sample.documents });
    const body = res.body as GateJson & { stats: { rankingCut: number | null } };
    expect(body.included.map((i) => i.index)).toEqual(library.included.map((i) => Number(i.id)));
    expect(body.included.every((i) => i.rule === 'ranked-cut')).toBe(true);
    expect(body.stats.rankingCut).toBe(library.stats.rankingCut);
    expect(body.stats.rankingCut).not.toBeNull();
    const fixed = await postJson(`${url}/v1/gate`, {
      query: sample.query,
      passages: sample.documents,
      policy: { threshold: 0.27 },
    });
    const fixedBody = fixed.body as GateJson & { stats: { rankingCut: number | null } };
    expect(fixedBody.stats.threshold).toBe(0.27);
    expect(fixedBody.stats.rankingCut).toBeNull();
    expect(fixedBody.included.every((i) => i.rule === 'threshold' && (i.relevance as number) >= 0.27)).toBe(true);
  });

  it('keeps caller ids and titles, and applies a per-request policy override', async () => {
    const passages = sample.documents.slice(0, 4).map((text, i) => ({ id: `doc-${i}`, text, title: 'Title' }));
    const everything = (await postJson(`${url}/v1/gate`, { query: sample.query, passages, policy: { threshold: 0 } }))
      .body as GateJson;
    expect(everything.included.map((i) => i.id).sort()).toEqual(['doc-0', 'doc-1', 'doc-2', 'doc-3']);
    const nothing = (await postJson(`${url}/v1/gate`, { query: sample.query, passages, policy: { threshold: 1 } }))
      .body as GateJson;
    expect(nothing.included).toHaveLength(0);
    expect(nothing.stats.threshold).toBe(1);
  });

  it('refuses an invalid policy with 422 and an unknown option by name', async () => {
    const bad = await postJson(`${url}/v1/gate`, { query: 'q', passages: ['a'], policy: { threshold: 2 } });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatchObject({ error: { type: 'unprocessable', message: expect.stringContaining('threshold') } });
    const typo = await postJson(`${url}/v1/gate`, { query: 'q', passages: ['a'], policy: { treshold: 0.5 } });
    expect(typo.status).toBe(422);
    expect(JSON.stringify(typo.body)).toContain('treshold');
  });

  it('answers 429 with Retry-After at the budget when the deadline cut every pair', async () => {
    // The slow scorer answers long after the 40 ms budget: nothing was scored in time.
    const res = await postJson(`${url}/v1/gate`, {
      model: 'slow',
      query: 'q',
      passages: ['a', 'b', 'c'],
      budget_ms: 40,
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(res.body).toMatchObject({ error: { type: 'overloaded', message: expect.stringContaining('40 ms') } });
  });

  it('takes the budget from the x-budget-ms header too', async () => {
    const res = await postJson(`${url}/v1/gate`, { query: 'q', passages: ['a'] }, { 'x-budget-ms': '250' });
    expect(res.status).toBe(200);
    expect((res.body as GateJson).budget_ms).toBe(250);
    const bad = await postJson(`${url}/v1/gate`, { query: 'q', passages: ['a'] }, { 'x-budget-ms': 'soon' });
    expect(bad.status).toBe(400);
  });

  it('a router model reports degraded pairs (fast path answered for the slow tier)', async () => {
    const res = await postJson(`${url}/v1/gate`, { model: 'routed', query: sample.query, passages: sample.documents });
    expect(res.status).toBe(200);
    const body = res.body as GateJson;
    const items = all(body);
    expect(items.every((i) => i.reason === null && i.relevance !== null)).toBe(true);
    const degraded = items.filter((i) => i.degraded !== null);
    expect(degraded.length).toBeGreaterThan(0);
    expect(body.degraded_pairs).toBe(degraded.length);
    for (const item of degraded) {
      expect(['shed', 'deadline']).toContain(item.degraded);
      // Answered by the fast path, fresh or from the cache the first test filled.
      expect(['fast-path', 'cache']).toContain(item.tier);
    }
  });

  it('lists the served models', async () => {
    const res = await fetch(`${url}/v1/models`);
    const body = (await res.json()) as {
      default: string;
      models: Array<{ name: string; ready: boolean; type: string }>;
    };
    expect(body.default).toBe('fast-path');
    expect(body.models.map((m) => m.name)).toEqual([
      'fast-path',
      'ranked',
      'slow',
      'slowTier',
      'routed',
      'fast-path-early',
    ]);
    expect(body.models.find((m) => m.name === 'routed')?.type).toBe('router');
    // the fast path alone decides by its default operating point; the router (mixed tiers) by threshold
    const modes = Object.fromEntries(
      (body.models as Array<{ name: string; mode?: string; threshold?: number }>).map((m) => [m.name, m]),
    );
    expect(modes['fast-path']?.mode).toBe('balanced');
    expect(modes.routed?.mode).toBe('threshold');
    expect(modes.routed?.threshold).toBeCloseTo(0.271, 3);
    expect(modes.ranked).toMatchObject({ mode: 'threshold', threshold: 0.5 });
    expect(modes['fast-path-early']?.mode).toBe('threshold');
    expect(modes['fast-path-early']?.threshold).toBeCloseTo(0.271, 3);
    const early = await postJson(`${url}/v1/gate`, {
      model: 'fast-path-early',
      query: sample.query,
      passages: sample.documents,
    });
    expect((early.body as GateJson).stats.threshold).toBeCloseTo(0.271, 3);
  });
});

describe('POST /v1/gate/stream', () => {
  const earlyStop = { window: 2, minRate: 0.5, chunk: 2 };
  const passages = Array.from({ length: 10 }, (_, i) => `passage ${i}`);

  it('streams NDJSON items as they are decided, then the result; early stopping skips the tail', async () => {
    const res = await fetch(`${url}/v1/gate/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'ranked', query: 'q', passages, policy: { earlyStop } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; item?: GateItemJson } & Partial<GateJson>);
    const items = lines.filter((l) => l.type === 'item');
    const result = lines.at(-1) as { type: string } & GateJson;
    expect(result.type).toBe('result');
    // relevance = 1/(1+i), threshold 0.5: passages 0 and 1 pass, then a failing chunk stops the call.
    expect(items.map((l) => l.item?.index)).toEqual([0, 1]);
    expect(result.stats.skippedByEarlyStop).toBe(6);
    expect(result.included.map((i) => i.index)).toEqual([0, 1]);
  });

  it('speaks SSE when asked', async () => {
    const res = await fetch(`${url}/v1/gate/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ model: 'ranked', query: 'q', passages: passages.slice(0, 3) }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const events = text
      .trim()
      .split('\n\n')
      .map((frame) => {
        const [eventLine, dataLine] = frame.split('\n');
        return { event: eventLine.replace('event: ', ''), data: JSON.parse(dataLine.replace('data: ', '')) as unknown };
      });
    expect(events.map((e) => e.event)).toEqual(['item', 'item', 'result']);
  });

  it('refuses a bad stream request before streaming, in the gate format', async () => {
    const res = await postJson(`${url}/v1/gate/stream`, { query: 'q', passages: 'nope' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { type: 'invalid_request' }, request_id: expect.any(String) });
  });
});
