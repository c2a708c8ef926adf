/**
 * Offline measurement and fitting of the gate's operating points (src/gate/policies/operating-points.ts)
 * on judged candidate lists: each list is one query's first-stage top gateK, its relevances (the
 * scorer's probabilities), the ranking signal when the scorer emits one, and labels. The decision is
 * exactly the gate's (`operatingPointKept`): the per-call cut of `operatingPointCut` and its list margin, and
 * kept = relevance >= threshold, or with a ranking the ranked cut (`rankedCutValue`: the same number
 * of pairs, the head of the ranking order). Precision and recall are pooled (micro)
 * over queries, as in keptSetStats; F1 = 2PR / (P + R); "keep all" keeps every candidate (recall 1).
 */
import {
  OPERATING_POINT_NAMES,
  type OperatingPoint,
  type OperatingPointName,
  listMargin,
  operatingPointCut,
  rankedCutValue,
} from '../../gate/policies/operating-points.js';
import { InvalidArgumentError } from '../../errors.js';
import { fitVerdictWeights, VERDICT_REAL_EMPTY_TARGETS, verdictBias } from './list-verdict-fit.js';
import { BALANCED_CONTRACT_OBJECTIVE, type ContractFigures, fitBalancedForContract } from './list-confidence-fit.js';
import { meanOf, ndcgAt } from './metrics.js';

export interface GateList {
  readonly relevances: readonly number[];
  readonly relevant: readonly boolean[];
  /**
   * The scorer's `ranking` signal per candidate when it emits one: the order the gate returns, and
   * the order an operating point's ranked cut takes its head of; absent: relevance order.
   */
  readonly order?: readonly number[];
}

/** Which candidates of a list an operating point keeps, as the gate decides (listCut): nothing when its verdict judges the list insufficient. */
export function operatingPointKept(point: OperatingPoint, list: GateList): boolean[] {
  const expected = operatingPointCut(point, list.relevances);
  const margin = listMargin(point, expected, list.relevances, list.order);
  if (margin !== undefined && !(margin >= 0)) return list.relevances.map(() => false);
  const t = expected.threshold;
  const order = list.order;
  const cut = order === undefined ? undefined : rankedCutValue(t, list.relevances, order);
  return list.relevances.map((r, i) => (cut === undefined ? r >= t : order![i]! >= cut));
}

export interface OperatingPointMetrics {
  readonly precision: number | null;
  readonly recall: number | null;
  readonly f1: number;
  /** F1 of keeping every candidate (precision = share of relevant candidates, recall 1). */
  readonly f1KeepAll: number;
  readonly precisionKeepAll: number | null;
  readonly keptPerQuery: number;
  readonly queries: number;
  /** Queries whose candidates hold at least one relevant passage. */
  readonly queriesWithRelevant: number;
  /** Of those, the queries where nothing was kept. */
  readonly nothingKept: number;
  /** Queries (any) where nothing was kept. */
  readonly nothingKeptAll: number;
}

function f1Of(p: number | null, r: number | null): number {
  return p === null || r === null || p + r === 0 ? 0 : (2 * p * r) / (p + r);
}

/** Kept-set metrics of a per-query decision (`keptOf(list)` → which candidates of that list are kept). */
export function keptMetrics(
  lists: readonly GateList[],
  keptOf: (list: GateList) => readonly boolean[],
): OperatingPointMetrics {
  let all = 0;
  let relevantAll = 0;
  let kept = 0;
  let relevantKept = 0;
  let withRelevant = 0;
  let nothingKept = 0;
  let nothingKeptAll = 0;
  for (const list of lists) {
    const keep = keptOf(list);
    let keptHere = 0;
    let relevantHere = 0;
    for (let i = 0; i < list.relevances.length; i++) {
      all++;
      const rel = list.relevant[i] === true;
      if (rel) relevantHere++;
      if (keep[i] === true) {
        keptHere++;
        if (rel) relevantKept++;
      }
    }
    relevantAll += relevantHere;
    kept += keptHere;
    if (keptHere === 0) nothingKeptAll++;
    if (relevantHere > 0) {
      withRelevant++;
      if (keptHere === 0) nothingKept++;
    }
  }
  const precision = kept === 0 ? null : relevantKept / kept;
  const recall = relevantAll === 0 ? null : relevantKept / relevantAll;
  const precisionKeepAll = all === 0 ? null : relevantAll / all;
  return {
    precision,
    recall,
    f1: f1Of(precision, recall),
    f1KeepAll: f1Of(precisionKeepAll, relevantAll === 0 ? null : 1),
    precisionKeepAll,
    keptPerQuery: lists.length === 0 ? 0 : kept / lists.length,
    queries: lists.length,
    queriesWithRelevant: withRelevant,
    nothingKept,
    nothingKeptAll,
  };
}

