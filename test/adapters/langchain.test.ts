import { ContextualCompressionRetriever } from '@langchain/classic/retrievers/contextual_compression';
import { Document } from '@langchain/core/documents';
import { BaseDocumentCompressor } from '@langchain/core/retrievers/document_compressors';
import { RunnableLambda } from '@langchain/core/runnables';
import { beforeAll, describe, expect, it } from 'vitest';
import { RelevanceGateCompressor } from '../../src/adapters/langchain/index.js';
import { buildContext } from '../../src/context/index.js';
import {
  createGate,
  DEFAULT_ROUTING_RULES,
  type FastPathScorer,
  type Gate,
  InvalidArgumentError,
  type SignalProbabilities,
} from '../../src/index.js';
import { tableScorer } from '../gate/helpers.js';
import {
  deepFreeze,
  fastPathScorer,
  KeywordRetriever,
  type MedSubset,
  medSubset,
  passagesOf,
  slowScorer,
} from './fixtures.js';

let med: MedSubset;
let scorer: FastPathScorer;
let gate: Gate;

beforeAll(async () => {
  med = medSubset();
  scorer = await fastPathScorer();
  gate = createGate({ scorer, policy: { threshold: scorer.recommendedThreshold ?? 0.5 } });
});

const BASE: SignalProbabilities = { injection: 0.01, contradicts_premise: 0.02, relevant: 0.9, evidence: 0.9 };

function docs(n: number): Document[] {
  return Array.from(
    { length: n },
    (_, i) => new Document({ id: `d${i}`, pageContent: `passage ${i}`, metadata: { source: 's', n: i } }),
  );
}

describe('RelevanceGateCompressor in a ContextualCompressionRetriever (real LangChain, MED documents, fast path)', () => {
  it('returns exactly the gate’s included documents, in its order, with relevanceScore, route and rule', async () => {
    const baseRetriever = new KeywordRetriever(med.docs, 20);
    const retriever = new ContextualCompressionRetriever({
      baseCompressor: new RelevanceGateCompressor({ gate }),
      baseRetriever,
    });
    let sawExclusion = false;
    for (const q of med.queries) {
      const base = await baseRetriever.invoke(q.text);
      expect(base.length).toBe(20);
      const expected = await gate.filter(q.text, passagesOf(base));
      const gated = await retriever.invoke(q.text);
      expect(gated.map((d) => d.id)).toEqual(expected.included.map((i) => i.id));
      expect(gated.map((d) => d.metadata.relevanceScore)).toEqual(expected.included.map((i) => i.score));
      expect(gated.map((d) => d.metadata.relevanceGate.relevance)).toEqual(expected.included.map((i) => i.relevance));
      for (const d of gated) {
        expect(d).toBeInstanceOf(Document);
        expect(d.metadata).toMatchObject({ route: 'included', rule: 'threshold', source: 'med', docId: d.id });
        expect(d.metadata.relevanceGate.relevance).toBeGreaterThanOrEqual(expected.stats.threshold);
        expect(d.metadata.relevanceGate.signals).toEqual(expected.included.find((i) => i.id === d.id)?.signals);
        const original = base.find((b) => b.id === d.id)!;
        expect(d.pageContent).toBe(original.pageContent);
        expect(d.metadata.bm25).toBe(original.metadata.bm25);
      }
      // The gate's returned order: by the shipped model's ranking signal (relevanceScore is the calibrated score, descending in it).
      for (let i = 1; i < gated.length; i++)
        expect(gated[i - 1].metadata.relevanceGate.signals.ranking).toBeGreaterThanOrEqual(
          gated[i].metadata.relevanceGate.signals.ranking,
        );
      if (expected.excluded.length > 0 && expected.included.length > 0) sawExclusion = true;
    }
    // The gate decided something on real data: some documents kept, some dropped.
    expect(sawExclusion).toBe(true);
  });

  it('is a BaseDocumentCompressor', () => {
    const c = new RelevanceGateCompressor({ gate });
    expect(c).toBeInstanceOf(BaseDocumentCompressor);
    expect(BaseDocumentCompressor.isBaseDocumentCompressor(c)).toBe(true);
  });

  it('gateDocuments also returns the full result, which buildContext turns into a prompt', async () => {
    const base = await new KeywordRetriever(med.docs, 20).invoke(med.queries[0].text);
    const compressor = new RelevanceGateCompressor({ gate, titleKey: 'title' });
    const { documents, result } = await compressor.gateDocuments(base, med.queries[0].text);
    expect(result.stats.retrieved).toBe(20);
    expect(documents.length).toBe(result.included.length);
    const context = buildContext(result, { maxTokens: 2000 });
    expect(context.accepted.map((p) => p.id)).toEqual(documents.map((d) => d.id).slice(0, context.accepted.length));
    expect(context.prompt).toContain(`<passage id="${documents[0].id}">`);
  });
});

