/**
 * Measurement, not a shipped path: what the feedback centroid cosine (docs/eval.md, "Pseudo-relevance
 * feedback over the candidate list") costs per pair once passages are tokenised, beside the shipped
 * native extractor on the same lists. The passages are tokenised and their terms interned to integer
 * ids before timing (the native extractor already tokenises and hashes every passage), so the timed
 * part is what a native version would add: per-list term counts, tf-idf unit vectors, the BM25 top-10
 * feedback sum and one cosine per passage (scripts/list-feedback.ts, the code loco-base.ts trains with).
 * Plain JS with typed arrays: an upper bound for C++. The feedback set here is the first stage's top
 * 10 (loco-base.ts recomputes BM25 on the extractor's tokens; the set can differ, the work per list
 * does not).
 *
 * `--dump FILE` also writes the collection and the lists (with the feedback set and the cosines computed
 * here) for research/feedback-native, which times the same computation in C++ inside the extractor's own
 * tokeniser and checks it against these cosines.
 *
 * Usage: npx tsx scripts/feedback-cost.ts [--data ../shared/data] [--collection cisi] [--k 100] [--rounds 5]
 *          [--head N] [--dump FILE]
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { judgedBm25Lists } from './bm25-lists.js';
import { corpusIdf, FeedbackCentroid, feedbackSet, passageTokens } from './list-feedback.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    collection: { type: 'string', default: 'cisi' },
    k: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    dump: { type: 'string' },
    // Only each passage's first N terms enter its vector (loco-base.ts --extra prf-centroid-head: 48); 0 = all.
    head: { type: 'string', default: '0' },
  },
});
const FEEDBACK_DOCS = 10;
const k = Number(values.k);
const collection = loadCollection(join(resolve(values.data as string), values.collection as string));
const stats = await buildCorpusStats(collection.docs);
const extractor = new LexicalFeaturizer(stats);
const centroid = new FeedbackCentroid(corpusIdf(stats));

const head = Number(values.head);
const lists = judgedBm25Lists(collection, k).map((l) => ({
  ...l,
  terms: l.passages.map((p) => {
    const tokens = passageTokens(p);
    return centroid.intern(head > 0 ? tokens.slice(0, head) : tokens);
  }),
}));
const pairs = lists.reduce((a, l) => a + l.passages.length, 0);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const feedbackTimes: number[] = [];
const extractorTimes: number[] = [];
let checksum = 0;
for (let round = 0; round < Number(values.rounds); round++) {
  let t0 = performance.now();
  for (const l of lists) checksum += centroid.cosines(l.terms, feedbackSet(l.bm25, FEEDBACK_DOCS))[0]!;
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

if (values.dump !== undefined) {
  // One record per line, tab-separated (tabs and newlines in texts become spaces): D title text (every
  // document, for the statistics); Q query feedback-indices; P title text cosine (the list's passages).
  const clean = (t: string | undefined) => (t ?? '').replace(/[\t\n\r]/g, ' ');
  const out: string[] = collection.docs.map((d) => `D\t${clean(d.title)}\t${clean(d.text)}`);
  for (const l of lists) {
    const feedback = feedbackSet(l.bm25, FEEDBACK_DOCS);
    const cos = centroid.cosines(l.terms, feedback);
    out.push(`Q\t${clean(l.query)}\t${feedback.join(',')}`);
    l.passages.forEach((p, i) => {
      out.push(`P\t${clean(p.title)}\t${clean(p.text)}\t${cos[i]!.toPrecision(17)}`);
    });
  }
  writeFileSync(values.dump, `${out.join('\n')}\n`);
  console.log(`wrote ${values.dump}: ${collection.docs.length} documents, ${lists.length} lists`);
}
