/**
 * Measurement, not a shipped path: per-pair score fusion on the leave-one-collection-out folds of scripts/loco-base.ts (which must have written the
 * per-pair `s` (first-stage BM25) and `f` (bm25_all, query_idf_sum, idf_coverage) arrays).
 *
 *   blended = margin + lambda * g(pair)
 *
 * g is a pure function of the pair (query-side normalisation only, no other passage of the list):
 *   - bm25norm:  bm25_all / (2.2 * query_idf_sum)       (2.2 = k1 + 1: BM25's per-unit-idf bound)
 *   - idfcov:    idf_coverage
 *   - fsnorm:    first-stage BM25 score / (2.2 * query_idf_sum)
 *   - mix:       lambda1 * bm25norm + lambda2 * idfcov   (2-D grid)
 * lambda is chosen per fold on the TRAINING collections' validation + test queries only, by
 * (a) the worst-collection relative nDCG@10 gain over BM25, (b) the mean relative gain; ties keep the
 * smaller lambda (grid order). Then measured on the held-out collection's judged queries.
 * Reference (list-dependent, NOT cache-safe): reciprocal-rank fusion of the model's order and BM25's
 * order, k = 60.
 * Gate: the blended score is mapped to a probability by a Platt fit on the training collections'
 * validation + test BM25 top-20 pairs (the pipeline fits on the gate pools too), then the operating
 * points are fitted (fitOperatingPoints) on the training collections and measured on the held-out one,
 * exactly as scripts/loco-gate.ts does with the fold model's own calibration.
 *
 * Usage: npx tsx scripts/loco-fusion.ts --folds /tmp/rg16-loco/loco [--json out.json]
 */
import {
  type FoldFile,
  GATE_K,
  IDENTITY_CALIBRATION as IDENTITY,
  queryNdcgAt10,
  type ScoredQuery,
} from './loco-fold-data.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fitPlatt, plattProbability, type PlattParameters } from '../../src/calibration/platt.js';
import { type GateList, fitOperatingPoints, operatingPointMetrics } from '../../src/tooling/eval/operating-points.js';
import { OPERATING_POINT_NAMES } from '../../src/gate/policies/operating-points.js';

const { values } = parseArgs({ options: { folds: { type: 'string' }, json: { type: 'string' } } });
const LAMBDAS = [0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 4, 5, 7.5, 10, 15, 20, 30, 50, 100, 1000];

const ndcgOf = queryNdcgAt10;

/** A fold query with the per-pair first-stage scores and features the fusion reads. */
type FusionQuery = ScoredQuery & { readonly s: number[]; readonly f: Record<string, number[]> };

