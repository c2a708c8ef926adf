/**
 * Leave-one-collection-out evaluation of the gate's operating points (src/gate/policies/operating-points.ts)
 * on the margins written by scripts/loco-base.ts. For each fold (held-out collection H, base model
 * trained on the other collections):
 *   1. fit each operating point's (beta, shift) on the TRAINING collections' validation + test queries
 *      (BM25 top 20 scored by the fold's model; nothing of H is used);
 *   2. apply it to H's judged queries (BM25 top 20) as the gate does (the ranked cut, with the fold's
 *      ranking blend) and report precision / recall / F1 of the kept
 *      set against keeping all 20, the share of queries with a relevant passage in the top 20 that
 *      get nothing kept, and nDCG@10 (BM25 top 100 vs reranked in the order the gate returns: the
 *      fold model's `ranking` signal with the λ the training pipeline chose for it, and the margin order).
 * With --shipped FILE (loco-base.ts --shipped output) it fits the shipped model's operating points
 * the same way on every collection's validation + test queries and prints them.
 *
 * Usage: npx tsx scripts/loco-gate.ts --folds /tmp/rg-loco/quick [--json out.json] [--precise-recall-floor 0.4]
 *        npx tsx scripts/loco-gate.ts --shipped /tmp/rg-loco/shipped.json
 */
import {
  type FoldFile,
  type FoldScores,
  foldTrainingLists,
  GATE_K,
  gateLists,
  IDENTITY_CALIBRATION as IDENTITY,
  queryOrderNdcgs,
  type ScoredQuery,
} from './loco-fold-data.js';
import { fmt, operatingPointHeader, operatingPointRow } from './loco-report.js';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { PlattParameters } from '../../src/calibration/platt.js';
import {
  type GateList,
  type FitOptions,
  type OperatingPointFit,
  fitOperatingPoints,
  gridBestF1,
  keepAllF1,
  operatingPointMetrics,
  oracleCutF1,
  thresholdMetrics,
} from '../../src/tooling/eval/operating-points.js';
import { OPERATING_POINT_NAMES, type OperatingPointName } from '../../src/gate/policies/operating-points.js';
import type { RankingBlend } from '../../src/tiers/fast-path/ranking-blend.js';

const { values } = parseArgs({
  options: {
    folds: { type: 'string' },
    shipped: { type: 'string' },
    json: { type: 'string' },
    'card-module': { type: 'string' },
    // The recall floor of the `precise` fit (default PRECISE_RECALL_FLOOR; docs/eval.md "Operating points").
    'precise-recall-floor': { type: 'string' },
  },
});
const fitOptions: FitOptions =
  values['precise-recall-floor'] === undefined ? {} : { preciseRecallFloor: Number(values['precise-recall-floor']) };
/** Mean nDCG@10 of BM25, of the margin (relevance) order and of the order the gate returns (queryOrderNdcgs). */
function ndcg(
  queries: readonly ScoredQuery[],
  blend: RankingBlend | null,
): { bm25: number; byRelevance: number; reranked: number } {
  let a = 0;
  let b = 0;
  let c = 0;
  for (const q of queries) {
    const n = queryOrderNdcgs(q, blend);
    a += n.bm25;
    b += n.byRelevance;
    c += n.reranked;
  }
  const n = queries.length;
  return { bm25: a / n, byRelevance: b / n, reranked: c / n };
}

const HEADER = operatingPointHeader('held-out');
const row = operatingPointRow;

