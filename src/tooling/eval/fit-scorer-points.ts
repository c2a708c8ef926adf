/**
 * Operating points for ANY scorer, fitted on the caller's own judged collections: the same
 * objectives and grid the shipped model's points were fitted with (fitOperatingPoints), on the
 * first-stage top gateK of each query, scored by the scorer as the gate would call it. With two or
 * more collections it also measures what the points mean on a collection they were not fitted on:
 * for each collection H, points fitted on the others and applied to H (leave-one-collection-out),
 * next to H's label-known bounds. That is the measurement behind the shipped points' documented
 * meaning (docs/eval.md, "Operating points for your own model"), for a model the project does not ship: a
 * cross-encoder with real weights, a retrained fast path.
 *
 * The scorer of each collection is the caller's: the fast path scores with the collection's own
 * corpus statistics (one scorer per collection), a cross-encoder with one scorer for all. Every
 * scorer must be the same model (the scorer id before `@`), since the points belong to a model.
 */
import { InvalidArgumentError } from '../../errors.js';
import { modelIdOf, OPERATING_POINT_NAMES, type OperatingPointName } from '../../gate/policies/operating-points.js';
import {
  OPERATING_POINTS_FORMAT,
  type OperatingPointsFile,
  type OperatingPointsHeldOut,
  parseOperatingPointsFile,
} from '../../operating-points/file.js';
import type { OperatingPoint, OperatingPoints } from '../../gate/types.js';
import type { ListFeatureWeights, ScoreCalibration } from '../../operating-points/list-verdict.js';
import type { Scorer } from '../../types.js';
import {
  BOUND_REAL_EMPTY,
  calibratedPairs,
  expectedCalibrationError,
  fitScoreCalibration,
  ownLabelVerdict,
  type VerdictCurvePoint,
  verdictCurve,
  verdictRates,
} from './list-verdict-fit.js';
import { integerInRange } from '../../util/validate-options.js';
import { buildCandidateLists } from './candidates.js';
import type { Collection } from './collection.js';
import { createBm25FirstStage, type FirstStage } from './first-stage.js';
import {
  type FitOptions,
  fitOperatingPoints,
  type GateList,
  type JudgedGateList,
  type OperatingPointBounds,
  type OperatingPointFit,
  type OperatingPointRow,
  operatingPointBounds,
  keptIdsInOrder,
  operatingPointRows,
} from './operating-points.js';
import {
  type ForeignQueries,
  type JunkList,
  judgedGateList,
  scoreCandidateListWithOrder,
  scoreJunkLists,
} from './run-eval.js';

export type { ForeignQueries, JunkList } from './run-eval.js';

/** One judged collection to score for a fit: the scorer that scores it and the queries to use. */
export interface FitCollection {
  readonly collection: Collection;
  readonly scorer: Scorer;
  readonly queryIds: readonly string[];
  /** Candidates per query the gate sees (first-stage top gateK). Default 20. */
  readonly gateK?: number;
  /** Pass the first-stage rank as the `retrieval_rank` feature, as eval does. Default true. */
  readonly retrievalRank?: boolean;
  /** Reuse an index over the collection. */
  readonly firstStage?: FirstStage;
  /** Called after each query is scored. */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Other collections' queries to retrieve from THIS collection's corpus: lists that hold nothing
   * relevant (the noisy-corpus case), scored like the real ones, which the sufficiency verdict is
   * fitted and measured on.
   */
  readonly foreign?: readonly ForeignQueries[];
}

/** A collection's judged gate lists as one model scored them: the input of a fit. */
export interface ScoredCollection {
  readonly name: string;
  readonly fingerprint: string;
  /** The model that scored them (the scorer id before `@`). */
  readonly model: string;
  readonly gateK: number;
  readonly lists: readonly JudgedGateList[];
  /** Lists of other collections' queries over this corpus (FitCollection.foreign); empty when none were asked for. */
  readonly junk?: readonly JunkList[];
}

/** One junk list a point kept passages of. */
export interface JunkKept {
  readonly source: string;
  readonly queryId: string;
  readonly kept: readonly string[];
}

function junkKeptBy(point: OperatingPoint, junk: readonly JunkList[]): JunkKept[] {
  const out: JunkKept[] = [];
  for (const list of junk) {
    const kept = keptIdsInOrder(point, list);
    if (kept.length > 0) out.push({ source: list.source, queryId: list.queryId, kept });
  }
  return out;
}