export function operatingPointMetrics(lists: readonly GateList[], point: OperatingPoint): OperatingPointMetrics {
  return keptMetrics(lists, (list) => operatingPointKept(point, list));
}

/** An absolute threshold (the classic gate) for comparison. */
export function thresholdMetrics(lists: readonly GateList[], threshold: number): OperatingPointMetrics {
  return keptMetrics(lists, (list) => list.relevances.map((r) => r >= threshold));
}

export function keepAllF1(lists: readonly GateList[]): number {
  return thresholdMetrics(lists, Number.NEGATIVE_INFINITY).f1;
}

/**
 * Upper bound of any rank cut: the best pooled F1 over every choice of one prefix per query of its
 * order (the ranking signal when the list has one, else relevance: the order the operating points
 * cut), labels known. No gate can beat it without a better ranking.
 *
 * Pooled F1 = 2·TP / (K + R) (TP relevant kept, K kept, R relevant candidates, all summed over the
 * queries), so a query's best cut for the pool is not its own best F1 cut: where relevant
 * candidates are dense, a long cut pays; where one sits at rank 9, keeping nothing may. Maximised
 * exactly by Dinkelbach's method: for a ratio f, each query independently keeps the prefix that
 * maximises 2·tp − f·k (the empty one included); f ← the pooled F1 of those cuts, until it stops
 * rising. Each step keeps 2·TP − f·(K + R) ≥ 0, and when the best choice gives 0 no choice has a
 * ratio above f. A handful of passes over the prefix counts, linear in the candidates.
 */
export function oracleCutF1(lists: readonly GateList[]): number {
  const prefixes: Int32Array[] = [];
  let relevantAll = 0;
  for (const list of lists) {
    const by = list.order ?? list.relevances;
    const order = by.map((_, i) => i).sort((a, b) => by[b]! - by[a]! || a - b);
    const tp = new Int32Array(order.length + 1);
    for (let k = 1; k <= order.length; k++) tp[k] = tp[k - 1]! + (list.relevant[order[k - 1]!] ? 1 : 0);
    relevantAll += tp[order.length]!;
    // A list without a relevant candidate keeps nothing at the optimum (any prefix only adds to K).
    if (tp[order.length]! > 0) prefixes.push(tp);
  }
  if (relevantAll === 0) return 0;
  let f = 0;
  for (;;) {
    let truePositives = 0;
    let kept = 0;
    for (const tp of prefixes) {
      let bestValue = 0;
      let bestK = 0;
      for (let k = 1; k < tp.length; k++) {
        const value = 2 * tp[k]! - f * k;
        if (value > bestValue) {
          bestValue = value;
          bestK = k;
        }
      }
      truePositives += tp[bestK]!;
      kept += bestK;
    }
    const next = (2 * truePositives) / (kept + relevantAll);
    if (!(next > f)) return f;
    f = next;
  }
}

/** `precise` is fitted for the highest mean precision with at least this recall on every collection. */
export const PRECISE_RECALL_FLOOR = 0.35;

function preciseObjective(recallFloor: number): string {
  return `highest mean precision with recall >= ${recallFloor} on every collection`;
}

/** What each operating point is fitted for (on the training collections, each collection counted once). */
export const FIT_OBJECTIVES: Readonly<Record<OperatingPointName, string>> = Object.freeze({
  precise: preciseObjective(PRECISE_RECALL_FLOOR),
  balanced:
    'highest worst-collection F1 / F1 of keeping all over the collections where a per-query cut can reach 1.3× (within 0.02: highest worst over all, then mean)',
  related: 'highest mean precision with recall >= 0.8 on every collection',
});

