/**
 * The embedding tier in `relevance-gate eval` and `fit-points`. The corpus is embedded once per
 * (model, collection) and kept in a file (models/.cache/embeddings/, else the temp folder), keyed by
 * the model id, the passage prefix and the collection's fingerprint; the collection's queries are
 * embedded at load. Scoring then passes those vectors as precomputed embeddings (`passage.embedding`,
 * `queryEmbedding`), so the model runs once per text whatever the number of queries and lists.
 *
 * - Reranking (default): BM25's top k per query, scored by cosine (the tier's `relevant`).
 * - `--dense`: exact full-corpus retrieval with the bi-encoder instead of BM25 (cosine top k over
 *   every document), then the same report; "first stage" is then the dense retrieval.
 *
 * `fit-points --tier embedding` first fits the tier's calibration (Platt over the cosine, on the
 * judged first-stage top gateK of every collection) and scores the operating points with it.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fitPlatt, type PlattParameters } from '../../calibration/platt.js';
import { InvalidArgumentError } from '../../errors.js';
import type { EmbeddingScorer } from '../../tiers/embedding/types.js';
import type { DetailedPairScore, Passage, Scorer, ScoreOptions } from '../../types.js';
import { packageRoot } from '../../util/package-root.js';
import { buildCandidateLists, toPassage } from './candidates.js';
import { type Collection, compareIds, docPassage } from './collection.js';
import { type Candidate, createBm25FirstStage, DEFAULT_BM25, type FirstStage } from './first-stage.js';

/** Texts per embed() call while embedding a corpus, and calls in flight (keeps every worker fed). */
const EMBED_CHUNK = 128;
const EMBED_CONCURRENCY = 4;

/** A corpus's vectors, row i = docs[i]. */
export interface CorpusEmbeddings {
  readonly ids: readonly string[];
  readonly row: ReadonlyMap<string, number>;
  /** Row-major [docs × dimensions], unit vectors. */
  readonly matrix: Float32Array;
  readonly dimensions: number;
  /** The cache file, or null when it could not be written. */
  readonly file: string | null;
  /** True when read from the cache file (the model did not run). */
  readonly fromCache: boolean;
}

interface CacheMeta {
  readonly format: 1;
  readonly modelId: string;
  readonly passagePrefix: string;
  readonly collection: string;
  readonly fingerprint: string;
  readonly dimensions: number;
  readonly count: number;
  readonly idsHash: string;
}

function idsHash(ids: readonly string[]): string {
  return createHash('sha256').update(ids.join('\n')).digest('hex').slice(0, 16);
}

/** Where corpus embeddings are kept: models/.cache/embeddings in the package, else the temp folder. */
export function defaultEmbeddingsCacheDir(): string {
  const inPackage = join(packageRoot(), 'models', '.cache', 'embeddings');
  try {
    mkdirSync(inPackage, { recursive: true });
    return inPackage;
  } catch {
    const dir = join(tmpdir(), 'relevance-gate-embeddings');
    mkdirSync(dir, { recursive: true });
    return dir;
  }
}

/** Embeds texts in chunks, a few calls in flight. */
async function embedAll(
  scorer: EmbeddingScorer,
  texts: readonly string[],
  as: 'query' | 'passage',
  onProgress?: (done: number) => void,
): Promise<Float32Array[]> {
  const out: Float32Array[] = new Array(texts.length);
  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < texts.length) {
      const start = next;
      next = Math.min(texts.length, next + EMBED_CHUNK);
      const vectors = await scorer.embed(texts.slice(start, next), { as });
      for (let i = 0; i < vectors.length; i++) out[start + i] = vectors[i];
      done += vectors.length;
      onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: EMBED_CONCURRENCY }, worker));
  return out;
}

/**
 * The collection's documents embedded by `scorer` (as passages: title + ' ' + text), from the cache
 * file when it matches the model, the prefix and the collection, else computed and written there.
 */