/** The points' measured meaning on one collection. */
export interface CollectionPointsReport {
  readonly collection: string;
  readonly fingerprint: string;
  readonly queries: number;
  /** Each point on this collection, by the points fitted on every collection (this one included). */
  readonly fitted: readonly OperatingPointRow[];
  /**
   * Each point on this collection by points fitted on the OTHER collections only: what a collection
   * the points never saw gets. Null with a single collection.
   */
  readonly heldOut: { readonly points: OperatingPoints; readonly rows: readonly OperatingPointRow[] } | null;
  /** Label-known bounds of any keep/drop rule on this collection's lists (null: no relevant candidate). */
  readonly bounds: OperatingPointBounds | null;
  /** Junk lists measured on this corpus (other collections' queries). */
  readonly junkLists: number;
  /**
   * The junk lists where the held-out `balanced` point kept something, with what it kept (this
   * corpus's document ids, in the order the gate returns them): what to read when judging whether those lists really held
   * nothing relevant. Empty with one collection or without junk lists.
   */
  readonly junkKeptHeldOut: readonly JunkKept[];
  /**
   * The sufficiency verdict held out: its trade-off curve (real lists with a relevant candidate left
   * empty vs junk lists left empty, the bias set on the other collections at each target) and the
   * label-known bound (fitted on this collection's own lists); null without junk lists or with one collection.
   */
  readonly verdict: { readonly curve: readonly VerdictCurvePoint[]; readonly bound: VerdictCurvePoint | null } | null;
  /** Expected calibration error (10 bins) of the returned score on this collection's real lists. */
  readonly calibration: {
    /** The calibration fitted on every collection (null: none could be fitted). */
    readonly fitted: number | null;
    /** Fitted on the other collections only; null with one collection. */
    readonly heldOut: number | null;
    /** Fitted on this collection's own labels (what no calibration of these signals beats by much). */
    readonly bound: number | null;
  };
}

export interface ScorerPointsFit {
  /** The model the points belong to (the scorer id before `@`). */
  readonly model: string;
  readonly gateK: number;
  readonly points: OperatingPoints;
  /**
   * The returned score's calibration, fitted on every collection (src/gate/policies/list-verdict.ts);
   * undefined when the model's scores do not rise with relevance.
   */
  readonly scoreCalibration: ScoreCalibration | undefined;
  /** Each point's objective and its metrics on each collection, as the fit chose it. */
  readonly fits: Readonly<Record<OperatingPointName, OperatingPointFit>>;
  readonly collections: readonly CollectionPointsReport[];
}

function pointsOf(fits: Readonly<Record<OperatingPointName, OperatingPointFit>>): OperatingPoints {
  return Object.freeze(
    Object.fromEntries(OPERATING_POINT_NAMES.map((name) => [name, fits[name].point])) as Record<
      OperatingPointName,
      OperatingPointFit['point']
    >,
  );
}

/**
 * Scores one collection for a fit: each query's first-stage top gateK, scored as the gate calls the
 * scorer, with labels. Separate from the fit so a caller can load a model, score, and release it
 * before the next collection.
 */
export async function scoreCollectionForFit(input: FitCollection): Promise<ScoredCollection> {
  const gateK = input.gateK ?? 20;
  integerInRange('gateK', gateK, 1, 10_000);
  const { collection, scorer } = input;
  if (input.queryIds.length === 0)
    throw new InvalidArgumentError(`collection ${collection.name}: no queries to fit on`);
  const firstStage = input.firstStage ?? createBm25FirstStage(collection);
  const candidates = buildCandidateLists(collection, firstStage, input.queryIds, gateK);
  const lists: JudgedGateList[] = [];
  for (const [i, list] of candidates.entries()) {
    const scored = await scoreCandidateListWithOrder(collection, scorer, list, undefined, input.retrievalRank ?? true);
    lists.push(judgedGateList(list, scored, gateK));
    input.onProgress?.(i + 1, candidates.length);
  }
  const junk = await scoreJunkLists(
    collection,
    scorer,
    firstStage,
    input.foreign ?? [],
    gateK,
    input.retrievalRank ?? true,
  );
  return {
    name: collection.name,
    fingerprint: collection.fingerprint,
    model: modelIdOf(scorer.id),
    gateK,
    lists,
    junk,
  };
}

/**
 * Fits the three operating points of one model on its scored collections and measures them on each
 * collection, fitted with it and held out (see the module comment).
 */
