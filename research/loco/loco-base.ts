/**
 * Leave-one-collection-out base models: for each collection of the data folder, train the fast-path
 * model on the OTHER collections (their train/validation splits, the training pipeline's rules and the
 * chosen grid), then write the margins of the BM25 top-k candidates of
 *   - the held-out collection's judged queries (`relevance-gate eval --queries all`: the model never saw
 *     the collection), and
 *   - the training collections' validation + test queries (what operating points may be fitted on
 *     without touching the held-out collection),
 * with their qrels grades, and the fold model's ranking-blend λ (the training pipeline's choice), to
 * OUT/fold-<collection>.json. `--shipped DIR` instead scores every
 * collection's validation + test + all queries with an existing model directory (OUT/shipped.json).
 * Features are computed once per collection per process (memoised) so the folds reuse them.
 *
 * `--in-domain` measures the other side: how far the same recipe goes on a collection whose labels it
 * HAS seen. For each collection C, its judged queries (qrels.tsv, what LOCO measures on) are cut into
 * --cv seeded folds; for fold j the model trains on every collection, C with the other folds' queries
 * (and, for SciFact, its official training queries) as train/validation (80/20), and OUT/cv-<C>-<j>.json
 * holds fold j's margins (`all`) and C's validation margins, with `trainedOn: [C]`: fitted on C's own
 * queries by scripts/loco-gate.ts's rules, every C query measured once by a model that never trained
 * on it (scripts/in-domain-gate.ts pools the folds).
 *
 * `--extra bm25-variants,idf-spread,prf,lsi` appends candidate ranking features computed here in JS (measurement
 * only; docs/eval.md "Ranking features the fast path lacks"). `prf` features depend on the whole candidate
 * list (pseudo-relevance feedback from its BM25 head), unlike every lexical-v1 feature; `lsi` features
 * (lsi, lsi-head, lsi-rel) depend on a latent basis built from the collection's own documents without
 * labels (scripts/corpus-lsi.ts), as `relevance-gate stats` could build it.
 *
 * Usage: npx tsx scripts/loco-base.ts [--data ../shared/data] [--out /tmp/rg-loco/quick] [--grid quick]
 *        [--only cisi,med] [--shipped models/fast-path-lexical] [--seed 42] [--extra idf-spread]
 *        [--head-terms 48] [--lsi-rank 64] [--in-domain --cv 5]
 */
