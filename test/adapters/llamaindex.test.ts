import type {
  CompletionResponse,
  LLMCompletionParamsNonStreaming,
  LLMCompletionParamsStreaming,
} from '@llamaindex/core/llms';
import { MockLLM } from '@llamaindex/core/llms/mock';
import { type QueryBundle, RetrieverQueryEngine } from '@llamaindex/core/query-engine';
import { getResponseSynthesizer } from '@llamaindex/core/response-synthesizers';
import { BaseRetriever } from '@llamaindex/core/retriever';
import { Document, MetadataMode, type NodeWithScore, TextNode } from '@llamaindex/core/schema';
import MiniSearch from 'minisearch';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  InvalidNodeError,
  MissingQueryError,
  RelevanceGatePostprocessor,
} from '../../src/adapters/llamaindex/index.js';
import { buildContext } from '../../src/context/index.js';
import {
  createGate,
  DEFAULT_ROUTING_RULES,
  type FastPathScorer,
  type Gate,
  InvalidArgumentError,
  type Passage,
  type SignalProbabilities,
} from '../../src/index.js';
import { type CollectionDoc, docPassage } from '../../src/tooling/eval/index.js';
import { tableScorer } from '../gate/helpers.js';
import { deepFreeze, fastPathScorer, type MedSubset, medSubset, slowScorer } from './fixtures.js';

/** A keyword (BM25, MiniSearch) retriever over collection documents, in LlamaIndex's retriever interface. */
class KeywordRetriever extends BaseRetriever {
  private readonly index: MiniSearch<{ id: string; passage: string }>;
  private readonly byId: ReadonlyMap<string, CollectionDoc>;

  constructor(
    docs: readonly CollectionDoc[],
    readonly k = 20,
  ) {
    super();
    this.byId = new Map(docs.map((d) => [d.id, d]));
    this.index = new MiniSearch({ fields: ['passage'], idField: 'id', storeFields: [] });
    this.index.addAll(docs.map((d) => ({ id: d.id, passage: docPassage(d) })));
  }

  override async _retrieve(params: QueryBundle): Promise<NodeWithScore[]> {
    const query = typeof params.query === 'string' ? params.query : '';
    return this.index
      .search(query)
      .slice(0, this.k)
      .map((hit) => {
        const doc = this.byId.get(String(hit.id))!;
        const node = new TextNode({
          id_: doc.id,
          text: docPassage(doc),
          metadata: { source: 'med', docId: doc.id, title: doc.title },
        });
        return { node, score: hit.score };
      });
  }
}

/** An LLM that answers like MockLLM and keeps every prompt it was given. */
class RecordingLLM extends MockLLM {
  readonly prompts: string[] = [];
  constructor() {
    super({
      timeBetweenToken: 0,
      metadata: {
        model: 'recording',
        temperature: 0,
        topP: 1,
        contextWindow: 1 << 20,
        tokenizer: undefined,
        structuredOutput: false,
      },
    });
  }
  override complete(params: LLMCompletionParamsStreaming): Promise<AsyncIterable<CompletionResponse>>;
  override complete(params: LLMCompletionParamsNonStreaming): Promise<CompletionResponse>;
  override complete(
    params: LLMCompletionParamsStreaming | LLMCompletionParamsNonStreaming,
  ): Promise<AsyncIterable<CompletionResponse> | CompletionResponse> {
    this.prompts.push(typeof params.prompt === 'string' ? params.prompt : JSON.stringify(params.prompt));
    return params.stream === true ? super.complete(params) : super.complete(params);
  }
}

let med: MedSubset;
let scorer: FastPathScorer;
let gate: Gate;

beforeAll(async () => {
  med = medSubset();
  scorer = await fastPathScorer();
  gate = createGate({ scorer, policy: { threshold: scorer.recommendedThreshold ?? 0.5 } });
});

const BASE: SignalProbabilities = { injection: 0.01, contradicts_premise: 0.02, relevant: 0.9, evidence: 0.9 };

function nodes(n: number): NodeWithScore[] {
  return Array.from({ length: n }, (_, i) => ({
    node: new TextNode({ id_: `d${i}`, text: `passage ${i}`, metadata: { source: 's', n: i } }),
    score: 1 - i / 10,
  }));
}