if (values.shipped !== undefined) {
  const file = JSON.parse(readFileSync(values.shipped, 'utf8')) as {
    calibration: PlattParameters | null;
    rankingBlend: RankingBlend | null;
    scores: FoldScores;
  };
  const cal = file.calibration ?? IDENTITY;
  const train: Record<string, GateList[]> = {};
  for (const [name, sets] of Object.entries(file.scores))
    train[name] = gateLists([...(sets.validation ?? []), ...(sets.test ?? [])], cal, file.rankingBlend);
  const fits = fitOperatingPoints(train, fitOptions);
  for (const op of OPERATING_POINT_NAMES) {
    const f = fits[op];
    process.stdout.write(
      `${op}: beta ${f.point.beta}, shift ${f.point.shift} (fit: ${f.objective}) ${JSON.stringify(f.perCollection)}\n`,
    );
  }
  if (values.json) writeFileSync(values.json, JSON.stringify({ fits }, null, 2));
} else {
  const dir = values.folds as string;
  const files = readdirSync(dir)
    .filter((f) => f.startsWith('fold-') && f.endsWith('.json'))
    .sort();
  const out: Record<string, unknown>[] = [];
  const tables: Record<OperatingPointName | 'threshold', string[]> = {
    precise: [],
    balanced: [],
    related: [],
    threshold: [],
  };
  const ndcgRows: string[] = [];
  const oracleRows: string[] = [];
  const fitRows: string[] = [];
  for (const f of files) {
    const fold = JSON.parse(readFileSync(join(dir, f), 'utf8')) as FoldFile;
    const cal = fold.calibration ?? IDENTITY;
    const train = foldTrainingLists(fold, fold.rankingBlend);
    const fits: Record<OperatingPointName, OperatingPointFit> = fitOperatingPoints(train, fitOptions);
    const heldQueries = fold.scores[fold.heldOut]!.all!;
    const held = gateLists(heldQueries, cal, fold.rankingBlend);
    const result: Record<string, unknown> = { heldOut: fold.heldOut, chosen: fold.chosen, queries: held.length };
    for (const op of OPERATING_POINT_NAMES) {
      const m = operatingPointMetrics(held, fits[op].point);
      result[op] = { point: fits[op].point, fit: fits[op].perCollection, metrics: m };
      tables[op].push(row(fold.heldOut, m));
      fitRows.push(
        `| ${fold.heldOut} | ${op} | ${fits[op].point.beta} | ${fits[op].point.shift} | ${fits[op].objective} |`,
      );
    }
    const abs = thresholdMetrics(held, fold.recommendedThreshold);
    result.threshold = { threshold: fold.recommendedThreshold, metrics: abs };
    tables.threshold.push(row(`${fold.heldOut} (t = ${fmt(fold.recommendedThreshold)})`, abs));
    const blend = fold.rankingBlend ?? null;
    const n = ndcg(heldQueries, blend);
    result.ndcg10 = n;
    result.rankingBlend = blend;
    const rel = (v: number) => `${v - n.bm25 >= 0 ? '+' : ''}${fmt((100 * (v - n.bm25)) / n.bm25, 2)} %`;
    ndcgRows.push(
      `| ${fold.heldOut} | ${held.length} | ${fmt(n.bm25, 4)} | ${fmt(n.byRelevance, 4)} (${rel(n.byRelevance)}) | ${blend === null ? 'none' : blend.lambda} | ${fmt(n.reranked, 4)} | ${n.reranked - n.bm25 >= 0 ? '+' : ''}${fmt(n.reranked - n.bm25, 4)} | ${rel(n.reranked)} |`,
    );
    const oracle = oracleCutF1(held);
    const gridBest = gridBestF1(held);
    result.oracleCutF1 = oracle;
    result.gridBest = gridBest;
    const keepAll = keepAllF1(held);
    oracleRows.push(
      `| ${fold.heldOut} | ${fmt(keepAll)} | ${fmt(1.3 * keepAll)} | ${fmt(gridBest.f1)} (β ${gridBest.point.beta}, shift ${gridBest.point.shift}) | ${fmt(gridBest.f1 / keepAll, 2)}× | ${fmt(oracle)} | ${fmt(oracle / keepAll, 2)}× |`,
    );
    out.push(result);
    process.stderr.write(`loco-gate: ${fold.heldOut} done\n`);
  }
  const md: string[] = [];
  const w = (s: string) => md.push(...s.split('\n'));
  const chosen = out
    .map((r) => {
      const c = r.chosen as { point?: { objective?: string; lambdaMart?: { warmStart?: unknown } }; trees?: number };
      const warm = c.point?.lambdaMart?.warmStart !== undefined ? ' from the best pointwise point' : '';
      return `${r.heldOut as string}: ${c.point?.objective ?? '?'}${warm}, ${c.trees ?? '?'} trees`;
    })
    .join('; ');
  w('### Leave-one-collection-out: collections the model never saw\n');
  w(
    `For each collection H of ../shared/data: a base model trained on the OTHER four (the training pipeline with grid \`${files.length > 0 ? (JSON.parse(readFileSync(join(dir, files[0]!), 'utf8')) as { grid: string }).grid : '?'}\`), the operating points fitted on the`,
  );
  w(
    "other four collections' validation + test queries only (same objectives as the shipped points, on the relevance head), then measured on H's judged queries",
  );
  w('with the ranked cut the gate makes (as many pairs as the relevance cut, from the head of the ranking order)');
  w(`(BM25 top ${GATE_K} for the gate, top 100 for nDCG@10). Chosen per fold: ${chosen}.`);
  w('Commands: `npx tsx scripts/loco-base.ts --grid loco --out /tmp/rg-loco/loco` then');
  w('`npx tsx scripts/loco-gate.ts --folds /tmp/rg-loco/loco`.\n');
  w('#### nDCG@10 on the held-out collection (BM25 top 100 reranked by the fold model)\n');
  w(
    "Reranked = the order the gate returns: the fold model's `ranking` signal, its λ chosen by the training pipeline on the training",
  );
  w(
    "collections' validation queries only (src/training/ranking-blend-selection.ts). By relevance = the margin's order (before the blend).\n",
  );
  w(
    '| held-out | queries | BM25 | by relevance (margin) | λ | reranked (ranking signal) | Δ | relative |\n|---|---|---|---|---|---|---|---|',
  );
  for (const r of ndcgRows) w(r);
  const relGains = (key: 'reranked' | 'byRelevance') =>
    out.map((r) => {
      const n = r.ndcg10 as { bm25: number; reranked: number; byRelevance: number };
      return (n[key] - n.bm25) / n.bm25;
    });
  const meanPct = (g: number[]) => {
    const m = (100 * g.reduce((a, b) => a + b, 0)) / Math.max(1, g.length);
    return g.length === 0 ? 'n/a' : `${m >= 0 ? '+' : ''}${m.toFixed(2)} %`;
  };
  const gains = relGains('reranked');
  const marginGains = relGains('byRelevance');
  w(
    `\nMean relative nDCG@10 gain over the held-out collections: ${meanPct(gains)} in the order the gate returns (above BM25 on ${gains.filter((g) => g > 0).length} of ${gains.length}); by relevance (margin) ${meanPct(marginGains)} (above BM25 on ${marginGains.filter((g) => g > 0).length} of ${marginGains.length}).`,
  );
  for (const op of [...OPERATING_POINT_NAMES, 'threshold'] as const) {
    w(
      `\n#### ${op === 'threshold' ? "absolute threshold (the fold model's recommended threshold)" : `operating point \`${op}\``}\n`,
    );
    w(HEADER);
    for (const r of tables[op]) w(r);
  }
  w('\n#### Fitted parameters per fold (on the training collections only)\n');
  w('| held-out | operating point | beta | shift | fit objective on the training collections |\n|---|---|---|---|---|');
  for (const r of fitRows) w(r);
  w("\n#### Upper bounds on the held-out collection (chosen with the held-out collection's own labels)\n");
  w(
    "Best point of the fit grid: the operating-point rule (the ranked cut) with the one (β, shift) that is best on H's labels; no way of choosing one point per collection (a fit, unlabelled corpus statistics) does better on H. Best cut per query: each query keeps a prefix of the order the gate returns (the fold model's ranking signal), the prefixes chosen together for the highest pooled F1 (`oracleCutF1`, exact); no cut of that ranking does better.\n",
  );
  w(
    '| held-out | F1 keep-all | 1.3 × keep-all | F1, best point of the fit grid | ratio | F1, best cut per query | ratio |\n|---|---|---|---|---|---|---|',
  );
  for (const r of oracleRows) w(r);
  process.stdout.write(`${md.join('\n')}\n`);
  if (values.json) writeFileSync(values.json, JSON.stringify(out, null, 2));
  if (values['card-module']) {
    writeFileSync(
      values['card-module'],
      `/** Written by \`npx tsx scripts/loco-gate.ts --folds ${dir} --card-module ${values['card-module']}\`. */\n` +
        `export const LOCO_OPERATING_POINTS_LINES: readonly string[] = ${JSON.stringify(md, null, 2)};\n`,
    );
  }
}