import type { ScoredQuery } from './loco-fold-data.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { type Collection, compareIds, judgedQueryIds, loadCollection } from '../../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../../src/tooling/eval/first-stage.js';
import { type QuerySplit, fnv1a, seededRandom, shuffled, splitQueries } from '../../src/tooling/eval/splits.js';
import { type CorpusStats, buildCorpusStats } from '../../src/features/corpus-stats.js';
import { tokenize } from '../../src/features/tokenize.js';
import { LexicalFeaturizer } from '../../src/features/featurizer.js';
import type { PlattParameters } from '../../src/calibration/platt.js';
import type { RankingBlend } from '../../src/tiers/fast-path/ranking-blend.js';
import { type PairFeaturizer, type RankingDataset, buildRankingDataset } from '../../src/tooling/training/dataset.js';
import { GRIDS, type GridName, discoverCollections } from '../../src/tooling/training/fast-path-pipeline.js';
import { trainFastPath } from '../../src/tooling/training/train-fast-path.js';
import { createXGBoostBackend } from '../../src/tooling/training/xgboost-backend.js';
import type { Passage } from '../../src/types.js';
import {
  createEmbeddingSimilarities,
  type EmbeddingSimilarities,
  type SimilarityOf,
} from '../../src/tooling/eval/embedding-similarity.js';
import { FEATURE_NAMES } from '../../src/features/schema.js';
import { buildCollectionLsi, foldIn, latentCosine, type LsiModel } from './corpus-lsi.js';
import { corpusIdf, FeedbackCentroid, feedbackSet, passageTokens } from './list-feedback.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: '../shared/data' },
    out: { type: 'string', default: '/tmp/rg-loco/quick' },
    grid: { type: 'string', default: 'quick' },
    only: { type: 'string' },
    shipped: { type: 'string' },
    seed: { type: 'string', default: '42' },
    // Candidate ranking features, computed here in JS and appended to the extractor's (measurement
    // only: the shipped extractor does not compute them): bm25-variants, idf-spread, prf, prf-centroid,
    // prf-expansion, prf-centroid-head, lsi, lsi-rel, lsi-head.
    extra: { type: 'string' },
    // Terms per passage of --extra prf-centroid-head and lsi-head (default 48).
    'head-terms': { type: 'string', default: '48' },
    // Rank of --extra lsi's corpus SVD (default 64).
    'lsi-rank': { type: 'string', default: '64' },
    'in-domain': { type: 'boolean', default: false },
    cv: { type: 'string', default: '5' },
    // Bi-encoder folder of --extra embedding / embedding-cos (corpus vectors cached by
    // src/tooling/eval/embedding-tier.ts under models/.cache/embeddings).
    'embedding-model': { type: 'string', default: 'models/.cache/all-minilm-l6-v2' },
  },
});
const extras = new Set(values.extra ? (values.extra as string).split(',') : []);
// prf-centroid / prf-expansion: one half of prf each (with the membership column), for the ablation.
// prf-centroid-head: the centroid cosine over each passage's first PRF_HEAD_TERMS terms only
// (--head-terms, default 48; the cost of the native pass: research/feedback-native), with the membership column.
const KNOWN_EXTRAS = new Set([
  'bm25-variants',
  'idf-spread',
  'prf',
  'prf-centroid',
  'prf-expansion',
  'prf-centroid-head',
  'lsi',
  'lsi-rel',
  'lsi-head',
  'embedding-cos',
  'embedding',
  'embedding-rank',
]);
for (const e of extras) if (!KNOWN_EXTRAS.has(e)) throw new Error(`unknown --extra ${e}`);
// prf: the feedback set is the list's own BM25 top PRF_DOCS (by the BM25 computed here, so neither the
// list's order nor its length past PRF_DOCS changes it); PRF_TERMS expansion terms.
const PRF_DOCS = 10;
const PRF_TERMS = 20;
const PRF_HEAD_TERMS = Number(values['head-terms']);
// lsi: the cosine of query and passage in the collection's own rank-LSI_RANK latent space
// (scripts/corpus-lsi.ts, built from its documents at featurizer time: unlabelled, as `stats` could);
// lsi-rel adds that cosine minus the list's highest; lsi-head folds in each passage's first --head-terms
// tokens only (what a native pass that stops early would resolve; the query is folded in whole).
const LSI_RANK = Number(values['lsi-rank']);
const LSI = extras.has('lsi') || extras.has('lsi-rel') || extras.has('lsi-head');
// embedding-cos: the bi-encoder's query-passage cosine in the schema's own passthrough column
// `embedding_similarity` (what a caller of the shipped featurizer can supply today); embedding: that,
// plus the cosine's rank within the candidate list (1 = best) and its gap below the list's best,
// appended as extra columns.
// embedding-rank: only what does not depend on the bi-encoder's cosine scale (any embedding model's
// similarities give the same values): the rank within the list and the gap below the list's best
// relative to the list's spread (best − worst); the cosine itself is not given.
const EMBEDDING_RANK_ONLY = extras.has('embedding-rank');
const EMBEDDING = extras.has('embedding') || extras.has('embedding-cos') || EMBEDDING_RANK_ONLY;
const EMBEDDING_LIST_FEATURES = extras.has('embedding');
const NO_LATENT = new Float32Array(0);
if (!Number.isSafeInteger(LSI_RANK) || LSI_RANK < 1) throw new Error('--lsi-rank must be a positive integer');
if (!Number.isSafeInteger(PRF_HEAD_TERMS) || PRF_HEAD_TERMS < 1)
  throw new Error('--head-terms must be a positive integer');
const dataDir = resolve(values.data as string);
const outDir = resolve(values.out as string);
mkdirSync(outDir, { recursive: true });
const seed = Number(values.seed);
const names = discoverCollections(dataDir);
const K = 100;
const log = (line: string) => process.stderr.write(`${line}\n`);

const collections = new Map<string, Collection>();
function collectionOf(name: string): Collection {
  let c = collections.get(name);
  if (!c) {
    c = loadCollection(join(dataDir, name));
    collections.set(name, c);
  }
  return c;
}

