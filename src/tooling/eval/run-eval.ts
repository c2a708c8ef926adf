/**
 * Evaluation of a scorer on a judged collection: BM25 first stage → score the top `k` candidates of
 * each query → nDCG@10 before/after reranking, precision/recall/F1 against threshold over the
 * first-stage top `gateK`, the threshold reaching a target precision, and the gate at a given threshold.
 * Library function behind `relevance-gate eval` and the training script's test report.
 */
import { RANKING, RELEVANT } from '../../signals.js';
import { InvalidArgumentError } from '../../errors.js';
import type { Passage, Scorer, ScorerPairResult } from '../../types.js';
import { isDetailedPairScore } from '../../types.js';
import { integerInRange, positiveInteger, probability } from '../../util/validate-options.js';
import type { ScoreCalibration } from '../../operating-points/list-verdict.js';
import type { OperatingPoints } from '../../gate/policies/operating-points.js';
import { calibratedPairs, expectedCalibrationError } from './list-verdict-fit.js';
import {
  type GateList,
  type JudgedGateList,
  type OperatingPointBounds,
  type OperatingPointRow,
  operatingPointBounds,
  operatingPointRows,
} from './operating-points.js';
import { type CandidateList, buildCandidateLists, toPassage } from './candidates.js';
import type { Collection } from './collection.js';
import { type FirstStage, type FirstStageInfo, createBm25FirstStage } from './first-stage.js';
import {
  type KeptSetStats,
  type LabelledScore,
  type ThresholdRow,
  averagePrecision,
  keptSetStats,
  meanOf,
  ndcgAt,
  thresholdForPrecision,
  thresholdGrid,
  thresholdSweep,
} from './metrics.js';
import { EvalScoringError } from './errors.js';

export { EvalScoringError } from './errors.js';

export interface EvalOptions {
  readonly collection: Collection;
  readonly scorer: Scorer;
  /** Signal to read from the scorer's results; default `relevant`. */
  readonly signal?: string;
  readonly queryIds: readonly string[];
  /** Candidates reranked per query (first-stage top k). Default 100. */
  readonly k?: number;
  /** Candidates the gate sees per query (first-stage top gateK ≤ k). Default 20. */
  readonly gateK?: number;
  /** Target precision for the threshold search. Default 0.5. */
  readonly targetPrecision?: number;
  /** The gate threshold to report (e.g. the model's recommended one). Default: the threshold found for the target on these queries. */
  readonly gateThreshold?: number;
  /**
   * Give each passage its first-stage rank as the caller-supplied `retrieval_rank` feature (what a
   * caller passing its retriever's order does). Default true. Tiers without that feature ignore it.
   */
  readonly retrievalRank?: boolean;
  /**
   * Operating points to report (the gate's relative decisions on each query's top gateK). Default:
   * the scorer's own (`scorer.decisions`, shipped beside the model); none → `operatingPoints` is null.
   */
  readonly operatingPoints?: OperatingPoints;
  /**
   * The score calibration whose error the report gives (`scoreCalibrationError`). Default: the
   * scorer's own (`scorer.decisions`).
   */
  readonly scoreCalibration?: ScoreCalibration;
  /**
   * Other collections' queries to retrieve from this corpus: lists that hold nothing relevant,
   * measured beside the real ones (each operating point's `junkNothingKeptShare`).
   */
  readonly junkQueries?: readonly ForeignQueries[];
  /** Reuse an index over the collection (it is the costly part for big corpora). */
  readonly firstStage?: FirstStage;
  /** Called after each query is scored. */
  readonly onProgress?: (done: number, total: number) => void;
}

