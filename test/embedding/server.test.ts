/**
 * `serve` with a model of type 'embedding' (the tiny bi-encoder of tiny-bi-encoder.ts): Cohere and
 * TEI rerank by the tier's scores, the model listed, the router over fast path → embedding, and the
 * config's validation of the new model kind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmbeddingScorer, type EmbeddingScorer } from '../../src/index.js';
import { type RelevanceGateServer, resolveServerConfig, ServerConfigError } from '../../src/server/index.js';
import { postJson, start } from '../server/helpers.js';
import { writeTinyBiEncoderDir } from './tiny-bi-encoder.js';

let root: string;
let dir: string;
let server: RelevanceGateServer;
let reference: EmbeddingScorer;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'rg-emb-srv-'));
  dir = writeTinyBiEncoderDir(join(root, 'tiny'));
  server = await start({
    models: {
      embedding: { type: 'embedding', dir, workers: 1 },
      cascade: { type: 'router', tiers: ['fast-path', 'embedding'], routing: 'cascade' },
    },
    cache: { enabled: false },
  });
  reference = await createEmbeddingScorer({ modelDir: dir, workers: 1 });
});

afterAll(async () => {
  await server?.close();
  await reference?.close();
  rmSync(root, { recursive: true, force: true });
});

type Results = { results: Array<{ index: number; relevance_score: number }> };

describe('serve: an embedding model', () => {
  const query = 'wings at supersonic speed';
  const documents = ['supersonic wings and shock waves at speed', 'bread flour water salt', 'wings'];

  it('reranks by the tier: Cohere /v1/rerank and TEI /rerank', async () => {
    const expected = await reference.score(
      query,
      documents.map((text, i) => ({ id: String(i), text })),
    );
    const res = await postJson(`${server.url}/v1/rerank`, { model: 'embedding', query, documents });
    expect(res.status).toBe(200);
    const results = (res.body as Results).results;
    expect(results).toHaveLength(3);
    const order = [...expected.keys()].sort((a, b) => expected[b].raw!.similarity - expected[a].raw!.similarity);
    expect(results.map((r) => r.index)).toEqual(order);
    const tei = await postJson(`${server.url}/rerank`, { model: 'embedding', query, texts: documents });
    expect(tei.status).toBe(200);
    expect((tei.body as Array<{ index: number }>).map((r) => r.index)).toEqual(order);
  });

  it('is listed with its type, and serves in a router with the fast path', async () => {
    const models = (await (await fetch(`${server.url}/v1/models`)).json()) as {
      models: Array<{ name: string; type?: string; ready: boolean }>;
    };
    expect(models.models.find((m) => m.name === 'embedding')).toMatchObject({ type: 'embedding', ready: true });
    const res = await postJson(`${server.url}/v1/gate`, {
      model: 'cascade',
      query,
      passages: documents.map((text, i) => ({ id: String(i), text })),
      budget_ms: 5000,
    });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.body)).toContain('embedding');
  });
});

describe('server config: type embedding', () => {
  it('accepts its options and refuses unknown keys and bad values', () => {
    const config = resolveServerConfig({
      models: { e: { type: 'embedding', dir: '/tmp/x', variant: 'int8', queryPrefix: 'query: ', cacheMb: 16 } },
    });
    expect(config.models.e).toMatchObject({
      type: 'embedding',
      dir: '/tmp/x',
      variant: 'int8',
      queryPrefix: 'query: ',
    });
    expect(() =>
      resolveServerConfig({ models: { e: { type: 'embedding', dir: '/tmp/x', truncation: 'x' } as never } }),
    ).toThrow(ServerConfigError);
    expect(() => resolveServerConfig({ models: { e: { type: 'embedding', dir: '/tmp/x', workers: 0 } } })).toThrow(
      ServerConfigError,
    );
    expect(() => resolveServerConfig({ models: { e: { type: 'embedding' } as never } })).toThrow(ServerConfigError);
  });
});
