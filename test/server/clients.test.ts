/**
 * The real clients against the real server on a loopback port: the Cohere SDK (v1 and v2),
 * LangChain's CohereRerank through compressDocuments, and the AI SDK's rerank() with
 * @ai-sdk/cohere. Scores must equal the library's for the same request, and the SDKs' own error
 * classes must come back on 404 / 422 / 429.
 */
import { createCohere } from '@ai-sdk/cohere';
import { Document } from '@langchain/core/documents';
import { CohereRerank } from '@langchain/cohere';
import { rerank } from 'ai';
import { CohereClient, CohereClientV2, type CohereError, Cohere } from 'cohere-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { gatedScorer, libraryScores, postJson, scifactRequests, start } from './helpers.js';

let server: RelevanceGateServer;
let url: string;
const blocker = gatedScorer('blocker');
const [sample] = scifactRequests(1, 12);
let expected: number[];

beforeAll(async () => {
  server = await start({
    apiKey: 'test-key',
    limits: { documentsPerRequest: 50 },
    models: { busy: { type: 'scorer', scorer: blocker, maxInFlightPairs: 4 } },
  });
  url = server.url as string;
  expected = await libraryScores(sample.query, sample.documents);
});

afterAll(async () => {
  blocker.release();
  await server?.close();
});

