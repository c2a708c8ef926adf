import { describe, expect, it } from 'vitest';
import {
  type GateList,
  FIT_BETAS,
  FIT_SHIFTS,
  fitOperatingPoints,
  gridBestF1,
  gridBestPrecision,
  keepAllF1,
  operatingPointBounds,
  operatingPointKept,
  operatingPointMetrics,
  operatingPointRows,
  oracleCutF1,
  PRECISE_BOUND_RECALL,
  thresholdMetrics,
} from '../../src/tooling/eval/operating-points.js';
import {
  OPERATING_POINT_NAMES,
  type OperatingPoint,
  operatingPointThreshold,
} from '../../src/gate/policies/operating-points.js';
import {
  BALANCED_CONTRACT,
  contractGrid,
  contractPasses,
  FIT_EMPTY_BELOW,
  FIT_GAMMAS,
  fitBalancedForContract,
  gridCells,
  gridPoint,
} from '../../src/tooling/eval/list-confidence-fit.js';
import { createGate, InvalidArgumentError, RANKING, type ScorerPairResult } from '../../src/index.js';
import { ids, passages, tableScorer } from '../gate/helpers.js';

const list = (relevances: number[], relevant: number[]): GateList => ({
  relevances,
  relevant: relevant.map((r) => r === 1),
});

// Two queries: one clear winner; one list where everything scores low but two pairs are relevant.
const LISTS: GateList[] = [list([0.9, 0.2, 0.1, 0.05], [1, 0, 0, 0]), list([0.2, 0.18, 0.03, 0.02], [1, 1, 0, 0])];