/** Passages exactly as the postprocessor builds them (id = node id_, text = the content without metadata). */
function passagesOf(input: readonly NodeWithScore[]): Passage[] {
  return input.map((n) => ({ id: n.node.id_, text: n.node.getContent(MetadataMode.NONE) }));
}

describe('RelevanceGatePostprocessor over a real LlamaIndex retriever (MED documents, fast path)', () => {
  it('returns exactly the gate’s included nodes, in its order, with the gate’s score and decision', async () => {
    const retriever = new KeywordRetriever(med.docs, 20);
    const postprocessor = new RelevanceGatePostprocessor({ gate });
    let sawExclusion = false;
    for (const q of med.queries) {
      const retrieved = await retriever.retrieve(q.text);
      expect(retrieved.length).toBe(20);
      const expected = await gate.filter(q.text, passagesOf(retrieved));
      const gated = await postprocessor.postprocessNodes(retrieved, q.text);
      expect(gated.map((n) => n.node.id_)).toEqual(expected.included.map((i) => i.id));
      expect(gated.map((n) => n.score)).toEqual(expected.included.map((i) => i.score));
      for (const n of gated) {
        const item = expected.included.find((i) => i.id === n.node.id_)!;
        expect(n.node).toBeInstanceOf(TextNode);
        expect(n.node.metadata).toMatchObject({ source: 'med', docId: n.node.id_ });
        expect(n.node.metadata.relevanceGate).toEqual({
          route: 'included',
          rule: 'threshold',
          signals: item.signals,
          score: item.score,
          relevance: item.relevance,
          tier: item.tier,
          reason: null,
          rank: item.rank,
          cached: false,
          passageId: item.id,
        });
        expect(n.node.metadata.relevanceGate.relevance).toBeGreaterThanOrEqual(expected.stats.threshold);
        const original = retrieved.find((r) => r.node.id_ === n.node.id_)!;
        expect(n.node.getContent(MetadataMode.NONE)).toBe(original.node.getContent(MetadataMode.NONE));
        expect(n.node.hash).toBe(original.node.hash);
      }
      // The gate's returned order: by the shipped model's ranking signal; the score descends with it.
      for (let i = 1; i < gated.length; i++) {
        expect(gated[i - 1].node.metadata.relevanceGate.signals?.ranking).toBeGreaterThanOrEqual(
          gated[i].node.metadata.relevanceGate.signals?.ranking ?? 0,
        );
        expect(gated[i - 1].score).toBeGreaterThanOrEqual(gated[i].score ?? 0);
      }
      if (expected.excluded.length > 0 && expected.included.length > 0) sawExclusion = true;
    }
    // The gate decided something on real data: some nodes kept, some dropped.
    expect(sawExclusion).toBe(true);
  });

  it('is a node postprocessor of LlamaIndex’s RetrieverQueryEngine; the decision stays out of the prompt', async () => {
    const llm = new RecordingLLM();
    const engine = new RetrieverQueryEngine(
      new KeywordRetriever(med.docs, 20),
      getResponseSynthesizer('compact', { llm }),
      [new RelevanceGatePostprocessor({ gate })],
    );
    const query = med.queries[0].text;
    const response = await engine.query({ query });
    const retrieved = await new KeywordRetriever(med.docs, 20).retrieve(query);
    const expected = await gate.filter(query, passagesOf(retrieved));
    expect(expected.included.length).toBeGreaterThan(0);
    expect(response.sourceNodes?.map((n) => n.node.id_)).toEqual(expected.included.map((i) => i.id));
    expect(response.sourceNodes?.map((n) => n.score)).toEqual(expected.included.map((i) => i.score));
    const prompt = llm.prompts.join('\n');
    for (const i of expected.included) expect(prompt).toContain(docPassage(med.docs.find((d) => d.id === i.id)!));
    for (const i of expected.excluded) expect(prompt).not.toContain(docPassage(med.docs.find((d) => d.id === i.id)!));
    // The caller's metadata reaches the LLM as LlamaIndex prints it; the gate's decision does not.
    expect(prompt).toContain(`docId: ${expected.included[0].id}`);
    expect(prompt).not.toContain('relevanceGate');
    // …nor the text an embedding model would be given.
    const first = response.sourceNodes?.[0]?.node;
    expect(first?.getContent(MetadataMode.EMBED)).not.toContain('relevanceGate');
    expect(first?.getContent(MetadataMode.ALL)).toContain('relevanceGate');
  });

  it('takes { scorer, policy } and builds the same gate', async () => {
    const retrieved = await new KeywordRetriever(med.docs, 20).retrieve(med.queries[1].text);
    const fromScorer = new RelevanceGatePostprocessor({
      scorer,
      policy: { threshold: scorer.recommendedThreshold ?? 0.5 },
    });
    const fromGate = new RelevanceGatePostprocessor({ gate });
    const a = await fromScorer.postprocessNodes(retrieved, med.queries[1].text);
    const b = await fromGate.postprocessNodes(retrieved, med.queries[1].text);
    expect(a.map((n) => [n.node.id_, n.score])).toEqual(b.map((n) => [n.node.id_, n.score]));
    expect(fromScorer.gate.scorer).toBe(scorer);
  });

  it('gateNodes also returns the full result, which buildContext turns into a prompt', async () => {
    const retrieved = await new KeywordRetriever(med.docs, 20).retrieve(med.queries[0].text);
    const postprocessor = new RelevanceGatePostprocessor({ gate, titleKey: 'title' });
    const { nodes: gated, result, insufficientContext } = await postprocessor.gateNodes(retrieved, med.queries[0].text);
    expect(result.stats.retrieved).toBe(20);
    expect(insufficientContext).toBe(result.stats.insufficientContext);
    expect(gated.length).toBe(result.included.length);
    expect(result.included[0].passage.nodeWithScore).toBe(retrieved.find((r) => r.node.id_ === gated[0].node.id_));
    const context = buildContext(result, { maxTokens: 2000 });
    expect(context.accepted.map((p) => p.id)).toEqual(gated.map((n) => n.node.id_).slice(0, context.accepted.length));
    expect(context.prompt).toContain(`<passage id="${gated[0].node.id_}">`);
  });
});

