/**
 * Measurement, not a shipped path: the lexical-v2 candidate of docs/eval.md ("Pseudo-relevance feedback
 * over the candidate list") built into the addon's extractor (research/feedback-native/fused.patch: each
 * passage's head terms collected after its lexical-v1 columns, then one list pass), timed beside the shipped
 * lexical-v1 rows in the same process, with its cosines checked against research/loco/list-feedback.ts.
 * Runs only on an addon built from the patch: research/feedback-native/fused-run.sh does that in a copy.
 *
 *   research/feedback-native/fused-run.sh [--collection cisi] [--k 100] [--head 48] [--rounds 7]
 *
 * Lists: every judged query's BM25 top k (as research/loco/feedback-cost.ts), and k = 20 lists of the
 * collection's 150–260-word passages drawn at random (bench/features.ts's batches). µs/pair are
 * medians of the rounds (each round: every list once, v1 rows then v2 rows). With
 * RG_FUSED_SKIP_LIST_PASS=1 the patched addon collects the head terms but skips the list pass (the
 * cost of the head terms alone; the feedback columns stay 0, so the parity check is left out).
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { judgedQueryIds, loadCollection } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { buildCorpusStats } from '../../src/features/corpus-stats.js';
import type { NativeCorpusStats } from '../../src/features/native.js';
import { tokenize } from '../../src/features/tokenize.js';
import { loadAddon } from '../../src/native/addon.js';
import { corpusIdf, FeedbackCentroid, feedbackSet } from '../loco/list-feedback.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    collection: { type: 'string', default: 'cisi' },
    k: { type: 'string', default: '100' },
    head: { type: 'string', default: '48' },
    rounds: { type: 'string', default: '7' },
  },
});

/** The patched addon's extractor: a sixth argument asks for lexical-v2 rows. */
interface FusedAddon {
  featuresExtract(
    stats: NativeCorpusStats,
    query: string,
    titles: ReadonlyArray<string | undefined>,
    texts: readonly string[],
    passthrough: null,
    feedback: boolean,
  ): Float32Array;
  featuresSchema(): { version: string; names: string[]; numPairFeatures?: number };
}

const addon = loadAddon() as unknown as FusedAddon;
const schema = addon.featuresSchema();
if (schema.version !== 'lexical-v2' || schema.numPairFeatures === undefined)
  throw new Error(
    `this addon computes ${schema.version}: run research/feedback-native/fused-run.sh (it builds the patch)`,
  );
const WIDTH = schema.names.length;
const V1_WIDTH = schema.numPairFeatures;
const COSINE = schema.names.indexOf('feedback_cosine');
const MEMBER = schema.names.indexOf('feedback_member');
const BM25_ALL = schema.names.indexOf('bm25_all');
const k = Number(values.k);
const head = Number(values.head);
const rounds = Number(values.rounds);

const collection = loadCollection(join(resolve(values.data), values.collection));
const stats = await buildCorpusStats(collection.docs);
const firstStage = createBm25FirstStage(collection);

interface List {
  readonly query: string;
  readonly titles: Array<string | undefined>;
  readonly texts: string[];
}
const listOf = (query: string, docIds: readonly string[]): List => {
  const docs = docIds.map((id) => collection.docById.get(id)!);
  return { query, titles: docs.map((d) => (d.title === '' ? undefined : d.title)), texts: docs.map((d) => d.text) };
};
const queries = judgedQueryIds(collection.qrels).map((q) => collection.queryById.get(q)!.text);
const bm25Lists = queries
  .map((q) =>
    listOf(
      q,
      firstStage.search(q, k).map((c) => c.docId),
    ),
  )
  .filter((l) => l.texts.length > 0);