describe('kept-set metrics of operating points', () => {
  it('pools precision and recall over queries and counts queries with nothing kept', () => {
    const m = thresholdMetrics(LISTS, 0.5);
    // kept: only 0.9 (relevant) → precision 1, recall 1/3; the second query keeps nothing.
    expect(m.precision).toBe(1);
    expect(m.recall).toBeCloseTo(1 / 3, 12);
    expect(m.f1).toBeCloseTo(0.5, 12);
    expect(m.nothingKept).toBe(1);
    expect(m.queriesWithRelevant).toBe(2);
    expect(m.keptPerQuery).toBe(0.5);
    // keep all: precision 3/8, recall 1 → F1 = 2·0.375/1.375
    expect(keepAllF1(LISTS)).toBeCloseTo(0.75 / 1.375, 12);
    expect(m.f1KeepAll).toBeCloseTo(0.75 / 1.375, 12);
  });

  it('a relative cut keeps something in every list, where an absolute threshold keeps nothing', () => {
    const m = operatingPointMetrics(LISTS, { beta: 1, shift: 0, floor: 0 });
    expect(m.nothingKept).toBe(0);
    expect(m.nothingKeptAll).toBe(0);
    // the per-query threshold is the gate's own function
    const kept = LISTS.map(
      (l) =>
        l.relevances.filter((r) => r >= operatingPointThreshold({ beta: 1, shift: 0, floor: 0 }, l.relevances)).length,
    );
    expect(m.keptPerQuery).toBe((kept[0]! + kept[1]!) / 2);
  });

  it('the oracle cut is an upper bound of every operating point and of keeping all', () => {
    const oracle = oracleCutF1(LISTS);
    // best cuts: query 1 keeps 1 (tp 1), query 2 keeps 2 (tp 2) → F1 1
    expect(oracle).toBe(1);
    for (const beta of FIT_BETAS)
      for (const shift of FIT_SHIFTS)
        expect(operatingPointMetrics(LISTS, { beta, shift, floor: 0 }).f1).toBeLessThanOrEqual(oracle + 1e-12);
    expect(keepAllF1(LISTS)).toBeLessThanOrEqual(oracle);
  });

  it('the oracle cut is the best pooled F1 over every choice of one prefix per query (brute force)', () => {
    // Pooled F1 = 2·TP / (K + R): enumerate every combination of prefix lengths.
    const bruteForce = (lists: readonly GateList[]): number => {
      const orders = lists.map((l) =>
        l.relevances.map((_, i) => i).sort((a, b) => l.relevances[b]! - l.relevances[a]! || a - b),
      );
      const r = lists.reduce((s, l) => s + l.relevant.filter(Boolean).length, 0);
      if (r === 0) return 0; // F1 has no relevant to find: 0, as keepAllF1
      let best = 0;
      const walk = (q: number, tp: number, k: number): void => {
        if (q === lists.length) {
          best = Math.max(best, (2 * tp) / (k + r));
          return;
        }
        let t = 0;
        walk(q + 1, tp, k);
        orders[q]!.forEach((i, j) => {
          if (lists[q]!.relevant[i]) t++;
          walk(q + 1, tp + t, k + j + 1);
        });
      };
      walk(0, 0, 0);
      return best;
    };
    let seed = 12345;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    for (let trial = 0; trial < 200; trial++) {
      const lists = Array.from({ length: 1 + Math.floor(rand() * 4) }, () => {
        const n = 1 + Math.floor(rand() * 6);
        return list(
          Array.from({ length: n }, () => rand()),
          Array.from({ length: n }, () => (rand() < 0.35 ? 1 : 0)),
        );
      });
      expect(oracleCutF1(lists)).toBeCloseTo(bruteForce(lists), 12);
    }
  });

  it('the oracle cut is not each query cut at its own best F1: the pool can prefer another prefix', () => {
    // Query 1's only relevant candidate is third: its own best cut keeps all three (F1 0.5). Query 2
    // keeps both. Pooled: 2·3 / (5 + 3) = 0.75. Query 1 keeping nothing instead: 2·2 / (2 + 3) = 0.8.
    const lists = [list([0.9, 0.8, 0.7], [0, 0, 1]), list([0.9, 0.8], [1, 1])];
    expect(oracleCutF1(lists)).toBeCloseTo(0.8, 12);
    expect(operatingPointBounds(lists)!.perQueryCut.f1).toBeCloseTo(0.8, 12);
  });

  it('the best grid point is the operating point with the best F1 on the lists themselves', () => {
    const best = gridBestF1(LISTS);
    expect(FIT_BETAS).toContain(best.point.beta);
    expect(FIT_SHIFTS).toContain(best.point.shift);
    expect(best.f1).toBe(operatingPointMetrics(LISTS, best.point).f1);
    const all = FIT_BETAS.flatMap((beta) =>
      FIT_SHIFTS.map((shift) => operatingPointMetrics(LISTS, { beta, shift, floor: 0 }).f1),
    );
    for (const f1 of all) expect(f1).toBeLessThanOrEqual(best.f1);
    // the grid is not flat here, so a wrong pick would show
    expect(Math.min(...all)).toBeLessThan(best.f1);
    expect(best.f1).toBeLessThanOrEqual(oracleCutF1(LISTS));
  });

  it('the most precise grid point at a recall: no grid point with that recall is more precise', () => {
    // Three relevant pairs: 0.9 alone is precise (recall 1/3); reaching 2/3 needs 0.2 and a miss before it.
    const lists = [list([0.9, 0.8, 0.3, 0.2, 0.1], [1, 0, 0, 1, 0]), list([0.5, 0.4, 0.05], [0, 1, 0])];
    const all = FIT_BETAS.flatMap((beta) =>
      FIT_SHIFTS.map((shift) => operatingPointMetrics(lists, { beta, shift, floor: 0 })),
    );
    for (const minRecall of [0.3, 0.6, 0.9]) {
      const best = gridBestPrecision(lists, minRecall)!;
      expect(best.recall).toBeGreaterThanOrEqual(minRecall);
      const own = operatingPointMetrics(lists, best.point);
      expect([best.precision, best.recall]).toEqual([own.precision, own.recall]);
      for (const m of all) if (m.recall! >= minRecall) expect(m.precision!).toBeLessThanOrEqual(best.precision);
    }
    // Asking for more recall never buys precision.
    expect(gridBestPrecision(lists, 0.9)!.precision).toBeLessThanOrEqual(gridBestPrecision(lists, 0.3)!.precision);
    expect(gridBestPrecision(lists, 1.01)).toBeNull();
    expect(operatingPointBounds(lists)!.preciseGridBest).toEqual(gridBestPrecision(lists, PRECISE_BOUND_RECALL));
  });

  it('bounds: both upper bounds with their ratios to keeping all; null without a relevant candidate', () => {
    const b = operatingPointBounds(LISTS)!;
    expect(b.f1KeepAll).toBe(keepAllF1(LISTS));
    expect(b.gridBest.f1).toBe(gridBestF1(LISTS).f1);
    expect(b.gridBest.f1Ratio).toBeCloseTo(b.gridBest.f1 / b.f1KeepAll, 12);
    expect(b.perQueryCut.f1).toBe(1);
    expect(b.perQueryCut.f1Ratio).toBeCloseTo(1 / b.f1KeepAll, 12);
    expect(operatingPointBounds([list([0.9, 0.1], [0, 0])])).toBeNull();
    expect(operatingPointBounds([])).toBeNull();
  });

  it('precise keeps the recall floor it is given on every collection, and refuses a floor outside [0, 1]', () => {
    const lists = { a: LISTS, b: [list([0.6, 0.5, 0.4, 0.1], [1, 1, 0, 0]), list([0.7, 0.6, 0.2, 0.1], [1, 0, 1, 0])] };
    const byDefault = fitOperatingPoints(lists);
    expect(fitOperatingPoints(lists, { preciseRecallFloor: 0.35 })).toEqual(byDefault);
    const strict = fitOperatingPoints(lists, { preciseRecallFloor: 0.9 });
    for (const c of Object.values(strict.precise.perCollection)) expect(c.recall!).toBeGreaterThanOrEqual(0.9);
    expect(strict.precise.objective).toBe('highest mean precision with recall >= 0.9 on every collection');
    expect(byDefault.precise.objective).toBe('highest mean precision with recall >= 0.35 on every collection');
    // the other points do not read it
    expect(strict.balanced).toEqual(byDefault.balanced);
    expect(strict.related).toEqual(byDefault.related);
    for (const bad of [-0.1, 1.5, Number.NaN])
      expect(() => fitOperatingPoints(lists, { preciseRecallFloor: bad })).toThrow(InvalidArgumentError);
  });

  it("each point's verdict leaves at most its share of real lists empty; a share given overrides the default", () => {
    // Synthetic: real lists whose best relevance spreads from 0.3 to 0.95, junk lists lower.
    const real = Array.from({ length: 40 }, (_, i) => {
      const top = 0.3 + (0.65 * i) / 39;
      return list([top, top / 2, top / 4, 0.01], [1, 0, 0, 0]);
    });
    const junkLists = Array.from({ length: 40 }, (_, i) => {
      const top = 0.05 + (0.4 * i) / 39;
      return list([top, top / 2, top / 3, 0.01], [0, 0, 0, 0]);
    });
    const lists = { a: real.filter((_, i) => i % 2 === 0), b: real.filter((_, i) => i % 2 === 1) };
    const junk = { a: junkLists.filter((_, i) => i % 2 === 0), b: junkLists.filter((_, i) => i % 2 === 1) };
    const emptied = (point: Parameters<typeof operatingPointKept>[0], ls: readonly GateList[]) =>
      ls.filter((l) => !operatingPointKept(point, l).some(Boolean)).length / ls.length;
    // The verdict alone (the contract fit may choose a point without one: see below).
    const byDefault = fitOperatingPoints(lists, { junk, listConfidence: false });
    const wider = fitOperatingPoints(lists, { junk, listConfidence: false, verdictRealEmpty: { balanced: 0.3 } });
    for (const ls of Object.values(lists)) {
      expect(emptied({ ...byDefault.balanced.point, floor: 0 }, ls)).toBeLessThanOrEqual(0.05);
      expect(emptied({ ...wider.balanced.point, floor: 0 }, ls)).toBeLessThanOrEqual(0.3);
    }
    // More real lists may go empty, so the verdict's bias is stricter and empties at least as many junk lists.
    expect(wider.balanced.point.sufficiency!.bias).toBeLessThan(byDefault.balanced.point.sufficiency!.bias);
    const junkAll = Object.values(junk).flat();
    expect(emptied(wider.balanced.point, junkAll)).toBeGreaterThan(emptied(byDefault.balanced.point, junkAll));
    // The other points keep their defaults.
    expect(wider.precise).toEqual(byDefault.precise);
    expect(wider.related).toEqual(byDefault.related);
    expect(() => fitOperatingPoints(lists, { junk, verdictRealEmpty: { balanced: 1.5 } })).toThrow(/\[0, 1\]/);
    expect(() =>
      fitOperatingPoints(lists, { junk, verdictRealEmpty: { loose: 0.1 } as unknown as { balanced: number } }),
    ).toThrow(/no operating point "loose"/);
  });

  it('fits each operating point by its objective on the training collections', () => {
    const fits = fitOperatingPoints({ a: LISTS, b: [list([0.6, 0.5, 0.4, 0.1], [1, 1, 0, 0])] });
    for (const name of ['precise', 'balanced', 'related'] as const) {
      expect(FIT_BETAS).toContain(fits[name].point.beta);
      expect(FIT_SHIFTS).toContain(fits[name].point.shift);
      expect(Object.keys(fits[name].perCollection)).toEqual(['a', 'b']);
    }
    // related must reach recall >= 0.8 on every collection (it can here: keep more)
    for (const c of Object.values(fits.related.perCollection)) expect(c.recall!).toBeGreaterThanOrEqual(0.8);
    // balanced is the grid point with the best worst-collection F1 ratio: no grid point beats it
    const worst = (beta: number, shift: number) =>
      Math.min(
        ...[LISTS, [list([0.6, 0.5, 0.4, 0.1], [1, 1, 0, 0])]].map((ls) => {
          const m = operatingPointMetrics(ls, { beta, shift, floor: 0 });
          return m.f1 / m.f1KeepAll;
        }),
      );
    const chosen = worst(fits.balanced.point.beta, fits.balanced.point.shift);
    for (const beta of FIT_BETAS)
      for (const shift of FIT_SHIFTS) expect(worst(beta, shift)).toBeLessThanOrEqual(chosen + 1e-12);
  });

  it('balanced: a collection no cut can lift to 1.3× keeping all only breaks near-ties', () => {
    const b = [list([0.6, 0.5, 0.4, 0.1], [1, 1, 0, 0])];
    // Every candidate relevant: keeping all is the best cut (ratio 1), so 1.3× is out of reach.
    const c = [list([0.7, 0.3, 0.2, 0.1], [1, 1, 1, 1]), list([0.5, 0.4, 0.3, 0.2], [1, 1, 1, 1])];
    expect(oracleCutF1(c)).toBeLessThan(1.3 * keepAllF1(c));
    expect(oracleCutF1(LISTS)).toBeGreaterThanOrEqual(1.3 * keepAllF1(LISTS));
    expect(oracleCutF1(b)).toBeGreaterThanOrEqual(1.3 * keepAllF1(b));
    const ratio = (ls: GateList[], beta: number, shift: number) => {
      const m = operatingPointMetrics(ls, { beta, shift, floor: 0 });
      return m.f1 / m.f1KeepAll;
    };
    const lead = (beta: number, shift: number) => Math.min(ratio(LISTS, beta, shift), ratio(b, beta, shift));
    const worstAll = (beta: number, shift: number) => Math.min(lead(beta, shift), ratio(c, beta, shift));
    const grid = FIT_BETAS.flatMap((beta) => FIT_SHIFTS.map((shift) => [beta, shift] as const));
    const bestLead = Math.max(...grid.map(([beta, shift]) => lead(beta, shift)));
    const { beta, shift } = fitOperatingPoints({ a: LISTS, b, c }).balanced.point;
    expect(lead(beta, shift)).toBeGreaterThanOrEqual(bestLead - 0.02 - 1e-12);
    for (const [gb, gs] of grid)
      if (lead(gb, gs) >= bestLead - 0.02) expect(worstAll(gb, gs)).toBeLessThanOrEqual(worstAll(beta, shift) + 1e-12);
    // The old rule (worst over every collection) would keep everything for c's sake.
    const oldBest = Math.max(...grid.map(([gb, gs]) => worstAll(gb, gs)));
    expect(lead(beta, shift)).toBeGreaterThan(
      Math.min(...grid.filter(([gb, gs]) => worstAll(gb, gs) === oldBest).map(([gb, gs]) => lead(gb, gs))),
    );
    // Only unreachable collections: they steer (the best worst-collection ratio).
    const only = fitOperatingPoints({ c }).balanced.point;
    const bestC = Math.max(...grid.map(([gb, gs]) => ratio(c, gb, gs)));
    expect(ratio(c, only.beta, only.shift)).toBeCloseTo(bestC, 12);
  });

  it('report rows carry nDCG@10 of the kept list and the share of queries with nothing kept', () => {
    const judged = LISTS.map((l, q) => ({
      ...l,
      docIds: l.relevances.map((_, i) => `q${q}d${i}`),
      judgments: new Map(l.relevant.flatMap((r, i) => (r ? [[`q${q}d${i}`, 1] as const] : []))),
    }));
    const points = {
      precise: { beta: 1, shift: -20, floor: 0 },
      balanced: { beta: 1, shift: 0, floor: 0 },
      related: { beta: 1, shift: 20, floor: 0 },
    };
    const rows = operatingPointRows(judged, points);
    expect(rows.map((r) => r.name)).toEqual(['precise', 'balanced', 'related']);
    // related keeps everything: the kept list is the whole list in relevance order (nDCG 1 here)
    expect(rows[2]!.keptPerQuery).toBe(4);
    expect(rows[2]!.ndcg10Kept).toBeCloseTo(1, 12);
    // precise keeps only the best pair: query 2 loses its second relevant passage
    expect(rows[0]!.keptPerQuery).toBe(1);
    expect(rows[0]!.ndcg10Kept!).toBeLessThan(1);
    expect(rows[0]!.nothingKeptShare).toBe(0);
    expect(rows[0]!.f1Ratio).toBeCloseTo(rows[0]!.f1 / rows[0]!.f1KeepAll, 12);
  });
});