export const FIT_BETAS: readonly number[] = Object.freeze([0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4]);
export const FIT_SHIFTS: readonly number[] = Object.freeze(Array.from({ length: 25 }, (_, i) => -3 + i * 0.25));

/**
 * Upper bound of the operating-point rule itself on these lists: the pooled F1 of the best (beta, shift)
 * of the fit grid (FIT_BETAS × FIT_SHIFTS, floor 0) chosen with the lists' own labels. Whatever picks
 * one point for a collection (a fit on other collections, unlabelled corpus statistics, a person) does
 * no better there; oracleCutF1 is the bound of any cut (one prefix per query). Ties keep the earlier grid point.
 */
export function gridBestF1(lists: readonly GateList[]): { readonly point: OperatingPoint; readonly f1: number } {
  let best = { point: { beta: FIT_BETAS[0]!, shift: FIT_SHIFTS[0]!, floor: 0 } as OperatingPoint, f1: -1 };
  for (const beta of FIT_BETAS) {
    for (const shift of FIT_SHIFTS) {
      const point: OperatingPoint = { beta, shift, floor: 0 };
      const f1 = operatingPointMetrics(lists, point).f1;
      if (f1 > best.f1) best = { point, f1 };
    }
  }
  return best;
}

/** `precise` bounds read precision at no less than this recall (the acceptance's "precision at recall ≥ 0.3"). */
export const PRECISE_BOUND_RECALL = 0.3;

/**
 * The most precise (beta, shift) of the fit grid (floor 0) that keeps at least `minRecall` of these
 * lists' relevant candidates, chosen with their own labels: what no single point can beat on
 * precision at that recall. Null when no grid point reaches the recall. Ties keep the earlier point.
 */
export function gridBestPrecision(
  lists: readonly GateList[],
  minRecall: number,
): { readonly point: OperatingPoint; readonly precision: number; readonly recall: number } | null {
  let best: { point: OperatingPoint; precision: number; recall: number } | null = null;
  for (const beta of FIT_BETAS) {
    for (const shift of FIT_SHIFTS) {
      const point: OperatingPoint = { beta, shift, floor: 0 };
      const m = operatingPointMetrics(lists, point);
      if (m.recall === null || m.precision === null || m.recall < minRecall) continue;
      if (best === null || m.precision > best.precision) best = { point, precision: m.precision, recall: m.recall };
    }
  }
  return best;
}

/** How far any keep/drop rule of the gate could go on these lists (labels known): see gridBestF1, oracleCutF1. */
export interface OperatingPointBounds {
  /** F1 of keeping every candidate (the ratios' denominator). */
  readonly f1KeepAll: number;
  /** The best (beta, shift) of the fit grid on these lists' own labels. */
  readonly gridBest: { readonly point: OperatingPoint; readonly f1: number; readonly f1Ratio: number };
  /** Each query keeps a prefix of its order (ranking, else relevance), chosen together for the best pooled F1 (oracleCutF1). */
  readonly perQueryCut: { readonly f1: number; readonly f1Ratio: number };
  /** The most precise grid point at recall ≥ PRECISE_BOUND_RECALL (gridBestPrecision); null when none reaches it. */
  readonly preciseGridBest: ReturnType<typeof gridBestPrecision>;
}

/** Both bounds, or null when no list holds a relevant candidate (F1 is undefined there). */
export function operatingPointBounds(lists: readonly GateList[]): OperatingPointBounds | null {
  const f1KeepAll = keepAllF1(lists);
  if (f1KeepAll === 0) return null;
  const grid = gridBestF1(lists);
  const cut = oracleCutF1(lists);
  return {
    f1KeepAll,
    gridBest: { point: grid.point, f1: grid.f1, f1Ratio: grid.f1 / f1KeepAll },
    perQueryCut: { f1: cut, f1Ratio: cut / f1KeepAll },
    preciseGridBest: gridBestPrecision(lists, PRECISE_BOUND_RECALL),
  };
}