export interface EvalReport {
  readonly collection: {
    readonly name: string;
    readonly dir: string;
    readonly fingerprint: string;
    readonly docs: number;
  };
  readonly queries: number;
  readonly k: number;
  /** Whether passages carried their first-stage rank as the retrieval_rank feature. */
  readonly retrievalRank: boolean;
  readonly gateK: number;
  /** BM25 (MiniSearch, its parameters) unless the tier retrieved by itself (`eval --tier embedding --dense`). */
  readonly firstStage: FirstStageInfo;
  readonly ndcg10: { readonly firstStage: number | null; readonly reranked: number | null };
  /**
   * What `reranked` (nDCG, MAP, the operating points' kept lists) is ordered by, as the gate orders:
   * `ranking` when the scorer gave that signal for every pair, else the decision signal; `mixed`
   * when only some queries had it.
   */
  readonly orderedBy: string;
  /** MAP over the top-k lists (relevant docs outside the top k count as missed). */
  readonly map: { readonly firstStage: number | null; readonly reranked: number | null };
  /** Precision/recall/F1 of keeping first-stage top-gateK candidates with score >= threshold, pooled over queries. */
  readonly thresholds: readonly ThresholdRow[];
  readonly targetPrecision: number;
  /** Threshold with the highest recall at precision >= target on THESE queries (optimistic if used to gate them). */
  readonly thresholdForTarget: ThresholdRow | null;
  readonly gate: KeptSetStats & { readonly thresholdSource: 'given' | 'tuned-on-these-queries' | 'none' };
  /**
   * The gate at each operating point of the scorer on the first-stage top gateK (precision, recall
   * and F1 of the kept set, pooled; against keeping all; queries with nothing kept among those with
   * a relevant candidate; nDCG@10 of the kept list); null when the scorer declares none.
   */
  readonly operatingPoints: readonly OperatingPointRow[] | null;
  /**
   * How far the gate's decision could go on THESE queries with their labels known (the first-stage
   * top gateK, the scorer's relevance): the best operating point of the fit grid, and the best cut
   * per query. When `operatingPoints` is well below `gridBest`, another point would do better here;
   * when `gridBest` itself is low, the scorer's scores, not the point, limit the gate. Null when no
   * query has a relevant candidate.
   */
  readonly operatingPointBounds: OperatingPointBounds | null;
  /** Lists of other collections' queries over this corpus measured beside (EvalOptions.junkQueries). */
  readonly junkLists: number;
  /**
   * Expected calibration error (10 bins) of the score the rerank surfaces return (GateItem.score)
   * on the first-stage top gateK; null when the scorer has no score calibration.
   */
  readonly scoreCalibrationError: number | null;
  readonly timingsMs: { readonly firstStage: number; readonly scoring: number; readonly total: number };
  /** Per-query nDCG@10, for paired comparisons. */
  readonly perQuery: ReadonlyArray<{
    readonly queryId: string;
    readonly ndcg10FirstStage: number | null;
    readonly ndcg10Reranked: number | null;
  }>;
}

/** The probability of `signal` in one scorer result, or null when the pair could not be scored. */
export function signalOf(result: ScorerPairResult | undefined, signal: string): number | null {
  if (result === null || result === undefined) return null;
  const probs = isDetailedPairScore(result) ? result.probabilities : result;
  const p = probs[signal];
  return typeof p === 'number' && Number.isFinite(p) ? p : null;
}

/** Scores every candidate of a list; throws EvalScoringError when the scorer leaves a pair unscored. */
export async function scoreCandidateList(
  collection: Collection,
  scorer: Scorer,
  list: CandidateList,
  signal = RELEVANT,
  retrievalRank = true,
): Promise<Float64Array> {
  return (await scoreCandidateListWithOrder(collection, scorer, list, signal, retrievalRank)).scores;
}

/** A list's scores (the decision signal) and the order the gate would return it in. */
export interface ScoredCandidates {
  /** The decision signal per candidate (first-stage order). */
  readonly scores: Float64Array;
  /** The `ranking` signal per candidate when the scorer gave it for every one (the gate then orders by it); else null. */
  readonly order: Float64Array | null;
}

