/**
 * The ranked cut against the relevance head it replaced, leave-one-collection-out. The operating
 * points keep k pairs, k from the expected-F_beta cut on relevance; the gate takes them from the
 * head of the `ranking` order it returns (the ranked cut, shipped), where it used to take the k most
 * relevant (the relevance head). Points fitted as scripts/loco-gate.ts fits them (the training
 * collections' validation + test queries; on the relevance head, as shipped, or on the ranked cut
 * itself), measured on the held-out collection's BM25 top 20; each fold's λ by the shipped rule
 * (foldBlendLambda).
 *
 * Usage: npx tsx scripts/loco-ranked-cut.ts --folds /tmp/rg-loco/s42,/tmp/rg-loco/s7
 */
import {
  type FoldFile,
  foldBlendLambda,
  foldTrainingLists,
  gateLists,
  IDENTITY_CALIBRATION as IDENTITY,
} from './loco-fold-data.js';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { type FitOptions, fitOperatingPoints, operatingPointMetrics } from '../../src/tooling/eval/operating-points.js';
import { OPERATING_POINT_NAMES } from '../../src/gate/policies/operating-points.js';
import type { RankingBlend } from '../../src/tiers/fast-path/ranking-blend.js';

const { values } = parseArgs({ options: { folds: { type: 'string' } } });
if (!values.folds) throw new Error('--folds DIR[,DIR…] is required');

/** Fit on the training collections (`fitOn`), measure on the held-out one with `blend` (null: relevance head). */
function measure(fold: FoldFile, fitOn: FitOptions['fitOn'], blend: RankingBlend | null) {
  const cal = fold.calibration ?? IDENTITY;
  const fits = fitOperatingPoints(foldTrainingLists(fold, blend), { fitOn });
  const held = gateLists(fold.scores[fold.heldOut]!.all!, cal, blend);
  return Object.fromEntries(
    OPERATING_POINT_NAMES.map((op) => [op, { point: fits[op].point, m: operatingPointMetrics(held, fits[op].point) }]),
  );
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
    '| held-out | λ | operating point | relevance head (before): β, shift; P / R; F1 ratio | ranked cut, points fitted on the relevance head (shipped) | ranked cut, points fitted on the ranked cut |',
  );
  console.log('|---|---|---|---|---|---|');
  for (const fold of folds) {
    const blend: RankingBlend = { lambda: foldBlendLambda(fold) };
    const before = measure(fold, 'relevance-head', null);
    const self = measure(fold, 'ranked-cut', blend);
    const shipped = measure(fold, 'relevance-head', blend);
    for (const op of OPERATING_POINT_NAMES) {
      const cell = (x: (typeof before)[string]) =>
        `${x!.point.beta}, ${x!.point.shift}; ${f3(x!.m.precision)} / ${f3(x!.m.recall)}; ${f2(x!.m.f1 / x!.m.f1KeepAll)}×`;
      console.log(
        `| ${fold.heldOut} | ${blend.lambda} | ${op} | ${cell(before[op])} | ${cell(shipped[op])} | ${cell(self[op])} |`,
      );
    }
  }
}
