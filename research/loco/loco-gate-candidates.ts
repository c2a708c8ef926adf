/**
 * Leave-one-collection-out measurement of candidate keep/drop rules, next to the shipped one, on the
 * fold files scripts/loco-base.ts writes (the fold models' probabilities of each held-out collection's
 * BM25 top 20). For every rule family and held-out collection H it reports:
 *   - LOCO: the family's parameters fitted on the four TRAINING collections' validation + test queries
 *     (balanced: highest worst-collection F1 / F1 of keeping all; precise: highest mean precision with
 *     recall >= 0.35 on every training collection), then measured on H;
 *   - BOUND: the best the family reaches on H when its parameters are chosen with H's own labels
 *     (balanced: highest F1 ratio; precise: highest precision with recall >= 0.3). No rule of that
 *     family with collection-level parameters (whatever chooses them: a fit, unlabelled corpus
 *     statistics, a person) does better on H.
 * Families (a pure function of the stored `relevant` signals of one request unless said otherwise):
 *   expected-F   the shipped operating-point cut (src/gate/policies/operating-points.ts): beta, shift
 *   + floor      the same with an absolute relevance floor (a query can get nothing: insufficient context)
 *   top-k        keep the k most relevant
 *   near-top     keep pairs whose logit is within delta of the best, at most cap
 *   early-stop   the gate's rank-order early stop (docs/gate.md): in BM25 order, stop when fewer than
 *                minRate of the last `window` pairs pass an absolute threshold t (chunk 1)
 *   list-model   a second-stage logistic model on list-relative features of the request's scores
 *                (logit, logit - best, logit - median, z-score, log rank, best, spread, log expected
 *                count), trained on the training collections (each weighted equally), then the
 *                expected-F cut on its output
 *   list-model + query IDF sum   the same plus log(1 + the query's IDF sum), the one family here that
 *                reads more than the stored signals (the extractor's query_idf_sum feature)
 *
 * Usage: npx tsx scripts/loco-gate-candidates.ts --folds /tmp/rg-loco/loco [--json out.json]
 */
import { type FoldFile, GATE_K, IDENTITY_CALIBRATION as IDENTITY, type ScoredQuery } from './loco-fold-data.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { plattProbability, type PlattParameters } from '../../src/calibration/platt.js';
import {
  FIT_BETAS,
  FIT_SHIFTS,
  type GateList,
  type OperatingPointMetrics,
  fitOperatingPoints,
  keptMetrics,
  operatingPointMetrics,
} from '../../src/tooling/eval/operating-points.js';
import { operatingPointThreshold } from '../../src/gate/policies/operating-points.js';

const { values } = parseArgs({ options: { folds: { type: 'string' }, json: { type: 'string' } } });
const PRECISE_FIT_RECALL = 0.35;
const PRECISE_TARGET_RECALL = 0.3;

const logit = (p: number): number => {
  const c = Math.min(Math.max(p, 1e-9), 1 - 1e-9);
  return Math.log(c / (1 - c));
};
const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
const descending = (v: readonly number[]): number[] => [...v].sort((a, b) => b - a);

/** One query's candidates: the gate's view (relevances, labels) plus its list-relative features. */
interface JudgedList extends GateList {
  readonly features: readonly (readonly number[])[];
}

function listOf(q: ScoredQuery, calibration: PlattParameters): JudgedList {
  const relevances = q.m.slice(0, GATE_K).map((m) => plattProbability(calibration, m));
  const logits = relevances.map(logit);
  const sorted = descending(logits);
  const n = sorted.length;
  const best = sorted[0]!;
  const median = (sorted[Math.floor((n - 1) / 2)]! + sorted[Math.ceil((n - 1) / 2)]!) / 2;
  const mean = logits.reduce((a, b) => a + b, 0) / n;
  const spread = Math.max(0.05, Math.sqrt(logits.reduce((a, b) => a + (b - mean) ** 2, 0) / n));
  const expected = Math.log(1 + relevances.reduce((a, b) => a + b, 0));
  const features = logits.map((l) => [
    1,
    l,
    l - best,
    l - median,
    (l - mean) / spread,
    Math.log(sorted.indexOf(l) + 1),
    best,
    spread,
    expected,
    Math.log(1 + (q.f?.query_idf_sum?.[0] ?? 0)),
  ]);
  return { relevances, relevant: q.g.slice(0, GATE_K).map((g) => g > 0), features };
}

/** A rule: per request, the threshold on `relevances` (kept = relevance >= threshold), or a kept mask. */
type Rule = (list: JudgedList) => number | readonly boolean[];

