import { createProviderRegistry, rerank } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { createRelevanceGate, NoSuchGateModelError, rerankingModel } from '../../src/adapters/ai-sdk/index.js';
import { docPassage } from '../../src/tooling/eval/index.js';
import {
  createGate,
  DEFAULT_ROUTING_RULES,
  type FastPathScorer,
  type Gate,
  InvalidArgumentError,
  type Passage,
  type SignalProbabilities,
} from '../../src/index.js';
import { tableScorer } from '../gate/helpers.js';
import { fastPathScorer, KeywordRetriever, type MedSubset, medSubset, slowScorer } from './fixtures.js';

let med: MedSubset;
let scorer: FastPathScorer;
let gate: Gate;
/** The BM25 top 20 of each test query, as { id, title, text } objects. */
let candidates: Array<{ query: string; docs: Array<{ id: string; title: string; text: string }> }>;

beforeAll(async () => {
  med = medSubset();
  scorer = await fastPathScorer();
  gate = createGate({ scorer, policy: { threshold: scorer.recommendedThreshold ?? 0.5 } });
  const retriever = new KeywordRetriever(med.docs, 20);
  candidates = [];
  for (const q of med.queries) {
    const hits = await retriever.invoke(q.text);
    candidates.push({
      query: q.text,
      docs: hits.map((h) => {
        const doc = med.docs.find((d) => d.id === h.id)!;
        return { id: doc.id, title: doc.title, text: doc.text };
      }),
    });
  }
});

const BASE: SignalProbabilities = { injection: 0.01, contradicts_premise: 0.02, relevant: 0.9, evidence: 0.9 };

describe('rerank() from ai 7 with the fast-path gate (MED documents)', () => {
  it('text documents: ranking and rerankedDocuments are the gate’s own order and scores', async () => {
    let sawExclusion = false;
    for (const { query, docs } of candidates) {
      const texts = docs.map((d) => docPassage(d));
      const expected = await gate.filter(
        query,
        texts.map((text, i): Passage => ({ id: String(i), text })),
      );
      const result = await rerank({ model: rerankingModel(gate), query, documents: texts });
      expect(result.ranking.map((r) => r.originalIndex)).toEqual(expected.included.map((i) => i.rank));
      // the score is what the gate's order is by: the shipped model's ranking signal
      expect(result.ranking.map((r) => r.score)).toEqual(expected.included.map((i) => i.score));
      expect(result.rerankedDocuments).toEqual(expected.included.map((i) => texts[i.rank]));
      const meta = result.providerMetadata?.['relevance-gate'] as Record<string, unknown>;
      const decisions = meta.documents as Array<{
        index: number;
        route: string;
        rule: string;
        position: number | null;
      }>;
      expect(decisions.map((d) => d.index)).toEqual(texts.map((_, i) => i));
      for (const d of decisions) {
        const inRanking = result.ranking.findIndex((r) => r.originalIndex === d.index);
        expect(d.position).toBe(inRanking === -1 ? null : inRanking);
        expect(d.route).toBe(inRanking === -1 ? 'excluded' : 'included');
      }
      expect(meta).toMatchObject({ scorer: scorer.id, threshold: expected.stats.threshold });
      if (expected.excluded.length > 0 && expected.included.length > 0) sawExclusion = true;
    }
    expect(sawExclusion).toBe(true);
  });

  it('object documents are read through their text and title fields, matching the gate on { title, text }', async () => {
    const { query, docs } = candidates[0];
    const expected = await gate.filter(
      query,
      docs.map((d) => ({ id: d.id, title: d.title, text: d.text })),
    );
    const result = await rerank({ model: rerankingModel(gate), query, documents: docs, topN: 3 });
    const top = expected.included.slice(0, 3);
    expect(result.ranking.map((r) => [r.originalIndex, r.score])).toEqual(top.map((i) => [i.rank, i.score]));
    expect(result.rerankedDocuments.map((d) => d.id)).toEqual(top.map((i) => i.id));
    // The document's own id is reported (and keys the score cache).
    const meta = result.providerMetadata?.['relevance-gate'] as { documents: Array<{ id: string }> };
    expect(meta.documents.map((d) => d.id)).toEqual(docs.map((d) => d.id));
  });

  it('the provider object: reranking(name), ProviderV4 registry, unknown names refused', async () => {
    const relevanceGate = createRelevanceGate({ gates: { 'fast-path': gate } });
    const { query, docs } = candidates[1];
    const direct = await rerank({ model: rerankingModel(gate), query, documents: docs });
    const viaProvider = await rerank({ model: relevanceGate.reranking('fast-path'), query, documents: docs });
    expect(viaProvider.ranking).toEqual(direct.ranking);
    expect(viaProvider.response.modelId).toBe('fast-path');
    expect(relevanceGate.reranking('fast-path')).toBe(relevanceGate.rerankingModel('fast-path'));
    const registry = createProviderRegistry({ gate: relevanceGate });
    const viaRegistry = await rerank({ model: registry.rerankingModel('gate:fast-path'), query, documents: docs });
    expect(viaRegistry.ranking).toEqual(direct.ranking);
    expect(() => relevanceGate.reranking('nope' as 'fast-path')).toThrow(NoSuchGateModelError);
    expect(() => relevanceGate.languageModel('x')).toThrow(/reranking models only/);
  });

  it("specificationVersion 'v3' (ai 6) is accepted by ai 7 too", async () => {
    const { query, docs } = candidates[2];
    const v3 = rerankingModel(gate, { specificationVersion: 'v3', modelId: 'fast-path-v3' });
    expect(v3.specificationVersion).toBe('v3');
    const r3 = await rerank({ model: v3, query, documents: docs });
    const r4 = await rerank({ model: rerankingModel(gate), query, documents: docs });
    expect(r3.ranking).toEqual(r4.ranking);
  });
});

