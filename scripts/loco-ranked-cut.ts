/**
 * Measurement, not a shipped path: a "ranked cut" candidate for the operating points. The shipped
 * rule keeps the pairs whose relevance reaches the request's expected-F_beta cut and returns them in
 * the `ranking` order; the ranked cut keeps the same NUMBER of pairs (k from the same cut on relevance)
 * but takes the first k of the `ranking` order, so the kept set is a head of the returned order.
 * Both with the operating points fitted as scripts/loco-gate.ts fits them (training collections'
 * validation + test queries, relevance-order keeps) and each fold's λ by the shipped rule
 * (foldBlendLambda), measured on the held-out collection's BM25 top 20.
 *
 * Usage: npx tsx scripts/loco-ranked-cut.ts --folds /tmp/rg-loco/loco,/tmp/rg-loco/loco-s7
 */
import {
  type FoldFile,
  foldBlendLambda,
  GATE_K,
  gateLists,
  IDENTITY_CALIBRATION as IDENTITY,
  type RankedQuery,
  rankingLogits,
} from './loco-fold-data.js';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import type { PlattParameters } from '../src/calibration/platt.js';
import { fitOperatingPoints, type GateList, keepAllF1, operatingPointMetrics } from '../src/eval/operating-points.js';
import {
  OPERATING_POINT_NAMES,
  type OperatingPoint,
  operatingPointThreshold,
} from '../src/gate/policies/operating-points.js';

const { values } = parseArgs({ options: { folds: { type: 'string' } } });
if (!values.folds) throw new Error('--folds DIR[,DIR…] is required');

interface RankedList extends GateList {
  readonly ranking: readonly number[];
}

function lists(queries: readonly RankedQuery[], calibration: PlattParameters, lambda: number): RankedList[] {
  const plain = gateLists(queries, calibration);
  return queries.map((q, i) => ({ ...plain[i]!, ranking: rankingLogits(q, lambda).slice(0, GATE_K) }));
}

/** Pooled precision / recall / F1 when each list keeps the first k of its ranking order, k from the relevance cut. */
function rankedCut(held: readonly RankedList[], point: OperatingPoint): { p: number; r: number; f1: number } {
  let kept = 0;
  let tp = 0;
  let relevant = 0;
  for (const l of held) {
    const t = operatingPointThreshold(point, l.relevances);
    const k = l.relevances.filter((v) => v >= t).length;
    const order = l.ranking.map((_, i) => i).sort((a, b) => l.ranking[b]! - l.ranking[a]! || a - b);
    kept += k;
    for (let i = 0; i < k; i++) if (l.relevant[order[i]!]) tp++;
    relevant += l.relevant.filter(Boolean).length;
  }
  const p = kept === 0 ? 0 : tp / kept;
  const r = relevant === 0 ? 0 : tp / relevant;
  return { p, r, f1: p + r === 0 ? 0 : (2 * p * r) / (p + r) };
}

const f2 = (v: number) => v.toFixed(2);
const f3 = (v: number | null) => (v === null ? 'n/a' : v.toFixed(3));
for (const dir of values.folds.split(',')) {
  const folds = readdirSync(dir)
    .filter((f) => /^fold-.+\.json$/.test(f))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as FoldFile);
  console.log(`\n### ${basename(dir)}\n`);
  console.log(
    '| held-out | λ | operating point | shipped P / R | shipped F1 ratio | ranked cut P / R | ranked cut F1 ratio |',
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const fold of folds) {
    const cal = fold.calibration ?? IDENTITY;
    const lambda = foldBlendLambda(fold);
    const train: Record<string, GateList[]> = {};
    for (const n of fold.trainedOn)
      train[n] = lists([...fold.scores[n]!.validation!, ...fold.scores[n]!.test!] as RankedQuery[], cal, lambda);
    const fits = fitOperatingPoints(train);
    const held = lists(fold.scores[fold.heldOut]!.all as RankedQuery[], cal, lambda);
    const all = keepAllF1(held);
    for (const op of OPERATING_POINT_NAMES) {
      const shipped = operatingPointMetrics(held, fits[op].point);
      const ranked = rankedCut(held, fits[op].point);
      console.log(
        `| ${fold.heldOut} | ${lambda} | ${op} | ${f3(shipped.precision)} / ${f3(shipped.recall)} | ${f2(shipped.f1 / all)}× | ${f3(ranked.p)} / ${f3(ranked.r)} | ${f2(ranked.f1 / all)}× |`,
      );
    }
  }
}