const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;
const pool = collection.docs.filter((d) => words(d.text) >= 150 && words(d.text) <= 260);
let x = 0x9e3779b9;
const draw = (): number => {
  x = (Math.imul(x, 1103515245) + 12345) >>> 0;
  return x / 2 ** 32;
};
const randomLists =
  pool.length < 20
    ? []
    : queries.slice(0, 64).map((q) =>
        listOf(
          q,
          Array.from({ length: 20 }, () => pool[Math.floor(draw() * pool.length)]!.id),
        ),
      );

const microsPerPair = (lists: readonly List[], feedback: boolean): number => {
  let pairs = 0;
  const t0 = performance.now();
  for (const l of lists) {
    addon.featuresExtract(stats.native, l.query, l.titles, l.texts, null, feedback);
    pairs += l.texts.length;
  }
  return ((performance.now() - t0) * 1000) / pairs;
};
const median = (v: number[]): number => v.sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

const idfOf = corpusIdf(stats);
/** Largest |native − research/loco/list-feedback.ts| cosine, lists whose feedback set differs, and v1 columns that differ. */
const parity = (lists: readonly List[]): { cosine: number; sets: number; v1Columns: number } => {
  let cosine = 0;
  let sets = 0;
  let v1Columns = 0;
  for (const l of lists) {
    const v2 = addon.featuresExtract(stats.native, l.query, l.titles, l.texts, null, true);
    const v1 = addon.featuresExtract(stats.native, l.query, l.titles, l.texts, null, false);
    const n = l.texts.length;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < V1_WIDTH; j++) {
        const a = v1[i * V1_WIDTH + j]!;
        const b = v2[i * WIDTH + j]!;
        if (!(a === b || (Number.isNaN(a) && Number.isNaN(b)))) v1Columns++;
      }
    // The set by the float32 bm25_all column (the native pass orders by the double, so a float32 tie may differ).
    const byBm25 = feedbackSet(
      Array.from({ length: n }, (_, i) => v2[i * WIDTH + BM25_ALL]!),
      10,
    ).sort((a, b) => a - b);
    const members = Array.from({ length: n }, (_, i) => i).filter((i) => v2[i * WIDTH + MEMBER] === 1);
    if (byBm25.join() !== members.join()) sets++;
    const centroid = new FeedbackCentroid(idfOf);
    const terms = l.texts.map((t, i) => centroid.intern(tokenize(`${l.titles[i] ?? ''} ${t}`).slice(0, head)));
    const js = centroid.cosines(terms, members);
    for (let i = 0; i < n; i++) cosine = Math.max(cosine, Math.abs(js[i]! - v2[i * WIDTH + COSINE]!));
  }
  return { cosine, sets, v1Columns };
};

const skipped = process.env.RG_FUSED_SKIP_LIST_PASS !== undefined;
for (const [name, lists] of [
  [`BM25 top ${k}`, bm25Lists],
  ['random k = 20', randomLists],
] as const) {
  if (lists.length === 0) continue;
  microsPerPair(lists, false);
  microsPerPair(lists, true);
  const v1: number[] = [];
  const v2: number[] = [];
  for (let r = 0; r < rounds; r++) {
    v1.push(microsPerPair(lists, false));
    v2.push(microsPerPair(lists, true));
  }
  const p = skipped ? { cosine: 0, sets: 0, v1Columns: 0 } : parity(lists);
  const pairs = lists.reduce((n, l) => n + l.texts.length, 0);
  console.log(
    `${collection.name} ${name} (${pairs} pairs, head ${head}): lexical-v1 ${median(v1).toFixed(2)} µs/pair, ` +
      `lexical-v2${skipped ? ' without the list pass' : ''} ${median(v2).toFixed(2)} µs/pair (${(median(v2) / median(v1)).toFixed(2)}×)` +
      (skipped
        ? ''
        : `; max |cosine − JS| ${p.cosine.toExponential(1)}, feedback sets differing ${p.sets}, v1 columns differing ${p.v1Columns}`),
  );
  if (p.cosine > 1e-6 || p.v1Columns > 0) process.exitCode = 1;
}