/** scoreCandidateList, plus the `ranking` signal the gate orders by when every pair has it. */
export async function scoreCandidateListWithOrder(
  collection: Collection,
  scorer: Scorer,
  list: CandidateList,
  signal = RELEVANT,
  retrievalRank = true,
): Promise<ScoredCandidates> {
  const passages: Passage[] = list.candidates.map((c) => {
    const p = toPassage(collection.docById.get(c.docId)!);
    return retrievalRank ? { ...p, features: { retrieval_rank: c.rank } } : p;
  });
  const results = passages.length === 0 ? [] : await scorer.score(list.queryText, passages);
  if (results.length !== passages.length) {
    throw new EvalScoringError(
      `scorer ${scorer.id} returned ${results.length} results for ${passages.length} passages`,
    );
  }
  const scores = new Float64Array(passages.length);
  let order: Float64Array | null = new Float64Array(passages.length);
  for (let i = 0; i < passages.length; i++) {
    const p = signalOf(results[i], signal);
    if (p === null) {
      throw new EvalScoringError(
        `scorer ${scorer.id} did not score query ${list.queryId} / doc ${passages[i]!.id} (signal "${signal}")`,
      );
    }
    scores[i] = p;
    if (order !== null) {
      const o = signalOf(results[i], RANKING);
      if (o === null || o < 0 || o > 1) order = null;
      else order[i] = o;
    }
  }
  return { scores, order: passages.length === 0 ? null : order };
}

/** A list's first `gateK` candidates as the gate sees them, with labels: what operating points are measured and fitted on. */
/** Queries of another collection, retrieved from the corpus being scored. */
export interface ForeignQueries {
  readonly collection: Collection;
  readonly queryIds: readonly string[];
}

/** A list of another collection's query over this corpus: nothing in it is relevant. */
export interface JunkList extends GateList {
  /** The collection the query came from. */
  readonly source: string;
  /** The query's id in that collection. */
  readonly queryId: string;
  /** The candidates, in the order of `relevances` (this corpus's document ids). */
  readonly docIds: readonly string[];
}

/**
 * Other collections' queries retrieved from `collection`'s corpus, scored as the gate would: lists
 * in which every candidate is off-topic (no judgments), the noisy-corpus case the sufficiency
 * verdict is fitted and measured on. A foreign collection with the same fingerprint is skipped.
 */
export async function scoreJunkLists(
  collection: Collection,
  scorer: Scorer,
  firstStage: FirstStage,
  foreign: readonly ForeignQueries[],
  gateK: number,
  retrievalRank: boolean,
): Promise<JunkList[]> {
  const junk: JunkList[] = [];
  for (const other of foreign) {
    if (other.collection.fingerprint === collection.fingerprint) continue;
    const view: Collection = {
      ...collection,
      queries: other.collection.queries,
      queryById: other.collection.queryById,
      qrels: new Map(),
      trainQrels: null,
    };
    for (const list of buildCandidateLists(view, firstStage, other.queryIds, gateK)) {
      const scored = await scoreCandidateListWithOrder(view, scorer, list, undefined, retrievalRank);
      const { relevances, relevant, order, docIds } = judgedGateList(list, scored, gateK);
      junk.push({
        relevances,
        relevant,
        ...(order === undefined ? {} : { order }),
        source: other.collection.name,
        queryId: list.queryId,
        docIds,
      });
    }
  }
  return junk;
}

export function judgedGateList(list: CandidateList, scored: ScoredCandidates, gateK: number): JudgedGateList {
  const top = list.candidates.slice(0, gateK);
  const { scores, order } = scored;
  return {
    relevances: top.map((_, i) => scores[i]!),
    relevant: top.map((c) => c.grade > 0),
    docIds: top.map((c) => c.docId),
    judgments: list.judgments,
    ...(order === null ? {} : { order: top.map((_, i) => order[i]!) }),
  };
}

/** Candidate order after reranking: by score descending, ties by first-stage rank. */
export function rerankOrder(list: CandidateList, scores: Float64Array): string[] {
  const idx = list.candidates.map((_, i) => i);
  idx.sort((a, b) => scores[b]! - scores[a]! || list.candidates[a]!.rank - list.candidates[b]!.rank);
  return idx.map((i) => list.candidates[i]!.docId);
}