export interface OperatingPointFit {
  readonly point: OperatingPoint;
  readonly objective: string;
  readonly perCollection: Readonly<
    Record<string, { precision: number | null; recall: number | null; f1Ratio: number; keptPerQuery: number }>
  >;
}

interface Candidate {
  readonly point: OperatingPoint;
  readonly metrics: Readonly<Record<string, OperatingPointMetrics>>;
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

/**
 * The balanced point aims at this ratio of keeping all. A training collection whose best cut
 * (oracleCutF1, labels known) stays below it cannot reach it by any cut of the scorer's ranking,
 * and letting it decide the worst case made the fit keep nearly everything on every collection; it
 * only breaks near-ties (BALANCED_TIE_TOLERANCE) among the points that are best on the others.
 */
export const BALANCED_TARGET_RATIO = 1.3;
/** Worst ratios within this of the best count as tied (then: worst over all collections, then mean). */
export const BALANCED_TIE_TOLERANCE = 0.02;

function ratioOf(m: OperatingPointMetrics): number {
  return m.f1KeepAll === 0 ? 0 : m.f1 / m.f1KeepAll;
}

/** The balanced fit (see FIT_OBJECTIVES.balanced); `steering`: the collections whose worst ratio leads. */
function chooseBalanced(candidates: readonly Candidate[], steering: readonly string[]): Candidate {
  const lead = (c: Candidate) => Math.min(...steering.map((n) => ratioOf(c.metrics[n]!)));
  const all = (c: Candidate) => Object.values(c.metrics).map(ratioOf);
  const bestLead = Math.max(...candidates.map(lead));
  let best: Candidate | undefined;
  let bestScore: [number, number] = [Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY];
  for (const c of candidates) {
    if (lead(c) < bestLead - BALANCED_TIE_TOLERANCE) continue;
    const s: [number, number] = [Math.min(...all(c)), mean(all(c))];
    if (s[0] > bestScore[0] || (s[0] === bestScore[0] && s[1] > bestScore[1])) {
      best = c;
      bestScore = s;
    }
  }
  return best ?? candidates[0]!;
}

function choose(
  candidates: readonly Candidate[],
  name: OperatingPointName,
  steering: readonly string[],
  preciseRecallFloor: number,
): Candidate {
  if (name === 'balanced') return chooseBalanced(candidates, steering);
  const ms = (c: Candidate) => Object.values(c.metrics);
  const minRecall = (c: Candidate) => Math.min(...ms(c).map((m) => m.recall ?? 0));
  const meanPrecision = (c: Candidate) => mean(ms(c).map((m) => m.precision ?? 0));
  const floor = name === 'precise' ? preciseRecallFloor : 0.8;
  const score = (c: Candidate): [number, number] => (minRecall(c) >= floor ? [1, meanPrecision(c)] : [0, minRecall(c)]);
  let best = candidates[0]!;
  let bestScore = score(best);
  for (const c of candidates.slice(1)) {
    const s = score(c);
    if (s[0] > bestScore[0] || (s[0] === bestScore[0] && s[1] > bestScore[1])) {
      best = c;
      bestScore = s;
    }
  }
  return best;
}

export interface FitOptions {
  /**
   * 'relevance-head' (default, what the shipped points are fitted on) or 'ranked-cut': score each
   * candidate point on the lists' ranked cut (their `order`), the alternative research/loco/NOTES.md measures.
   */
  readonly fitOn?: 'relevance-head' | 'ranked-cut';
  /** The recall `precise` must keep on every collection (default PRECISE_RECALL_FLOOR; research/loco/NOTES.md measures others). */
  readonly preciseRecallFloor?: number;
  /**
   * Lists that hold nothing relevant, by the collection whose corpus they were retrieved from (its
   * other queries' lists, e.g. another collection's queries against this corpus). With them each
   * point gets a sufficiency verdict (VERDICT_REAL_EMPTY_TARGETS) and a per-pair floor; without
   * them the points have neither, as before.
   */
  readonly junk?: Readonly<Record<string, readonly GateList[]>>;
  /**
   * The most real lists (with a relevant candidate) each point's sufficiency verdict may leave
   * empty on any training collection, overriding VERDICT_REAL_EMPTY_TARGETS for the points named.
   */
  readonly verdictRealEmpty?: Readonly<Partial<Record<OperatingPointName, number>>>;
  /**
   * With `junk`, fit `balanced` for the per-collection contract over a grid that also reads the
   * list's confidence (gamma, emptyBelow: src/tooling/eval/list-confidence-fit.ts), the F1-ratio
   * point with its verdict one of the candidates. Default true; false fits `balanced` as the other
   * points are (the F1-ratio objective, then the verdict and floor).
   */
  readonly listConfidence?: boolean;
}

/** Floors tried for each point, ascending; the largest that costs nothing measurable is kept (FLOOR_TOLERANCE). */
export const FLOOR_GRID: readonly number[] = Object.freeze([0, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.125, 0.15]);
/** A floor may lower a training collection's F1 by at most this share, and empty at most this share more of its real lists. */
export const FLOOR_TOLERANCE = 0.01;

/** A point's contract figures on one collection (list-confidence-fit.ts) from its metrics and the corpus's off-topic lists. */
function contractFiguresOf(
  m: OperatingPointMetrics,
  point: OperatingPoint,
  junk: readonly GateList[],
): ContractFigures {
  return {
    f1Ratio: ratioOf(m),
    realEmpty: m.queriesWithRelevant === 0 ? 0 : m.nothingKept / m.queriesWithRelevant,
    junkEmpty: junk.length === 0 ? null : operatingPointMetrics(junk, point).nothingKeptAll / junk.length,
  };
}

/** The largest floor of FLOOR_GRID (stopping at the first that fails) that costs each collection at most FLOOR_TOLERANCE. */
function fitFloor(point: OperatingPoint, lists: Readonly<Record<string, readonly GateList[]>>): number {
  const base = Object.values(lists).map((ls) => operatingPointMetrics(ls, point));
  let floor = 0;
  for (const candidate of FLOOR_GRID) {
    if (candidate === 0) continue;
    const trial = { ...point, floor: candidate };
    const ok = Object.values(lists).every((ls, i) => {
      const m = operatingPointMetrics(ls, trial);
      const b = base[i]!;
      return (
        m.f1 >= (1 - FLOOR_TOLERANCE) * b.f1 &&
        m.nothingKept - b.nothingKept <= FLOOR_TOLERANCE * Math.max(1, m.queriesWithRelevant)
      );
    });
    if (!ok) break;
    floor = candidate;
  }
  return floor;
}

/**
 * Fits every operating point's (beta, shift) on labelled lists grouped by collection, by the
 * objectives of FIT_OBJECTIVES over the grid FIT_BETAS × FIT_SHIFTS (floor 0). Deterministic:
 * ties keep the earlier grid point.
 *
 * The fit reads relevance only (a list's `order` is set aside): what a point decides is how many
 * pairs to keep, from the relevance probabilities, and the fit scores that count on the relevance
 * head; the gate then takes that many from the head of the order it returns (the ranked cut).
 * Leave-one-collection-out, points fitted this way kept better ranked cuts on the held-out
 * collection than points fitted on the ranked cut itself, whose choice follows each fold's ranking
 * blend (SciFact's balanced ratio 1.62-1.65× against 1.83-2.46× at three split seeds; research/loco/NOTES.md,
 * "The ranked cut").
 */
export function fitOperatingPoints(
  lists: Readonly<Record<string, readonly GateList[]>>,
  options: FitOptions = {},
): Record<OperatingPointName, OperatingPointFit> {
  const preciseRecallFloor = options.preciseRecallFloor ?? PRECISE_RECALL_FLOOR;
  if (!(preciseRecallFloor >= 0 && preciseRecallFloor <= 1))
    throw new InvalidArgumentError(`preciseRecallFloor must be in [0, 1], got ${preciseRecallFloor}`);
  const verdictTargets = { ...VERDICT_REAL_EMPTY_TARGETS };
  for (const [name, share] of Object.entries(options.verdictRealEmpty ?? {})) {
    if (!OPERATING_POINT_NAMES.includes(name as OperatingPointName))
      throw new InvalidArgumentError(`verdictRealEmpty: no operating point ${JSON.stringify(name)}`);
    if (!(typeof share === 'number' && share >= 0 && share <= 1))
      throw new InvalidArgumentError(`verdictRealEmpty.${name} must be in [0, 1], got ${share}`);
    verdictTargets[name as OperatingPointName] = share;
  }
  const byCollection: Record<string, readonly GateList[]> = {};
  for (const [name, ls] of Object.entries(lists))
    byCollection[name] =
      options.fitOn === 'ranked-cut' ? ls : ls.map((l) => ({ relevances: l.relevances, relevant: l.relevant }));
  const names = Object.keys(byCollection).sort();
  const candidates: Candidate[] = [];
  for (const beta of FIT_BETAS) {
    for (const shift of FIT_SHIFTS) {
      const point: OperatingPoint = { beta, shift, floor: 0 };
      const metrics: Record<string, OperatingPointMetrics> = {};
      for (const n of names) metrics[n] = operatingPointMetrics(byCollection[n]!, point);
      candidates.push({ point, metrics });
    }
  }
  const reachable = names.filter((n) => {
    const keepAll = keepAllF1(byCollection[n]!);
    return keepAll > 0 && oracleCutF1(byCollection[n]!) >= BALANCED_TARGET_RATIO * keepAll;
  });
  const steering = reachable.length > 0 ? reachable : names;
  const out = {} as Record<OperatingPointName, OperatingPointFit>;
  const junk = options.junk;
  const verdictWeights =
    junk === undefined || Object.keys(junk).length === 0 ? undefined : fitVerdictWeights(lists, junk);
  for (const name of OPERATING_POINT_NAMES) {
    const c = choose(candidates, name, steering, preciseRecallFloor);
    let point = c.point;
    let metrics = c.metrics;
    let objective = name === 'precise' ? preciseObjective(preciseRecallFloor) : FIT_OBJECTIVES[name];
    if (verdictWeights !== undefined) {
      const sufficiency = Object.freeze({
        weights: verdictWeights,
        bias: verdictBias(verdictWeights, lists, verdictTargets[name]),
      });
      const judged: OperatingPoint = { ...c.point, sufficiency };
      point = Object.freeze({ ...judged, floor: fitFloor(judged, lists) });
      metrics = Object.fromEntries(names.map((n) => [n, operatingPointMetrics(lists[n]!, point)]));
      if (name === 'balanced' && junk !== undefined && options.listConfidence !== false) {
        // The candidate is measured as the gate decides it (its verdict reads the ranking, so the
        // kept set is the ranked cut); the grid's points, without a verdict, on the relevance head.
        const classic = point;
        const figures = Object.fromEntries(
          names.map((n) => [n, contractFiguresOf(metrics[n]!, classic, junk[n] ?? [])]),
        );
        const choice = fitBalancedForContract(byCollection, junk, { point: classic, figures }, FIT_BETAS, FIT_SHIFTS);
        if (!choice.fromCandidate) {
          point = Object.freeze({ ...choice.point, floor: fitFloor(choice.point, lists) });
          metrics = Object.fromEntries(names.map((n) => [n, operatingPointMetrics(lists[n]!, point)]));
        }
        objective = BALANCED_CONTRACT_OBJECTIVE;
      }
    }
    out[name] = {
      point,
      objective,
      perCollection: Object.fromEntries(
        names.map((n) => {
          const m = metrics[n]!;
          return [
            n,
            {
              precision: m.precision,
              recall: m.recall,
              f1Ratio: m.f1KeepAll === 0 ? 0 : m.f1 / m.f1KeepAll,
              keptPerQuery: m.keptPerQuery,
            },
          ];
        }),
      ),
    };
  }
  return out;
}

/** One query's gate candidates for the eval report: a GateList plus what nDCG of the kept set needs. */
export interface JudgedGateList extends GateList {
  readonly docIds: readonly string[];
  readonly judgments: ReadonlyMap<string, number>;
}

/** What `relevance-gate eval` reports for one operating point. */
export interface OperatingPointRow extends OperatingPointMetrics {
  readonly name: OperatingPointName;
  readonly point: OperatingPoint;
  /** f1 / f1KeepAll (0 when keeping all has F1 0). */
  readonly f1Ratio: number;
  /** nothingKept / queriesWithRelevant (null when no query has a relevant candidate). */
  readonly nothingKeptShare: number | null;
  /** Mean nDCG@10 of the KEPT list in the order the gate returns it (`order`, else relevance; dropped passages count as not returned). */
  readonly ndcg10Kept: number | null;
  /** Lists that hold nothing relevant (another collection's queries against this corpus) measured beside; 0 when none were given. */
  readonly junkLists: number;
  /** Of those, the share where nothing was kept (a list with no candidate counts as empty); null when none were given. */
  readonly junkNothingKeptShare: number | null;
  /** Passages kept per junk list (null when none were given). */
  readonly junkKeptPerList: number | null;
  /**
   * The junk lists by the collection their queries came from (lists that name a `source`): a
   * corpus can hold passages on another collection's topics, so the share left empty is worth
   * reading per source. Empty when no junk list names one.
   */
  readonly junkBySource: Readonly<Record<string, JunkSourceShare>>;
}

/** Junk lists of one source collection under one point. */
export interface JunkSourceShare {
  readonly lists: number;
  /** Of those, the share where nothing was kept. */
  readonly nothingKeptShare: number;
}

function junkBySource(
  junk: readonly (GateList & { readonly source?: string })[],
  point: OperatingPoint,
): Record<string, JunkSourceShare> {
  const groups = new Map<string, GateList[]>();
  for (const list of junk) {
    if (list.source === undefined) continue;
    const group = groups.get(list.source);
    if (group === undefined) groups.set(list.source, [list]);
    else group.push(list);
  }
  const out: Record<string, JunkSourceShare> = {};
  for (const [source, lists] of [...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    out[source] = {
      lists: lists.length,
      nothingKeptShare: operatingPointMetrics(lists, point).nothingKeptAll / lists.length,
    };
  }
  return out;
}

/**
 * The ids a point keeps of a list, in the order the gate returns them (`order`, else relevance;
 * ties by input position).
 */
export function keptIdsInOrder(
  point: OperatingPoint,
  list: GateList & { readonly docIds: readonly string[] },
): string[] {
  const keep = operatingPointKept(point, list);
  const order = list.order ?? list.relevances;
  return list.docIds
    .map((id, i) => ({ id, o: order[i]!, i }))
    .filter((x) => keep[x.i] === true)
    .sort((a, b) => b.o - a.o || a.i - b.i)
    .map((x) => x.id);
}

/** Per operating point: the kept-set metrics and nDCG@10 of the kept list, with the gate's exact per-call cut. */
export function operatingPointRows(
  lists: readonly JudgedGateList[],
  points: Readonly<Record<OperatingPointName, OperatingPoint>>,
  junk: readonly (GateList & { readonly source?: string })[] = [],
): OperatingPointRow[] {
  return OPERATING_POINT_NAMES.map((name) => {
    const point = points[name];
    const m = operatingPointMetrics(lists, point);
    const junkMetrics = junk.length === 0 ? undefined : operatingPointMetrics(junk, point);
    const ndcgs: Array<number | null> = lists.map((list) => ndcgAt(keptIdsInOrder(point, list), list.judgments, 10));
    return {
      name,
      point,
      ...m,
      f1Ratio: m.f1KeepAll === 0 ? 0 : m.f1 / m.f1KeepAll,
      nothingKeptShare: m.queriesWithRelevant === 0 ? null : m.nothingKept / m.queriesWithRelevant,
      ndcg10Kept: meanOf(ndcgs),
      junkLists: junk.length,
      junkNothingKeptShare: junkMetrics === undefined ? null : junkMetrics.nothingKeptAll / junk.length,
      junkKeptPerList: junkMetrics === undefined ? null : junkMetrics.keptPerQuery,
      junkBySource: junkBySource(junk, point),
    };
  });
}