function withFusionFields(queries: readonly ScoredQuery[], where: string): FusionQuery[] {
  for (const q of queries)
    if (q.s === undefined || q.f === undefined)
      throw new Error(`${where}: query ${q.q} has no per-pair scores/features (re-run scripts/loco-base.ts)`);
  return queries as FusionQuery[];
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

type Scorer = (q: FusionQuery) => number[];
const bm25Scorer: Scorer = (q) => q.m.map((_, i) => -i);
const modelScorer: Scorer = (q) => q.m;

function gBm25norm(q: FusionQuery): number[] {
  return q.f.bm25_all!.map((b, i) => {
    const d = 2.2 * q.f.query_idf_sum![i]!;
    return d > 0 ? b / d : 0;
  });
}
const gIdfcov = (q: FusionQuery): number[] => q.f.idf_coverage!.map((v) => (Number.isFinite(v) ? v : 0));
function gFsnorm(q: FusionQuery): number[] {
  return q.s.map((b, i) => {
    const d = 2.2 * q.f.query_idf_sum![i]!;
    return d > 0 ? b / d : 0;
  });
}
const blend =
  (parts: readonly [number, (q: FusionQuery) => number[]][]): Scorer =>
  (q) => {
    const gs = parts.map(([l, g]) => [l, g(q)] as const);
    return q.m.map((m, i) => m + gs.reduce((acc, [l, g]) => acc + l * g[i]!, 0));
  };
/** RRF of model order and BM25 order, k = 60; list-dependent. */
const rrfScorer: Scorer = (q) => {
  const order = q.m.map((_, i) => i).sort((x, y) => q.m[y]! - q.m[x]! || x - y);
  const modelRank = new Array<number>(q.m.length);
  order.forEach((idx, r) => {
    modelRank[idx] = r + 1;
  });
  return q.m.map((_, i) => 1 / (60 + modelRank[i]!) + 1 / (60 + i + 1));
};

/** Mean nDCG@10 per collection; relative gain vs BM25. */
function ndcgBy(sets: Record<string, FusionQuery[]>, scorer: Scorer) {
  const out: Record<string, { bm25: number; score: number; rel: number }> = {};
  for (const [n, qs] of Object.entries(sets)) {
    const bm = mean(qs.map((q) => ndcgOf(q, bm25Scorer(q))));
    const sc = mean(qs.map((q) => ndcgOf(q, scorer(q))));
    out[n] = { bm25: bm, score: sc, rel: (sc - bm) / bm };
  }
  return out;
}

function gateOf(
  train: Record<string, FusionQuery[]>,
  held: FusionQuery[],
  scorer: Scorer,
  calibration: PlattParameters | 'refit',
) {
  let cal: PlattParameters;
  if (calibration === 'refit') {
    const raws: number[] = [];
    const labels: boolean[] = [];
    for (const qs of Object.values(train))
      for (const q of qs) {
        const s = scorer(q);
        for (let i = 0; i < Math.min(GATE_K, s.length); i++) {
          raws.push(s[i]!);
          labels.push(q.g[i]! > 0);
        }
      }
    cal = fitPlatt(raws, labels).params;
  } else cal = calibration;
  const lists = (qs: FusionQuery[]): GateList[] =>
    qs.map((q) => {
      const s = scorer(q);
      return {
        relevances: s.slice(0, GATE_K).map((v) => plattProbability(cal, v)),
        relevant: q.g.slice(0, GATE_K).map((g) => g > 0),
      };
    });
  const byColl: Record<string, GateList[]> = {};
  for (const [n, qs] of Object.entries(train)) byColl[n] = lists(qs);
  const fits = fitOperatingPoints(byColl);
  const h = lists(held);
  const res: Record<string, unknown> = { calibration: { a: cal.a, b: cal.b } };
  for (const op of OPERATING_POINT_NAMES) {
    const m = operatingPointMetrics(h, fits[op].point);
    res[op] = {
      point: fits[op].point,
      precision: m.precision,
      recall: m.recall,
      f1: m.f1,
      f1KeepAll: m.f1KeepAll,
      f1Ratio: m.f1 / m.f1KeepAll,
      keptPerQuery: m.keptPerQuery,
      nothingKept: m.nothingKept,
      queriesWithRelevant: m.queriesWithRelevant,
    };
  }
  return res;
}

interface Family {
  readonly name: string;
  readonly grid: { readonly lambda: number[]; readonly scorer: Scorer }[];
}
const families: Family[] = [
  { name: 'bm25norm', grid: LAMBDAS.map((l) => ({ lambda: [l], scorer: blend([[l, gBm25norm]]) })) },
  { name: 'idfcov', grid: LAMBDAS.map((l) => ({ lambda: [l], scorer: blend([[l, gIdfcov]]) })) },
  { name: 'fsnorm', grid: LAMBDAS.map((l) => ({ lambda: [l], scorer: blend([[l, gFsnorm]]) })) },
  {
    name: 'mix',
    grid: LAMBDAS.flatMap((l1) =>
      LAMBDAS.map((l2) => ({
        lambda: [l1, l2],
        scorer: blend([
          [l1, gBm25norm],
          [l2, gIdfcov],
        ]),
      })),
    ),
  },
];

const t0 = performance.now();
const dir = values.folds as string;
const files = readdirSync(dir)
  .filter((f) => f.startsWith('fold-') && f.endsWith('.json'))
  .sort();
const results: Record<string, unknown>[] = [];
for (const file of files) {
  const fold = JSON.parse(readFileSync(join(dir, file), 'utf8')) as FoldFile;
  const train: Record<string, FusionQuery[]> = {};
  for (const n of fold.trainedOn)
    train[n] = withFusionFields([...fold.scores[n]!.validation!, ...fold.scores[n]!.test!], `${file} ${n}`);
  const heldQs = withFusionFields(fold.scores[fold.heldOut]!.all!, `${file} ${fold.heldOut}`);
  const heldSet = { [fold.heldOut]: heldQs };
  const heldNdcg = (s: Scorer) => ndcgBy(heldSet, s)[fold.heldOut]!;
  const cal = fold.calibration ?? IDENTITY;
  const r: Record<string, unknown> = {
    heldOut: fold.heldOut,
    queries: heldQs.length,
    model: { train: ndcgBy(train, modelScorer), held: heldNdcg(modelScorer) },
    rrf: { train: ndcgBy(train, rrfScorer), held: heldNdcg(rrfScorer) },
  };
  const gate: Record<string, unknown> = {
    model_foldCalibration: gateOf(train, heldQs, modelScorer, cal),
    model_refit: gateOf(train, heldQs, modelScorer, 'refit'),
    rrf_refit: gateOf(train, heldQs, rrfScorer, 'refit'),
  };
  for (const fam of families) {
    const evals = fam.grid.map((c) => {
      const t = ndcgBy(train, c.scorer);
      const rels = Object.values(t).map((v) => v.rel);
      return { c, worst: Math.min(...rels), mean: mean(rels), train: t };
    });
    const pick = (key: 'worst' | 'mean') => evals.reduce((best, e) => (e[key] > best[key] ? e : best), evals[0]!);
    const famOut: Record<string, unknown> = {};
    for (const key of ['worst', 'mean'] as const) {
      const p = pick(key);
      famOut[key] = {
        lambda: p.c.lambda,
        trainWorstRel: p.worst,
        trainMeanRel: p.mean,
        train: p.train,
        held: heldNdcg(p.c.scorer),
      };
      gate[`${fam.name}_${key}`] = gateOf(train, heldQs, p.c.scorer, 'refit');
    }
    // held-out curve over the 1-D grid, for diagnosis only (never used for selection)
    if (fam.name !== 'mix') famOut.heldCurve = fam.grid.map((c) => [c.lambda[0], heldNdcg(c.scorer).rel]);
    r[fam.name] = famOut;
  }
  r.gate = gate;
  results.push(r);
  process.stderr.write(`loco-fusion: ${fold.heldOut} done (${Math.round(performance.now() - t0)} ms)\n`);
}

// ---- markdown summary
const pct = (v: number) => `${v >= 0 ? '+' : ''}${(100 * v).toFixed(2)} %`;
const f3 = (v: number | null | undefined) => (v === null || v === undefined ? 'n/a' : v.toFixed(4));
const lines: string[] = [];
type N = { bm25: number; score: number; rel: number };
const get = (r: Record<string, unknown>, path: string[]): unknown =>
  path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], r);
