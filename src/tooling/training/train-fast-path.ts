/**
 * The fast-path model's training pipeline:
 *   1. load every collection, split its judged QUERIES into train/validation/test (fixed seed);
 *   2. BM25 top-k candidate lists per query (src/tooling/eval/first-stage.ts), labels from qrels;
 *   3. lexical features from the native extractor with each collection's own corpus statistics;
 *   4. train each grid point on TRAIN, pick the best macro validation nDCG@10;
 *   5. recommended threshold: highest recall at precision >= target on the VALIDATION queries'
 *      first-stage top gateK, pooled over collections;
 *   6. the ranking blend's λ on the VALIDATION queries (the trees and probabilities stay as chosen).
 * Test queries are never looked at here; the script evaluates them afterwards with the shipped files.
 * Everything is deterministic: sorted ids, seeded splits, fixed training seed, single-threaded XGBoost.
 */
import { createHash } from 'node:crypto';
import { IDENTITY_PLATT, type PlattParameters, fitPlatt, plattProbability } from '../../calibration/platt.js';
import { InvalidArgumentError } from '../../errors.js';
import { type Collection, judgedQueryIds, loadCollection } from '../eval/collection.js';
import { type FirstStage, createBm25FirstStage } from '../eval/first-stage.js';
import {
  type KeptSetStats,
  type LabelledScore,
  type ThresholdRow,
  keptSetStats,
  thresholdForPrecision,
} from '../eval/metrics.js';
import type { SplitsFile } from '../eval/query-set.js';
import { integerInRange, probability } from '../../util/validate-options.js';
import type { CandidateList } from '../eval/candidates.js';
import type { SimilarityOf } from '../eval/embedding-similarity.js';
import { type QuerySplit, fnv1a, splitQueries } from '../eval/splits.js';
import { type DatasetSource, type PairFeaturizer, type RankingDataset, buildRankingDataset } from './dataset.js';
import { type RankingBlendSelection, chooseRankingBlend } from './ranking-blend-selection.js';
import {
  type GridPoint,
  type TrainingBackend,
  type ValidationResult,
  gridSearch,
  ndcgByCollection,
  outputsMargin,
} from './grid-search.js';

export interface TrainFastPathOptions {
  /** Collection folders (each in the ../shared/data layout). */
  readonly collectionDirs: readonly string[];
  readonly seed: number;
  /** First-stage candidates per query for training and validation reranking. */
  readonly k: number;
  /** First-stage candidates the gate sees (threshold tuning). */
  readonly gateK: number;
  readonly targetPrecision: number;
  readonly grid: readonly GridPoint[];
  /**
   * Training queries carry their first-stage rank as the retrieval_rank feature with probability
   * 1 - retrievalRankDropout (decided per query copy, deterministically), so the model learns to use
   * the rank when a caller passes it and to score text alone when not. Validation always passes it
   * (as `eval` does by default). 0 = always, 1 = never.
   */
  readonly retrievalRankDropout: number;
  /**
   * A query–document similarity per collection (a bi-encoder's cosine: eval/embedding-similarity.ts),
   * given to the trees as `embedding_similarity`. Absent: the feature is never given.
   */
  readonly embeddingSimilarity?: (collection: Collection) => Promise<SimilarityOf>;
  /**
   * Share of training query copies without `embedding_similarity` (decided per copy, independently of
   * the rank's), so the model still scores a caller that does not pass it; validation always has
   * it. Default 0.3 when `embeddingSimilarity` is given.
   */
  readonly embeddingDropout?: number;
  /**
   * Small collections' training queries are repeated until each collection has at least this many
   * (a weight, since ml-xgboost has no weight API), so the big ones do not drown them. 0 = off.
   */
  readonly minQueriesPerCollection: number;
  /** Use at most this many train and validation queries per collection (quick runs and tests). */
  readonly maxQueriesPerSplit?: number;
  /**
   * The query split of these collections (by collection name) instead of the seeded one: a split of
   * the caller's own, or one fold of a cross-validation. Every id must be a judged query of that
   * collection (qrels.tsv or qrels_train.tsv), none in two parts; judged queries left out are not
   * used. Recorded in the splits file.
   */
  readonly querySplits?: Readonly<Record<string, QuerySplit>>;
  readonly log?: (line: string) => void;
  readonly onDatasetProgress?: (phase: string, done: number, total: number) => void;
}

