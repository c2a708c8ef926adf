/**
 * The gate on collections the model HAS seen, pooled over cross-validation folds: reads the
 * OUT/cv-<collection>-<fold>.json files of `scripts/loco-base.ts --in-domain` and, per fold, fits each
 * operating point on that collection's own validation queries (fitOperatingPoints, the shipped
 * objectives) and applies it, with the fold model's ranking blend, to the fold's measured queries
 * (BM25 top 20), exactly as scripts/loco-gate.ts does for a held-out collection. Every judged query
 * of the collection is measured once, by a model that never trained on it; the kept sets are pooled
 * over the folds. docs/eval.md ("The same recipe on collections it has seen") sets it beside the
 * leave-one-collection-out tables, to separate what transfer costs from what the scorer cannot do.
 *
 * Usage: npx tsx scripts/in-domain-gate.ts --folds /tmp/rg-loco/in-domain
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  FIT_BETAS,
  FIT_SHIFTS,
  type GateList,
  fitOperatingPoints,
  gridBestF1,
  keepAllF1,
  keptMetrics,
  operatingPointKept,
  operatingPointMetrics,
  oracleCutF1,
} from '../../src/tooling/eval/operating-points.js';
import { OPERATING_POINT_NAMES, type OperatingPointName } from '../../src/gate/policies/operating-points.js';
import {
  type FoldFile,
  foldTrainingLists,
  gateLists,
  IDENTITY_CALIBRATION,
  queryOrderNdcgs,
} from './loco-fold-data.js';
import { fmt, operatingPointHeader, operatingPointRow } from './loco-report.js';

const { values } = parseArgs({ options: { folds: { type: 'string' } } });
if (values.folds === undefined) throw new Error('--folds DIR is required (the output of loco-base.ts --in-domain)');
const dir = values.folds;

interface Pooled {
  lists: GateList[];
  kept: Map<GateList, readonly boolean[]>[];
  bm25: number[];
  reranked: number[];
  folds: number;
}
const byCollection = new Map<string, Pooled>();
for (const f of readdirSync(dir)
  .filter((x) => x.startsWith('cv-') && x.endsWith('.json'))
  .sort()) {
  const fold = JSON.parse(readFileSync(join(dir, f), 'utf8')) as FoldFile;
  const cal = fold.calibration ?? IDENTITY_CALIBRATION;
  const blend = fold.rankingBlend ?? null;
  const fits = fitOperatingPoints(foldTrainingLists(fold, blend));
  const measured = fold.scores[fold.heldOut]!.all!;
  const held = gateLists(measured, cal, blend);
  let p = byCollection.get(fold.heldOut);
  if (!p) {
    p = { lists: [], kept: OPERATING_POINT_NAMES.map(() => new Map()), bm25: [], reranked: [], folds: 0 };
    byCollection.set(fold.heldOut, p);
  }
  p.folds++;
  for (const list of held) {
    p.lists.push(list);
    OPERATING_POINT_NAMES.forEach((op, i) => {
      p.kept[i]!.set(list, operatingPointKept(fits[op].point, list));
    });
  }
  for (const q of measured) {
    const n = queryOrderNdcgs(q, blend);
    p.bm25.push(n.bm25);
    p.reranked.push(n.reranked);
  }
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const rows: Record<OperatingPointName, string[]> = { precise: [], balanced: [], related: [] };
const summary: string[] = [];
for (const [name, p] of [...byCollection.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
  OPERATING_POINT_NAMES.forEach((op, i) => {
    rows[op].push(
      operatingPointRow(
        name,
        keptMetrics(p.lists, (l) => p.kept[i]!.get(l)!),
      ),
    );
  });
  const keepAll = keepAllF1(p.lists);
  const grid = gridBestF1(p.lists);
  // `precise`'s target is precision at recall >= 0.3: the best grid point for it, labels known.
  let precise = 0;
  for (const beta of FIT_BETAS)
    for (const shift of FIT_SHIFTS) {
      const m = operatingPointMetrics(p.lists, { beta, shift, floor: 0 });
      if (m.recall !== null && m.recall >= 0.3 && m.precision !== null) precise = Math.max(precise, m.precision);
    }
  const b = mean(p.bm25);
  const r = mean(p.reranked);
  summary.push(
    `| ${name} | ${p.lists.length} (${p.folds} folds) | ${fmt(b, 4)} → ${fmt(r, 4)} (${r >= b ? '+' : ''}${fmt((100 * (r - b)) / b, 2)} %) | ${fmt(grid.f1 / keepAll, 2)}× (β ${grid.point.beta}, shift ${grid.point.shift}) | ${fmt(oracleCutF1(p.lists) / keepAll, 2)}× | ${fmt(precise, 2)} |`,
  );
}
const out: string[] = [
  '| collection | queries | nDCG@10 BM25 → reranked (order the gate returns) | best point of the fit grid (labels known) | best cut per query (labels known) | best precision of a grid point at recall >= 0.3 (labels known) |',
  '|---|---|---|---|---|---|',
  ...summary,
];
for (const op of OPERATING_POINT_NAMES) {
  out.push(
    '',
    `#### in-domain, operating point \`${op}\` (fitted on the collection's own validation queries)`,
    '',
    operatingPointHeader('collection'),
    ...rows[op],
  );
}
process.stdout.write(`${out.join('\n')}\n`);
