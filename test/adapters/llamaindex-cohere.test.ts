/**
 * LlamaIndex's own Cohere reranker (@llamaindex/cohere's CohereRerank, a node postprocessor) pointed
 * at `relevance-gate serve` on a loopback port by its baseUrl: the scores must equal the library's
 * for the documents it sends, and the server's refusals must come back as its Cohere client's own
 * error classes. A full model (429) needs a scorer that holds its pairs, so that case runs against
 * the same server started in-process.
 */
import { createRequire } from 'node:module';
import { CohereRerank } from '@llamaindex/cohere';
import { MetadataMode, type NodeWithScore, TextNode } from '@llamaindex/core/schema';
import type * as CohereSdk from 'cohere-ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelevanceGateServer } from '../../src/server/index.js';
import {
  gatedScorer,
  libraryScores,
  postJson,
  type ServeCliProcess,
  scifactRequests,
  spawnServeCli,
  start,
  TEST_ADMISSION_ARGS,
  waitForServing,
} from '../server/helpers.js';

// @llamaindex/cohere pins its own cohere-ai (7.14.0): its error classes are that copy's, not the
// project's top-level cohere-ai.
const { Cohere } = createRequire(import.meta.resolve('@llamaindex/cohere'))('cohere-ai') as typeof CohereSdk;

let cli: ServeCliProcess;
let url: string;
const [sample] = scifactRequests(1, 12);
let nodes: NodeWithScore[];
let expected: number[];

beforeAll(async () => {
  cli = spawnServeCli(['--api-key', 'test-key', '--max-documents', '50', ...TEST_ADMISSION_ARGS]);
  const served = await waitForServing(cli, 600);
  if (served === undefined) throw new Error(`serve did not start: ${cli.stderr()}`);
  url = served;
  nodes = sample.documents.map((text, i) => ({
    node: new TextNode({ id_: `n${i}`, text, metadata: { i } }),
    score: 1 / (1 + i),
  }));
  // What CohereRerank sends: each node's content with its metadata (MetadataMode.ALL).
  expected = await libraryScores(
    sample.query,
    nodes.map((n) => n.node.getContent(MetadataMode.ALL)),
  );
}, 90_000);

afterAll(async () => {
  cli?.child.kill('SIGTERM');
  await cli?.exited;
});

/** Indices sorted by the library's score, best first (ties by index). */
function expectedOrder(scores: readonly number[]): number[] {
  return scores
    .map((s, i) => [s, i] as const)
    .sort((a, b) => b[0] - a[0] || a[1] - b[1])
    .map(([, i]) => i);
}

describe('@llamaindex/cohere CohereRerank against relevance-gate serve', () => {
  it('returns the top nodes with the library’s scores, the caller’s node objects untouched', async () => {
    const reranker = new CohereRerank({ apiKey: 'test-key', baseUrl: url, model: 'fast-path', topN: 5 });
    const reranked = await reranker.postprocessNodes(nodes, sample.query);
    expect(reranked.map((n) => n.node.metadata.i)).toEqual(expectedOrder(expected).slice(0, 5));
    for (const n of reranked) {
      expect(n.score).toBe(expected[n.node.metadata.i as number]);
      expect(n.node).toBe(nodes[n.node.metadata.i as number].node);
    }
  });

  it('unknown model (its default rerank-english-v2.0) → NotFoundError', async () => {
    const reranker = new CohereRerank({ apiKey: 'test-key', baseUrl: url });
    const error = await reranker.postprocessNodes(nodes.slice(0, 2), sample.query).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cohere.NotFoundError);
    expect((error as CohereSdk.CohereError).statusCode).toBe(404);
    expect(JSON.stringify((error as CohereSdk.CohereError).body)).toContain('rerank-english-v2.0');
  });

  it('wrong API key → UnauthorizedError; too many documents → UnprocessableEntityError', async () => {
    const unauthorized = await new CohereRerank({ apiKey: 'nope', baseUrl: url, model: 'fast-path' })
      .postprocessNodes(nodes.slice(0, 2), sample.query)
      .catch((e: unknown) => e);
    expect(unauthorized).toBeInstanceOf(Cohere.UnauthorizedError);

    const many = Array.from({ length: 51 }, (_, i) => ({ node: new TextNode({ text: `doc ${i}` }) }));
    const tooMany = await new CohereRerank({ apiKey: 'test-key', baseUrl: url, model: 'fast-path' })
      .postprocessNodes(many, 'q')
      .catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(Cohere.UnprocessableEntityError);
    expect((tooMany as CohereSdk.CohereError).body).toMatchObject({
      message: expect.stringContaining('too many documents'),
    });
  });
});

describe('@llamaindex/cohere CohereRerank against a full model', () => {
  const blocker = gatedScorer('blocker');
  let server: RelevanceGateServer;

  beforeAll(async () => {
    server = await start({
      apiKey: 'test-key',
      models: { busy: { type: 'scorer', scorer: blocker, maxInFlightPairs: 4 } },
    });
  });

  afterAll(async () => {
    blocker.release();
    await server?.close();
  });

  it('429 → TooManyRequestsError once its client’s retries are spent', async () => {
    const base = server.url as string;
    // Fill the bound of 4 pairs with a request the scorer holds.
    const holding = postJson(
      `${base}/v1/rerank`,
      { model: 'busy', query: 'q', documents: ['a', 'b', 'c', 'd'] },
      { authorization: 'Bearer test-key', 'x-budget-ms': '10000' },
    );
    for (let i = 0; i < 100 && blocker.calls === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const error = await new CohereRerank({ apiKey: 'test-key', baseUrl: base, model: 'busy' })
      .postprocessNodes([{ node: new TextNode({ text: 'x' }) }], 'q')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Cohere.TooManyRequestsError);
    blocker.release();
    expect((await holding).status).toBe(200);
  });
});