export interface TrainFastPathDeps {
  /** A featurizer with this collection's corpus statistics. */
  featurizerFor(collection: Collection): Promise<PairFeaturizer>;
  readonly backend: TrainingBackend;
}

export interface CollectionSummary {
  readonly name: string;
  readonly fingerprint: string;
  readonly docs: number;
  readonly queries: { readonly train: number; readonly validation: number; readonly test: number };
  /** Distinct (query, candidate) training pairs, and how many are relevant. */
  readonly trainPairs: number;
  readonly trainPositives: number;
  /** Training rows including the repeats of minQueriesPerCollection. */
  readonly trainRowsWithCopies: number;
  readonly validationNdcg10: { readonly firstStage: number | null; readonly reranked: number | null };
  readonly validationGate: KeptSetStats;
}

export interface TrainFastPathResult {
  readonly modelBytes: Uint8Array;
  /**
   * relevance = σ(a·margin + b), the meta.json calibration; present when the objective does not
   * output probabilities (reg:squarederror, lambdamart); fitted on validation.
   */
  readonly calibration: PlattParameters | null;
  readonly chosen: ValidationResult;
  readonly grid: readonly ValidationResult[];
  /**
   * The ranking blend's λ, chosen on validation after the trees (src/tooling/training/ranking-blend-selection.ts);
   * null when the features lack bm25_all / query_idf_sum (the model then declares none).
   */
  readonly rankingBlend: RankingBlendSelection | null;
  readonly featureNames: readonly string[];
  readonly splits: SplitsFile;
  /** Threshold chosen on validation (pooled over collections), with its validation precision/recall. */
  readonly threshold: ThresholdRow;
  readonly collections: readonly CollectionSummary[];
  readonly trainRows: number;
  readonly validationRows: number;
  readonly timingsMs: { readonly datasets: number; readonly grid: number };
}

export const SPLIT_METHOD =
  `judged queries sorted by id, shuffled with mulberry32(fnv1a(\`\${seed}:\${collection}\`)), cut 60/20/20 into train/validation/test; ` +
  'collections with qrels_train.tsv (SciFact): train/validation = 80/20 of the official training queries, test = the official test queries (qrels.tsv)';

/** A caller's split of a collection's judged queries, checked (TrainFastPathOptions.querySplits). */
function checkedSplit(collection: Collection, split: QuerySplit): QuerySplit {
  const judged = new Set([
    ...judgedQueryIds(collection.qrels),
    ...(collection.trainQrels === null ? [] : judgedQueryIds(collection.trainQrels)),
  ]);
  const seen = new Set<string>();
  for (const part of ['train', 'validation', 'test'] as const) {
    const ids = split[part];
    if (!Array.isArray(ids))
      throw new InvalidArgumentError(`querySplits.${collection.name}.${part} must be an array of query ids`);
    for (const id of ids) {
      if (typeof id !== 'string' || !judged.has(id))
        throw new InvalidArgumentError(
          `querySplits.${collection.name}.${part}: ${JSON.stringify(id)} is not a judged query of ${collection.name}`,
        );
      if (seen.has(id)) throw new InvalidArgumentError(`querySplits.${collection.name}: query ${id} is in two parts`);
      seen.add(id);
    }
  }
  return { train: [...split.train], validation: [...split.validation], test: [...split.test] };
}

function limit(ids: readonly string[], max: number | undefined): readonly string[] {
  return max === undefined ? ids : ids.slice(0, max);
}

/** Short digest of a dataset's features and grades (logged, so runs can be compared). */
export function datasetDigest(dataset: RankingDataset): string {
  const h = createHash('sha256');
  h.update(new Uint8Array(dataset.features.buffer, dataset.features.byteOffset, dataset.features.byteLength));
  h.update(new Uint8Array(dataset.grades.buffer, dataset.grades.byteOffset, dataset.grades.byteLength));
  return h.digest('hex').slice(0, 16);
}

