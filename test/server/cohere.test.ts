/**
 * Cohere protocol details with plain fetch: extra and null fields accepted (what newer clients
 * send), rank_fields, max_tokens_per_doc, max_chunks_per_doc scoring a long document by its best
 * chunk, and 400s for what Cohere refuses.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelevanceGateServer } from '../../src/server/index.js';
import { postJson, start } from './helpers.js';

let server: RelevanceGateServer;
let url: string;

beforeAll(async () => {
  server = await start({ limits: { maxDocumentChars: 400 } });
  url = server.url as string;
});

afterAll(async () => {
  await server?.close();
});

type Results = { results: Array<{ index: number; relevance_score: number; document?: Record<string, string> }> };

describe('POST /v1/rerank details', () => {
  it('accepts null optional fields and unknown fields', async () => {
    const res = await postJson(`${url}/v1/rerank`, {
      model: null,
      query: 'vitamin D',
      documents: ['vitamin D and bone health', 'bananas'],
      top_n: null,
      return_documents: null,
      max_chunks_per_doc: null,
      some_future_field: { a: 1 },
    });
    expect(res.status).toBe(200);
    expect((res.body as Results).results).toHaveLength(2);
  });

  it('rank_fields picks the fields ranked; returned documents keep their string fields', async () => {
    const documents = [
      { title: 'bananas', body: 'yellow fruit', id: 'x' },
      { title: 'vitamin D', body: 'vitamin D supports bone health', id: 'y' },
    ];
    const res = await postJson(`${url}/v1/rerank`, {
      query: 'vitamin D bone health',
      documents,
      rank_fields: ['title', 'body'],
      return_documents: true,
    });
    expect(res.status).toBe(200);
    const body = res.body as Results;
    expect(body.results[0].index).toBe(1);
    expect(body.results[0].document).toEqual(documents[1]);
  });

  it('an object document without text (and no rank_fields) is a 400', async () => {
    const res = await postJson(`${url}/v1/rerank`, { query: 'q', documents: [{ title: 'no text' }] });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: expect.stringContaining('documents[0]') });
  });

  it('empty documents and empty query are 400s', async () => {
    expect((await postJson(`${url}/v1/rerank`, { query: 'q', documents: [] })).status).toBe(400);
    expect((await postJson(`${url}/v1/rerank`, { query: ' ', documents: ['a'] })).status).toBe(400);
    expect((await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'], top_n: 0 })).status).toBe(400);
    expect((await postJson(`${url}/v1/rerank`, { query: 'q', documents: ['a'], top_n: '2' })).status).toBe(400);
  });

  it('max_chunks_per_doc scores a long document by its best chunk', async () => {
    // The relevant words sit past the 400-character limit: truncation loses them, chunking finds them.
    const long = `${'unrelated filler words about weather and sports '.repeat(12)} vitamin D deficiency raises cancer risk`;
    const other = 'a short note on gardening';
    const truncated = (await postJson(`${url}/v1/rerank`, { query: 'vitamin D cancer risk', documents: [long, other] }))
      .body as Results;
    const chunked = (
      await postJson(`${url}/v1/rerank`, {
        query: 'vitamin D cancer risk',
        documents: [long, other],
        max_chunks_per_doc: 4,
      })
    ).body as Results;
    const score = (r: Results, i: number) => r.results.find((x) => x.index === i)?.relevance_score as number;
    expect(chunked.results).toHaveLength(2);
    expect(score(chunked, 0)).toBeGreaterThan(score(truncated, 0));
    // The best chunk now leads the list. (The other document's score is calibrated given its list,
    // which changed, so it is not compared.)
    expect(chunked.results[0]?.index).toBe(0);
  });
});

describe('POST /v2/rerank details', () => {
  it('max_tokens_per_doc keeps the first tokens only', async () => {
    const doc = `bananas are yellow ${'fruit '.repeat(20)} vitamin D cancer risk`;
    const full = (
      await postJson(`${url}/v2/rerank`, { model: 'fast-path', query: 'vitamin D cancer risk', documents: [doc] })
    ).body as Results;
    const cut = (
      await postJson(`${url}/v2/rerank`, {
        model: 'fast-path',
        query: 'vitamin D cancer risk',
        documents: [doc],
        max_tokens_per_doc: 3,
        priority: 1,
      })
    ).body as Results;
    expect(cut.results[0].relevance_score).toBeLessThan(full.results[0].relevance_score);
  });

  it('refuses a missing query with 400 and the Cohere body', async () => {
    const res = await postJson(`${url}/v2/rerank`, { model: 'fast-path', documents: ['a'] });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ id: expect.any(String), message: expect.stringContaining('query') });
  });
});