export async function corpusEmbeddings(
  scorer: EmbeddingScorer,
  collection: Collection,
  options: { readonly cacheDir?: string; readonly log?: (line: string) => void } = {},
): Promise<CorpusEmbeddings> {
  const log = options.log ?? (() => undefined);
  const ids = collection.docs.map((d) => d.id);
  const row = new Map(ids.map((id, i) => [id, i]));
  const dims = scorer.dimensions;
  const meta: CacheMeta = {
    format: 1,
    modelId: scorer.modelId,
    passagePrefix: scorer.info.passagePrefix,
    collection: collection.name,
    fingerprint: collection.fingerprint,
    dimensions: dims,
    count: ids.length,
    idsHash: idsHash(ids),
  };
  const key = createHash('sha256')
    .update(`${meta.modelId}\u0000${meta.passagePrefix}\u0000${meta.fingerprint}`)
    .digest('hex')
    .slice(0, 24);
  let dir: string | null = null;
  try {
    if (options.cacheDir !== undefined) mkdirSync(options.cacheDir, { recursive: true });
    dir = options.cacheDir ?? defaultEmbeddingsCacheDir();
  } catch {
    dir = null;
  }
  const base = dir === null ? null : join(dir, `${collection.name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${key}`);
  if (base !== null && existsSync(`${base}.json`) && existsSync(`${base}.f32`)) {
    try {
      const stored = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as CacheMeta;
      const bytes = readFileSync(`${base}.f32`);
      if (JSON.stringify(stored) === JSON.stringify(meta) && bytes.byteLength === ids.length * dims * 4) {
        const matrix = new Float32Array(ids.length * dims);
        new Uint8Array(matrix.buffer).set(bytes);
        log(`embedding: corpus vectors of ${collection.name} from ${base}.f32`);
        return { ids, row, matrix, dimensions: dims, file: `${base}.f32`, fromCache: true };
      }
      log(`embedding: ${base}.f32 is for another model or corpus: embedding again`);
    } catch {
      log(`embedding: ${base}.f32 is unreadable: embedding again`);
    }
  }
  const started = performance.now();
  let lastLog = started;
  const vectors = await embedAll(scorer, collection.docs.map(docPassage), 'passage', (done) => {
    const now = performance.now();
    if (now - lastLog > 10_000) {
      lastLog = now;
      log(
        `embedding: ${done} / ${ids.length} documents of ${collection.name} (${((now - started) / 1000).toFixed(0)} s)`,
      );
    }
  });
  const matrix = new Float32Array(ids.length * dims);
  vectors.forEach((v, i) => {
    matrix.set(v, i * dims);
  });
  log(
    `embedding: embedded ${ids.length} documents of ${collection.name} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  let file: string | null = null;
  if (base !== null) {
    try {
      // Written under a temporary name and renamed: a reader never sees half a file.
      writeFileSync(`${base}.f32.tmp`, new Uint8Array(matrix.buffer));
      renameSync(`${base}.f32.tmp`, `${base}.f32`);
      writeFileSync(`${base}.json`, `${JSON.stringify(meta)}\n`);
      file = `${base}.f32`;
      log(`embedding: wrote ${file}`);
    } catch (err) {
      log(`embedding: could not write the corpus vectors (${(err as Error).message}); they are not cached`);
    }
  }
  return { ids, row, matrix, dimensions: dims, file, fromCache: false };
}

/** Query text → unit vector, embedded as queries. */
export async function queryEmbeddings(
  scorer: EmbeddingScorer,
  texts: readonly string[],
  into: Map<string, Float32Array> = new Map(),
): Promise<Map<string, Float32Array>> {
  const missing = [...new Set(texts)].filter((t) => !into.has(t));
  const vectors = await embedAll(scorer, missing, 'query');
  missing.forEach((t, i) => {
    into.set(t, vectors[i]);
  });
  return into;
}

/**
 * The scorer with the corpus and query vectors passed in as precomputed embeddings: the model runs
 * only for a text it has no vector for. Same id: its scores are the inner scorer's.
 */
export function precomputedScorer(
  inner: EmbeddingScorer,
  corpus: CorpusEmbeddings,
  queries: ReadonlyMap<string, Float32Array>,
): Scorer {
  const dims = corpus.dimensions;
  return {
    id: inner.id,
    signals: inner.signals,
    score(
      query: string,
      passages: readonly Passage[],
      options?: ScoreOptions,
    ): Promise<ReadonlyArray<DetailedPairScore>> {
      const withVectors = passages.map((p) => {
        const i = corpus.row.get(p.id);
        return i === undefined
          ? p
          : { ...p, embedding: corpus.matrix.subarray(i * dims, (i + 1) * dims), embeddingModel: inner.modelId };
      });
      const q = queries.get(query);
      return inner.score(query, withVectors, {
        ...options,
        embeddingModel: inner.modelId,
        ...(q === undefined ? {} : { queryEmbedding: q }),
      });
    },
  };
}

/**
 * Exact dense retrieval: cosine of the query's vector with every document's, top N (ties by
 * document id). Queries must have been embedded (`queries`); others are refused.
 */
export function createDenseFirstStage(
  corpus: CorpusEmbeddings,
  queries: ReadonlyMap<string, Float32Array>,
): FirstStage {
  const { ids, matrix, dimensions: dims } = corpus;
  const n = ids.length;
  return {
    // BM25 parameters do not apply; kept for the interface, `info` says what this stage is.
    params: DEFAULT_BM25,
    info: { kind: 'dense', documents: n, dimensions: dims, corpusEmbeddings: corpus.file },
    search(query: string, topN: number): Candidate[] {
      const q = queries.get(query);
      if (q === undefined) throw new InvalidArgumentError(`dense first stage: the query "${query}" was not embedded`);
      const scores = new Float64Array(n);
      for (let d = 0; d < n; d++) {
        let dot = 0;
        const from = d * dims;
        for (let k = 0; k < dims; k++) dot += q[k] * matrix[from + k];
        scores[d] = dot;
      }
      const order = Array.from({ length: n }, (_, i) => i);
      order.sort((a, b) => scores[b] - scores[a] || compareIds(ids[a], ids[b]));
      return order.slice(0, Math.min(topN, n)).map((d, r) => ({ docId: ids[d], score: scores[d], rank: r + 1 }));
    },
  };
}

/** A loaded embedding tier for eval: the scorer with precomputed vectors, and the dense first stage. */
export interface LoadedEmbeddingEval {
  readonly scorer: Scorer;
  readonly embedder: EmbeddingScorer;
  readonly firstStage: FirstStage | undefined;
  readonly corpus: CorpusEmbeddings;
  /** Embeds more queries (other collections' queries for junk lists) before a dense search needs them. */
  prepareQueries(texts: readonly string[]): Promise<void>;
}

export interface LoadEmbeddingEvalOptions {
  readonly model: string;
  readonly collection: Collection;
  readonly dense?: boolean;
  /** The folder's ONNX variant ('int8'); default the fp32 file. */
  readonly variant?: string;
  /** Platt parameters to use instead of the folder's (fit-points scores with the calibration it fitted). */
  readonly calibration?: PlattParameters;
  readonly cacheDir?: string;
  readonly log?: (line: string) => void;
}

export async function loadEmbeddingEval(options: LoadEmbeddingEvalOptions): Promise<LoadedEmbeddingEval> {
  const { createEmbeddingScorer } = await import('../../tiers/embedding/index.js');
  const embedder = await createEmbeddingScorer({
    modelDir: options.model,
    ...(options.variant === undefined ? {} : { variant: options.variant }),
    ...(options.calibration === undefined ? {} : { calibration: options.calibration }),
    // The corpus and its queries stay in the vector cache for the run.
    cacheBytes: 1024 * 1024 * 1024,
  });
  try {
    const corpus = await corpusEmbeddings(embedder, options.collection, {
      ...(options.cacheDir === undefined ? {} : { cacheDir: options.cacheDir }),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    const queries = await queryEmbeddings(
      embedder,
      options.collection.queries.map((q) => q.text),
    );
    return {
      embedder,
      corpus,
      scorer: precomputedScorer(embedder, corpus, queries),
      firstStage: options.dense === true ? createDenseFirstStage(corpus, queries) : undefined,
      async prepareQueries(texts) {
        await queryEmbeddings(embedder, texts, queries);
      },
    };
  } catch (err) {
    await embedder.close();
    throw err;
  }
}

/** What the calibration fit saw. */
export interface EmbeddingCalibrationFit {
  readonly calibration: PlattParameters;
  readonly pairs: number;
  readonly positives: number;
  readonly collections: ReadonlyArray<{ readonly name: string; readonly queries: number; readonly pairs: number }>;
  readonly gateK: number;
  readonly firstStage: 'bm25';
}

/** One collection's calibration pairs: cosine and label of each judged candidate. */
export interface CalibrationPairs {
  readonly name: string;
  readonly queries: number;
  readonly cosines: readonly number[];
  readonly labels: readonly boolean[];
}

/**
 * The cosines and labels (qrels grade > 0) of the first-stage (BM25) top gateK of each query: the
 * lists the gate sees, what the calibration is fitted on.
 */
export async function calibrationPairs(
  collection: Collection,
  scorer: Scorer,
  queryIds: readonly string[],
  gateK: number,
): Promise<CalibrationPairs> {
  const cosines: number[] = [];
  const labels: boolean[] = [];
  const lists = buildCandidateLists(collection, createBm25FirstStage(collection), queryIds, gateK);
  for (const list of lists) {
    if (list.candidates.length === 0) continue;
    const passages = list.candidates.map((c) => toPassage(collection.docById.get(c.docId)!));
    const results = await scorer.score(list.queryText, passages);
    results.forEach((r, i) => {
      const cos = (r as DetailedPairScore | null)?.raw?.similarity;
      if (typeof cos !== 'number' || !Number.isFinite(cos)) return;
      cosines.push(cos);
      labels.push(list.candidates[i].grade > 0);
    });
  }
  return { name: collection.name, queries: lists.length, cosines, labels };
}

/** Fits σ(a·cos + b) on the pairs of every collection. */
export function fitEmbeddingCalibration(
  collections: readonly CalibrationPairs[],
  gateK: number,
): EmbeddingCalibrationFit {
  const fit = fitPlatt(
    collections.flatMap((c) => c.cosines),
    collections.flatMap((c) => c.labels),
  );
  return {
    calibration: fit.params,
    pairs: fit.info.pairs,
    positives: fit.info.positives,
    collections: collections.map((c) => ({ name: c.name, queries: c.queries, pairs: c.cosines.length })),
    gateK,
    firstStage: 'bm25',
  };
}