/** Per-query gate pools (first gateK candidates, scored) of a dataset. */
export function gatePools(
  dataset: RankingDataset,
  scores: Float64Array,
  gateK: number,
  collection?: string,
): LabelledScore[][] {
  const pools: LabelledScore[][] = [];
  for (const g of dataset.groups) {
    if (collection !== undefined && g.collection !== collection) continue;
    const n = Math.min(gateK, g.list.candidates.length);
    const pool: LabelledScore[] = [];
    for (let i = 0; i < n; i++) pool.push({ score: scores[g.offset + i]!, relevant: g.list.candidates[i]!.grade > 0 });
    pools.push(pool);
  }
  return pools;
}

/** Platt scaling of margins on labelled validation pairs: the meta.json calibration, as the scorer and the gate read it. */
export function fitCalibration(pairs: readonly LabelledScore[]): PlattParameters {
  return fitPlatt(
    pairs.map((p) => p.score),
    pairs.map((p) => p.relevant),
  ).params;
}

/** The scorer's arithmetic: float32 margins, σ(a·m + b) in float64 (σ(m) without calibration). */
export function toProbabilities(margins: Float64Array, calibration: PlattParameters | null): Float64Array {
  const platt = calibration ?? IDENTITY_PLATT;
  const out = new Float64Array(margins.length);
  for (let i = 0; i < margins.length; i++) out[i] = plattProbability(platt, margins[i]!);
  return out;
}

interface LoadedCollection {
  readonly collection: Collection;
  readonly firstStage: FirstStage;
  readonly featurizer: PairFeaturizer;
  readonly split: QuerySplit;
  /** The collection's query–document similarity (options.embeddingSimilarity), null without one. */
  readonly similarity: SimilarityOf | null;
}

/** Share of training query copies trained without embedding_similarity (options.embeddingDropout). */
export const DEFAULT_EMBEDDING_DROPOUT = 0.3;
const ALL_PASSTHROUGH = { rank: true, similarity: true } as const;

interface TrainingDatasets {
  readonly loaded: readonly LoadedCollection[];
  readonly train: RankingDataset;
  readonly validation: RankingDataset;
}

/**
 * Steps 1-3: collections, query splits, BM25 candidate lists and features of the TRAIN queries
 * (with the repeats and retrieval_rank dropout of the options) and the VALIDATION queries.
 */
