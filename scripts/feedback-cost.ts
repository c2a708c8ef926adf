/**
 * Measurement, not a shipped path: what the feedback centroid cosine (docs/eval.md, "Pseudo-relevance
 * feedback over the candidate list") costs per pair once passages are tokenised, beside the shipped
 * native extractor on the same lists. The passages are tokenised and their terms interned to integer
 * ids before timing (the native extractor already tokenises and hashes every passage), so the timed
 * part is what a native version would add: per-list term counts, tf-idf unit vectors, the BM25 top-10
 * feedback sum and one cosine per passage. Plain JS with typed arrays: an upper bound for C++. The
 * feedback set here is the first stage's top 10 (loco-base.ts recomputes BM25 on the extractor's
 * tokens; the set can differ, the work per list does not).
 *
 * Usage: npx tsx scripts/feedback-cost.ts [--data ../shared/data] [--collection cisi] [--k 100] [--rounds 5]
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { judgedQueryIds, loadCollection } from '../src/eval/collection.js';
import { createBm25FirstStage } from '../src/eval/first-stage.js';
import { buildCorpusStats } from '../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../src/features/featurizer.js';
import { tokenize } from '../src/features/tokenize.js';
import type { Passage } from '../src/types.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    collection: { type: 'string', default: 'cisi' },
    k: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
  },
});
const FEEDBACK_DOCS = 10;
const k = Number(values.k);
const collection = loadCollection(join(resolve(values.data as string), values.collection as string));
const stats = await buildCorpusStats(collection.docs);
const extractor = new LexicalFeaturizer(stats);
const firstStage = createBm25FirstStage(collection);

const ids = new Map<string, number>();
const idfById: number[] = [];
const intern = (term: string): number => {
  let id = ids.get(term);
  if (id === undefined) {
    id = ids.size;
    ids.set(term, id);
    const df = stats.documentFrequency(term).any;
    idfById.push(Math.log(1 + (stats.docCount - df + 0.5) / (df + 0.5)));
  }
  return id;
};

interface List {
  readonly query: string;
  readonly passages: Passage[];
  readonly terms: Int32Array[];
  readonly bm25: Float64Array;
}
const lists: List[] = [];
for (const qid of judgedQueryIds(collection.qrels)) {
  const query = collection.queryById.get(qid)!.text;
  const candidates = firstStage.search(query, k);
  if (candidates.length === 0) continue;
  const passages = candidates.map((c) => {
    const d = collection.docById.get(c.docId)!;
    return { id: d.id, title: d.title, text: d.text };
  });
  const terms = passages.map((p) => Int32Array.from(tokenize(`${p.title} ${p.text}`), intern));
  lists.push({ query, passages, terms, bm25: Float64Array.from(candidates, (c) => c.score) });
}
const idf = Float64Array.from(idfById);
const pairs = lists.reduce((a, l) => a + l.passages.length, 0);

/** The centroid cosine of every passage of one list (the loco-base.ts `prf-centroid` column, on ids). */
const sum = new Float64Array(ids.size);
const weight = new Float64Array(ids.size);
const seen = new Uint8Array(ids.size);
function centroidCosines(list: List, out: Float64Array): void {
  const n = list.terms.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => list.bm25[b]! - list.bm25[a]! || a - b);
  const feedback = order.slice(0, Math.min(FEEDBACK_DOCS, n));
  const member = new Uint8Array(n);
  for (const i of feedback) member[i] = 1;
  // Unit tf-idf vectors as (distinct term ids, values) per passage.
  const vecIds: Int32Array[] = [];
  const vecVals: Float64Array[] = [];
  for (let i = 0; i < n; i++) {
    const t = list.terms[i]!;
    const distinct: number[] = [];
    for (let j = 0; j < t.length; j++) {
      const id = t[j]!;
      if (weight[id] === 0) distinct.push(id);
      weight[id]! += 1;
    }
    const vals = new Float64Array(distinct.length);
    let norm = 0;
    for (let j = 0; j < distinct.length; j++) {
      const id = distinct[j]!;
      const x = (1 + Math.log(weight[id]!)) * idf[id]!;
      vals[j] = x;
      norm += x * x;
      weight[id] = 0;
    }
    norm = Math.sqrt(norm) || 1;
    for (let j = 0; j < vals.length; j++) vals[j]! /= norm;
    vecIds.push(Int32Array.from(distinct));
    vecVals.push(vals);
  }
  let sumNorm2 = 0;
  for (const i of feedback) {
    const vi = vecIds[i]!;
    const vv = vecVals[i]!;
    for (let j = 0; j < vi.length; j++) sum[vi[j]!]! += vv[j]!;
  }
  // |sum|², each term once (a term in several feedback passages is marked when first counted).
  for (const i of feedback) {
    for (const id of vecIds[i]!) {
      if (seen[id] === 1) continue;
      seen[id] = 1;
      sumNorm2 += sum[id]! * sum[id]!;
    }
  }
  for (let i = 0; i < n; i++) {
    const d = member[i]!;
    const vi = vecIds[i]!;
    const vv = vecVals[i]!;
    let sv = 0;
    let vn = 0;
    for (let j = 0; j < vi.length; j++) {
      sv += sum[vi[j]!]! * vv[j]!;
      vn += vv[j]! * vv[j]!;
    }
    const n2 = sumNorm2 - 2 * d * sv + d * vn;
    out[i] = feedback.length - d === 0 || n2 <= 0 ? 0 : (sv - d * vn) / Math.sqrt(n2);
  }
  for (const i of feedback) {
    for (const id of vecIds[i]!) {
      sum[id] = 0;
      seen[id] = 0;
    }
  }
}

const out = new Float64Array(k);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const feedbackTimes: number[] = [];
const extractorTimes: number[] = [];
let checksum = 0;
for (let round = 0; round < Number(values.rounds); round++) {
  let t0 = performance.now();
  for (const l of lists) {
    centroidCosines(l, out);
    checksum += out[0]!;
  }
  feedbackTimes.push(((performance.now() - t0) * 1000) / pairs);
  t0 = performance.now();
  for (const l of lists) checksum += extractor.featurize(l.query, l.passages)[0]!;
  extractorTimes.push(((performance.now() - t0) * 1000) / pairs);
}
console.log(
  `${values.collection}: ${lists.length} lists of up to ${k}, ${pairs} pairs, ${values.rounds} rounds (checksum ${checksum.toFixed(3)})`,
);
console.log(`feedback centroid cosine (JS, tokens given): ${median(feedbackTimes).toFixed(2)} µs/pair (median)`);
console.log(`shipped native extractor, lexical-v1 (tokenises): ${median(extractorTimes).toFixed(2)} µs/pair (median)`);
