/**
 * text-embeddings-inference protocol with plain fetch: the bare-array answer (scores, raw logits,
 * texts), /info and /health, and every TEI error type with its status: Empty 400, Validation 422,
 * Tokenizer 422, Overloaded 429, Backend 424, Unhealthy 503.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RelevanceGateServer } from '../../src/server/index.js';
import type { Scorer } from '../../src/index.js';
import { failingScorer, gatedScorer, libraryScores, postJson, scifactRequests, slowScorer, start } from './helpers.js';

let server: RelevanceGateServer;
let url: string;
const blocker = gatedScorer('tei-blocker');
const [sample] = scifactRequests(1, 10);

beforeAll(async () => {
  server = await start({
    limits: { documentsPerRequest: 20, maxDocumentChars: 20_000 },
    models: {
      broken: { type: 'scorer', scorer: failingScorer() },
      busy: { type: 'scorer', scorer: blocker, maxInFlightPairs: 2 },
      slow: { type: 'scorer', scorer: slowScorer(300), budgetMs: 50 },
    },
  });
  url = server.url as string;
});

afterAll(async () => {
  blocker.release();
  await server?.close();
});

function expectTeiError(res: { status: number; body: unknown }, status: number, type: string): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: expect.any(String), error_type: type });
}

describe('POST /rerank', () => {
  it('answers a bare array sorted by score with the library scores', async () => {
    const expected = await libraryScores(sample.query, sample.documents);
    const res = await postJson(`${url}/rerank`, { query: sample.query, texts: sample.documents });
    expect(res.status).toBe(200);
    const body = res.body as Array<{ index: number; score: number; text?: string }>;
    expect(Array.isArray(body)).toBe(true);
    expect(body).toHaveLength(sample.documents.length);
    for (let i = 1; i < body.length; i++) expect(body[i - 1].score).toBeGreaterThanOrEqual(body[i].score);
    for (const r of body) {
      expect(r.score).toBe(expected[r.index]);
      expect(r.text).toBeUndefined();
    }
    expect(new Set(body.map((r) => r.index)).size).toBe(sample.documents.length);
  });

  it('raw_scores returns the logits (monotone with the probabilities), return_text the texts', async () => {
    const probs = (await postJson(`${url}/rerank`, { query: sample.query, texts: sample.documents })).body as Array<{
      index: number;
      score: number;
    }>;
    const raw = await postJson(`${url}/rerank`, {
      query: sample.query,
      texts: sample.documents,
      raw_scores: true,
      return_text: true,
    });
    const body = raw.body as Array<{ index: number; score: number; text: string }>;
    expect(body.map((r) => r.index)).toEqual(probs.map((r) => r.index));
    // The score is the calibrated probability of the ranking signal and raw its logit z: the
    // same order, so raw descends as the scores do.
    for (let i = 1; i < body.length; i++) expect(body[i]!.score).toBeLessThanOrEqual(body[i - 1]!.score);
    for (const r of body) {
      expect(r.text).toBe(sample.documents[r.index]);
      expect(probs.find((x) => x.index === r.index)?.score).toBeGreaterThan(0);
    }
  });

  it('truncates long texts only when asked (truncate: true), from the side asked', async () => {
    const long = `${'relevant words about vitamin D '.repeat(800)}`;
    expectTeiError(await postJson(`${url}/rerank`, { query: 'vitamin D', texts: [long] }), 422, 'Validation');
    const right = await postJson(`${url}/rerank`, { query: 'vitamin D', texts: [long], truncate: true });
    expect(right.status).toBe(200);
    const left = await postJson(`${url}/rerank`, {
      query: 'vitamin D',
      texts: [long],
      truncate: true,
      truncation_direction: 'Left',
    });
    expect(left.status).toBe(200);
  });

  it('Empty 400 for no texts', async () => {
    expectTeiError(await postJson(`${url}/rerank`, { query: 'q', texts: [] }), 400, 'Empty');
  });

  it('Validation 422 for wrong types, missing fields, too many texts, unknown model, bad JSON', async () => {
    expectTeiError(await postJson(`${url}/rerank`, { query: 'q', texts: [1, 2] }), 422, 'Validation');
    expectTeiError(await postJson(`${url}/rerank`, { texts: ['a'] }), 422, 'Validation');
    expectTeiError(await postJson(`${url}/rerank`, { query: 'q', texts: 'a' }), 422, 'Validation');
    expectTeiError(
      await postJson(`${url}/rerank`, { query: 'q', texts: Array.from({ length: 21 }, () => 'x') }),
      422,
      'Validation',
    );
    expectTeiError(await postJson(`${url}/rerank`, { query: 'q', texts: ['a'], model: 'nope' }), 422, 'Validation');
    expectTeiError(await postJson(`${url}/rerank`, '{"query": "q", "texts": ["a"'), 422, 'Validation');
    expectTeiError(await postJson(`${url}/rerank`, { query: '   ', texts: ['a'] }), 422, 'Validation');
  });

  it('Tokenizer 422 for text that is not valid Unicode (unpaired surrogate)', async () => {
    expectTeiError(
      await postJson(`${url}/rerank`, '{"query":"q","texts":["ok","bad \\ud800 text"]}'),
      422,
      'Tokenizer',
    );
  });

  it('Backend 424 when the scorer fails, without leaking its message', async () => {
    const res = await postJson(`${url}/rerank`, { model: 'broken', query: 'q', texts: ['a', 'b'] });
    expectTeiError(res, 424, 'Backend');
    expect(res.text).not.toContain('/secret/path');
    expect(res.text).not.toContain('exploded');
  });

  it('Overloaded 429 with Retry-After when the in-flight bound is full', async () => {
    const holding = postJson(
      `${url}/rerank`,
      { model: 'busy', query: 'q', texts: ['a', 'b'] },
      { 'x-budget-ms': '10000' },
    );
    for (let i = 0; i < 100 && blocker.calls === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const res = await postJson(`${url}/rerank`, { model: 'busy', query: 'q', texts: ['c'] });
    expectTeiError(res, 429, 'Overloaded');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    blocker.release();
    expect((await holding).status).toBe(200);
  });

  it('Overloaded 429 (not a late answer) when the budget expires before scoring ends', async () => {
    // The slow model answers only when released: the 429 came at the budget without it.
    const res = await postJson(`${url}/rerank`, { model: 'slow', query: 'q', texts: ['a', 'b'] });
    expectTeiError(res, 429, 'Overloaded');
  });
});

describe('GET /info and /health', () => {
  it('/info describes the default model in TEI shape', async () => {
    const res = await fetch(`${url}/info`);
    expect(res.status).toBe(200);
    const info = (await res.json()) as Record<string, unknown>;
    expect(info.model_id).toBe('fast-path');
    expect(info.model_type).toEqual({ reranker: expect.any(Object) });
    expect(info.max_client_batch_size).toBe(20);
    expect(typeof info.version).toBe('string');
  });

  it('/health is 200 with an empty body once ready', async () => {
    const res = await fetch(`${url}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });
});

describe('Unhealthy 503 while loading', () => {
  it('answers Unhealthy on /rerank and /health until every model has loaded', async () => {
    let finishLoading: (s: Scorer) => void = () => undefined;
    const loading = new Promise<Scorer>((resolve) => {
      finishLoading = resolve;
    });
    const s = await startServer(
      { host: '127.0.0.1', port: 0, logLevel: 'silent', models: { late: { type: 'scorer', scorer: () => loading } } },
      { waitReady: false, defaultMetrics: false },
    );
    try {
      const base = s.url as string;
      expectTeiError(await postJson(`${base}/rerank`, { query: 'q', texts: ['a'] }), 503, 'Unhealthy');
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ error: expect.any(String), error_type: 'Unhealthy' });
      expect((await fetch(`${base}/health/ready`)).status).toBe(503);
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
      finishLoading(slowScorer(0, 'late'));
      await s.ready;
      expect((await fetch(`${base}/health/ready`)).status).toBe(200);
      expect((await postJson(`${base}/rerank`, { query: 'q', texts: ['a'] })).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});
