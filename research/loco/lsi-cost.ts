/**
 * Measurement, not a shipped path: what the latent cosine of scripts/corpus-lsi.ts (docs/eval.md,
 * "Latent semantics from the corpus") costs, at stats time and per pair, beside the shipped native
 * extractor on the same BM25 lists.
 *
 * Stats time: the randomized SVD over the collection's documents (what `relevance-gate stats` would add)
 * and the size of U as float32 (what the stats file would carry). Per pair: every passage token is
 * resolved to its row of U and its IDF before timing (a native extractor would do that inside its own
 * tokeniser and term cache; research/feedback-native measured that part for the feedback feature), so the
 * timed part is what the latent feature adds on top: term counts, the unit tf-idf weights, the fold-in
 * (rank multiply-adds per distinct term), the normalisation and one dot product with the query's vector.
 * Plain JS with typed arrays: an upper bound for C++. The cosines are checked against
 * corpus-lsi.ts's `foldIn` / `latentCosine` (the code loco-base.ts trains with); the run fails otherwise.
 *
 * `--dump FILE` also writes U, the IDF by row, the query vectors, the passages' token rows and these cosines
 * (little-endian binary, layout in research/lsi-native/fold_in.cc) for research/lsi-native, which times the same
 * per-pair work in C++ and checks it against these cosines.
 *
 * Usage: npx tsx scripts/lsi-cost.ts [--data ../shared/data] [--collection cisi] [--k 100] [--rounds 5]
 *          [--rank 64] [--head N] [--dump FILE]
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCollection } from '../../src/tooling/eval/collection.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import { tokenize } from '../../src/features/tokenize.js';
import type { Passage } from '../../src/types.js';
import { judgedBm25Lists } from './bm25-lists.js';
import { buildCollectionLsi, foldIn, latentCosine } from './corpus-lsi.js';
import { corpusIdf, passageTokens } from './list-feedback.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    collection: { type: 'string', default: 'cisi' },
    k: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '5' },
    rank: { type: 'string', default: '64' },
    // Only each passage's first N tokens are folded in (loco-base.ts --extra lsi-head); 0 = all.
    head: { type: 'string', default: '0' },
    dump: { type: 'string' },
  },
});
const k = Number(values.k);
const head = Number(values.head);
const collection = loadCollection(join(resolve(values.data as string), values.collection as string));
const stats = await buildCorpusStats(collection.docs);
const idf = corpusIdf(stats);
const extractor = new LexicalFeaturizer(stats);

let t0 = performance.now();
const model = buildCollectionLsi(collection.docs, idf, { rank: Number(values.rank), seed: 42 });
const buildSeconds = (performance.now() - t0) / 1000;
const rank = model.rank;
const basis = model.basis;
const idfByRow = new Float64Array(model.termRow.size);
for (const [term, row] of model.termRow) idfByRow[row] = idf(term);

interface List {
  readonly query: string;
  readonly queryVector: Float32Array;
  readonly passages: Passage[];
  /** Each passage's tokens as rows of U (-1: not in the model). */
  readonly rows: Int32Array[];
  /** corpus-lsi.ts's cosines, to check the timed code against. */
  readonly reference: Float64Array;
}
const lists: List[] = [];
for (const { query, passages } of judgedBm25Lists(collection, k)) {
  const queryVector = foldIn(model, tokenize(query), idf);
  const tokens = passages.map((p) => {
    const all = passageTokens(p);
    return head > 0 ? all.slice(0, head) : all;
  });
  lists.push({
    query,
    queryVector,
    passages,
    rows: tokens.map((ts) => Int32Array.from(ts, (t) => model.termRow.get(t) ?? -1)),
    reference: Float64Array.from(tokens, (ts) => latentCosine(queryVector, foldIn(model, ts, idf))),
  });
}
const pairs = lists.reduce((a, l) => a + l.passages.length, 0);

// Scratch reused across passages, as a native pass would keep per thread.
const tf = new Uint16Array(model.termRow.size);
const distinct = new Int32Array(lists.reduce((m, l) => l.rows.reduce((n, r) => Math.max(n, r.length), m), 1));
const acc = new Float64Array(rank);