describe('the ranked cut: the eval decides as the gate does', () => {
  /** Deterministic pseudo-random lists with a ranking signal that disagrees with relevance. */
  function randomLists(n: number, k: number, seed: number): GateList[] {
    let s = seed >>> 0;
    const next = () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    return Array.from({ length: n }, () => {
      const relevances = Array.from({ length: k }, () => Math.round(next() * 1000) / 1000);
      const order = relevances.map((r) => Math.round((0.5 * r + 0.5 * next()) * 1000) / 1000);
      return { relevances, relevant: relevances.map((r) => next() < r), order };
    });
  }

  it('operatingPointKept equals the gate decision (ties included) for every operating point', async () => {
    const points = {
      precise: { beta: 0.5, shift: -1, floor: 0 },
      balanced: { beta: 2, shift: 0.5, floor: 0 },
      related: { beta: 4, shift: 1, floor: 0.05 },
    };
    for (const l of randomLists(40, 12, 7)) {
      const table: Record<string, ScorerPairResult> = {};
      l.relevances.forEach((r, i) => {
        table[`p${i}`] = { relevant: r, [RANKING]: l.order![i]! };
      });
      for (const mode of OPERATING_POINT_NAMES) {
        const r = await createGate({ scorer: tableScorer(table), policy: { mode, operatingPoints: points } }).filter(
          'q',
          passages(l.relevances.length),
        );
        const kept = operatingPointKept(points[mode], l);
        expect(new Set(ids(r.included))).toEqual(new Set(kept.flatMap((k, i) => (k ? [`p${i}`] : []))));
      }
    }
  });

  it('keeps the relevance cut’s count from the head of the order; without an order, the relevance head', () => {
    const l: GateList = {
      relevances: [0.9, 0.8, 0.1, 0.05],
      relevant: [true, false, true, false],
      order: [0.1, 0.2, 0.9, 0.3],
    };
    const point = { beta: 1, shift: 0, floor: 0 };
    const t = operatingPointThreshold(point, l.relevances);
    const k = l.relevances.filter((r) => r >= t).length;
    const kept = operatingPointKept(point, l);
    expect(kept.filter(Boolean)).toHaveLength(k);
    expect(kept).toEqual([false, false, true, true].map((_, i) => [2, 3, 1, 0].slice(0, k).includes(i)));
    const plain = operatingPointKept(point, { relevances: l.relevances, relevant: l.relevant });
    expect(plain).toEqual(l.relevances.map((r) => r >= t));
  });

  it('the fit reads relevance only: the same points with or without an order; fitOn ranked-cut reads it', () => {
    const lists = { a: randomLists(30, 10, 1), b: randomLists(30, 10, 2) };
    const plain = Object.fromEntries(
      Object.entries(lists).map(([n, ls]) => [n, ls.map((l) => ({ relevances: l.relevances, relevant: l.relevant }))]),
    );
    const withOrder = fitOperatingPoints(lists);
    const without = fitOperatingPoints(plain);
    for (const name of OPERATING_POINT_NAMES) expect(withOrder[name]).toEqual(without[name]);
    const onCut = fitOperatingPoints(lists, { fitOn: 'ranked-cut' });
    const differs = OPERATING_POINT_NAMES.some(
      (n) => JSON.stringify(onCut[n].perCollection) !== JSON.stringify(without[n].perCollection),
    );
    expect(differs).toBe(true);
  });
});

