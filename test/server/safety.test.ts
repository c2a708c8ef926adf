/**
 * Limits and safety: body limit (413), documents per request, API key (Bearer, health and metrics
 * open), request id on every response, error bodies without stack traces or paths, not-found in
 * the protocol's format, JSON without a JSON content type, and the Prometheus metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { failingScorer, postJson, start } from './helpers.js';

let server: RelevanceGateServer;
let url: string;
const auth = { authorization: 'Bearer s3cret' };

beforeAll(async () => {
  server = await start({
    apiKey: 's3cret',
    limits: { bodyBytes: 8192, documentsPerRequest: 5 },
    models: { broken: { type: 'scorer', scorer: failingScorer() } },
  });
  url = server.url as string;
});

afterAll(async () => {
  await server?.close();
});

describe('API key', () => {
  it('requires the Bearer token on the protocol routes, in each protocol format', async () => {
    const cohere = await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'] });
    expect(cohere.status).toBe(401);
    expect(cohere.body).toEqual({ id: expect.any(String), message: 'invalid api token' });
    const tei = await postJson(`${url}/rerank`, { query: 'q', texts: ['a'] }, { authorization: 'Bearer wrong' });
    expect(tei.status).toBe(401);
    expect(tei.body).toEqual({ error: 'invalid api token', error_type: 'Validation' });
    const gate = await postJson(`${url}/v1/gate`, { query: 'q', passages: ['a'] }, { authorization: 's3cret' });
    expect(gate.status).toBe(401);
    expect(gate.body).toMatchObject({ error: { type: 'unauthorized' } });
  });

  it('accepts the token (scheme case-insensitive) and leaves health and metrics open', async () => {
    expect((await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'] }, auth)).status).toBe(200);
    expect(
      (await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'] }, { authorization: 'bearer s3cret' })).status,
    ).toBe(200);
    for (const path of ['/health', '/health/live', '/health/ready', '/metrics'])
      expect((await fetch(`${url}${path}`)).status).toBe(200);
  });
});

describe('limits', () => {
  it('413 over the body limit, in each protocol format', async () => {
    const big = 'x'.repeat(10_000);
    const cohere = await postJson(`${url}/v1/rerank`, { query: 'q', documents: [big] }, auth);
    expect(cohere.status).toBe(413);
    expect(cohere.body).toMatchObject({ message: expect.stringContaining('8192') });
    const tei = await postJson(`${url}/rerank`, { query: 'q', texts: [big] }, auth);
    expect(tei.status).toBe(413);
    expect(tei.body).toMatchObject({ error_type: 'Validation' });
    const gate = await postJson(`${url}/v1/gate`, { query: 'q', passages: [big] }, auth);
    expect(gate.status).toBe(413);
    expect(gate.body).toMatchObject({ error: { type: 'payload_too_large' } });
  });

  it('documents per request: 422 Cohere, 422 TEI Validation, 422 gate', async () => {
    const six = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect((await postJson(`${url}/v1/rerank`, { query: 'q', documents: six }, auth)).status).toBe(422);
    expect((await postJson(`${url}/v2/rerank`, { model: 'fast-path', query: 'q', documents: six }, auth)).status).toBe(
      422,
    );
    expect((await postJson(`${url}/rerank`, { query: 'q', texts: six }, auth)).body).toMatchObject({
      error_type: 'Validation',
    });
    expect((await postJson(`${url}/v1/gate`, { query: 'q', passages: six }, auth)).status).toBe(422);
  });

  it('parses JSON sent without a JSON content type (curl -d)', async () => {
    const res = await fetch(`${url}/v1/rerank`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({ query: 'bm25', documents: ['bm25 ranking', 'bananas'] }),
    });
    expect(res.status).toBe(200);
  });
});

describe('request ids and error bodies', () => {
  it('every response carries x-request-id; a sane incoming one is kept, others replaced', async () => {
    const kept = await postJson(
      `${url}/v1/rerank`,
      { query: 'q', documents: ['a'] },
      { ...auth, 'x-request-id': 'abc-123' },
    );
    expect(kept.headers.get('x-request-id')).toBe('abc-123');
    expect((kept.body as { id: string }).id).toBe('abc-123');
    const replaced = await postJson(
      `${url}/v1/rerank`,
      { query: 'q', documents: ['a'] },
      { ...auth, 'x-request-id': 'a b<c>' },
    );
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    for (const res of [
      await postJson(`${url}/v1/rerank`, '{bad json', auth),
      await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'] }),
      await fetch(`${url}/nowhere`),
      await fetch(`${url}/health/ready`),
      await fetch(`${url}/metrics`),
    ])
      expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('malformed JSON is a 400 that does not echo the body', async () => {
    const res = await postJson(`${url}/v1/rerank`, '{"query": "SECRET-PASSAGE-TEXT", "documents": [', auth);
    expect(res.status).toBe(400);
    expect(res.text).not.toContain('SECRET-PASSAGE-TEXT');
    expect(res.body).toEqual({ id: expect.any(String), message: 'request body is not valid JSON' });
  });

  it('refuses prototype-poisoning keys, also when spelt with unicode escapes', async () => {
    for (const body of [
      '{"query":"q","documents":["a"],"__proto__":{"x":1}}',
      '{"query":"q","documents":["a"],"\\u005f_proto__":{"x":1}}',
      '{"query":"q","documents":["a"],"constructor":{"prototype":{"x":1}}}',
    ]) {
      const res = await postJson(`${url}/v1/rerank`, body, auth);
      expect(res.status, body).toBe(400);
      expect(res.body).toEqual({ id: expect.any(String), message: 'request body is not valid JSON' });
    }
    // The word inside a document is fine.
    const ok = await postJson(
      `${url}/v1/rerank`,
      { query: 'q', documents: ['the constructor of __proto__ chains'] },
      auth,
    );
    expect(ok.status).toBe(200);
  });

  it('a scorer failure is a 500 with a generic message: no stack, no path, no cause', async () => {
    const res = await postJson(`${url}/v1/rerank`, { model: 'broken', query: 'q', documents: ['a'] }, auth);
    expect(res.status).toBe(500);
    expect(res.text).not.toMatch(/\/secret|exploded|at .*\.(ts|js):\d+/);
    expect(res.body).toEqual({ id: expect.any(String), message: expect.stringContaining('scoring failed') });
  });

  it('unknown routes answer 404 in the protocol their URL belongs to', async () => {
    const cohere = await postJson(`${url}/v2/embed`, {}, auth);
    expect(cohere.status).toBe(404);
    expect(cohere.body).toEqual({ id: expect.any(String), message: expect.stringContaining('/v2/embed') });
    const gate = await fetch(`${url}/v1/other`, { headers: auth });
    expect(gate.status).toBe(404);
    expect(await gate.json()).toMatchObject({ error: { type: 'not_found' } });
    const tei = await fetch(`${url}/embed`, { method: 'POST', headers: auth });
    expect(await tei.json()).toMatchObject({ error_type: 'Validation' });
  });
});

describe('GET /metrics', () => {
  it('exports the named metrics in Prometheus text format', async () => {
    await postJson(`${url}/v1/rerank`, { query: 'metrics query', documents: ['a doc', 'b doc'] }, auth);
    await postJson(`${url}/v1/rerank`, { query: 'metrics query', documents: ['a doc', 'b doc'] }, auth);
    await postJson(`${url}/v1/rerank`, { model: 'nope', query: 'q', documents: ['a'] }, auth);
    const res = await fetch(`${url}/metrics`);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toMatch(
      /relevance_gate_http_request_duration_seconds_bucket\{le="0\.005",endpoint="\/v1\/rerank",method="POST",status="200"\} \d+/,
    );
    expect(text).toMatch(/relevance_gate_pairs_total\{model="fast-path",tier="fast-path"\} \d+/);
    expect(text).toMatch(/relevance_gate_pairs_total\{model="fast-path",tier="cache"\} [1-9]/);
    expect(text).toMatch(/relevance_gate_cache_hits_total\{model="fast-path"\} [1-9]/);
    expect(text).toMatch(/relevance_gate_cache_misses_total\{model="fast-path"\} [1-9]/);
    expect(text).toMatch(/relevance_gate_failures_total\{endpoint="\/v1\/rerank",reason="model_not_found"\} 1/);
    expect(text).toMatch(/relevance_gate_in_flight_pairs\{model="fast-path"\} 0/);
    expect(text).toMatch(/relevance_gate_model_ready\{model="fast-path"\} 1/);
    expect(text).toContain('# TYPE relevance_gate_event_loop_lag_seconds gauge');
    expect(text).toContain('# TYPE relevance_gate_shed_requests_total counter');
    expect(text).toContain('# TYPE relevance_gate_degraded_pairs_total counter');
    expect(text).toContain('# TYPE relevance_gate_deadline_expired_pairs_total counter');
  });
});