describe('documents, routes and options', () => {
  const table = {
    '0': { ...BASE, relevant: 0.6 },
    '1': { ...BASE, relevant: 0.7, contradicts_premise: 0.92 },
    '2': { ...BASE, relevant: 0.95, injection: 0.99 },
    '3': { ...BASE, relevant: 0.8 },
  };
  const texts = ['zero', 'one', 'two', 'three'];

  it('conflicting documents rank by relevance and are flagged; providerOptions can leave them out', async () => {
    const g = createGate({ scorer: tableScorer(table), policy: { rules: DEFAULT_ROUTING_RULES } });
    const r = await rerank({ model: rerankingModel(g), query: 'q', documents: texts });
    expect(r.ranking.map((x) => [x.originalIndex, x.score])).toEqual([
      [3, 0.8],
      [1, 0.7],
      [0, 0.6],
    ]);
    const meta = r.providerMetadata?.['relevance-gate'] as { documents: Array<{ route: string; rule: string }> };
    expect(meta.documents.map((d) => `${d.route}:${d.rule}`)).toEqual([
      'included:evidence',
      'conflicting:contradicts-premise',
      'excluded:injection',
      'included:evidence',
    ]);
    const without = await rerank({
      model: rerankingModel(g),
      query: 'q',
      documents: texts,
      providerOptions: { 'relevance-gate': { includeConflicting: false } },
    });
    expect(without.ranking.map((x) => x.originalIndex)).toEqual([3, 0]);
  });

  it('object documents: textField / titleField / idField, never JSON-stringified', async () => {
    const seen: Passage[] = [];
    const recording = {
      id: 'rec',
      async score(_q: string, ps: readonly Passage[]) {
        seen.push(...ps);
        return ps.map((p) => ({ relevant: p.text === 'second body' ? 0.9 : 0.6 }));
      },
    };
    const g = createGate({ scorer: recording });
    const documents = [
      { key: 'k1', heading: 'First', body: 'first body', extra: { n: 1 } },
      { key: 'k2', heading: 'Second', body: 'second body', extra: { n: 2 } },
    ];
    const model = rerankingModel(g, { textField: 'body', titleField: 'heading', idField: 'key' });
    const r = await rerank({ model, query: 'q', documents });
    expect(seen.map((p) => [p.id, p.title, p.text])).toEqual([
      ['k1', 'First', 'first body'],
      ['k2', 'Second', 'second body'],
    ]);
    expect(r.rerankedDocuments).toEqual([documents[1], documents[0]]);
    seen.length = 0;
    const fn = rerankingModel(g, { textField: (d) => `${d.heading}: ${d.body}`, titleField: null, idField: null });
    await rerank({ model: fn, query: 'q', documents });
    expect(seen.map((p) => [p.id, p.title, p.text])).toEqual([
      ['#0', undefined, 'First: first body'],
      ['#1', undefined, 'Second: second body'],
    ]);
    await expect(rerank({ model: rerankingModel(g), query: 'q', documents, maxRetries: 0 })).rejects.toThrow(
      /documents\.values\[0\]\.text must be a string \(set textField/,
    );
  });

  it('an empty list returns an empty ranking without scoring', async () => {
    const s = tableScorer({});
    const model = rerankingModel(createGate({ scorer: s }));
    expect(await model.doRerank({ documents: { type: 'text', values: [] }, query: 'q' })).toMatchObject({
      ranking: [],
    });
    expect((await rerank({ model, query: 'q', documents: [] as string[] })).ranking).toEqual([]);
    expect(s.calls).toHaveLength(0);
  });

  it('fail-open documents rank last with score 0, keeping scores descending', async () => {
    const s = tableScorer({ '0': { relevant: 0.7 }, '2': { relevant: 0.9 } });
    const g = createGate({ scorer: s, policy: { failOpen: true } });
    const r = await rerank({ model: rerankingModel(g), query: 'q', documents: ['a', 'b', 'c'] });
    expect(r.ranking.map((x) => [x.originalIndex, x.score])).toEqual([
      [2, 0.9],
      [0, 0.7],
      [1, 0],
    ]);
  });

  it('refuses bad options with typed errors', async () => {
    expect(() => rerankingModel({} as Gate)).toThrow(InvalidArgumentError);
    expect(() => rerankingModel(gate, { model: 'x' } as never)).toThrow(/model is not an option/);
    expect(() => rerankingModel(gate, { textField: 3 } as never)).toThrow(/textField/);
    const model = rerankingModel(gate);
    await expect(model.doRerank({ documents: { type: 'text', values: ['a'] }, query: 'q', topN: 0 })).rejects.toThrow(
      /topN must be an integer ≥ 1/,
    );
    await expect(
      model.doRerank({
        documents: { type: 'text', values: ['a'] },
        query: 'q',
        providerOptions: { 'relevance-gate': { budget: 3 } },
      }),
    ).rejects.toThrow(/budget is not an option/);
    expect(() => createRelevanceGate({ gates: {} })).toThrow(/at least one gate/);
  });
});

describe('aborts and budgets', () => {
  it('an abort during scoring rejects rerank() with the signal’s reason, promptly, and is not retried', async () => {
    const slow = slowScorer(Number.POSITIVE_INFINITY); // never answers: only the abort ends the call
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    await expect(
      rerank({
        model: rerankingModel(createGate({ scorer: slow })),
        query: 'q',
        documents: ['a', 'b'],
        abortSignal: controller.signal,
      }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.calls).toBe(1);
    expect(slow.aborted).toBe(1);
  });

  it('an already aborted signal rejects without scoring', async () => {
    const slow = slowScorer(10);
    const model = rerankingModel(createGate({ scorer: slow }));
    await expect(
      model.doRerank({ documents: { type: 'text', values: ['a'] }, query: 'q', abortSignal: AbortSignal.abort() }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.calls).toBe(0);
  });

  it('budgetMs (model or providerOptions, the smaller wins) fails closed and reports it', async () => {
    const slow = slowScorer(Number.POSITIVE_INFINITY);
    const model = rerankingModel(createGate({ scorer: slow }), { budgetMs: 10_000 });
    const r = await rerank({
      model,
      query: 'q',
      documents: ['a', 'b', 'c'],
      providerOptions: { 'relevance-gate': { budgetMs: 40 } },
    });
    expect(r.ranking).toEqual([]);
    const meta = r.providerMetadata?.['relevance-gate'] as {
      stats: { unscored: number };
      documents: Array<{ reason: string }>;
    };
    expect(meta.stats.unscored).toBe(3);
    expect(meta.documents.map((d) => d.reason)).toEqual(['timeout', 'timeout', 'timeout']);
  });
});