/** One featurizer per collection (its own corpus statistics), memoised per (query, passages, rank given). */
const featurizers = new Map<string, PairFeaturizer>();
async function featurizerFor(collection: { readonly name?: string; docs: readonly { title: string; text: string }[] }) {
  const name = (collection as Collection).name;
  const known = featurizers.get(name);
  if (known) return known;
  const stats = await buildCorpusStats(collection.docs);
  const inner = new LexicalFeaturizer(stats);
  const idf = corpusIdf(stats);
  const lsi = LSI ? buildCollectionLsi(collection.docs, idf, { rank: LSI_RANK, seed }) : null;
  const vectors = EMBEDDING ? await embeddingVectors(collection as Collection) : null;
  const extra = extras.size === 0 ? null : extraFeaturizer(stats, idf, lsi, vectors);
  const memo = new Map<string, Float32Array>();
  const f: PairFeaturizer = {
    featureNames: extra === null ? inner.featureNames : [...inner.featureNames, ...extra.names],
    featurize(query: string, passages: readonly Passage[]) {
      const ranked = passages.length > 0 && passages[0]!.features !== undefined;
      const key = `${ranked ? 1 : 0}\u0000${query}\u0000${passages.map((p) => p.id).join('\u0001')}`;
      let rows = memo.get(key);
      if (!rows) {
        rows = inner.featurize(query, passages);
        if (extra !== null) rows = extra.append(rows, inner.featureNames.length, query, passages);
        memo.set(key, rows);
      }
      return rows;
    },
  };
  featurizers.set(name, f);
  return f;
}

let similarities: EmbeddingSimilarities | null = null;
/** The collection's query–document cosines by the --embedding-model bi-encoder (corpus vectors cached). */
async function embeddingVectors(collection: Collection): Promise<SimilarityOf> {
  similarities ??= await createEmbeddingSimilarities(resolve(values['embedding-model'] as string), { log });
  return similarities.forCollection(collection);
}
const EMBEDDING_COLUMN = FEATURE_NAMES.indexOf('embedding_similarity');

