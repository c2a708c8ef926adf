/**
 * Sanity check of the BM25 first stage against the data README's BM25 MAP column: MAP (top 1000) and
 * nDCG@10 over every judged query of qrels.tsv, per collection.
 * Usage: npx tsx scripts/bm25-sanity.ts [--data ../shared/data]
 */
import { join, resolve } from 'node:path';
import { judgedQueryIds, loadCollection } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { averagePrecision, meanOf, ndcgAt } from '../../src/tooling/eval/metrics.js';
import { discoverCollections } from '../../src/tooling/training/fast-path-pipeline.js';

const at = process.argv.indexOf('--data');
const dataDir = resolve(at > 0 ? process.argv[at + 1]! : '../shared/data');
process.stdout.write(
  '| collection | queries | MAP@1000 | nDCG@10 | index ms | search ms |\n|---|---|---|---|---|---|\n',
);
for (const name of discoverCollections(dataDir)) {
  const c = loadCollection(join(dataDir, name));
  const t0 = performance.now();
  const fs = createBm25FirstStage(c);
  const t1 = performance.now();
  const ap: Array<number | null> = [];
  const nd: Array<number | null> = [];
  const ids = judgedQueryIds(c.qrels);
  for (const qid of ids) {
    const ranking = fs.search(c.queryById.get(qid)!.text, 1000).map((r) => r.docId);
    ap.push(averagePrecision(ranking, c.qrels.get(qid)!));
    nd.push(ndcgAt(ranking, c.qrels.get(qid)!, 10));
  }
  const t2 = performance.now();
  process.stdout.write(
    `| ${name} | ${ids.length} | ${meanOf(ap)!.toFixed(4)} | ${meanOf(nd)!.toFixed(4)} | ${Math.round(t1 - t0)} | ${Math.round(t2 - t1)} |\n`,
  );
}