describe('routes, conflicting documents and metadata', () => {
  const table = {
    d0: { ...BASE, relevant: 0.6 },
    d1: { ...BASE, relevant: 0.7, contradicts_premise: 0.92 },
    d2: { ...BASE, relevant: 0.95, injection: 0.99 },
    d3: { ...BASE, relevant: 0.8 },
    d4: { ...BASE, relevant: 0.2, evidence: 0.1 },
  };

  it('includes conflicting documents flagged, merged by relevance; drops them with includeConflicting: false', async () => {
    const g = createGate({ scorer: tableScorer(table), policy: { rules: DEFAULT_ROUTING_RULES } });
    const withConflicts = await new RelevanceGateCompressor({ gate: g }).compressDocuments(docs(5), 'q');
    expect(withConflicts.map((d) => [d.id, d.metadata.route, d.metadata.rule, d.metadata.relevanceScore])).toEqual([
      ['d3', 'included', 'evidence', 0.8],
      ['d1', 'conflicting', 'contradicts-premise', 0.7],
      ['d0', 'included', 'evidence', 0.6],
    ]);
    const without = await new RelevanceGateCompressor({ gate: g, includeConflicting: false }).compressDocuments(
      docs(5),
      'q',
    );
    expect(without.map((d) => d.id)).toEqual(['d3', 'd0']);
  });

  it('never mutates the caller’s documents, and its output shares nothing mutable with the gate', async () => {
    const g = createGate({ scorer: tableScorer(table), policy: { rules: DEFAULT_ROUTING_RULES } });
    const input = deepFreeze(docs(5));
    const snapshot = JSON.stringify(input);
    const compressor = new RelevanceGateCompressor({ gate: g });
    const { documents, result } = await compressor.gateDocuments(input, 'q');
    expect(JSON.stringify(input)).toBe(snapshot);
    for (const d of documents) {
      expect(input).not.toContain(d);
      expect(input.map((i) => i.metadata)).not.toContain(d.metadata);
    }
    (documents[0].metadata.relevanceGate.signals as Record<string, number>).relevant = 0;
    expect(result.included[0].signals?.relevant).toBe(0.8);
  });

  it('an empty input returns [] without scoring', async () => {
    const s = tableScorer({});
    const compressor = new RelevanceGateCompressor({ gate: createGate({ scorer: s }) });
    expect(await compressor.compressDocuments([], 'any query')).toEqual([]);
    expect(s.calls).toHaveLength(0);
  });

  it('gives unique passage ids to documents without ids or with repeated ids, and keeps their own ids', async () => {
    const s = tableScorer({ a: { relevant: 0.9 }, '#1': { relevant: 0.8 }, '#2': { relevant: 0.7 } });
    const input = [
      new Document({ id: 'a', pageContent: 'x' }),
      new Document({ pageContent: 'y' }),
      new Document({ id: 'a', pageContent: 'z' }),
    ];
    const out = await new RelevanceGateCompressor({ gate: createGate({ scorer: s }) }).compressDocuments(input, 'q');
    expect(s.calls[0].ids).toEqual(['a', '#1', '#2']);
    expect(out.map((d) => [d.id, d.pageContent, d.metadata.relevanceGate.passageId])).toEqual([
      ['a', 'x', 'a'],
      [undefined, 'y', '#1'],
      ['a', 'z', '#2'],
    ]);
  });

  it('scores metadata[titleKey] as the passage title', async () => {
    const s = tableScorer({ d0: { relevant: 0.9 } });
    const input = [new Document({ id: 'd0', pageContent: 'body', metadata: { heading: 'The title' } })];
    await new RelevanceGateCompressor({ gate: createGate({ scorer: s }), titleKey: 'heading' }).compressDocuments(
      input,
      'q',
    );
    const seen: unknown[] = [];
    const recording = {
      id: 'rec',
      async score(_q: string, ps: readonly { title?: string }[]) {
        seen.push(...ps.map((p) => p.title));
        return ps.map(() => ({ relevant: 0.9 }));
      },
    };
    await new RelevanceGateCompressor({
      gate: createGate({ scorer: recording }),
      titleKey: 'heading',
    }).compressDocuments(input, 'q');
    expect(seen).toEqual(['The title']);
  });

  it('reports the full result (excluded documents too) through onResult', async () => {
    const seen: string[][] = [];
    const g = createGate({ scorer: tableScorer(table), policy: { rules: DEFAULT_ROUTING_RULES } });
    await new RelevanceGateCompressor({
      gate: g,
      onResult: (r) => seen.push(r.excluded.map((i) => `${i.id}:${i.rule}`)),
    }).compressDocuments(docs(5), 'q');
    expect(seen).toEqual([['d2:injection', 'd4:relevance-floor']]);
  });

  it('refuses bad options and documents with typed errors', async () => {
    expect(() => new RelevanceGateCompressor({ gate: {} as Gate })).toThrow(InvalidArgumentError);
    expect(() => new RelevanceGateCompressor({ gate, budgetMS: 5 } as never)).toThrow(/budgetMS is not an option/);
    const c = new RelevanceGateCompressor({ gate });
    await expect(c.compressDocuments([{ pageContent: 3 } as never], 'q')).rejects.toThrow(
      /documents\[0\] must be a Document with a string pageContent/,
    );
    await expect(c.compressDocuments(docs(1), 'q', undefined, { budget: 5 } as never)).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(c.compressDocuments(docs(1), '   ')).rejects.toThrow(InvalidArgumentError);
  });
});

