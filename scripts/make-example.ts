/**
 * Writes examples/request.json, the embedded default request of `relevance-gate score`: a real
 * MED test-split query (never used to train the shipped model) with its BM25 top 20 passages.
 * Each passage's metadata carries its relevance judgment from qrels, so the demo can be checked.
 * Usage: npx tsx scripts/make-example.ts [--collection ../shared/data/med] [--query 13] [--k 20]
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { judgmentsOf, loadCollection } from '../src/eval/collection.js';
import { createBm25FirstStage } from '../src/eval/first-stage.js';
import { packageRoot } from '../src/util/package-root.js';

const root = packageRoot();
const { values } = parseArgs({
  options: {
    collection: { type: 'string', default: join(root, '..', 'shared', 'data', 'med') },
    query: { type: 'string', default: '13' },
    k: { type: 'string', default: '20' },
  },
});
const collection = loadCollection(values.collection);
const query = collection.queries.find((q) => q.id === values.query);
if (!query) throw new Error(`query ${values.query} not in ${values.collection}`);
const judged = judgmentsOf(collection, query.id);
const docs = new Map(collection.docs.map((d) => [d.id, d]));
const candidates = createBm25FirstStage(collection).search(query.text, Number(values.k));
const request = {
  source: `${collection.name} query ${query.id} (test split) with its BM25 top ${candidates.length}; metadata.judged = qrels relevance (0 = unjudged/not relevant)`,
  query: query.text,
  passages: candidates.map((c) => {
    const doc = docs.get(c.docId)!;
    return {
      id: doc.id,
      title: doc.title,
      text: doc.text,
      metadata: { bm25Rank: c.rank, judged: judged.get(doc.id) ?? 0 },
      features: { retrieval_score: c.score, retrieval_rank: c.rank },
    };
  }),
};
writeFileSync(join(root, 'examples', 'request.json'), `${JSON.stringify(request, null, 2)}\n`);
process.stdout.write(`examples/request.json: ${request.source}\n`);