async function buildTrainingDatasets(
  options: TrainFastPathOptions,
  deps: Pick<TrainFastPathDeps, 'featurizerFor'>,
): Promise<TrainingDatasets> {
  const log = options.log ?? (() => {});
  if (options.collectionDirs.length === 0) throw new InvalidArgumentError('no collections to train on');
  integerInRange('gateK', options.gateK, 1, options.k);
  probability('retrievalRankDropout', options.retrievalRankDropout);
  const embeddingDropout = options.embeddingDropout ?? DEFAULT_EMBEDDING_DROPOUT;
  probability('embeddingDropout', embeddingDropout);
  probability('targetPrecision', options.targetPrecision);
  const loaded: LoadedCollection[] = [];
  const names = new Set<string>();
  for (const dir of options.collectionDirs) {
    const collection = loadCollection(dir);
    if (names.has(collection.name)) throw new InvalidArgumentError(`two collections are named "${collection.name}"`);
    names.add(collection.name);
    const given = options.querySplits?.[collection.name];
    const split =
      given === undefined ? splitQueries(collection, { seed: options.seed }) : checkedSplit(collection, given);
    const featurizer = await deps.featurizerFor(collection);
    const similarity = options.embeddingSimilarity === undefined ? null : await options.embeddingSimilarity(collection);
    loaded.push({ collection, firstStage: createBm25FirstStage(collection), featurizer, split, similarity });
    log(
      `train-fast-path: ${collection.name}: ${collection.docs.length} docs; queries train ${split.train.length}, validation ${split.validation.length}, test ${split.test.length}`,
    );
  }

  for (const name of Object.keys(options.querySplits ?? {}))
    if (!names.has(name))
      throw new InvalidArgumentError(`querySplits names "${name}", which is not a collection trained on`);

  /** The passthrough features of candidate i: its rank and its similarity, each when given. */
  const passthroughOf = (
    l: LoadedCollection,
    list: CandidateList,
    i: number,
    give: { readonly rank: boolean; readonly similarity: boolean },
  ): Record<string, number> | undefined => {
    const out: Record<string, number> = {};
    if (give.rank) out.retrieval_rank = list.candidates[i]!.rank;
    const cos = give.similarity ? l.similarity?.(list.queryText, list.candidates[i]!.docId) : undefined;
    if (cos !== undefined) out.embedding_similarity = cos;
    return Object.keys(out).length === 0 ? undefined : out;
  };
  const sources = (which: 'train' | 'validation'): DatasetSource[] =>
    loaded.flatMap((l) => {
      const queryIds = limit(l.split[which], options.maxQueriesPerSplit);
      const base = { collection: l.collection, firstStage: l.firstStage, featurizer: l.featurizer, queryIds };
      if (which === 'validation')
        return [
          { ...base, passthrough: (list: CandidateList, i: number) => passthroughOf(l, list, i, ALL_PASSTHROUGH) },
        ];
      const copies =
        options.minQueriesPerCollection > 0 && queryIds.length > 0
          ? Math.max(1, Math.ceil(options.minQueriesPerCollection / queryIds.length))
          : 1;
      return Array.from({ length: copies }, (_, copy) => ({
        ...base,
        passthrough: (list: CandidateList, i: number) => {
          const coin = fnv1a(`${options.seed}:${l.collection.name}:${copy}:${list.queryId}`) / 4294967296;
          // An independent coin for the similarity (the rank's name is kept so models trained
          // without a similarity are byte-identical to before).
          const simCoin = fnv1a(`${options.seed}:${l.collection.name}:${copy}:${list.queryId}:embedding`) / 4294967296;
          return passthroughOf(l, list, i, {
            rank: coin >= options.retrievalRankDropout,
            similarity: simCoin >= embeddingDropout,
          });
        },
      }));
    });
  const train = await buildRankingDataset(sources('train'), options.k, (d, t) =>
    options.onDatasetProgress?.('train', d, t),
  );
  const validation = await buildRankingDataset(sources('validation'), options.k, (d, t) =>
    options.onDatasetProgress?.('validation', d, t),
  );
  return { loaded, train, validation };
}