function metricsOf(lists: readonly JudgedList[], rule: Rule): OperatingPointMetrics {
  return keptMetrics(lists, (l) => {
    const r = rule(l as JudgedList);
    return typeof r === 'number' ? l.relevances.map((v) => v >= r) : r;
  });
}

interface Family {
  readonly name: string;
  /** Every parameter setting of the family, with a label. */
  readonly grid: ReadonlyArray<{ readonly label: string; readonly rule: Rule }>;
  /** Lists transformed per fold before the rules apply (list-model: its output as relevances). */
  readonly prepare?: (train: Readonly<Record<string, JudgedList[]>>) => (l: JudgedList) => JudgedList;
}

const FLOORS = [0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5];
const expectedF = (floors: readonly number[]) =>
  FIT_BETAS.flatMap((beta) =>
    FIT_SHIFTS.flatMap((shift) =>
      floors.map((floor) => ({
        label: `β ${beta}, shift ${shift}${floor > 0 ? `, floor ${floor}` : ''}`,
        rule: (l: JudgedList) => operatingPointThreshold({ beta, shift, floor }, l.relevances),
      })),
    ),
  );

/** The k-th highest relevance (1 for an empty list: nothing is kept). */
const kth = (l: JudgedList, k: number) =>
  l.relevances.length === 0 ? 1 : descending(l.relevances)[Math.min(k, l.relevances.length) - 1]!;

function earlyStopMask(l: JudgedList, t: number, window: number, minRate: number): boolean[] {
  const kept = l.relevances.map(() => false);
  const passes: boolean[] = [];
  for (let i = 0; i < l.relevances.length; i++) {
    const pass = l.relevances[i]! >= t;
    kept[i] = pass;
    passes.push(pass);
    if (passes.length >= window && passes.slice(-window).filter(Boolean).length / window < minRate) break;
  }
  return kept;
}

/** Weighted, L2-regularised logistic regression (Newton), on standardised features; returns raw-scale weights. */
function fitLogistic(rows: ReadonlyArray<{ x: readonly number[]; y: number; w: number }>, l2 = 1): number[] {
  const d = rows[0]!.x.length;
  const mu = new Array<number>(d).fill(0);
  const sd = new Array<number>(d).fill(1);
  for (let j = 1; j < d; j++) {
    const col = rows.map((r) => r.x[j]!);
    mu[j] = col.reduce((a, b) => a + b, 0) / col.length;
    sd[j] = Math.max(1e-6, Math.sqrt(col.reduce((a, b) => a + (b - mu[j]!) ** 2, 0) / col.length));
  }
  const z = rows.map((r) => ({ x: r.x.map((v, j) => (j === 0 ? 1 : (v - mu[j]!) / sd[j]!)), y: r.y, w: r.w }));
  let w = new Array<number>(d).fill(0);
  for (let it = 0; it < 50; it++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const r of z) {
      const s = sigmoid(r.x.reduce((a, v, j) => a + v * w[j]!, 0));
      for (let j = 0; j < d; j++) {
        g[j]! += r.w * (s - r.y) * r.x[j]!;
        for (let k = 0; k < d; k++) h[j]![k]! += r.w * s * (1 - s) * r.x[j]! * r.x[k]!;
      }
    }
    for (let j = 1; j < d; j++) {
      g[j]! += l2 * w[j]!;
      h[j]![j]! += l2;
    }
    const step = solve(h, g);
    w = w.map((v, j) => v - step[j]!);
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  const raw = w.map((v, j) => (j === 0 ? v : v / sd[j]!));
  raw[0] = w[0]! - w.slice(1).reduce((a, v, i) => a + (v * mu[i + 1]!) / sd[i + 1]!, 0);
  return raw;
}