/** The candidate features of --extra, on title+body as one field, with the extractor's tokenizer and IDF. */
function extraFeaturizer(
  stats: CorpusStats,
  idf: (term: string) => number,
  lsi: LsiModel | null,
  vectors: SimilarityOf | null,
) {
  const names: string[] = [];
  if (extras.has('bm25-variants')) names.push('bm25_all_k0.9_b0.4', 'bm25_all_k2_b0.9');
  if (extras.has('idf-spread')) names.push('query_idf_sd', 'query_idf_max', 'top_idf_term_matched');
  const prfHead = extras.has('prf-centroid-head');
  const prfCentroid = extras.has('prf') || extras.has('prf-centroid') || prfHead;
  const prfExpansion = extras.has('prf') || extras.has('prf-expansion');
  if (prfCentroid) names.push('prf_centroid_cos');
  if (prfExpansion) names.push('prf_expansion_score');
  if (prfCentroid || prfExpansion) names.push('prf_feedback_member');
  if (LSI) names.push('lsi_cos');
  if (extras.has('lsi-rel')) names.push('lsi_cos_below_best');
  if (EMBEDDING_LIST_FEATURES) names.push('embedding_rank', 'embedding_gap');
  if (EMBEDDING_RANK_ONLY) names.push('embedding_rank', 'embedding_relative_gap');
  const cosinesOf = (query: string, passages: readonly Passage[]): number[] => {
    if (vectors === null) return [];
    return passages.map((p) => {
      const cos = vectors(query, p.id);
      if (cos === undefined) throw new Error(`no cosine for query "${query}" and document ${p.id}`);
      return cos;
    });
  };
  const avgLength = stats.avgBodyLength + stats.avgTitleLength;
  const centroidOf = new FeedbackCentroid(idf);
  const docTerms = new Map<
    string,
    { counts: Map<string, number>; length: number; ids: Int32Array; latent: Float32Array }
  >();
  const termsOf = (p: Passage) => {
    const key = `${p.id}\u0000${p.title ?? ''}\u0000${p.text}`;
    let t = docTerms.get(key);
    if (!t) {
      const tokens = passageTokens(p);
      const counts = new Map<string, number>();
      for (const w of tokens) counts.set(w, (counts.get(w) ?? 0) + 1);
      t = {
        counts,
        length: tokens.length,
        ids: centroidOf.intern(prfHead ? tokens.slice(0, PRF_HEAD_TERMS) : tokens),
        latent:
          lsi === null
            ? NO_LATENT
            : foldIn(lsi, extras.has('lsi-head') ? tokens.slice(0, PRF_HEAD_TERMS) : tokens, idf),
      };
      docTerms.set(key, t);
    }
    return t;
  };
  const bm25 = (
    qTerms: readonly string[],
    d: { counts: Map<string, number>; length: number },
    k1: number,
    b: number,
  ) => {
    let s = 0;
    for (const q of qTerms) {
      const tf = d.counts.get(q) ?? 0;
      if (tf > 0) s += (idf(q) * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.length) / Math.max(1e-9, avgLength)));
    }
    return s;
  };
  /**
   * Pseudo-relevance feedback over the candidate list: the cosine of each passage to the centroid of the
   * feedback set (leaving the passage itself out), an RM3-like expansion score (the PRF_TERMS heaviest
   * non-query terms of the feedback model, weighted by it, BM25-saturated), and feedback membership.
   */
  const feedbackFeatures = (qAll: readonly string[], passages: readonly Passage[]) => {
    const terms = passages.map(termsOf);
    const base = terms.map((d) => bm25(qAll, d, 1.2, 0.75));
    const feedback = feedbackSet(base, PRF_DOCS);
    const inFeedback = new Set(feedback);
    const centroid = centroidOf.cosines(
      terms.map((d) => d.ids),
      feedback,
    );
    // Feedback model (RM3-like, IDF-weighted): weight(w) = Σ_d P(w | d) · (d's share of the feedback
    // set's BM25) · idf(w), over non-query terms.
    const qSet = new Set(qAll);
    const weightSum = feedback.reduce((a, i) => a + base[i]!, 0) || 1;
    const model = new Map<string, number>();
    for (const i of feedback) {
      const d = terms[i]!;
      for (const [w, tf] of d.counts) {
        if (qSet.has(w)) continue;
        model.set(w, (model.get(w) ?? 0) + (((tf / Math.max(1, d.length)) * base[i]!) / weightSum) * idf(w));
      }
    }
    const expansionTerms = [...model.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, PRF_TERMS);
    const expansion = terms.map((d) => {
      let s = 0;
      for (const [w, weight] of expansionTerms) {
        const tf = d.counts.get(w) ?? 0;
        if (tf > 0) s += (weight * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * d.length) / Math.max(1e-9, avgLength)));
      }
      return s;
    });
    const member = passages.map((_, i) => (inFeedback.has(i) ? 1 : 0));
    return { centroid, expansion, member };
  };
  return {
    names,
    append(rows: Float32Array, width: number, query: string, passages: readonly Passage[]): Float32Array {
      const qAll = tokenize(query);
      const qTerms = [...new Set(qAll)];
      const idfs = qTerms.map(idf);
      const mean = idfs.reduce((a, v) => a + v, 0) / Math.max(1, idfs.length);
      const sd = Math.sqrt(idfs.reduce((a, v) => a + (v - mean) ** 2, 0) / Math.max(1, idfs.length));
      const max = idfs.length === 0 ? 0 : Math.max(...idfs);
      const top = qTerms[idfs.indexOf(max)];
      const prf = prfCentroid || prfExpansion ? feedbackFeatures(qAll, passages) : null;
      const qLatent = lsi === null ? null : foldIn(lsi, qAll, idf);
      const latent = qLatent === null ? null : passages.map((p) => latentCosine(qLatent, termsOf(p).latent));
      const bestLatent = latent === null || latent.length === 0 ? 0 : Math.max(...latent);
      const cosines = cosinesOf(query, passages);
      const bestCos = cosines.length === 0 ? 0 : Math.max(...cosines);
      const cosRank = cosines.map((c) => 1 + cosines.filter((o) => o > c).length);
      const spread = bestCos - (cosines.length === 0 ? 0 : Math.min(...cosines));
      const out = new Float32Array(passages.length * (width + names.length));
      passages.forEach((p, i) => {
        out.set(rows.subarray(i * width, (i + 1) * width), i * (width + names.length));
        const d = termsOf(p);
        const values: number[] = [];
        if (extras.has('bm25-variants')) values.push(bm25(qAll, d, 0.9, 0.4), bm25(qAll, d, 2, 0.9));
        if (extras.has('idf-spread')) values.push(sd, max, top !== undefined && d.counts.has(top) ? 1 : 0);
        if (prf !== null) {
          if (prfCentroid) values.push(prf.centroid[i]!);
          if (prfExpansion) values.push(prf.expansion[i]!);
          values.push(prf.member[i]!);
        }
        if (latent !== null) {
          values.push(latent[i]!);
          if (extras.has('lsi-rel')) values.push(latent[i]! - bestLatent);
        }
        if (EMBEDDING_LIST_FEATURES) values.push(cosRank[i]!, bestCos - cosines[i]!);
        if (EMBEDDING_RANK_ONLY) values.push(cosRank[i]!, spread > 0 ? (bestCos - cosines[i]!) / spread : 0);
        out.set(values, i * (width + names.length) + width);
        if (vectors !== null && !EMBEDDING_RANK_ONLY) out[i * (width + names.length) + EMBEDDING_COLUMN] = cosines[i]!;
      });
      return out;
    },
  };
}

