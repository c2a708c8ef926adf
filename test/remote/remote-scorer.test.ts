/**
 * The remote tier's contract against a real `relevance-gate serve` (in-process, on loopback), for
 * both protocols it speaks (Cohere /v2/rerank, TEI /rerank): scores in input order equal to the
 * server's own, the call's deadline and AbortSignal honoured (shown with a backend that never
 * answers), calls split to the cap and merged, a 422 from the backend's per-request limit learned
 * down to that limit, and every failure a typed error with its code.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AbortedError,
  createGate,
  createRemoteScorer,
  DeadlineExceededError,
  type Passage,
  type Scorer,
  RemoteBatchRefusedError,
  RemoteConfigError,
  RemoteEndpointError,
  RemoteResponseError,
} from '../../src/index.js';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { freePort } from '../cache/redis-server.js';
import { failingScorer, gatedScorer, libraryScores, scifactRequests, start } from '../server/helpers.js';

let server: RelevanceGateServer;
let small: RelevanceGateServer;
let url: string;
const blockers = { cohere: gatedScorer('blocker-cohere'), tei: gatedScorer('blocker-tei') };

/**
 * A model whose score is a function of the passage text alone. The shipped fast path computes
 * lexical features over the request's candidates, so its scores change when a call is split;
 * a cross-encoder's do not, and neither do this one's.
 */
const perPair: Scorer = {
  id: 'per-pair@v1',
  async score(_query, ps) {
    return ps.map((p) => {
      let h = 2166136261;
      for (let i = 0; i < p.text.length; i++) h = Math.imul(h ^ p.text.charCodeAt(i), 16777619);
      return { relevant: (h >>> 0) / 2 ** 32 };
    });
  },
};
const [sample] = scifactRequests(1, 20);
const passages: Passage[] = sample.documents.map((text, i) => ({ id: `d${i}`, text }));

beforeAll(async () => {
  server = await start({
    limits: { documentsPerRequest: 64, maxDocumentChars: 20_000 },
    models: {
      broken: { type: 'scorer', scorer: failingScorer() },
      'never-cohere': { type: 'scorer', scorer: blockers.cohere, budgetMs: 60_000, maxInFlightPairs: 10_000 },
      'never-tei': { type: 'scorer', scorer: blockers.tei, budgetMs: 60_000, maxInFlightPairs: 10_000 },
      'per-pair': { type: 'scorer', scorer: perPair },
    },
  });
  url = server.url as string;
  // A backend whose per-request limit (8) is below TEI's default batch (32).
  small = await start({
    limits: { documentsPerRequest: 8, maxDocumentChars: 20_000, maxQueryChars: 200 },
    models: { 'per-pair': { type: 'scorer', scorer: perPair } },
  });
});

afterAll(async () => {
  blockers.cohere.release();
  blockers.tei.release();
  await Promise.all([server?.close(), small?.close()]);
});

const relevance = (results: ReadonlyArray<unknown>): number[] =>
  results.map((r) => (r as { probabilities: { relevant: number } }).probabilities.relevant);