type Chosen = { lambda: number[]; trainWorstRel: number; trainMeanRel: number };
type GateRow = { balanced: { f1Ratio: number }; precise: { precision: number; recall: number } };
const variants: [string, string[]][] = [
  ['model', ['model', 'held']],
  ['RRF k=60 (list-dependent)', ['rrf', 'held']],
  ...families.flatMap((f) =>
    (['worst', 'mean'] as const).map((k) => [`${f.name} (λ by ${k})`, [f.name, k, 'held']] as [string, string[]]),
  ),
];
lines.push('### nDCG@10 on the held-out collection (BM25 top 100)\n');
lines.push(`| variant | ${results.map((r) => r.heldOut).join(' | ')} | mean rel | folds > BM25 |`);
lines.push(`|---|${results.map(() => '---').join('|')}|---|---|`);
lines.push(`| BM25 | ${results.map((r) => f3((get(r, ['model', 'held']) as N).bm25)).join(' | ')} | | |`);
for (const [label, path] of variants) {
  const ns = results.map((r) => get(r, path) as N);
  lines.push(
    `| ${label} | ${ns.map((n) => `${f3(n.score)} (${pct(n.rel)})`).join(' | ')} | ${pct(mean(ns.map((n) => n.rel)))} | ${ns.filter((n) => n.rel > 0).length}/${ns.length} |`,
  );
}
lines.push('\n### lambda chosen per fold on the training collections (train worst / mean rel gain at that lambda)\n');
lines.push(`| family / criterion | ${results.map((r) => r.heldOut).join(' | ')} |`);
lines.push(`|---|${results.map(() => '---').join('|')}|`);
for (const f of families)
  for (const k of ['worst', 'mean'] as const)
    lines.push(
      `| ${f.name} / ${k} | ${results
        .map((r) => {
          const p = get(r, [f.name, k]) as Chosen;
          return `${p.lambda.join(',')} (${pct(p.trainWorstRel)} / ${pct(p.trainMeanRel)})`;
        })
        .join(' | ')} |`,
    );
lines.push('\n### gate on the held-out collection (BM25 top 20): balanced F1 ratio vs keep-all; precise P / R\n');
const gateVariants = Object.keys((results[0]!.gate as Record<string, unknown>) ?? {});
lines.push(`| variant | ${results.map((r) => `${r.heldOut} bal. ratio | ${r.heldOut} precise P/R`).join(' | ')} |`);
lines.push(`|---|${results.map(() => '---|---').join('|')}|`);
for (const v of gateVariants) {
  lines.push(
    `| ${v} | ${results
      .map((r) => {
        const g = get(r, ['gate', v]) as GateRow;
        return `${g.balanced.f1Ratio.toFixed(2)}× | ${f3(g.precise.precision)} / ${f3(g.precise.recall)}`;
      })
      .join(' | ')} |`,
  );
}
lines.push(`\nruntime ${Math.round(performance.now() - t0)} ms`);
process.stdout.write(`${lines.join('\n')}\n`);
if (values.json) writeFileSync(values.json, JSON.stringify(results, null, 2));