describe('balanced fitted for the contract, reading the list confidence (gamma, emptyBelow)', () => {
  /** Deterministic pseudo-random lists; relevance rounded so ties occur. */
  function randomLists(n: number, k: number, seed: number, relevantShare: number): GateList[] {
    let s = seed >>> 0;
    const next = () => {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
    return Array.from({ length: n }, () => {
      const scale = next();
      const relevances = Array.from({ length: k }, () => Math.round(next() * scale * 100) / 100);
      return { relevances, relevant: relevances.map((r) => next() < r * relevantShare) };
    });
  }
  const BETAS = [0.5, 1, 2];
  const SHIFTS = [-1, 0, 1.5];

  it("every grid point's figures are the gate's decisions (operatingPointKept), ties and empty lists included", () => {
    const real = [...randomLists(60, 12, 7, 1.5), list([], [])];
    const junk = [...randomLists(50, 12, 8, 0), list([], [])];
    const cells = gridCells(BETAS, SHIFTS);
    const grid = contractGrid(real, junk, cells);
    let differentFromGammaZero = 0;
    for (let c = 0; c < cells.length; c++) {
      for (let j = 0; j < FIT_EMPTY_BELOW.length; j++) {
        const point = gridPoint(cells[c]!, j);
        const m = operatingPointMetrics(real, point);
        const junkEmpty = operatingPointMetrics(junk, point).nothingKeptAll / junk.length;
        const got = grid.figures(c, j);
        expect(got.f1Ratio).toBeCloseTo(m.f1 / m.f1KeepAll, 12);
        expect(got.realEmpty).toBe(m.nothingKept / m.queriesWithRelevant);
        expect(got.junkEmpty).toBe(junkEmpty);
        if (
          cells[c]!.gamma !== 0 &&
          got.f1Ratio !== grid.figures(c - FIT_GAMMAS.indexOf(cells[c]!.gamma) + FIT_GAMMAS.indexOf(0), j).f1Ratio
        )
          differentFromGammaZero++;
      }
    }
    // The parameters matter on these lists (the comparison above is not between equal figures).
    expect(differentFromGammaZero).toBeGreaterThan(50);
    expect(new Set(FIT_EMPTY_BELOW.map((_, j) => grid.figures(0, j).junkEmpty)).size).toBeGreaterThan(2);
  });

  it('chooses first by the empty-answer line held with room, then by the contract tests passed, or the candidate', () => {
    const real = { a: randomLists(40, 10, 11, 1.6), b: randomLists(40, 10, 12, 1.2) };
    const junk = { a: randomLists(40, 10, 13, 0), b: randomLists(40, 10, 14, 0) };
    const cells = gridCells(BETAS, SHIFTS);
    const grids = Object.fromEntries(
      Object.entries(real).map(([n, ls]) => [n, contractGrid(ls, junk[n as 'a'], cells)]),
    );
    /** [collections leaving <= 5 % of real lists empty, contract tests passed], computed with the gate's decisions. */
    const keyOf = (point: OperatingPoint): [number, number] =>
      Object.entries(real).reduce<[number, number]>(
        ([holding, passes], [n, ls]) => {
          const m = operatingPointMetrics(ls, point);
          const f = {
            f1Ratio: m.f1 / m.f1KeepAll,
            realEmpty: m.nothingKept / m.queriesWithRelevant,
            junkEmpty: operatingPointMetrics(junk[n as 'a'], point).nothingKeptAll / junk[n as 'a'].length,
          };
          return [
            holding + (f.realEmpty <= BALANCED_CONTRACT.maxRealEmptyInFit ? 1 : 0),
            passes + contractPasses(f, grids[n]!.lines),
          ];
        },
        [0, 0],
      );
    const keys = cells.flatMap((cell) => FIT_EMPTY_BELOW.map((_, j) => keyOf(gridPoint(cell, j))));
    const mostHolding = Math.max(...keys.map((k) => k[0]));
    const most = Math.max(...keys.filter((k) => k[0] === mostHolding).map((k) => k[1]));
    // The two orders differ on these lists: the choice is not simply the most tests passed.
    expect(Math.max(...keys.map((k) => k[1]))).toBeGreaterThan(most);
    const choice = fitBalancedForContract(real, junk, undefined, BETAS, SHIFTS);
    expect(choice.fromCandidate).toBe(false);
    expect(choice.passes).toBe(most);
    expect(keyOf(choice.point)).toEqual([mostHolding, most]);
    // A candidate that passes every test wins over any grid point that does not.
    const perfect = { f1Ratio: 9, realEmpty: 0, junkEmpty: 1 };
    const withCandidate = fitBalancedForContract(
      real,
      junk,
      { point: { beta: 7, shift: 0, floor: 0 }, figures: { a: perfect, b: perfect } },
      BETAS,
      SHIFTS,
    );
    expect(most).toBeLessThan(6);
    expect(withCandidate).toEqual({ point: { beta: 7, shift: 0, floor: 0 }, passes: 6, fromCandidate: true });
  });

  it('fitOperatingPoints uses it for balanced only when off-topic lists are given, unless listConfidence is false', () => {
    const real = { a: randomLists(30, 10, 21, 1.6), b: randomLists(30, 10, 22, 1.2) };
    const junk = { a: randomLists(30, 10, 23, 0), b: randomLists(30, 10, 24, 0) };
    const contract = fitOperatingPoints(real, { junk });
    const classic = fitOperatingPoints(real, { junk, listConfidence: false });
    const noJunk = fitOperatingPoints(real);
    expect(contract.balanced.objective).toMatch(/contract tests passed/);
    expect(classic.balanced.objective).not.toMatch(/contract/);
    expect(noJunk.balanced.objective).not.toMatch(/contract/);
    expect(contract.precise).toEqual(classic.precise);
    expect(contract.related).toEqual(classic.related);
  });
});