/** Features written per pair for score-fusion experiments. */
const EXTRA_FEATURES = ['bm25_all', 'query_idf_sum', 'idf_coverage'] as const;

async function datasetOf(collection: Collection, queryIds: readonly string[]): Promise<RankingDataset> {
  return buildRankingDataset(
    [
      {
        collection,
        firstStage: createBm25FirstStage(collection),
        featurizer: await featurizerFor(collection),
        queryIds,
        passthrough: (list, i) => ({ retrieval_rank: list.candidates[i]!.rank }),
      },
    ],
    K,
  );
}

async function scoreQueries(
  modelBytes: Uint8Array,
  collection: Collection,
  queryIds: readonly string[],
): Promise<ScoredQuery[]> {
  const backend = createXGBoostBackend();
  const ds = await datasetOf(collection, queryIds);
  const margins = await backend.predictMargins(modelBytes, ds.features, ds.numRows, ds.featureNames.length);
  return ds.groups.map((g) => ({
    q: g.list.queryId,
    m: Array.from(margins.subarray(g.offset, g.offset + g.list.candidates.length), (v) => Number(v.toFixed(6))),
    g: g.list.candidates.map((c) => c.grade),
    judged: [...g.list.judgments.values()].filter((v) => v > 0),
    s: g.list.candidates.map((c) => Number(c.bm25.toFixed(6))),
    f: Object.fromEntries(
      EXTRA_FEATURES.map((name) => {
        const col = ds.featureNames.indexOf(name);
        if (col < 0) throw new Error(`feature ${name} missing`);
        const nf = ds.featureNames.length;
        return [name, g.list.candidates.map((_, i) => Number(ds.features[(g.offset + i) * nf + col]!.toFixed(6)))];
      }),
    ),
  }));
}

function splitsOf(collection: Collection) {
  return splitQueries(collection, { seed });
}

/** The fold recipe: the training pipeline on these collections, the grid of --grid, optionally a split of one. */
async function trainOn(collectionNames: readonly string[], querySplits?: Readonly<Record<string, QuerySplit>>) {
  const grid = GRIDS[values.grid as GridName];
  if (!grid) throw new Error(`unknown grid ${values.grid}`);
  const result = await trainFastPath(
    {
      collectionDirs: collectionNames.map((n) => join(dataDir, n)),
      seed,
      k: K,
      gateK: 20,
      targetPrecision: 0.5,
      grid,
      retrievalRankDropout: 0.5,
      minQueriesPerCollection: 100,
      ...(querySplits === undefined ? {} : { querySplits }),
      log,
    },
    { featurizerFor: (c) => featurizerFor(c as Collection), backend: createXGBoostBackend() },
  );
  return {
    modelBytes: result.modelBytes,
    /** What a fold file says of its model. */
    fields: {
      grid: values.grid,
      chosen: { point: result.chosen.point, trees: result.chosen.trees },
      calibration: result.calibration,
      recommendedThreshold: result.threshold.threshold,
      // The pipeline's ranking-blend λ (chosen on the training collections' validation queries only).
      rankingBlend: result.rankingBlend?.blend ?? null,
      rankingBlendSelection: result.rankingBlend ?? null,
    },
  };
}

