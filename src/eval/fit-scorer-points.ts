/**
 * Operating points for ANY scorer, fitted on the caller's own judged collections: the same
 * objectives and grid the shipped model's points were fitted with (fitOperatingPoints), on the
 * first-stage top gateK of each query, scored by the scorer as the gate would call it. With two or
 * more collections it also measures what the points mean on a collection they were not fitted on:
 * for each collection H, points fitted on the others and applied to H (leave-one-collection-out),
 * next to H's label-known bounds. That is the measurement behind the shipped points' documented
 * meaning (docs/eval.md, "Operating points"), for a model the project does not ship: a
 * cross-encoder with real weights, a retrained fast path.
 *
 * The scorer of each collection is the caller's: the fast path scores with the collection's own
 * corpus statistics (one scorer per collection), a cross-encoder with one scorer for all. Every
 * scorer must be the same model (the scorer id before `@`), since the points belong to a model.
 */
import { InvalidArgumentError } from '../errors.js';
import { modelIdOf, OPERATING_POINT_NAMES, type OperatingPointName } from '../gate/policies/operating-points.js';
import {
  OPERATING_POINTS_FORMAT,
  type OperatingPointsFile,
  type OperatingPointsHeldOut,
  parseOperatingPointsFile,
} from '../gate/operating-points-file.js';
import type { OperatingPoints } from '../gate/types.js';
import type { Scorer } from '../types.js';
import { integerInRange } from '../util/validate-options.js';
import { buildCandidateLists } from './candidates.js';
import type { Collection } from './collection.js';
import { createBm25FirstStage, type FirstStage } from './first-stage.js';
import {
  type FitOptions,
  fitOperatingPoints,
  type JudgedGateList,
  type OperatingPointBounds,
  type OperatingPointFit,
  type OperatingPointRow,
  operatingPointBounds,
  operatingPointRows,
} from './operating-points.js';
import { judgedGateList, scoreCandidateListWithOrder } from './run-eval.js';

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
}

/** A collection's judged gate lists as one model scored them: the input of a fit. */
export interface ScoredCollection {
  readonly name: string;
  readonly fingerprint: string;
  /** The model that scored them (the scorer id before `@`). */
  readonly model: string;
  readonly gateK: number;
  readonly lists: readonly JudgedGateList[];
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
}

export interface ScorerPointsFit {
  /** The model the points belong to (the scorer id before `@`). */
  readonly model: string;
  readonly gateK: number;
  readonly points: OperatingPoints;
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
  return { name: collection.name, fingerprint: collection.fingerprint, model: modelIdOf(scorer.id), gateK, lists };
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
  const fits = fitOperatingPoints(lists, options);
  const points = pointsOf(fits);
  const collections = scored.map((c): CollectionPointsReport => {
    let heldOut: CollectionPointsReport['heldOut'] = null;
    if (scored.length > 1) {
      const others = Object.fromEntries(Object.entries(lists).filter(([n]) => n !== c.name));
      const heldOutPoints = pointsOf(fitOperatingPoints(others, options));
      heldOut = { points: heldOutPoints, rows: operatingPointRows(c.lists, heldOutPoints) };
    }
    return {
      collection: c.name,
      fingerprint: c.fingerprint,
      queries: c.lists.length,
      fitted: operatingPointRows(c.lists, points),
      heldOut,
      bounds: operatingPointBounds(c.lists),
    };
  });
  return { model, gateK, points, fits, collections };
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
      });
    }
  }
  return parseOperatingPointsFile({
    format: OPERATING_POINTS_FORMAT,
    model: fit.model,
    gateK: fit.gateK,
    points: fit.points,
    fittedOn: fit.collections.map((c) => ({
      collection: c.collection,
      fingerprint: c.fingerprint,
      queries: c.queries,
    })),
    ...(heldOut.length === 0 ? {} : { heldOut }),
  });
}