export async function trainFastPath(
  options: TrainFastPathOptions,
  deps: TrainFastPathDeps,
): Promise<TrainFastPathResult> {
  const log = options.log ?? (() => {});
  const t0 = performance.now();
  const { loaded, train, validation } = await buildTrainingDatasets(options, deps);
  const t1 = performance.now();
  log(
    `train-fast-path: datasets: train ${train.numRows} pairs (sha256 ${datasetDigest(train)}), validation ${validation.numRows} pairs ` +
      `(sha256 ${datasetDigest(validation)}), ${train.featureNames.length} features (${Math.round(t1 - t0)} ms)`,
  );

  const { best, bestModel, results } = await gridSearch(
    deps.backend,
    train,
    validation,
    options.grid,
    options.seed,
    (r, i) =>
      log(
        `train-fast-path: grid ${i + 1}/${options.grid.length} ${r.point.objective}${r.point.lambdaMart?.warmStart ? ` (warm start from best pointwise ×${r.point.lambdaMart.warmStart.scale})` : ''} depth ${r.point.maxDepth} eta ${r.point.eta} trees ${r.trees}` +
          `${r.point.objective === 'lambdamart' ? ` (early stopping; ${r.roundsTrained} rounds trained, at most ${r.point.rounds})` : ''} ` +
          `mcw ${r.point.minChildWeight}: validation nDCG@10 gain mean ${r.selection.meanGain.toFixed(4)}, worst ${r.selection.worstGain.toFixed(4)} (${r.selection.worstCollection}), ` +
          `macro ${r.macroNdcg10.toFixed(4)} (${Object.entries(r.ndcg10ByCollection)
            .map(([n, v]) => `${n} ${v === null ? 'n/a' : v.toFixed(3)}`)
            .join(', ')}) train ${r.trainMs} ms, ${r.modelBytes} bytes`,
      ),
  );
  const t2 = performance.now();

  const margins = await deps.backend.predictMargins(
    bestModel,
    validation.features,
    validation.numRows,
    validation.featureNames.length,
  );
  const calibration = outputsMargin(best.point.objective)
    ? fitCalibration(gatePools(validation, margins, options.gateK).flat())
    : null;
  const validationScores = toProbabilities(margins, calibration);
  const pooled = gatePools(validation, validationScores, options.gateK).flat();
  const threshold = thresholdForPrecision(pooled, options.targetPrecision);
  if (!threshold) {
    throw new InvalidArgumentError(
      `no threshold reaches precision ${options.targetPrecision} on the validation queries; lower the target`,
    );
  }
  log(
    `train-fast-path: recommended threshold ${threshold.threshold} for precision >= ${options.targetPrecision} on validation ` +
      `(precision ${threshold.precision?.toFixed(3)}, recall ${threshold.recall?.toFixed(3)})`,
  );

  const rankingBlend = chooseRankingBlend(validation, margins) ?? null;
  if (rankingBlend !== null) {
    log(
      `train-fast-path: ranking blend lambda ${rankingBlend.blend.lambda} (${rankingBlend.rule}): validation nDCG@10 relative gain worst ${rankingBlend.chosen.worstGain.toFixed(4)}, mean ${rankingBlend.chosen.meanGain.toFixed(4)}; best lambda ${rankingBlend.best.lambda}: worst ${rankingBlend.best.worstGain.toFixed(4)}`,
    );
  }

  const firstStageNdcg = ndcgByCollection(validation, null);
  const rerankedNdcg = ndcgByCollection(validation, validationScores);
  const collections: CollectionSummary[] = loaded.map((l) => {
    const name = l.collection.name;
    let trainPairs = 0;
    let trainPositives = 0;
    let trainRowsWithCopies = 0;
    const seen = new Set<string>();
    for (const g of train.groups) {
      if (g.collection !== name) continue;
      trainRowsWithCopies += g.list.candidates.length;
      if (seen.has(g.list.queryId)) continue;
      seen.add(g.list.queryId);
      trainPairs += g.list.candidates.length;
      trainPositives += g.list.candidates.filter((c) => c.grade > 0).length;
    }
    return {
      name,
      fingerprint: l.collection.fingerprint,
      docs: l.collection.docs.length,
      queries: { train: l.split.train.length, validation: l.split.validation.length, test: l.split.test.length },
      trainPairs,
      trainPositives,
      trainRowsWithCopies,
      validationNdcg10: { firstStage: firstStageNdcg[name] ?? null, reranked: rerankedNdcg[name] ?? null },
      validationGate: keptSetStats(gatePools(validation, validationScores, options.gateK, name), threshold.threshold),
    };
  });

  const splits: SplitsFile = {
    version: 1,
    seed: options.seed,
    method:
      options.querySplits === undefined || Object.keys(options.querySplits).length === 0
        ? SPLIT_METHOD
        : `${SPLIT_METHOD}; given by the caller for ${Object.keys(options.querySplits).sort().join(', ')}`,
    collections: Object.fromEntries(
      loaded.map((l) => [
        l.collection.name,
        {
          fingerprint: l.collection.fingerprint,
          train: limit(l.split.train, options.maxQueriesPerSplit),
          validation: limit(l.split.validation, options.maxQueriesPerSplit),
          test: l.split.test,
        },
      ]),
    ),
  };
  return {
    modelBytes: bestModel,
    calibration,
    chosen: best,
    grid: results,
    rankingBlend,
    featureNames: train.featureNames,
    splits,
    threshold,
    collections,
    trainRows: train.numRows,
    validationRows: validation.numRows,
    timingsMs: { datasets: Math.round(t1 - t0), grid: Math.round(t2 - t1) },
  };
}