export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const { collection, scorer } = options;
  const k = options.k ?? 100;
  const gateK = options.gateK ?? 20;
  const targetPrecision = options.targetPrecision ?? 0.5;
  const signal = options.signal ?? RELEVANT;
  positiveInteger('k', k);
  integerInRange('gateK', gateK, 1, k);
  probability('targetPrecision', targetPrecision);
  if (options.queryIds.length === 0) throw new InvalidArgumentError('no queries to evaluate');

  const t0 = performance.now();
  const firstStage = options.firstStage ?? createBm25FirstStage(collection);
  const lists = buildCandidateLists(collection, firstStage, options.queryIds, k);
  const t1 = performance.now();

  const perQuery: Array<{ queryId: string; ndcg10FirstStage: number | null; ndcg10Reranked: number | null }> = [];
  const apFirst: Array<number | null> = [];
  const apReranked: Array<number | null> = [];
  const gatePools: LabelledScore[][] = [];
  const judgedLists: JudgedGateList[] = [];
  let orderedByRanking = 0;
  let emptyLists = 0;
  for (let q = 0; q < lists.length; q++) {
    const list = lists[q]!;
    const { scores, order } = await scoreCandidateListWithOrder(
      collection,
      scorer,
      list,
      signal,
      options.retrievalRank ?? true,
    );
    const firstOrder = list.candidates.map((c) => c.docId);
    // The order the gate returns: by the ranking signal when the scorer gives it, else by the decision signal.
    const reranked = rerankOrder(list, order ?? scores);
    if (order !== null) orderedByRanking++;
    else if (list.candidates.length === 0) emptyLists++; // nothing to order: counts for neither
    perQuery.push({
      queryId: list.queryId,
      ndcg10FirstStage: ndcgAt(firstOrder, list.judgments, 10),
      ndcg10Reranked: ndcgAt(reranked, list.judgments, 10),
    });
    apFirst.push(averagePrecision(firstOrder, list.judgments));
    apReranked.push(averagePrecision(reranked, list.judgments));
    const top = list.candidates.slice(0, gateK);
    gatePools.push(top.map((c, i) => ({ score: scores[i]!, relevant: c.grade > 0 })));
    judgedLists.push(judgedGateList(list, { scores, order }, gateK));
    options.onProgress?.(q + 1, lists.length);
  }
  const t2 = performance.now();

  const pooled = gatePools.flat();
  const thresholds = thresholdSweep(pooled, thresholdGrid(100));
  const thresholdForTarget = thresholdForPrecision(pooled, targetPrecision);
  const gateThreshold = options.gateThreshold ?? thresholdForTarget?.threshold;
  const thresholdSource =
    options.gateThreshold !== undefined ? 'given' : thresholdForTarget ? 'tuned-on-these-queries' : 'none';
  const gate = keptSetStats(gatePools, gateThreshold ?? Number.POSITIVE_INFINITY);
  const points = options.operatingPoints ?? scorer.decisions?.operatingPoints;
  const junk = await scoreJunkLists(
    collection,
    scorer,
    firstStage,
    options.junkQueries ?? [],
    gateK,
    options.retrievalRank ?? true,
  );
  const operatingPoints = points === undefined ? null : operatingPointRows(judgedLists, points, junk);
  const calibration = options.scoreCalibration ?? scorer.decisions?.scoreCalibration;
  let scoreCalibrationError: number | null = null;
  if (calibration !== undefined) {
    const { scores: calibrated, labels } = calibratedPairs(calibration, judgedLists);
    scoreCalibrationError = expectedCalibrationError(calibrated, labels);
  }

  return {
    collection: {
      name: collection.name,
      dir: collection.dir,
      fingerprint: collection.fingerprint,
      docs: collection.docs.length,
    },
    queries: lists.length,
    k,
    retrievalRank: options.retrievalRank ?? true,
    gateK,
    firstStage: firstStage.info ?? {
      kind: 'bm25',
      library: 'minisearch',
      k1: firstStage.params.k1,
      b: firstStage.params.b,
    },
    ndcg10: {
      firstStage: meanOf(perQuery.map((p) => p.ndcg10FirstStage)),
      reranked: meanOf(perQuery.map((p) => p.ndcg10Reranked)),
    },
    orderedBy: orderedByRanking === 0 ? signal : orderedByRanking + emptyLists === lists.length ? RANKING : 'mixed',
    map: { firstStage: meanOf(apFirst), reranked: meanOf(apReranked) },
    thresholds,
    targetPrecision,
    thresholdForTarget,
    gate: { ...gate, thresholdSource },
    operatingPoints,
    operatingPointBounds: operatingPointBounds(judgedLists),
    junkLists: junk.length,
    scoreCalibrationError,
    timingsMs: { firstStage: round1(t1 - t0), scoring: round1(t2 - t1), total: round1(t2 - t0) },
    perQuery,
  };
}

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}