describe('signals and timeouts', () => {
  it('an abort during scoring rejects the retriever with the signal’s reason, promptly', async () => {
    const slow = slowScorer(Number.POSITIVE_INFINITY); // never answers: only the abort ends the call
    const controller = new AbortController();
    const retriever = new ContextualCompressionRetriever({
      baseCompressor: new RelevanceGateCompressor({ gate: createGate({ scorer: slow }) }).withOptions({
        signal: controller.signal,
      }),
      baseRetriever: new KeywordRetriever(med.docs, 10),
    });
    setTimeout(() => controller.abort(), 30);
    await expect(retriever.invoke(med.queries[0].text)).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.calls).toBe(1);
    expect(slow.aborted).toBe(1);
  });

  it('an already aborted signal rejects without scoring', async () => {
    const slow = slowScorer(10);
    const c = new RelevanceGateCompressor({ gate: createGate({ scorer: slow }) });
    const reason = new Error('stop');
    await expect(c.compressDocuments(docs(3), 'q', undefined, { signal: AbortSignal.abort(reason) })).rejects.toBe(
      reason,
    );
    expect(slow.calls).toBe(0);
  });

  it('budgetMs fails closed: pairs not scored in time are excluded, and the call returns by the budget', async () => {
    const slow = slowScorer(Number.POSITIVE_INFINITY);
    let reasons: unknown;
    const c = new RelevanceGateCompressor({
      gate: createGate({ scorer: slow }),
      budgetMs: 10_000,
      onResult: (r) => {
        reasons = r.stats.unscoredByReason;
      },
    });
    // The smaller budget (the call's) wins.
    expect(await c.compressDocuments(docs(4), 'q', undefined, { budgetMs: 40 })).toEqual([]);
    expect(reasons).toEqual({ timeout: 4 });
  });

  it('picks up signal and timeout of the enclosing LangChain runnable when async-local config is on', async () => {
    const { AsyncLocalStorageProviderSingleton } = await import('@langchain/core/singletons');
    const { AsyncLocalStorage } = await import('node:async_hooks');
    AsyncLocalStorageProviderSingleton.initializeGlobalInstance(new AsyncLocalStorage());
    const slow = slowScorer(Number.POSITIVE_INFINITY); // never answers: only the abort ends the call
    const compressor = new RelevanceGateCompressor({ gate: createGate({ scorer: slow }) });
    const chain = RunnableLambda.from((q: string) => compressor.compressDocuments(docs(3), q));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    await expect(chain.invoke('q', { signal: controller.signal })).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.aborted).toBe(1);
    // useRunnableConfig: false ignores it (the timeout below would otherwise abort).
    const fast = tableScorer({ d0: { relevant: 0.9 } });
    const detached = new RelevanceGateCompressor({ gate: createGate({ scorer: fast }), useRunnableConfig: false });
    const out = await RunnableLambda.from((q: string) => detached.compressDocuments(docs(1), q)).invoke('q', {
      timeout: 1000,
    });
    expect(out.map((d) => d.id)).toEqual(['d0']);
    expect(fast.calls[0].options?.signal).toBeUndefined();
    expect(fast.calls[0].options?.deadline).toBeUndefined();
    // …while the default reads it: LangChain turns the timeout into the config's signal, which the scorer gets.
    const attached = new RelevanceGateCompressor({ gate: createGate({ scorer: fast }) });
    await RunnableLambda.from((q: string) => attached.compressDocuments(docs(1), q)).invoke('q', { timeout: 1000 });
    expect(fast.calls[1].options?.signal).toBeInstanceOf(AbortSignal);
  });
});