for (const protocol of ['cohere', 'tei'] as const) {
  describe(`protocol ${protocol} against relevance-gate serve`, () => {
    it('answers the relevance of every passage in input order, as the server scores it', async () => {
      const expected = await libraryScores(sample.query, sample.documents);
      const scorer = createRemoteScorer({ protocol, url });
      const results = await scorer.score(sample.query, passages);
      expect(relevance(results)).toEqual(expected);
      expect(results.every((r) => (r as { tier: string }).tier === 'remote')).toBe(true);
      expect(scorer.signals).toEqual(['relevant']);
      expect(scorer.stats()).toMatchObject({ requests: 1, calls: 1, failedCalls: 0 });
      expect(await scorer.score(sample.query, [])).toEqual([]);
    });

    const model = 'per-pair';
    const blocker = blockers[protocol];

    it('splits a call to maxBatch and merges the answers in order', async () => {
      const whole = relevance(await createRemoteScorer({ protocol, url, model }).score(sample.query, passages));
      expect(new Set(whole).size).toBe(passages.length);
      const scorer = createRemoteScorer({ protocol, url, model, maxBatch: 3 });
      expect(relevance(await scorer.score(sample.query, passages))).toEqual(whole);
      expect(scorer.stats()).toMatchObject({ requests: 7, maxBatch: 3, batchShrinks: 0 });
    });

    it("learns the backend's per-request limit from its 422 and keeps it for later calls", async () => {
      const whole = relevance(await createRemoteScorer({ protocol, url, model }).score(sample.query, passages));
      const scorer = createRemoteScorer({ protocol, url: small.url as string, model, maxBatch: 32 });
      expect(relevance(await scorer.score(sample.query, passages))).toEqual(whole);
      // 20 refused (limit 8 named in the message), then 8 + 8 + 4.
      expect(scorer.stats()).toMatchObject({ requests: 4, maxBatch: 8, batchShrinks: 1 });
      await scorer.score(sample.query, passages);
      expect(scorer.stats().requests).toBe(7);
    });

    it('a single passage refused (422) is a RemoteBatchRefusedError after splitting down to it', async () => {
      const scorer = createRemoteScorer({ protocol, url: small.url as string, model, maxBatch: 4 });
      const error = await scorer.score('x'.repeat(300), passages.slice(0, 4)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteBatchRefusedError);
      expect(error).toBeInstanceOf(RemoteEndpointError);
      expect(error).toMatchObject({ code: 'RG_ERR_REMOTE_BATCH_REFUSED', status: 422, protocol, retryable: false });
    });

    it('honours the deadline: a backend that never answers ends in DeadlineExceededError', async () => {
      const scorer = createRemoteScorer({ protocol, url, model: `never-${protocol}`, maxBatch: 5 });
      const calls = blocker.calls;
      const error = await scorer.score(sample.query, passages, { deadline: Date.now() + 150 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeadlineExceededError);
      expect(blocker.calls).toBeGreaterThan(calls); // the requests did reach the backend
      const late = await scorer.score(sample.query, passages, { deadline: Date.now() - 1 }).catch((e: unknown) => e);
      expect(late).toBeInstanceOf(DeadlineExceededError);
    });

    it('honours the AbortSignal, before and during the requests', async () => {
      const scorer = createRemoteScorer({ protocol, url, model: `never-${protocol}` });
      const controller = new AbortController();
      const calls = blocker.calls;
      const pending = scorer.score(sample.query, passages, { signal: controller.signal });
      for (let i = 0; i < 200 && blocker.calls === calls; i++) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      await expect(pending).rejects.toBeInstanceOf(AbortedError);
      await expect(scorer.score(sample.query, passages, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
        AbortedError,
      );
      expect(scorer.stats().failedCalls).toBe(1);
    });

    it('types the HTTP failures: backend errors, unknown models, unreachable backends', async () => {
      const broken = await createRemoteScorer({ protocol, url, model: 'broken' })
        .score(sample.query, passages.slice(0, 2))
        .catch((e: unknown) => e);
      expect(broken).toBeInstanceOf(RemoteEndpointError);
      expect((broken as RemoteEndpointError).status).toBeGreaterThanOrEqual(424);
      expect(broken).toMatchObject({ code: 'RG_ERR_REMOTE_ENDPOINT', retryable: true, protocol });
      const unknown = await createRemoteScorer({ protocol, url, model: 'no-such-model' })
        .score(sample.query, passages.slice(0, 2))
        .catch((e: unknown) => e);
      expect(unknown).toBeInstanceOf(RemoteEndpointError);
      expect((unknown as RemoteEndpointError).retryable).toBe(false);
      const down = await createRemoteScorer({ protocol, url: `http://127.0.0.1:${await freePort()}` })
        .score(sample.query, passages.slice(0, 2))
        .catch((e: unknown) => e);
      expect(down).toBeInstanceOf(RemoteEndpointError);
      expect(down).toMatchObject({ status: undefined, retryable: true, code: 'RG_ERR_REMOTE_ENDPOINT' });
    });

    it('serves a gate like a local tier', async () => {
      const gate = createGate({ scorer: createRemoteScorer({ protocol, url }), policy: { threshold: 0.5 } });
      const result = await gate.filter(sample.query, passages);
      expect(result.stats.scored).toBe(passages.length);
      expect(result.stats.unscored).toBe(0);
    });
  });
}

describe('answers that are not the protocol', () => {
  let fake: Server;
  let fakeUrl: string;
  let answer = '';
  beforeAll(async () => {
    fake = createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(answer);
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => fake.close(r));
  });

  const bad: Array<[string, 'cohere' | 'tei', string]> = [
    ['not JSON', 'cohere', 'oops'],
    ['no results', 'cohere', '{"id":"x"}'],
    ['a score above 1', 'cohere', '{"results":[{"index":0,"relevance_score":2},{"index":1,"relevance_score":0.1}]}'],
    ['a repeated index', 'tei', '[{"index":0,"score":0.5},{"index":0,"score":0.4}]'],
    ['an index out of range', 'tei', '[{"index":0,"score":0.5},{"index":2,"score":0.4}]'],
    ['too few results', 'tei', '[{"index":0,"score":0.5}]'],
  ];
  for (const [what, protocol, body] of bad)
    it(`${protocol}: ${what} is a RemoteResponseError`, async () => {
      answer = body;
      const error = await createRemoteScorer({ protocol, url: fakeUrl })
        .score('q', passages.slice(0, 2))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RemoteResponseError);
      expect(error).toMatchObject({ code: 'RG_ERR_REMOTE_RESPONSE', protocol });
    });

  it('puts out-of-order answers back at their index', async () => {
    answer = '[{"index":1,"score":0.9},{"index":0,"score":0.2}]';
    const results = await createRemoteScorer({ protocol: 'tei', url: fakeUrl }).score('q', passages.slice(0, 2));
    expect(relevance(results)).toEqual([0.2, 0.9]);
  });
});

describe('options', () => {
  it('refuses bad options with RemoteConfigError naming them', () => {
    const bad: unknown[] = [
      { protocol: 'grpc', url: 'http://x' },
      { protocol: 'tei', url: 'not a url' },
      { protocol: 'tei', url: 'ftp://x' },
      { protocol: 'tei', url: 'http://user:secret@x' },
      { protocol: 'tei', url: 'http://x', maxBatch: 0 },
      { protocol: 'tei', url: 'http://x', maxbatch: 8 },
      { protocol: 'kserve', url: 'http://x' },
    ];
    for (const options of bad) {
      let error: unknown;
      try {
        createRemoteScorer(options as Parameters<typeof createRemoteScorer>[0]);
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(options)).toBeInstanceOf(RemoteConfigError);
      expect((error as RemoteConfigError).code).toBe('RG_ERR_REMOTE_CONFIG');
      expect((error as Error).message).not.toContain('secret');
    }
  });

  it('derives the id from protocol, model and endpoint; appends the protocol path to a base URL', () => {
    expect(createRemoteScorer({ protocol: 'tei', url: 'http://h:8080' }).id).toBe('remote:tei:-@http://h:8080/rerank');
    expect(createRemoteScorer({ protocol: 'cohere', url: 'https://api.example/v2/rerank', model: 'm' }).id).toBe(
      'remote:cohere:m@https://api.example/v2/rerank',
    );
    expect(createRemoteScorer({ protocol: 'tei', url: 'http://h', id: 'reranker@v3' }).id).toBe('reranker@v3');
  });
});
