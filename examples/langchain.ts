// LangChain.js: the gate as the compressor of a ContextualCompressionRetriever, then the gated prompt.
// Run from the repository root: npx tsx examples/langchain.ts
import { readFileSync } from 'node:fs';
import { ContextualCompressionRetriever } from '@langchain/classic/retrievers/contextual_compression';
import { Document } from '@langchain/core/documents';
import { BaseRetriever } from '@langchain/core/retrievers';
import { RelevanceGateCompressor } from '../src/adapters/langchain/index.js';
import { buildContext } from '../src/context/index.js';
import { createGate, loadFastPathScorer } from '../src/index.js';

interface ExamplePassage {
  id: string;
  title: string;
  text: string;
}
// A real MED query with its BM25 top 20 (examples/request.json).
const request = JSON.parse(readFileSync(new URL('./request.json', import.meta.url), 'utf8')) as {
  query: string;
  passages: ExamplePassage[];
};

/** Stands in for your retriever (a vector store's asRetriever(), BM25, ...): returns the top 20. */
class ExampleRetriever extends BaseRetriever {
  lc_namespace = ['examples', 'retrievers'];
  override async _getRelevantDocuments(): Promise<Document[]> {
    return request.passages.map((p) => new Document({ id: p.id, pageContent: p.text, metadata: { title: p.title } }));
  }
}

const scorer = await loadFastPathScorer(); // the shipped fast-path model
const gate = createGate({ scorer, policy: { threshold: scorer.recommendedThreshold ?? 0.5 } });

const retriever = new ContextualCompressionRetriever({
  baseCompressor: new RelevanceGateCompressor({ gate, budgetMs: 100 }),
  baseRetriever: new ExampleRetriever(),
});
const kept = await retriever.invoke(request.query);
console.log(`kept ${kept.length} of ${request.passages.length} documents`);
for (const d of kept)
  console.log(`${d.id}\t${d.metadata.relevanceScore?.toFixed(3)}\t${d.metadata.route}\t${d.metadata.rule}`);

// The gate's full decision, turned into the prompt the LLM sees.
const compressor = new RelevanceGateCompressor({ gate });
const { result } = await compressor.gateDocuments(await new ExampleRetriever().invoke(request.query), request.query);
const context = buildContext(result, { maxTokens: 1500 });
console.log(
  `prompt: ${context.accepted.length} accepted, ${context.conflicting.length} conflicting, ${context.tokens.passages} passage tokens, insufficient: ${context.insufficient}`,
);
console.log(context.messages[1].content.slice(0, 300));
