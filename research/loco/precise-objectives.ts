/**
 * Which fit objective for `precise` transfers to a collection the fit never saw: for each held-out
 * collection, the point each objective picks on the other collections' scored lists
 * (`fit-points --scores-out`), measured on the held-out one beside its label-known bound (the most
 * precise grid point at recall ≥ 0.3). Relevance head, no verdict and no floor (they apply to every
 * objective alike).
 *
 *   npx tsx research/loco/precise-objectives.ts /tmp/fit2/ce-scores.json
 */
import { readFileSync } from 'node:fs';
import type { OperatingPoint } from '../../src/gate/types.js';
import {
  FIT_BETAS,
  FIT_SHIFTS,
  type GateList,
  gridBestF1,
  gridBestPrecision,
  keepAllF1,
  oracleCutF1,
  type OperatingPointMetrics,
  operatingPointMetrics,
  PRECISE_BOUND_RECALL,
} from '../../src/tooling/eval/operating-points.js';
import { parseScoredLists } from '../../src/tooling/eval/scored-lists-file.js';

type Metrics = Record<string, OperatingPointMetrics>;
interface Candidate {
  readonly point: OperatingPoint;
  readonly metrics: Metrics;
}

const mean = (v: readonly number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const median = (v: readonly number[]) => {
  const s = [...v].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const rec = (m: OperatingPointMetrics) => m.recall ?? 0;
const prec = (m: OperatingPointMetrics) => m.precision ?? 0;
const fBeta = (m: OperatingPointMetrics, beta: number) => {
  const p = prec(m);
  const r = rec(m);
  const b2 = beta * beta;
  return p + r === 0 ? 0 : ((1 + b2) * p * r) / (b2 * p + r);
};

/** An objective: a score to maximise (lexicographic), from each training collection's metrics. */
type Objective = (c: Candidate, bounds: Record<string, number>) => readonly number[];

function constrained(floor: number, gate: (rs: number[]) => number): Objective {
  return (c) => {
    const ms = Object.values(c.metrics);
    const r = gate(ms.map(rec));
    return r >= floor ? [1, mean(ms.map(prec))] : [0, r];
  };
}

const OBJECTIVES: Record<string, Objective> = {
  'recall>=0.35 every (shipped)': constrained(0.35, (rs) => Math.min(...rs)),
  'recall>=0.30 every': constrained(0.3, (rs) => Math.min(...rs)),
  'recall>=0.35 mean': constrained(0.35, mean),
  'recall>=0.35 median': constrained(0.35, median),
  'recall>=0.30 median': constrained(0.3, median),
  'max mean F0.5': (c) => [mean(Object.values(c.metrics).map((m) => fBeta(m, 0.5)))],
  'max min F0.5': (c) => [Math.min(...Object.values(c.metrics).map((m) => fBeta(m, 0.5)))],
  'max mean F0.5, recall>=0.2 every': (c) => {
    const ms = Object.values(c.metrics);
    const r = Math.min(...ms.map(rec));
    return r >= 0.2 ? [1, mean(ms.map((m) => fBeta(m, 0.5)))] : [0, r];
  },
  'max min precision/bound, recall>=0.3 every': (c, bounds) => {
    const ms = Object.entries(c.metrics);
    const r = Math.min(...ms.map(([, m]) => rec(m)));
    return r >= 0.3 ? [1, Math.min(...ms.map(([n, m]) => prec(m) / (bounds[n] ?? 1)))] : [0, r];
  },
  'max min precision/bound, recall>=0.3 median': (c, bounds) => {
    const ms = Object.entries(c.metrics);
    const r = median(ms.map(([, m]) => rec(m)));
    return r >= 0.3 ? [1, Math.min(...ms.map(([n, m]) => prec(m) / (bounds[n] ?? 1)))] : [0, r];
  },
};

function better(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? Number.NEGATIVE_INFINITY;
    const y = b[i] ?? Number.NEGATIVE_INFINITY;
    if (x !== y) return x > y;
  }
  return false;
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error('usage: precise-objectives.ts <scores.json>...');
const collections = files.flatMap((f) => parseScoredLists(readFileSync(f, 'utf8'), f));
const lists: Record<string, readonly GateList[]> = Object.fromEntries(
  collections.map((c) => [c.name, c.lists.map((l) => ({ relevances: l.relevances, relevant: l.relevant }))]),
);
const names = Object.keys(lists).sort();
const grid: OperatingPoint[] = FIT_BETAS.flatMap((beta) => FIT_SHIFTS.map((shift) => ({ beta, shift, floor: 0 })));
const all: Candidate[] = grid.map((point) => ({
  point,
  metrics: Object.fromEntries(names.map((n) => [n, operatingPointMetrics(lists[n]!, point)])),
}));
const bound: Record<string, ReturnType<typeof gridBestPrecision>> = Object.fromEntries(
  names.map((n) => [n, gridBestPrecision(lists[n]!, PRECISE_BOUND_RECALL)]),
);
const boundPrecision = Object.fromEntries(names.map((n) => [n, bound[n]?.precision ?? 1]));

console.log(`model ${collections[0]!.model}; held-out precision / recall (bound: most precise grid point at recall >= ${PRECISE_BOUND_RECALL})`);
console.log(`| objective | ${names.join(' | ')} | collections meeting P >= min(0.6, 0.95 bound) at R >= 0.3 |`);
console.log(`|---|${'---|'.repeat(names.length + 1)}`);
console.log(
  `| bound | ${names.map((n) => (bound[n] === null ? 'none' : `${bound[n]!.precision.toFixed(2)} / ${bound[n]!.recall.toFixed(2)}`)).join(' | ')} | |`,
);
/** The candidates' metrics on the training collections: every collection but `held` (and `also`). */
function trainingOf(held: string, also?: string): Candidate[] {
  return all.map((c) => ({
    point: c.point,
    metrics: Object.fromEntries(Object.entries(c.metrics).filter(([n]) => n !== held && n !== also)),
  }));
}

function pick(objective: Objective, held: string, norm: Record<string, number>, also?: string): Candidate {
  const training = trainingOf(held, also);
  let best = training[0]!;
  let bestScore = objective(best, norm);
  for (const c of training.slice(1)) {
    const s = objective(c, norm);
    if (better(s, bestScore)) {
      best = c;
      bestScore = s;
    }
  }
  return best;
}

for (const [label, objective] of Object.entries(OBJECTIVES)) {
  const cells: string[] = [];
  let meeting = 0;
  for (const held of names) {
    const best = pick(objective, held, boundPrecision);
    const m = operatingPointMetrics(lists[held]!, best.point);
    const target = Math.min(0.6, 0.95 * (boundPrecision[held] ?? 1));
    if (prec(m) >= target && rec(m) >= 0.3) meeting++;
    cells.push(`${prec(m).toFixed(2)} / ${rec(m).toFixed(2)} (${best.point.beta}, ${best.point.shift})`);
  }
  console.log(`| ${label} | ${cells.join(' | ')} | ${meeting} of ${names.length} |`);
}

// balanced: the F1 ratio over keeping all, against each collection's grid-best ratio.
const ratio = (m: OperatingPointMetrics) => (m.f1KeepAll === 0 ? 0 : m.f1 / m.f1KeepAll);
const boundRatio = Object.fromEntries(names.map((n) => [n, gridBestF1(lists[n]!).f1 / keepAllF1(lists[n]!)]));
const reachable = (n: string) => oracleCutF1(lists[n]!) >= 1.3 * keepAllF1(lists[n]!);
const BALANCED: Record<string, Objective> = {
  'worst ratio over reachable, then worst, mean (shipped, no tie tolerance)': (c) => {
    const es = Object.entries(c.metrics);
    const lead = es.filter(([n]) => reachable(n));
    const rs = es.map(([, m]) => ratio(m));
    return [Math.min(...(lead.length > 0 ? lead : es).map(([, m]) => ratio(m))), Math.min(...rs), mean(rs)];
  },
  'worst ratio': (c) => [Math.min(...Object.values(c.metrics).map(ratio))],
  'mean ratio': (c) => [mean(Object.values(c.metrics).map(ratio))],
  'worst ratio / grid-best ratio': (c, norm) => [Math.min(...Object.entries(c.metrics).map(([n, m]) => ratio(m) / (norm[n] ?? 1)))],
  'mean ratio / grid-best ratio': (c, norm) => [mean(Object.entries(c.metrics).map(([n, m]) => ratio(m) / (norm[n] ?? 1)))],
  'worst ratio / grid-best, left-empty <= 5 % every': (c, norm) => {
    const es = Object.entries(c.metrics);
    const empty = Math.max(...es.map(([, m]) => (m.queriesWithRelevant === 0 ? 0 : m.nothingKept / m.queriesWithRelevant)));
    return [empty <= 0.05 ? 1 : 0, Math.min(...es.map(([n, m]) => ratio(m) / (norm[n] ?? 1)))];
  },
};
console.log('');
console.log('balanced: held-out F1 ratio (left empty of queries with a relevant candidate)');
console.log(`| objective | ${names.join(' | ')} | collections meeting ratio >= min(1.3, 0.95 bound) |`);
console.log(`|---|${'---|'.repeat(names.length + 1)}`);
console.log(`| bound (grid best) | ${names.map((n) => `${boundRatio[n]!.toFixed(2)}×`).join(' | ')} | |`);
/** Points whose worst training ratio is within `tol` of the best worst ratio; of those, the highest mean ratio. */
function pickWithin(tol: number, held: string, also?: string): Candidate {
  const training = trainingOf(held, also);
  const worst = (c: Candidate) => Math.min(...Object.values(c.metrics).map(ratio));
  const top = Math.max(...training.map(worst));
  let best: Candidate | undefined;
  for (const c of training)
    if (worst(c) >= top - tol && (best === undefined || mean(Object.values(c.metrics).map(ratio)) > mean(Object.values(best.metrics).map(ratio))))
      best = c;
  return best!;
}
const choosers: Record<string, (held: string, also?: string) => Candidate> = Object.fromEntries(
  Object.entries(BALANCED).map(([label, objective]) => [
    label,
    (held: string, also?: string) => pick(objective, held, boundRatio, also),
  ]),
);
for (const tol of [0.02, 0.03, 0.05, 0.1])
  choosers[`worst within ${tol} of the best, then mean`] = (held, also) => pickWithin(tol, held, also);
const meets = (n: string, m: OperatingPointMetrics) => ratio(m) >= Math.min(1.3, 0.95 * boundRatio[n]!);
for (const [label, choose] of Object.entries(choosers)) {
  const cells: string[] = [];
  let meeting = 0;
  for (const held of names) {
    const best = choose(held);
    const m = operatingPointMetrics(lists[held]!, best.point);
    if (ratio(m) >= Math.min(1.3, 0.95 * boundRatio[held]!)) meeting++;
    const empty = m.queriesWithRelevant === 0 ? 0 : m.nothingKept / m.queriesWithRelevant;
    cells.push(`${ratio(m).toFixed(2)}× (${(100 * empty).toFixed(1)} %; ${best.point.beta}, ${best.point.shift})`);
  }
  console.log(`| ${label} | ${cells.join(' | ')} | ${meeting} of ${names.length} |`);
}

// Nested: for each held-out collection, the objective is itself chosen leave-one-out on the other
// collections (inner folds: how many inner held-out collections meet the target, then their mean
// ratio over the bound), then fitted on all of them: a choice made without the held-out collection.
const nestedCells: string[] = [];
let nestedMeeting = 0;
for (const held of names) {
  const inner = names.filter((n) => n !== held);
  let bestLabel = '';
  let bestScore: number[] = [];
  for (const [label, choose] of Object.entries(choosers)) {
    let met = 0;
    const normalised: number[] = [];
    for (const innerHeld of inner) {
      const m = operatingPointMetrics(lists[innerHeld]!, choose(held, innerHeld).point);
      if (meets(innerHeld, m)) met++;
      normalised.push(ratio(m) / boundRatio[innerHeld]!);
    }
    const score = [met, mean(normalised)];
    if (bestLabel === '' || better(score, bestScore)) {
      bestLabel = label;
      bestScore = score;
    }
  }
  const m = operatingPointMetrics(lists[held]!, choosers[bestLabel]!(held).point);
  if (meets(held, m)) nestedMeeting++;
  nestedCells.push(`${ratio(m).toFixed(2)}× (${bestLabel}; inner ${bestScore[0]} of ${inner.length})`);
}
console.log(`| objective chosen leave-one-out inside the training collections | ${nestedCells.join(' | ')} | ${nestedMeeting} of ${names.length} |`);