/** Indices sorted by the library's score, best first (ties by index). */
function expectedOrder(scores: readonly number[]): number[] {
  return scores
    .map((s, i) => [s, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .map(([, i]) => i);
}

describe('Cohere SDK v1 (CohereClient with baseUrl)', () => {
  const client = () => new CohereClient({ token: 'test-key', baseUrl: url });

  it('reranks with top_n and return_documents; scores equal the library', async () => {
    const response = await client().rerank({
      query: sample.query,
      documents: sample.documents,
      topN: 5,
      returnDocuments: true,
    });
    const order = expectedOrder(expected);
    expect(response.results.map((r) => r.index)).toEqual(order.slice(0, 5));
    for (const r of response.results) {
      expect(r.relevanceScore).toBe(expected[r.index]);
      expect(r.document?.text).toBe(sample.documents[r.index]);
    }
    expect(response.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.meta?.apiVersion?.version).toBe('1');
    expect(response.meta?.billedUnits?.searchUnits).toBe(1);
  });

  it('accepts {text} documents and names the fast-path model explicitly', async () => {
    const response = await client().rerank({
      model: 'fast-path',
      query: sample.query,
      documents: sample.documents.map((text) => ({ text })),
    });
    expect(response.results).toHaveLength(sample.documents.length);
    for (const r of response.results) expect(r.relevanceScore).toBe(expected[r.index]);
    expect(response.results[0].document).toBeUndefined();
  });

  it('unknown model → NotFoundError, too many documents → UnprocessableEntityError', async () => {
    const notFound = await client()
      .rerank({ model: 'rerank-v3.5', query: 'q', documents: ['a'] })
      .catch((e: unknown) => e);
    expect(notFound).toBeInstanceOf(Cohere.NotFoundError);
    expect((notFound as CohereError).statusCode).toBe(404);
    expect(JSON.stringify((notFound as CohereError).body)).toContain('rerank-v3.5');

    const tooMany = await client()
      .rerank({ query: 'q', documents: Array.from({ length: 51 }, (_, i) => `doc ${i}`) })
      .catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(Cohere.UnprocessableEntityError);
    expect((tooMany as CohereError).body).toMatchObject({ message: expect.stringContaining('too many documents') });
  });

  it('wrong API key → UnauthorizedError', async () => {
    const bad = new CohereClient({ token: 'nope', baseUrl: url });
    const error = await bad.rerank({ query: 'q', documents: ['a'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cohere.UnauthorizedError);
  });

  it('a full model → TooManyRequestsError with a Retry-After the SDK can use', async () => {
    // Fill the bound of 4 pairs with a request the scorer holds.
    const holding = postJson(
      `${url}/v1/rerank`,
      { model: 'busy', query: 'q', documents: ['a', 'b', 'c', 'd'] },
      { authorization: 'Bearer test-key', 'x-budget-ms': '10000' },
    );
    for (let i = 0; i < 100 && blocker.calls === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const error = await client()
      .rerank({ model: 'busy', query: 'q', documents: ['x'] }, { maxRetries: 0 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cohere.TooManyRequestsError);
    const raw = await postJson(
      `${url}/v1/rerank`,
      { model: 'busy', query: 'q', documents: ['x'] },
      { authorization: 'Bearer test-key' },
    );
    expect(raw.status).toBe(429);
    const retryAfter = Number(raw.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30).toBe(true);
    expect(raw.body).toMatchObject({ message: expect.stringContaining('overloaded') });
    blocker.release();
    const held = await holding;
    expect(held.status).toBe(200);
    expect((held.body as { results: Array<{ index: number }> }).results.map((r) => r.index)).toEqual([0, 1, 2, 3]);
  });
});

describe('Cohere SDK v2 (CohereClientV2)', () => {
  it('reranks with top_n; scores equal the library', async () => {
    const client = new CohereClientV2({ token: 'test-key', baseUrl: url });
    const response = await client.rerank({
      model: 'fast-path',
      query: sample.query,
      documents: sample.documents,
      topN: 3,
    });
    expect(response.results.map((r) => r.index)).toEqual(expectedOrder(expected).slice(0, 3));
    for (const r of response.results) expect(r.relevanceScore).toBe(expected[r.index]);
    expect(response.meta?.apiVersion?.version).toBe('2');
  });

  it('unknown model → NotFoundError', async () => {
    const client = new CohereClientV2({ token: 'test-key', baseUrl: url });
    const error = await client.rerank({ model: 'nope', query: 'q', documents: ['a'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cohere.NotFoundError);
  });
});

describe('LangChain CohereRerank', () => {
  it('compressDocuments returns the top documents with the library scores', async () => {
    const client = new CohereClient({ token: 'test-key', baseUrl: url });
    // @langchain/cohere pins its own cohere-ai copy; the 8.1.0 client is the same API at runtime.
    type LangChainClient = NonNullable<ConstructorParameters<typeof CohereRerank>[0]>['client'];
    const reranker = new CohereRerank({ client: client as unknown as LangChainClient, model: 'fast-path', topN: 4 });
    const docs = sample.documents.map((pageContent, i) => new Document({ pageContent, metadata: { i } }));
    const compressed = await reranker.compressDocuments(docs, sample.query);
    const order = expectedOrder(expected).slice(0, 4);
    expect(compressed.map((d) => d.metadata.i)).toEqual(order);
    for (const d of compressed) expect(d.metadata.relevanceScore).toBe(expected[d.metadata.i as number]);
  });
});

describe('Vercel AI SDK rerank() with @ai-sdk/cohere', () => {
  it('ranks through /v2/rerank with the library scores', async () => {
    const cohere = createCohere({ baseURL: `${url}/v2`, apiKey: 'test-key' });
    const { ranking } = await rerank({
      model: cohere.reranking('fast-path'),
      documents: sample.documents,
      query: sample.query,
      topN: 5,
      maxRetries: 0,
    });
    expect(ranking.map((r) => r.originalIndex)).toEqual(expectedOrder(expected).slice(0, 5));
    for (const r of ranking) {
      expect(r.score).toBe(expected[r.originalIndex]);
      expect(r.document).toBe(sample.documents[r.originalIndex]);
    }
  });

  it('surfaces the server message of an error response', async () => {
    const cohere = createCohere({ baseURL: `${url}/v2`, apiKey: 'test-key' });
    const error = await rerank({
      model: cohere.reranking('missing-model'),
      documents: ['a', 'b'],
      query: 'q',
      maxRetries: 0,
    }).catch((e: unknown) => e);
    expect(String((error as Error).message)).toContain('missing-model');
  });
});