/** Gaussian elimination with partial pivoting: A x = b. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let i = 0; i < n; i++) {
    let p = i;
    for (let k = i + 1; k < n; k++) if (Math.abs(m[k]![i]!) > Math.abs(m[p]![i]!)) p = k;
    [m[i], m[p]] = [m[p]!, m[i]!];
    for (let k = i + 1; k < n; k++) {
      const f = m[k]![i]! / m[i]![i]!;
      for (let c = i; c <= n; c++) m[k]![c]! -= f * m[i]![c]!;
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let s = m[i]![n]!;
    for (let c = i + 1; c < n; c++) s -= m[i]![c]! * x[c]!;
    x[i] = s / m[i]![i]!;
  }
  return x;
}

const FAMILIES: readonly Family[] = [
  { name: 'expected-F (shipped)', grid: expectedF([0]) },
  { name: 'expected-F + floor', grid: expectedF([0, ...FLOORS]) },
  {
    name: 'top-k',
    grid: Array.from({ length: GATE_K }, (_, i) => ({ label: `k ${i + 1}`, rule: (l: JudgedList) => kth(l, i + 1) })),
  },
  {
    name: 'near-top',
    grid: Array.from({ length: 41 }, (_, i) => i * 0.1).flatMap((delta) =>
      [1, 2, 3, 4, 5, 6, 8, 10, 20].map((cap) => ({
        label: `δ ${delta.toFixed(1)}, cap ${cap}`,
        rule: (l: JudgedList) => Math.max(sigmoid(logit(kth(l, 1)) - delta), kth(l, cap)) - 1e-12,
      })),
    ),
  },
  {
    name: 'early-stop',
    grid: [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6].flatMap((t) =>
      [2, 3, 4, 5, 8].flatMap((window) =>
        [0.2, 0.34, 0.5, 0.67, 1].map((minRate) => ({
          label: `t ${t}, window ${window}, minRate ${minRate}`,
          rule: (l: JudgedList) => earlyStopMask(l, t, window, minRate),
        })),
      ),
    ),
  },
  listModel('list-model', 9),
  listModel('list-model + query IDF sum', 10),
];

function listModel(name: string, width: number): Family {
  return {
    name,
    grid: expectedF([0]),
    prepare: (train) => {
      const rows: Array<{ x: readonly number[]; y: number; w: number }> = [];
      for (const lists of Object.values(train)) {
        const pairs = lists.reduce((a, l) => a + l.relevances.length, 0);
        for (const l of lists)
          l.features.forEach((x, i) => {
            rows.push({ x: x.slice(0, width), y: l.relevant[i] ? 1 : 0, w: 1000 / pairs });
          });
      }
      const w = fitLogistic(rows);
      return (l) => ({
        ...l,
        relevances: l.features.map((x) => sigmoid(x.slice(0, width).reduce((a, v, j) => a + v * w[j]!, 0))),
      });
    },
  };
}

const ratio = (m: OperatingPointMetrics) => (m.f1KeepAll === 0 ? 0 : m.f1 / m.f1KeepAll);
const fmt = (v: number | null, d = 3) => (v === null || Number.isNaN(v) ? 'n/a' : v.toFixed(d));

interface Cell {
  readonly label: string;
  readonly m: OperatingPointMetrics;
}
interface FoldResult {
  readonly heldOut: string;
  readonly family: string;
  readonly balancedLoco: Cell;
  readonly balancedBound: Cell;
  readonly preciseLoco: Cell;
  readonly preciseBound: Cell | null;
}

const dir = values.folds as string;
const results: FoldResult[] = [];
for (const file of readdirSync(dir)
  .filter((f) => f.startsWith('fold-') && f.endsWith('.json'))
  .sort()) {
  const fold = JSON.parse(readFileSync(join(dir, file), 'utf8')) as FoldFile;
  const cal = fold.calibration ?? IDENTITY;
  const trainRaw: Record<string, JudgedList[]> = {};
  for (const n of fold.trainedOn)
    trainRaw[n] = [...fold.scores[n]!.validation!, ...fold.scores[n]!.test!].map((q) => listOf(q, cal));
  const heldRaw = fold.scores[fold.heldOut]!.all!.map((q) => listOf(q, cal));
  for (const family of FAMILIES) {
    const prep = family.prepare?.(trainRaw) ?? ((l: JudgedList) => l);
    const train = Object.fromEntries(Object.entries(trainRaw).map(([n, ls]) => [n, ls.map(prep)]));
    const held = heldRaw.map(prep);
    let balancedLoco: Cell | undefined;
    let balancedBound: Cell | undefined;
    let preciseLoco: Cell | undefined;
    let preciseBound: Cell | null = null;
    let bestWorst = Number.NEGATIVE_INFINITY;
    let bestMeanP = Number.NEGATIVE_INFINITY;
    let fallbackPrecise: { minR: number; cell: Cell } | undefined;
    for (const { label, rule } of family.grid) {
      const ms = Object.values(train).map((ls) => metricsOf(ls, rule));
      const worst = Math.min(...ms.map(ratio));
      const minR = Math.min(...ms.map((m) => m.recall ?? 0));
      const meanP = ms.reduce((a, m) => a + (m.precision ?? 0), 0) / ms.length;
      const h = metricsOf(held, rule);
      if (worst > bestWorst) {
        bestWorst = worst;
        balancedLoco = { label, m: h };
      }
      if (minR >= PRECISE_FIT_RECALL && meanP > bestMeanP) {
        bestMeanP = meanP;
        preciseLoco = { label, m: h };
      }
      if (fallbackPrecise === undefined || minR > fallbackPrecise.minR)
        fallbackPrecise = { minR, cell: { label, m: h } };
      if (balancedBound === undefined || ratio(h) > ratio(balancedBound.m)) balancedBound = { label, m: h };
      if (
        (h.recall ?? 0) >= PRECISE_TARGET_RECALL &&
        (preciseBound === null || (h.precision ?? 0) > (preciseBound.m.precision ?? 0))
      )
        preciseBound = { label, m: h };
    }
    results.push({
      heldOut: fold.heldOut,
      family: family.name,
      balancedLoco: balancedLoco!,
      balancedBound: balancedBound!,
      preciseLoco: preciseLoco ?? fallbackPrecise!.cell,
      preciseBound,
    });
  }
  // The shipped fit itself (its tie-breaking and steering rules), for the first row of the tables.
  const fits = fitOperatingPoints(trainRaw);
  const shipped = results.find((r) => r.heldOut === fold.heldOut && r.family === FAMILIES[0]!.name)!;
  const b = operatingPointMetrics(heldRaw, fits.balanced.point);
  const p = operatingPointMetrics(heldRaw, fits.precise.point);
  results[results.indexOf(shipped)] = {
    ...shipped,
    balancedLoco: { label: `β ${fits.balanced.point.beta}, shift ${fits.balanced.point.shift}`, m: b },
    preciseLoco: { label: `β ${fits.precise.point.beta}, shift ${fits.precise.point.shift}`, m: p },
  };
  process.stderr.write(`loco-gate-candidates: ${fold.heldOut} done\n`);
}

const heldOuts = [...new Set(results.map((r) => r.heldOut))];
const cellOf = (family: string, h: string) => results.find((r) => r.family === family && r.heldOut === h)!;
const lines: string[] = [];
lines.push(
  `Balanced: F1 of the kept set / F1 of keeping all ${GATE_K} (target ≥ 1.3× on every held-out collection). LOCO / BOUND.\n`,
);
lines.push(`| rule family | ${heldOuts.join(' | ')} | folds ≥ 1.3× (LOCO / BOUND) |`);
lines.push(`|---|${heldOuts.map(() => '---').join('|')}|---|`);
for (const f of FAMILIES) {
  const cells = heldOuts.map((h) => cellOf(f.name, h));
  lines.push(
    `| ${f.name} | ${cells.map((c) => `${fmt(ratio(c.balancedLoco.m), 2)}× / ${fmt(ratio(c.balancedBound.m), 2)}×`).join(' | ')} | ${cells.filter((c) => ratio(c.balancedLoco.m) >= 1.3).length} / ${cells.filter((c) => ratio(c.balancedBound.m) >= 1.3).length} |`,
  );
}
lines.push(
  `\nPrecise: precision / recall of the kept set (target: mean precision ≥ 0.6 with recall ≥ ${PRECISE_TARGET_RECALL} on every held-out collection). LOCO P / R; BOUND = highest precision at recall ≥ ${PRECISE_TARGET_RECALL}.\n`,
);
lines.push(`| rule family | ${heldOuts.join(' | ')} | mean P (LOCO / BOUND) |`);
lines.push(`|---|${heldOuts.map(() => '---').join('|')}|---|`);
for (const f of FAMILIES) {
  const cells = heldOuts.map((h) => cellOf(f.name, h));
  const meanLoco = cells.reduce((a, c) => a + (c.preciseLoco.m.precision ?? 0), 0) / cells.length;
  const meanBound = cells.reduce((a, c) => a + (c.preciseBound?.m.precision ?? 0), 0) / cells.length;
  lines.push(
    `| ${f.name} | ${cells.map((c) => `${fmt(c.preciseLoco.m.precision, 2)} / ${fmt(c.preciseLoco.m.recall, 2)}; ${fmt(c.preciseBound?.m.precision ?? null, 2)}`).join(' | ')} | ${fmt(meanLoco)} / ${fmt(meanBound)} |`,
  );
}
lines.push('\nParameters behind each BOUND cell (chosen with the held-out labels):\n');
lines.push('| rule family | held-out | balanced bound at | precise bound at |\n|---|---|---|---|');
for (const f of FAMILIES)
  for (const h of heldOuts) {
    const c = cellOf(f.name, h);
    lines.push(
      `| ${f.name} | ${h} | ${c.balancedBound.label} | ${c.preciseBound?.label ?? 'none reaches the recall'} |`,
    );
  }
process.stdout.write(`${lines.join('\n')}\n`);
if (values.json) writeFileSync(values.json, JSON.stringify(results, null, 2));