/** The latent cosine of one passage (token rows) with a unit query vector. */
function passageCosine(rows: Int32Array, query: Float32Array): number {
  let n = 0;
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (r < 0) continue;
    if (tf[r]++ === 0) distinct[n++] = r;
  }
  acc.fill(0);
  let norm = 0;
  for (let e = 0; e < n; e++) {
    const r = distinct[e]!;
    const w = (1 + Math.log(tf[r]!)) * idfByRow[r]!;
    tf[r] = 0;
    if (w <= 0) continue;
    norm += w * w;
    const o = r * rank;
    for (let c = 0; c < rank; c++) acc[c]! += w * basis[o + c]!;
  }
  // The tf-idf norm scales acc uniformly, so only acc's own length matters for the cosine.
  if (norm === 0) return 0;
  let length = 0;
  let dot = 0;
  for (let c = 0; c < rank; c++) {
    length += acc[c]! * acc[c]!;
    dot += acc[c]! * query[c]!;
  }
  return length > 0 ? dot / Math.sqrt(length) : 0;
}

// corpus-lsi.ts rounds the folded-in vector to float32 before the dot product; allow for that.
let worst = 0;
for (const l of lists)
  l.rows.forEach((rows, i) => {
    worst = Math.max(worst, Math.abs(passageCosine(rows, l.queryVector) - l.reference[i]!));
  });
if (worst > 1e-6) throw new Error(`timed cosines differ from corpus-lsi.ts by up to ${worst}`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const latentTimes: number[] = [];
const extractorTimes: number[] = [];
let checksum = 0;
for (let round = 0; round < Number(values.rounds); round++) {
  t0 = performance.now();
  for (const l of lists) for (const rows of l.rows) checksum += passageCosine(rows, l.queryVector);
  latentTimes.push(((performance.now() - t0) * 1000) / pairs);
  t0 = performance.now();
  for (const l of lists) checksum += extractor.featurize(l.query, l.passages)[0]!;
  extractorTimes.push(((performance.now() - t0) * 1000) / pairs);
}
console.log(
  `${values.collection}: ${collection.docs.length} documents, ${model.termRow.size} terms; rank ${rank} SVD ${buildSeconds.toFixed(1)} s, U ${((model.termRow.size * rank * 4) / 2 ** 20).toFixed(1)} MiB as float32`,
);
console.log(
  `${lists.length} lists of up to ${k}, ${pairs} pairs, ${head > 0 ? `first ${head} tokens per passage` : 'every token'}, ${values.rounds} rounds (cosines equal corpus-lsi.ts within ${worst.toExponential(1)}; checksum ${checksum.toFixed(3)})`,
);
console.log(`latent cosine (JS, token rows given): ${median(latentTimes).toFixed(2)} µs/pair (median)`);
console.log(`shipped native extractor, lexical-v1 (tokenises): ${median(extractorTimes).toFixed(2)} µs/pair (median)`);

if (values.dump !== undefined) {
  // int32 rank, terms, lists; float32 U[terms × rank]; float64 idf[terms]; then per list: int32 passages,
  // float32 query[rank], and per passage: int32 tokens, int32 rows[tokens], float64 reference cosine.
  const parts: Buffer[] = [Buffer.from(Int32Array.of(rank, model.termRow.size, lists.length).buffer)];
  parts.push(Buffer.from(basis.buffer, basis.byteOffset, basis.byteLength));
  parts.push(Buffer.from(idfByRow.buffer));
  for (const l of lists) {
    parts.push(
      Buffer.from(Int32Array.of(l.passages.length).buffer),
      Buffer.from(Float32Array.from(l.queryVector).buffer),
    );
    l.rows.forEach((rows, i) => {
      parts.push(Buffer.from(Int32Array.of(rows.length).buffer), Buffer.from(Int32Array.from(rows).buffer));
      parts.push(Buffer.from(Float64Array.of(l.reference[i]!).buffer));
    });
  }
  writeFileSync(values.dump, Buffer.concat(parts));
  console.log(`wrote ${values.dump}: ${lists.length} lists, ${pairs} pairs`);
}
