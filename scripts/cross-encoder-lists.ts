/**
 * BM25 top-N candidate lists of a collection's judged queries as JSON lines, the training and
 * evaluation input of python/interaction: {queryId, query, docs: [{id, bm25, text, grade}],
 * judgments: {docId: grade}}.
 * The passage text is what the cross-encoder tier reads (title + ' ' + text).
 *
 *   npx tsx scripts/cross-encoder-lists.ts <collection dir> <out.jsonl> [topN=100] [all|train]
 *
 * `train` lists the queries of qrels_train.tsv (SciFact's official training split) instead.
 */
import { writeFileSync } from 'node:fs';
import { buildCandidateLists, toPassage } from '../src/tooling/eval/candidates.js';
import { judgedQueryIds, loadCollection } from '../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../src/tooling/eval/first-stage.js';
import { resolveQuerySet } from '../src/tooling/eval/query-set.js';

const [dir, out, topArg, setArg] = process.argv.slice(2);
if (dir === undefined || out === undefined) throw new Error('usage: dump-lists.ts <collection dir> <out.jsonl> [topN]');
const collection = loadCollection(dir);
const ids =
  setArg === 'train'
    ? judgedQueryIds(collection.trainQrels ?? new Map())
    : resolveQuerySet(collection, 'all', null).queryIds;
const lists = buildCandidateLists(collection, createBm25FirstStage(collection), ids, Number(topArg ?? 100));
const docs = new Map(collection.docs.map((d) => [d.id, d]));
const lines = lists.map((l) =>
  JSON.stringify({
    queryId: l.queryId,
    query: l.queryText,
    docs: l.candidates.map((c) => {
      const p = toPassage(docs.get(c.docId)!);
      return { id: c.docId, bm25: c.bm25, text: (p.title ? `${p.title} ${p.text}` : p.text).trim(), grade: c.grade };
    }),
    judgments: Object.fromEntries(l.judgments),
  }),
);
writeFileSync(out, `${lines.join('\n')}\n`);
console.log(`${lists.length} lists → ${out}`);
