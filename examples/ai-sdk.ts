// Vercel AI SDK: the gate as a reranking model for rerank().
// Run from the repository root: npx tsx examples/ai-sdk.ts
import { readFileSync } from 'node:fs';
import { rerank } from 'ai';
import { createRelevanceGate } from '../src/adapters/ai-sdk/index.js';
import { createGate, loadFastPathScorer } from '../src/index.js';

// A real MED query with its BM25 top 20 (examples/request.json): objects { id, title, text, metadata }.
const request = JSON.parse(readFileSync(new URL('./request.json', import.meta.url), 'utf8')) as {
  query: string;
  passages: Array<{ id: string; title: string; text: string }>;
};

const scorer = await loadFastPathScorer(); // the shipped fast-path model
const gate = createGate({ scorer, policy: { threshold: scorer.recommendedThreshold ?? 0.5 } });
const relevanceGate = createRelevanceGate({ gates: { 'fast-path': gate } });

const { ranking, rerankedDocuments, providerMetadata } = await rerank({
  model: relevanceGate.reranking('fast-path'),
  query: request.query,
  documents: request.passages, // object documents are read through their `text` (and `title`) fields
  topN: 5,
  abortSignal: AbortSignal.timeout(1000),
});
const gateMeta = providerMetadata?.['relevance-gate'] as { stats: { returned: number; retrieved: number } };
console.log(`gate kept ${gateMeta.stats.returned} of ${gateMeta.stats.retrieved}; top ${ranking.length}:`);
for (const [i, r] of ranking.entries())
  console.log(`${rerankedDocuments[i].id}\t${r.score.toFixed(3)}\t(input position ${r.originalIndex})`);