if (values.shipped !== undefined) {
  const dir = resolve(values.shipped);
  const modelBytes = new Uint8Array(readFileSync(join(dir, 'model.json')));
  const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as {
    calibration?: PlattParameters;
    rankingBlend?: RankingBlend;
  };
  const out: Record<string, Record<string, ScoredQuery[]>> = {};
  for (const name of names) {
    const c = collectionOf(name);
    const s = splitsOf(c);
    out[name] = {
      validation: await scoreQueries(modelBytes, c, s.validation),
      test: await scoreQueries(modelBytes, c, s.test),
      all: await scoreQueries(modelBytes, c, judgedQueryIds(c.qrels)),
    };
    log(`loco-base: shipped: scored ${name}`);
  }
  writeFileSync(
    join(outDir, 'shipped.json'),
    JSON.stringify({ calibration: meta.calibration ?? null, rankingBlend: meta.rankingBlend ?? null, scores: out }),
  );
  log(`loco-base: wrote ${join(outDir, 'shipped.json')}`);
} else if (values['in-domain']) {
  const cv = Number(values.cv);
  if (!Number.isSafeInteger(cv) || cv < 2) throw new Error('--cv must be an integer >= 2');
  for (const target of values.only ? (values.only as string).split(',') : names) {
    const c = collectionOf(target);
    const measured = shuffled(judgedQueryIds(c.qrels), seededRandom(fnv1a(`${seed}:cv:${target}`)));
    const officialTrain = c.trainQrels === null ? [] : judgedQueryIds(c.trainQrels);
    for (let j = 0; j < cv; j++) {
      const t0 = performance.now();
      const test = measured.filter((_, i) => i % cv === j);
      const testSet = new Set(test);
      const rest = shuffled(
        [...new Set([...measured, ...officialTrain])].filter((q) => !testSet.has(q)).sort(compareIds),
        seededRandom(fnv1a(`${seed}:cv:${target}:${j}`)),
      );
      const nValidation = Math.round(0.2 * rest.length);
      const split: QuerySplit = {
        train: rest.slice(nValidation).sort(compareIds),
        validation: rest.slice(0, nValidation).sort(compareIds),
        test: [...test].sort(compareIds),
      };
      const model = await trainOn(names, { [target]: split });
      const file = join(outDir, `cv-${target}-${j}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          heldOut: target,
          trainedOn: [target],
          cv: { folds: cv, fold: j },
          ...model.fields,
          scores: {
            [target]: {
              all: await scoreQueries(model.modelBytes, c, split.test),
              validation: await scoreQueries(model.modelBytes, c, split.validation),
              test: [],
            },
          },
        }),
      );
      log(
        `loco-base: in-domain ${target} fold ${j + 1}/${cv}: wrote ${file} (${Math.round(performance.now() - t0)} ms)`,
      );
    }
  }
} else {
  const folds = values.only ? (values.only as string).split(',') : names;
  for (const heldOut of folds) {
    const t0 = performance.now();
    const trainNames = names.filter((n) => n !== heldOut);
    const model = await trainOn(trainNames);
    const scores: Record<string, Record<string, ScoredQuery[]>> = {};
    const held = collectionOf(heldOut);
    scores[heldOut] = { all: await scoreQueries(model.modelBytes, held, judgedQueryIds(held.qrels)) };
    for (const n of trainNames) {
      const c = collectionOf(n);
      const s = splitsOf(c);
      scores[n] = {
        validation: await scoreQueries(model.modelBytes, c, s.validation),
        test: await scoreQueries(model.modelBytes, c, s.test),
      };
    }
    const file = join(outDir, `fold-${heldOut}.json`);
    writeFileSync(
      file,
      JSON.stringify({
        heldOut,
        trainedOn: trainNames,
        ...model.fields,
        scores,
      }),
    );
    log(`loco-base: fold ${heldOut}: wrote ${file} (${Math.round(performance.now() - t0)} ms)`);
  }
}

await (similarities as EmbeddingSimilarities | null)?.close();
