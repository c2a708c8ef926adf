/**
 * Does an operating point that reads the list's own confidence transfer better? The gate's point
 * keeps the expected-F_beta-best cut of the list's shifted probabilities; here the shift also moves
 * with the list's top score, shift + gamma * (logit(top) - logit(0.5)) (gamma 0 is the shipped
 * rule). For each held-out collection, (beta, shift, gamma) are picked on the other collections'
 * scored lists (`fit-points --scores-out`) by the acceptance's tests (balanced F1 >= min(1.3, 95 %
 * of the bound), <= 10 % of real lists empty, >= 90 % of junk lists empty), then measured held out.
 *
 *   npx tsx research/loco/list-confidence.ts /tmp/fit2/ce-scores.json
 */
import { readFileSync } from 'node:fs';
import { FIT_BETAS, FIT_SHIFTS, type GateList, gridBestF1, keepAllF1, keptMetrics } from '../../src/tooling/eval/operating-points.js';
import { parseScoredLists } from '../../src/tooling/eval/scored-lists-file.js';

const GAMMAS = [-0.5, -0.25, 0, 0.25, 0.5, 0.75, 1];
/** Keep nothing when the best cut's expected F_beta is below this (0: always keep the best cut, as the point alone does). */
const EMPTY_BELOW = [0, 0.05, 0.1, 0.2];
const logit = (p: number) => {
  const q = Math.min(1 - 1e-7, Math.max(1e-7, p));
  return Math.log(q / (1 - q));
};

interface Point {
  readonly beta: number;
  readonly shift: number;
  readonly gamma: number;
  readonly emptyBelow: number;
}

function kept(point: Point, list: GateList): boolean[] {
  const n = list.relevances.length;
  if (n === 0) return [];
  const sorted = [...list.relevances].sort((a, b) => b - a);
  const shift = point.shift + point.gamma * logit(sorted[0]!);
  const b2 = point.beta * point.beta;
  const q = sorted.map((p) => 1 / (1 + Math.exp(-(logit(p) + shift))));
  const total = q.reduce((a, b) => a + b, 0);
  let best = -1;
  let bestValue = Number.NEGATIVE_INFINITY;
  let cum = 0;
  for (let k = 0; k < n; k++) {
    cum += q[k]!;
    const value = ((1 + b2) * cum) / (k + 1 + b2 * total);
    if (value > bestValue) {
      bestValue = value;
      best = k;
    }
  }
  const t = bestValue < point.emptyBelow ? Number.POSITIVE_INFINITY : sorted[best]!;
  return list.relevances.map((r) => r >= t);
}

const collections = parseScoredLists(readFileSync(process.argv[2] as string, 'utf8'));
const names = collections.map((c) => c.name);
const real = Object.fromEntries(collections.map((c) => [c.name, c.lists as readonly GateList[]]));
const junk = Object.fromEntries(collections.map((c) => [c.name, c.junk as readonly GateList[]]));
const bound = Object.fromEntries(names.map((n) => [n, gridBestF1(real[n]!).f1 / keepAllF1(real[n]!)]));

interface Figures {
  ratio: number;
  emptyReal: number;
  emptyJunk: number;
  pass: number;
}
function figures(point: Point, name: string): Figures {
  const m = keptMetrics(real[name]!, (l) => kept(point, l));
  const j = keptMetrics(junk[name]!, (l) => kept(point, l));
  const ratio = m.f1 / m.f1KeepAll;
  const emptyReal = m.queriesWithRelevant === 0 ? 0 : m.nothingKept / m.queriesWithRelevant;
  const emptyJunk = j.queries === 0 ? 1 : j.nothingKeptAll / j.queries;
  const pass =
    (ratio >= Math.min(1.3, 0.95 * bound[name]!) ? 1 : 0) + (emptyReal <= 0.1 ? 1 : 0) + (emptyJunk >= 0.9 ? 1 : 0);
  return { ratio, emptyReal, emptyJunk, pass };
}

const grid: Point[] = [];
for (const beta of FIT_BETAS)
  for (const shift of FIT_SHIFTS)
    for (const gamma of GAMMAS) for (const emptyBelow of EMPTY_BELOW) grid.push({ beta, shift, gamma, emptyBelow });
const table = new Map<Point, Record<string, Figures>>();
for (const p of grid) table.set(p, Object.fromEntries(names.map((n) => [n, figures(p, n)])));

for (const fixedGamma of [true, false]) {
  console.log(fixedGamma ? '\n== gamma 0, no empty rule (the point alone), picked LOCO' : '\n== gamma and the empty rule picked too, LOCO');
  for (const held of names) {
    let best: Point | undefined;
    let bestKey = [-1, -1];
    for (const p of grid) {
      if (fixedGamma && (p.gamma !== 0 || p.emptyBelow !== 0)) continue;
      const f = table.get(p)!;
      const train = names.filter((n) => n !== held);
      const key = [train.reduce((s, n) => s + f[n]!.pass, 0), train.reduce((s, n) => s + f[n]!.ratio, 0)];
      if (key[0]! > bestKey[0]! || (key[0] === bestKey[0] && key[1]! > bestKey[1]!)) {
        bestKey = key;
        best = p;
      }
    }
    const f = table.get(best as Point)![held]!;
    console.log(
      `${held.padEnd(10)} point (${best!.beta}, ${best!.shift}, ${best!.gamma}, ${best!.emptyBelow}) train passes ${bestKey[0]}/12: held-out F1 ${f.ratio.toFixed(2)}x (bound ${bound[held]!.toFixed(2)}), real empty ${(100 * f.emptyReal).toFixed(1)} %, junk empty ${(100 * f.emptyJunk).toFixed(1)} %, tests passed ${f.pass}/3`,
    );
  }
}
