/**
 * Lexical feature extraction speed: µs per (query, passage) pair for k = 20 batches of ~200-word
 * passages from ../shared/data, and extraction + tree scoring per k = 20 call, on one thread.
 * Peer, run side by side in the same process: a plain-TypeScript BM25 over the same passages
 * (regex tokenizer, lower-case, the same stop list, no stemming; one feature instead of 20).
 *
 *   npx tsx bench/features.ts [--collection scifact] [--seconds 2]
 *
 * Tree scoring uses models/fast-path-lexical when it exists; otherwise a deterministic
 * SPEED/SHAPE fixture ensemble (300 depth-6 trees over the 23 features, thresholds drawn from real
 * feature values): its scores mean nothing, only its cost does.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadFastPathScorer, type CorpusStats, type FastPathScorer } from '../src/index.js';
import { FEATURE_NAMES, NUM_FEATURES } from '../src/features/schema.js';
import { buildCorpusStats } from '../src/features/corpus-stats.js';
import { extractFeatures } from '../src/features/extract.js';
import { createTreeModel, type TreeModel } from '../src/tiers/fast-path/tree-model.js';
import type { TreeEnsembleIR, TreeIR } from '../src/tiers/fast-path/model-ir.js';
import { packageRoot } from '../src/util/package-root.js';

interface Doc {
  id: string;
  title: string;
  text: string;
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

const collection = arg('collection', 'scifact');
const seconds = Number(arg('seconds', '2'));
const K = 20;
const dataDir = join(packageRoot(), '..', 'shared', 'data', collection);

const docs: Doc[] = readFileSync(join(dataDir, 'docs.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as Doc);
const queries: string[] = readFileSync(join(dataDir, 'queries.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => (JSON.parse(l) as { text: string }).text)
  .slice(0, 100);
const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;
const pool = docs.filter((d) => {
  const n = words(d.text);
  return n >= 150 && n <= 260;
});
if (pool.length < K) throw new Error(`${collection} has only ${pool.length} passages of 150-260 words`);
const batches: Array<{ query: string; passages: Array<{ id: string; title?: string; text: string }> }> = [];
for (let i = 0; i < 64; i++) {
  const passages = [];
  for (let j = 0; j < K; j++) {
    const d = pool[(i * K + j) % pool.length]!;
    passages.push(d.title === '' ? { id: d.id, text: d.text } : { id: d.id, title: d.title, text: d.text });
  }
  batches.push({ query: queries[i % queries.length]!, passages });
}
const avgWords = batches[0]!.passages.reduce((n, p) => n + words(p.text) + words(p.title ?? ''), 0) / K;

// ---- plain-TypeScript BM25 peer --------------------------------------------------------------
const STOP = new Set(
  (
    'i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself ' +
    'they them their theirs themselves what which who whom this that these those am is are was were be been being have has had having ' +
    'do does did doing would should could ought a an the and but if or because as until while of at by for with about against between ' +
    'into through during before after above below to from up down in out on off over under again further then once here there when ' +
    'where why how all any both each few more most other some such no nor not only own same so than too very'
  ).split(' '),
);
const tsTokens = (s: string): string[] => (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((t) => !STOP.has(t));
const tsDf = new Map<string, number>();
let tsTotalLen = 0;
for (const d of docs) {
  const toks = tsTokens(`${d.title} ${d.text}`);
  tsTotalLen += toks.length;
  for (const t of new Set(toks)) tsDf.set(t, (tsDf.get(t) ?? 0) + 1);
}
const tsAvg = tsTotalLen / docs.length;
function tsBm25(query: string, passages: ReadonlyArray<{ title?: string; text: string }>): Float64Array {
  const q = tsTokens(query);
  const idf = q.map((t) => {
    const df = tsDf.get(t) ?? 0;
    return Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
  });
  const out = new Float64Array(passages.length);
  for (let i = 0; i < passages.length; i++) {
    const p = passages[i]!;
    const toks = tsTokens(p.title === undefined ? p.text : `${p.title} ${p.text}`);
    const tf = new Map<string, number>();
    for (const t of toks) tf.set(t, (tf.get(t) ?? 0) + 1);
    let s = 0;
    for (let j = 0; j < q.length; j++) {
      const f = tf.get(q[j]!) ?? 0;
      if (f > 0) s += (idf[j]! * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * toks.length) / tsAvg));
    }
    out[i] = s;
  }
  return out;
}

// ---- the tree model ---------------------------------------------------------------------------
function fixtureModel(stats: CorpusStats): TreeModel {
  // Thresholds come from real feature values so rows take realistic paths through the trees.
  const sample = batches.slice(0, 8).map((b) => extractFeatures(stats, b.query, b.passages));
  let x = 0x9e3779b9;
  const rnd = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
  const depth = 6;
  const nodes = (1 << (depth + 1)) - 1;
  const inner = (1 << depth) - 1;
  const trees: TreeIR[] = [];
  for (let t = 0; t < 300; t++) {
    const left = new Int32Array(nodes).fill(-1);
    const right = new Int32Array(nodes).fill(-1);
    const splitIndex = new Int32Array(nodes);
    const splitCondition = new Float32Array(nodes);
    const defaultLeft = new Uint8Array(nodes);
    for (let n = 0; n < nodes; n++) {
      if (n < inner) {
        left[n] = 2 * n + 1;
        right[n] = 2 * n + 2;
        const f = Math.floor(rnd() * (NUM_FEATURES - 3));
        const rows = sample[Math.floor(rnd() * sample.length)]!;
        splitIndex[n] = f;
        splitCondition[n] = rows[Math.floor(rnd() * K) * NUM_FEATURES + f]!;
        defaultLeft[n] = rnd() < 0.5 ? 1 : 0;
      } else {
        splitCondition[n] = (rnd() - 0.5) * 0.1;
      }
    }
    trees.push({ group: 0, weight: 1, left, right, splitIndex, splitCondition, defaultLeft });
  }
  const ir: TreeEnsembleIR = {
    booster: 'gbtree',
    objective: 'binary:logistic',
    numFeatures: NUM_FEATURES,
    numGroups: 1,
    baseMargin: 0,
    trees,
    featureNames: FEATURE_NAMES,
  };
  return createTreeModel(ir);
}

// ---- timing -----------------------------------------------------------------------------------
function measure(name: string, fn: (i: number) => unknown): number {
  for (let i = 0; i < 200; i++) fn(i); // warm-up
  const rounds: number[] = [];
  const deadline = performance.now() + seconds * 1000;
  let i = 0;
  while (performance.now() < deadline || rounds.length < 5) {
    const n = 50;
    const t = process.hrtime.bigint();
    for (let j = 0; j < n; j++) fn(i++);
    rounds.push(Number(process.hrtime.bigint() - t) / 1000 / n);
  }
  rounds.sort((a, b) => a - b);
  const median = rounds[Math.floor(rounds.length / 2)]!;
  const best = rounds[0]!;
  console.log(
    `${name.padEnd(44)} ${median.toFixed(1).padStart(8)} µs/call  ${(median / K).toFixed(2).padStart(6)} µs/pair  (best round ${best.toFixed(1)} µs/call)`,
  );
  return median;
}

async function main(): Promise<void> {
  const stats = await buildCorpusStats(join(dataDir, 'docs.jsonl'));
  const shippedDir = join(packageRoot(), 'models', 'fast-path-lexical');
  let model: TreeModel;
  let modelLabel: string;
  let scorer: FastPathScorer | undefined;
  if (existsSync(join(shippedDir, 'meta.json'))) {
    scorer = await loadFastPathScorer(shippedDir, { stats });
    model = scorer.model;
    modelLabel = `shipped models/fast-path-lexical (${model.numTrees} trees)`;
  } else {
    model = fixtureModel(stats);
    modelLabel = `SPEED/SHAPE fixture: ${model.numTrees} random depth-6 trees (not a relevance model)`;
  }
  console.log(
    `collection ${collection}: ${docs.length} docs; k = ${K}, passages avg ${avgWords.toFixed(0)} words; one thread`,
  );
  console.log(`tree model: ${modelLabel}`);
  console.log(
    `node ${process.version}, load average ${(await import('node:os'))
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );

  const nb = batches.length;
  const extract = measure('extract 23 features (native)', (i) => {
    const b = batches[i % nb]!;
    return extractFeatures(stats, b.query, b.passages);
  });
  const both = measure('extract + tree predict (margin)', (i) => {
    const b = batches[i % nb]!;
    const rows = extractFeatures(stats, b.query, b.passages);
    return model.predict(rows, K, { output: 'margin' });
  });
  const rowsByBatch = batches.map((b) => extractFeatures(stats, b.query, b.passages));
  const trees = measure('tree predict alone (k=20 rows)', (i) =>
    model.predict(rowsByBatch[i % nb]!, K, { output: 'margin' }),
  );
  const ts = measure('peer: plain-TS BM25 only (1 feature)', (i) => {
    const b = batches[i % nb]!;
    return tsBm25(b.query, b.passages);
  });
  console.log(
    `ratio: plain-TS BM25 / native extraction = ${(ts / extract).toFixed(2)}x; tree scoring alone ${trees.toFixed(1)} µs per k=${K} call`,
  );
  if (scorer !== undefined) {
    // The full Scorer path (validation, features, trees, result objects), awaited one call at a time.
    const n = 2000;
    for (let i = 0; i < 200; i++) await scorer.score(batches[i % nb]!.query, batches[i % nb]!.passages);
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await scorer.score(batches[i % nb]!.query, batches[i % nb]!.passages);
    const us = Number(process.hrtime.bigint() - t) / 1000 / n;
    console.log(
      `${'scorer.score() end to end'.padEnd(44)} ${us.toFixed(1).padStart(8)} µs/call  ${(us / K).toFixed(2).padStart(6)} µs/pair`,
    );
  }
  const target = extract / K <= 5 ? 'meets' : 'misses';
  console.log(
    `target ≤ 5 µs/pair: ${target} (${(extract / K).toFixed(2)} µs/pair); extraction + trees for k=20: ${(both / 1000).toFixed(3)} ms (target well under 0.5 ms)`,
  );
}

await main();
