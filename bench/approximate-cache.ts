/**
 * The approximate query cache's hit rate and false-reuse rate per threshold, per collection and
 * per kind of query variant, on the judged collections of ../shared/data (docs/cache.md,
 * *Approximate query cache*).
 *
 * For each collection: the first `--queries` judged queries (by id), each with its BM25 top 20
 * (src/tooling/eval) as the passages, and variants of its text:
 *   reorder   the words in another (seeded) order
 *   stopwords the stop words dropped
 *   typo      one or two words with two inner characters swapped or one deleted
 *   negative  not a paraphrase: the collection's other query with the highest word overlap
 *             (Jaccard over lower-cased, stop-word-free words), over the SAME 20 passages
 *             (the worst case: every passage could be reused)
 * Embeddings: the real all-MiniLM-L6-v2 (embed(..., { as: 'query' })), passed to the gate as
 * `queryEmbedding`. Scorer: the shipped fast-path model with the gate's default operating point.
 *
 * Fresh: every (variant, passage) decided by a gate without cache. Approximate: per threshold, one
 * cache with `approximate: { threshold }`; per query, the original is filtered first (its scores
 * cached and remembered), then each variant. A reused pair is one the variant's result marks
 * `cached: 'approximate'`; a false reuse is a reused pair whose route differs from the fresh
 * decision for that (variant, passage). Hit rate = reused pairs / the variant's pairs.
 * The default threshold is the lowest whose false-reuse rate is ≤ 1 % on every collection.
 *
 * Usage: npx tsx bench/approximate-cache.ts [--model models/.cache/all-minilm-l6-v2] [--queries 60]
 *          [--thresholds 0.8,0.85,0.9,0.92,0.94,0.95,0.96,0.97,0.98,0.99,0.995] [--collections cranfield,cisi,med,scifact,nfcorpus]
 *          [--json out.json] [--min-term-overlap 1 (the default guard; 0 = cosine alone)]
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createScoreCache } from '../src/cache/score-cache.js';
import { createGate } from '../src/gate/gate.js';
import type { Route } from '../src/gate/types.js';
import { loadFastPathScorer } from '../src/tiers/fast-path/fast-path-scorer.js';
import { createEmbeddingScorer } from '../src/tiers/embedding/index.js';
import { toPassage } from '../src/tooling/eval/candidates.js';
import { judgedQueryIds, loadCollection } from '../src/tooling/eval/collection.js';
import { createBm25FirstStage, firstStageTokens } from '../src/tooling/eval/first-stage.js';
import type { Passage } from '../src/types.js';
import { packageRoot } from '../src/util/package-root.js';
import { mulberry32 } from '../src/util/seeded-random.js';

const { values: args } = parseArgs({
  options: {
    model: { type: 'string', default: join(packageRoot(), 'models', '.cache', 'all-minilm-l6-v2') },
    queries: { type: 'string', default: '60' },
    thresholds: { type: 'string', default: '0.8,0.85,0.9,0.92,0.94,0.95,0.96,0.97,0.98,0.99,0.995' },
    collections: { type: 'string', default: 'cranfield,cisi,med,scifact,nfcorpus' },
    data: { type: 'string', default: join(packageRoot(), '..', 'shared', 'data') },
    json: { type: 'string' },
    // The cache's term guard (ApproximateCacheOptions.minTermOverlap); 0 = cosine alone.
    'min-term-overlap': { type: 'string', default: '1' },
  },
});
const list = (s: string) =>
  s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
const MODEL_DIR = resolve(args.model as string);
const PER_COLLECTION = Number(args.queries);
const THRESHOLDS = list(args.thresholds as string).map(Number);
const COLLECTIONS = list(args.collections as string);
const K = 20;
const KINDS = ['reorder', 'stopwords', 'typo', 'negative'] as const;
type Kind = (typeof KINDS)[number];

const STOP = new Set(
  'a an the of in on for to and or by with from at as is are was were be been being what which who how why when where do does did can could should would this that these those it its into about than then there their they them any some such not no'.split(
    ' ',
  ),
);

function words(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

function reorder(text: string, random: () => number): string {
  const w = words(text);
  for (let i = w.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [w[i], w[j]] = [w[j], w[i]];
  }
  return w.join(' ');
}

function dropStopWords(text: string): string {
  return words(text)
    .filter((w) => !STOP.has(w.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '')))
    .join(' ');
}

function typo(text: string, random: () => number): string {
  const w = words(text);
  const long = w.map((x, i) => [x, i] as const).filter(([x]) => x.length >= 4);
  const edits = Math.min(long.length, 1 + Math.floor(random() * 2));
  for (let e = 0; e < edits; e++) {
    const [, i] = long[Math.floor(random() * long.length)];
    const word = w[i];
    const at = 1 + Math.floor(random() * (word.length - 2));
    w[i] =
      random() < 0.5
        ? word.slice(0, at) + word[at + 1] + word[at] + word.slice(at + 2) // swap two inner characters
        : word.slice(0, at) + word.slice(at + 1); // delete one
  }
  return w.join(' ');
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  const union = a.size + b.size - both;
  return union === 0 ? 0 : both / union;
}

interface Case {
  readonly collection: string;
  readonly base: string;
  readonly passages: Passage[];
  readonly variants: { kind: Kind; text: string }[];
}

function buildCases(name: string): Case[] {
  const collection = loadCollection(join(resolve(args.data as string), name));
  const firstStage = createBm25FirstStage(collection);
  const ids = judgedQueryIds(collection.qrels).slice(0, PER_COLLECTION);
  const tokenSets = collection.queries.map((q) => ({ q, set: new Set(firstStageTokens(q.text)) }));
  const random = mulberry32(0xa99 ^ name.length);
  const cases: Case[] = [];
  for (const id of ids) {
    const query = collection.queryById.get(id);
    if (query === undefined) continue;
    const base = query.text.trim();
    const passages = firstStage.search(base, K).map((c) => {
      const doc = collection.docById.get(c.docId);
      if (doc === undefined) throw new Error(`no doc ${c.docId}`);
      return toPassage(doc);
    });
    if (passages.length < 2) continue;
    const own = new Set(firstStageTokens(base));
    let best: { text: string; score: number } | undefined;
    for (const { q, set } of tokenSets) {
      if (q.id === id || q.text.trim() === base) continue;
      const score = jaccard(own, set);
      if (best === undefined || score > best.score) best = { text: q.text.trim(), score };
    }
    const variants: { kind: Kind; text: string }[] = [
      { kind: 'reorder', text: reorder(base, random) },
      { kind: 'stopwords', text: dropStopWords(base) },
      { kind: 'typo', text: typo(base, random) },
      ...(best === undefined ? [] : [{ kind: 'negative' as const, text: best.text }]),
    ];
    cases.push({
      collection: name,
      base,
      passages,
      variants: variants.filter((v) => v.text.length > 0 && v.text.replace(/\s+/g, ' ') !== base.replace(/\s+/g, ' ')),
    });
  }
  return cases;
}

interface Tally {
  pairs: number;
  reused: number;
  falseReuse: number;
}

async function main(): Promise<void> {
  if (!existsSync(join(MODEL_DIR, 'relevance-gate-model.json'))) {
    console.error(`no bi-encoder folder at ${MODEL_DIR}: run bash scripts/fetch-reference-models.sh (or pass --model)`);
    process.exit(2);
  }
  const scorer = await loadFastPathScorer();
  const embedder = await createEmbeddingScorer({ modelDir: MODEL_DIR, workers: 1, intraOpThreads: 1 });
  const fresh = createGate({ scorer });
  const cases = COLLECTIONS.flatMap(buildCases);

  const texts = [...new Set(cases.flatMap((c) => [c.base, ...c.variants.map((v) => v.text)]))];
  const vectors = new Map<string, Float32Array>();
  for (let i = 0; i < texts.length; i += 64) {
    const batch = texts.slice(i, i + 64);
    const out = await embedder.embed(batch, { as: 'query' });
    for (let j = 0; j < batch.length; j++) vectors.set(batch[j], out[j]);
  }
  await embedder.close();

  // Fresh routes per (variant text, passage id), and the cosine of each variant to its base.
  const freshRoutes = new Map<string, Map<string, Route>>();
  const cosines: Record<string, number[]> = {};
  for (const c of cases) {
    for (const v of c.variants) {
      const r = await fresh.filter(v.text, c.passages);
      const routes = new Map<string, Route>();
      for (const item of [...r.included, ...r.conflicting, ...r.excluded]) routes.set(item.id, item.route);
      freshRoutes.set(`${c.collection}\u0000${v.text}\u0000${c.base}`, routes);
      const a = vectors.get(c.base) as Float32Array;
      const b = vectors.get(v.text) as Float32Array;
      let dot = 0;
      for (let i = 0; i < a.length; i++) dot += a[i] * b[i];
      cosines[v.kind] ??= [];
      cosines[v.kind].push(dot);
    }
  }

  const rows: { threshold: number; collection: string; kind: Kind | 'all'; tally: Tally }[] = [];
  for (const threshold of THRESHOLDS) {
    const byKey = new Map<string, Tally>();
    const tally = (collection: string, kind: Kind | 'all'): Tally => {
      const key = `${collection}\u0000${kind}`;
      let t = byKey.get(key);
      if (t === undefined) {
        t = { pairs: 0, reused: 0, falseReuse: 0 };
        byKey.set(key, t);
        rows.push({ threshold, collection, kind, tally: t });
      }
      return t;
    };
    for (const name of COLLECTIONS) {
      // One cache per collection and threshold: queries of one collection meet each other's scores.
      const cache = createScoreCache({
        maxBytes: 64 << 20,
        approximate: { threshold, minTermOverlap: Number(args['min-term-overlap']) },
      });
      const gate = createGate({ scorer, cache });
      for (const c of cases.filter((x) => x.collection === name)) {
        await gate.filter(c.base, c.passages, { queryEmbedding: vectors.get(c.base) });
        for (const v of c.variants) {
          const r = await gate.filter(v.text, c.passages, { queryEmbedding: vectors.get(v.text) });
          const routes = freshRoutes.get(`${c.collection}\u0000${v.text}\u0000${c.base}`) as Map<string, Route>;
          for (const t of [tally(name, v.kind), tally(name, 'all'), tally('all', v.kind), tally('all', 'all')]) {
            for (const item of [...r.included, ...r.conflicting, ...r.excluded]) {
              t.pairs++;
              if (item.cached !== 'approximate') continue;
              t.reused++;
              if (routes.get(item.id) !== item.route) t.falseReuse++;
            }
          }
        }
      }
      await cache.close();
    }
  }

  const pct = (n: number, d: number) => (d === 0 ? '–' : `${((100 * n) / d).toFixed(1)}`);
  const summary = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(3);
    return `median ${q(0.5)}, p10 ${q(0.1)}, p90 ${q(0.9)}`;
  };
  console.log(
    `cases: ${cases.length} queries, ${cases.reduce((n, c) => n + c.variants.length, 0)} variants, ${K} passages each; model ${MODEL_DIR}`,
  );
  for (const kind of KINDS)
    if (cosines[kind]) console.log(`cosine to the original, ${kind}: ${summary(cosines[kind])}`);
  console.log('\nhit % / false-reuse % of reused pairs (reused pairs), per threshold');
  const cols = [...COLLECTIONS, 'all'];
  console.log(`| threshold | kind | ${cols.join(' | ')} |`);
  console.log(`|---|---|${cols.map(() => '---').join('|')}|`);
  for (const threshold of THRESHOLDS) {
    for (const kind of [...KINDS, 'all'] as const) {
      const cells = cols.map((col) => {
        const t = rows.find((r) => r.threshold === threshold && r.collection === col && r.kind === kind)?.tally;
        return t === undefined ? '–' : `${pct(t.reused, t.pairs)} / ${pct(t.falseReuse, t.reused)} (${t.reused})`;
      });
      console.log(`| ${threshold} | ${kind} | ${cells.join(' | ')} |`);
    }
  }
  const ok = THRESHOLDS.filter((threshold) =>
    COLLECTIONS.every((col) => {
      const t = rows.find((r) => r.threshold === threshold && r.collection === col && r.kind === 'all')?.tally;
      return t !== undefined && (t.reused === 0 || t.falseReuse / t.reused <= 0.01);
    }),
  );
  console.log(
    `\nlowest threshold with false reuse ≤ 1 % on every collection: ${ok.length === 0 ? 'none' : Math.min(...ok)}`,
  );
  // Reordered words and dropped stop words keep the query's terms: the kinds a reuse is meant for.
  const paraphraseOk = THRESHOLDS.filter((threshold) =>
    COLLECTIONS.every((col) =>
      (['reorder', 'stopwords'] as const).every((kind) => {
        const t = rows.find((r) => r.threshold === threshold && r.collection === col && r.kind === kind)?.tally;
        return t !== undefined && (t.reused === 0 || t.falseReuse / t.reused <= 0.01);
      }),
    ),
  );
  console.log(
    `lowest threshold with false reuse ≤ 1 % for reordered words and dropped stop words on every collection: ${paraphraseOk.length === 0 ? 'none' : Math.min(...paraphraseOk)}`,
  );
  if (args.json !== undefined)
    writeFileSync(
      args.json,
      JSON.stringify({ rows: rows.map((r) => ({ ...r, ...r.tally, tally: undefined })), cosines }, null, 1),
    );
}

await main();