describe('routes, conflicting nodes, insufficient context and metadata', () => {
  const table = {
    d0: { ...BASE, relevant: 0.6 },
    d1: { ...BASE, relevant: 0.7, contradicts_premise: 0.92 },
    d2: { ...BASE, relevant: 0.95, injection: 0.99 },
    d3: { ...BASE, relevant: 0.8 },
    d4: { ...BASE, relevant: 0.2, evidence: 0.1 },
  };

  it('includes conflicting nodes flagged, merged by relevance; drops them with includeConflicting: false', async () => {
    const g = createGate({ scorer: tableScorer(table), policy: { rules: DEFAULT_ROUTING_RULES } });
    const withConflicts = await new RelevanceGatePostprocessor({ gate: g }).postprocessNodes(nodes(5), 'q');
    expect(
      withConflicts.map((n) => [
        n.node.id_,
        n.node.metadata.relevanceGate.route,
        n.node.metadata.relevanceGate.rule,
        n.score,
      ]),
    ).toEqual([
      ['d3', 'included', 'evidence', 0.8],
      ['d1', 'conflicting', 'contradicts-premise', 0.7],
      ['d0', 'included', 'evidence', 0.6],
    ]);
    const without = await new RelevanceGatePostprocessor({ gate: g, includeConflicting: false }).postprocessNodes(
      nodes(5),
      'q',
    );
    expect(without.map((n) => n.node.id_)).toEqual(['d3', 'd0']);
  });

  it('says insufficientContext through gateNodes and onResult when nothing the gate kept is good enough', async () => {
    const seen: boolean[] = [];
    const postprocessor = new RelevanceGatePostprocessor({
      scorer: tableScorer({ d0: { relevant: 0.55 }, d1: { relevant: 0.6 }, d2: { relevant: 0.1 } }),
      policy: { insufficientBelow: 0.7 },
      onResult: (r) => seen.push(r.stats.insufficientContext),
    });
    const gated = await postprocessor.gateNodes(nodes(3), 'q');
    expect(gated.insufficientContext).toBe(true);
    expect(gated.nodes.map((n) => n.node.id_)).toEqual(['d1', 'd0']);
    expect(await postprocessor.postprocessNodes(nodes(3), 'q')).toHaveLength(2);
    expect(seen).toEqual([true, true]);
    const enough = await postprocessor.gateNodes(nodes(3), 'q', { policy: { insufficientBelow: 0.5 } });
    expect(enough.insufficientContext).toBe(false);
  });

  it('never mutates the caller’s nodes; the copies keep their class and share nothing mutable with the gate', async () => {
    const g = createGate({ scorer: tableScorer(table), policy: { rules: DEFAULT_ROUTING_RULES } });
    const input = nodes(5);
    input[3] = { node: new Document({ id_: 'd3', text: 'passage 3', metadata: { source: 's' } }), score: 0.5 };
    const hashes = input.map((n) => n.node.hash);
    deepFreeze(input.map((n) => n.node.metadata));
    const snapshot = JSON.stringify(input);
    const { nodes: gated, result } = await new RelevanceGatePostprocessor({ gate: g }).gateNodes(input, 'q');
    expect(JSON.stringify(input)).toBe(snapshot);
    expect(input.map((n) => n.node.hash)).toEqual(hashes);
    expect(gated[0].node).toBeInstanceOf(Document);
    expect(gated[0].node.hash).toBe(hashes[3]);
    for (const n of gated) {
      expect(input.map((i) => i.node)).not.toContain(n.node);
      expect(n.node.excludedLlmMetadataKeys).toContain('relevanceGate');
      expect(n.node.excludedEmbedMetadataKeys).toContain('relevanceGate');
    }
    for (const i of input) expect(i.node.excludedLlmMetadataKeys).toEqual([]);
    (gated[0].node.metadata.relevanceGate.signals as Record<string, number>).relevant = 0;
    expect(result.included[0].signals?.relevant).toBe(0.8);
  });

  it('an empty input returns [] without scoring, whatever the query', async () => {
    const s = tableScorer({});
    const postprocessor = new RelevanceGatePostprocessor({ gate: createGate({ scorer: s }) });
    expect(await postprocessor.postprocessNodes([], 'any query')).toEqual([]);
    expect(await postprocessor.postprocessNodes([])).toEqual([]);
    expect(s.calls).toHaveLength(0);
  });

  it('gives unique passage ids to repeated node ids, and keeps the nodes’ own ids', async () => {
    const s = tableScorer({ a: { relevant: 0.9 }, '#1': { relevant: 0.8 } });
    const input = [{ node: new TextNode({ id_: 'a', text: 'x' }) }, { node: new TextNode({ id_: 'a', text: 'y' }) }];
    const out = await new RelevanceGatePostprocessor({ gate: createGate({ scorer: s }) }).postprocessNodes(input, 'q');
    expect(s.calls[0].ids).toEqual(['a', '#1']);
    expect(
      out.map((n) => [n.node.id_, n.node.getContent(MetadataMode.NONE), n.node.metadata.relevanceGate.passageId]),
    ).toEqual([
      ['a', 'x', 'a'],
      ['a', 'y', '#1'],
    ]);
  });

  it('scores the node text without its metadata, metadata[titleKey] as the title, and multi-modal queries by their text', async () => {
    const seen: Array<{ query: string; text: string; title?: string }> = [];
    const recording = {
      id: 'rec',
      async score(query: string, ps: readonly Passage[]) {
        seen.push(...ps.map((p) => ({ query, text: p.text, title: p.title })));
        return ps.map(() => ({ relevant: 0.9 }));
      },
    };
    const input = [{ node: new TextNode({ id_: 'd0', text: 'body', metadata: { heading: 'The title', other: 1 } }) }];
    const postprocessor = new RelevanceGatePostprocessor({
      gate: createGate({ scorer: recording }),
      titleKey: 'heading',
    });
    await postprocessor.postprocessNodes(input, [
      { type: 'text', text: 'first part' },
      { type: 'image_url', image_url: { url: 'https://example.invalid/x.png' } },
      { type: 'text', text: 'second part' },
    ]);
    expect(seen).toEqual([{ query: 'first part\n\nsecond part', text: 'body', title: 'The title' }]);
  });

  it('refuses bad options, nodes and queries with typed errors', async () => {
    expect(() => new RelevanceGatePostprocessor({ gate: {} as Gate })).toThrow(InvalidArgumentError);
    expect(() => new RelevanceGatePostprocessor({ gate, budgetMS: 5 } as never)).toThrow(/budgetMS is not an option/);
    expect(() => new RelevanceGatePostprocessor({ gate, scorer } as never)).toThrow(/not both/);
    expect(() => new RelevanceGatePostprocessor({ scorer: {} as never })).toThrow(InvalidArgumentError);
    const p = new RelevanceGatePostprocessor({ gate });
    const badNode = await p.postprocessNodes([{ node: { text: 'x' } } as never], 'q').catch((e: unknown) => e);
    expect(badNode).toBeInstanceOf(InvalidNodeError);
    expect(badNode).toBeInstanceOf(InvalidArgumentError);
    expect(badNode).toMatchObject({ code: 'RG_ERR_INVALID_NODE', index: 0 });
    const noQuery = await p.postprocessNodes(nodes(1)).catch((e: unknown) => e);
    expect(noQuery).toBeInstanceOf(MissingQueryError);
    expect(noQuery).toMatchObject({ code: 'RG_ERR_MISSING_QUERY' });
    await expect(
      p.postprocessNodes(nodes(1), [{ type: 'image_url', image_url: { url: 'https://example.invalid/x.png' } }]),
    ).rejects.toThrow(MissingQueryError);
    await expect(p.postprocessNodes(nodes(1), 'q', { budget: 5 } as never)).rejects.toThrow(InvalidArgumentError);
    await expect(p.postprocessNodes(nodes(1), '   ')).rejects.toThrow(InvalidArgumentError);
  });
});

