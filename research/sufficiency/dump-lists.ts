// Dumps real and cross-collection (junk) gate lists scored by the shipped fast path, per corpus.
import { writeFileSync } from 'node:fs';
import { loadCollection, type Collection } from '../../src/tooling/eval/collection.js';
import { buildCandidateLists } from '../../src/tooling/eval/candidates.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { resolveQuerySet } from '../../src/tooling/eval/query-set.js';
import { loadEvalTier } from '../../src/tooling/eval/tiers.js';
import { scoreCandidateListWithOrder, judgedGateList } from '../../src/tooling/eval/run-eval.js';

const names = ['cisi', 'cranfield', 'med', 'nfcorpus', 'scifact'];
const cols: Record<string, Collection> = {};
for (const n of names) cols[n] = loadCollection(`../shared/data/${n}`);
const out: unknown[] = [];
for (const corpus of names) {
  const c = cols[corpus]!;
  const tier = await loadEvalTier({ tier: 'fast-path', model: 'models/fast-path-lexical', collection: c });
  const fs = createBm25FirstStage(c);
  const real = resolveQuerySet(c, 'heldout', tier.splits).queryIds;
  for (const src of names) {
    const q = cols[src]!;
    const ids = src === corpus ? real : resolveQuerySet(q, 'heldout', tier.splits).queryIds;
    // The junk collection: src's queries against corpus's docs; no judgments.
    const view: Collection = src === corpus ? c : { ...c, queries: q.queries, queryById: q.queryById, qrels: new Map(), trainQrels: null };
    const lists = buildCandidateLists(view, fs, ids, 20);
    for (const l of lists) {
      const s = await scoreCandidateListWithOrder(view, tier.scorer, l, undefined, true);
      const g = judgedGateList(l, s, 20);
      const passages = l.candidates.slice(0, 20).map((cd) => { const d = view.docById.get(cd.docId)!; return d.title.trim() === '' ? { id: d.id, text: d.text } : { id: d.id, text: d.text, title: d.title }; });
      const rows = passages.length ? (tier.scorer as any).features(l.queryText, passages) as Float32Array : new Float32Array(0);
      const F = 23; const col = (j: number) => passages.map((_, i) => rows[i * F + j]!);
      out.push({ corpus, src, q: l.queryId, rel: g.relevances, ord: g.order, lab: g.relevant, idfcov: col(6), qcov: col(3), qidf: passages.length ? rows[19] : 0, span: col(12), near: col(14) });
    }
    console.error(corpus, src, lists.length);
  }
  await tier.close();
}
writeFileSync('/tmp/lists.json', JSON.stringify(out));