export function fitScorerOperatingPoints(
  scored: readonly ScoredCollection[],
  options: FitOptions = {},
): ScorerPointsFit {
  if (scored.length === 0) throw new InvalidArgumentError('fit operating points on at least one judged collection');
  const { model, gateK } = scored[0]!;
  const names = new Set<string>();
  for (const c of scored) {
    if (names.has(c.name))
      throw new InvalidArgumentError(
        `collection name ${JSON.stringify(c.name)} given twice: each collection counts once`,
      );
    names.add(c.name);
    if (c.model !== model)
      throw new InvalidArgumentError(
        `collection ${c.name} was scored by model ${JSON.stringify(c.model)}, not ${JSON.stringify(model)}: operating points belong to one model`,
      );
    if (c.gateK !== gateK)
      throw new InvalidArgumentError(`collection ${c.name} was scored at gateK ${c.gateK}, not ${gateK}`);
  }
  const lists = Object.fromEntries(scored.map((c) => [c.name, c.lists]));
  const junkOf = (exclude: string | undefined): Record<string, readonly GateList[]> =>
    Object.fromEntries(
      scored.filter((c) => c.name !== exclude).map((c) => [c.name, (c.junk ?? []).filter((l) => l.source !== exclude)]),
    );
  const withJunk = scored.some((c) => (c.junk ?? []).length > 0);
  const fitOptions = (exclude: string | undefined): FitOptions =>
    withJunk ? { ...options, junk: junkOf(exclude) } : options;
  const fits = fitOperatingPoints(lists, fitOptions(undefined));
  const points = pointsOf(fits);
  const scoreCalibration = fitScoreCalibration(lists);
  const collections = scored.map((c): CollectionPointsReport => {
    const junk = c.junk ?? [];
    let heldOut: CollectionPointsReport['heldOut'] = null;
    let verdict: CollectionPointsReport['verdict'] = null;
    let heldOutCalibration: ScoreCalibration | undefined;
    if (scored.length > 1) {
      // Leave-one-collection-out: neither this corpus's lists nor this collection's queries over
      // another corpus take part in the fit.
      const others = Object.fromEntries(Object.entries(lists).filter(([n]) => n !== c.name));
      const heldOutFits = fitOperatingPoints(others, fitOptions(c.name));
      const heldOutPoints = pointsOf(heldOutFits);
      heldOut = { points: heldOutPoints, rows: operatingPointRows(c.lists, heldOutPoints, junk) };
      heldOutCalibration = fitScoreCalibration(others);
      const weights = heldOutPoints.balanced.sufficiency?.weights;
      if (weights !== undefined && junk.length > 0)
        verdict = verdictReport(weights, others, c.lists, junk, junkOf(undefined)[c.name] ?? []);
    }
    const own = { [c.name]: c.lists };
    return {
      collection: c.name,
      fingerprint: c.fingerprint,
      queries: c.lists.length,
      junkLists: junk.length,
      junkKeptHeldOut: heldOut === null ? [] : junkKeptBy(heldOut.points.balanced, junk),
      fitted: operatingPointRows(c.lists, points, junk),
      heldOut,
      bounds: operatingPointBounds(c.lists),
      verdict,
      calibration: {
        fitted: calibrationErrorOf(scoreCalibration, c.lists),
        heldOut: heldOutCalibration === undefined ? null : calibrationErrorOf(heldOutCalibration, c.lists),
        bound: c.lists.some((l) => l.relevant.some(Boolean))
          ? calibrationErrorOf(fitScoreCalibration(own), c.lists)
          : null,
      },
    };
  });
  return { model, gateK, points, scoreCalibration, fits, collections };
}

/** ECE (10 bins) of a calibration's scores on lists; null without a calibration. */
function calibrationErrorOf(calibration: ScoreCalibration | undefined, lists: readonly GateList[]): number | null {
  if (calibration === undefined) return null;
  const { scores, labels } = calibratedPairs(calibration, lists);
  return expectedCalibrationError(scores, labels);
}

/**
 * The held-out verdict's trade-off curve on one collection, and the label-known bound: the verdict
 * fitted on this collection's own real and junk lists, its bias set to leave BOUND_REAL_EMPTY of
 * the real lists with a relevant candidate empty.
 */
function verdictReport(
  weights: ListFeatureWeights,
  fitReal: Readonly<Record<string, readonly GateList[]>>,
  real: readonly GateList[],
  junk: readonly GateList[],
  ownJunk: readonly GateList[],
): NonNullable<CollectionPointsReport['verdict']> {
  const curve = verdictCurve(weights, fitReal, real, junk);
  const own = ownLabelVerdict(real, ownJunk);
  const bound = own === undefined ? null : { target: BOUND_REAL_EMPTY, ...verdictRates(own, real, junk) };
  return { curve, bound };
}

/** The operating-points file of a fit: the points, what they were fitted on, and their held-out meaning. */
export function operatingPointsFileOf(fit: ScorerPointsFit): OperatingPointsFile {
  const heldOut: OperatingPointsHeldOut[] = [];
  for (const c of fit.collections) {
    for (const row of c.heldOut?.rows ?? []) {
      heldOut.push({
        collection: c.collection,
        point: row.name,
        precision: row.precision,
        recall: row.recall,
        f1Ratio: row.f1Ratio,
        nothingKeptShare: row.nothingKeptShare,
        keptPerQuery: row.keptPerQuery,
        ...(row.junkLists === 0 ? {} : { junkNothingKeptShare: row.junkNothingKeptShare }),
      });
    }
  }
  return parseOperatingPointsFile({
    format: OPERATING_POINTS_FORMAT,
    model: fit.model,
    gateK: fit.gateK,
    points: fit.points,
    ...(fit.scoreCalibration === undefined ? {} : { scoreCalibration: fit.scoreCalibration }),
    fittedOn: fit.collections.map((c) => ({
      collection: c.collection,
      fingerprint: c.fingerprint,
      queries: c.queries,
    })),
    ...(heldOut.length === 0 ? {} : { heldOut }),
  });
}