describe('signals and budgets', () => {
  it('an abort during scoring rejects the query engine with the signal’s reason, promptly', async () => {
    const slow = slowScorer(Number.POSITIVE_INFINITY); // never answers: only the abort ends the call
    const controller = new AbortController();
    const postprocessor = new RelevanceGatePostprocessor({ gate: createGate({ scorer: slow }) });
    const engine = new RetrieverQueryEngine(
      new KeywordRetriever(med.docs, 10),
      getResponseSynthesizer('compact', { llm: new RecordingLLM() }),
      [postprocessor.withOptions({ signal: controller.signal })],
    );
    setTimeout(() => controller.abort(), 30);
    await expect(engine.query({ query: med.queries[0].text })).rejects.toMatchObject({ name: 'AbortError' });
    expect(slow.calls).toBe(1);
    expect(slow.aborted).toBe(1);
  });

  it('an already aborted signal rejects without scoring', async () => {
    const slow = slowScorer(10);
    const p = new RelevanceGatePostprocessor({ gate: createGate({ scorer: slow }) });
    const reason = new Error('stop');
    await expect(p.postprocessNodes(nodes(3), 'q', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(slow.calls).toBe(0);
  });

  it('budgetMs fails closed: pairs not scored in time are excluded, and the call returns by the budget', async () => {
    const slow = slowScorer(Number.POSITIVE_INFINITY);
    let reasons: unknown;
    const p = new RelevanceGatePostprocessor({
      gate: createGate({ scorer: slow }),
      budgetMs: 10_000,
      onResult: (r) => {
        reasons = r.stats.unscoredByReason;
      },
    });
    // The smaller budget (the bound copy's) wins.
    expect(await p.withOptions({ budgetMs: 40 }).postprocessNodes(nodes(4), 'q')).toEqual([]);
    expect(reasons).toEqual({ timeout: 4 });
  });

  it('fail-open nodes come last, without a score, flagged with their reason', async () => {
    const s = tableScorer({ d0: { relevant: 0.9 } }); // d1: the scorer returns null
    const p = new RelevanceGatePostprocessor({ gate: createGate({ scorer: s }), policy: { failOpen: true } });
    const out = await p.postprocessNodes(nodes(2), 'q');
    expect(
      out.map((n) => [n.node.id_, n.score, n.node.metadata.relevanceGate.rule, n.node.metadata.relevanceGate.reason]),
    ).toEqual([
      ['d0', 0.9, 'threshold', null],
      ['d1', undefined, 'fail-open', 'scorer-null'],
    ]);
    expect('score' in out[1]).toBe(false);
  });
});
