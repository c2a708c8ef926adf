/**
 * The model card's operating-point section: the gate's default decision with this model, its
 * parameters and what it keeps on the TEST queries (from the same `relevance-gate eval` runs as the
 * rest of the card), and the leave-one-collection-out measurement of the procedure
 * (LOCO_OPERATING_POINTS_LINES, written by `npx tsx research/loco/loco-gate.ts --card-module`). Deterministic text.
 */
import type { TestResult } from './test-result.js';
import { LOCO_OPERATING_POINTS_LINES } from './operating-points-loco.js';

/**
 * How far the LOCO figures move with the split seed: measured once (research/loco/NOTES.md "The gate across
 * split seeds", "Choosing λ") with `research/loco/loco-base.ts --seed 7|3|2026` beside the default 42.
 */
const SPLIT_SEED_LINES: readonly string[] = [
  '#### How much the leave-one-collection-out figures move with the split seed',
  '',
  "The seed sets the training collections' train / validation / test split and the trainer's seed. Rerun with seeds 42, 7,",
  '3 and 2026 (`research/loco/loco-base.ts --seed N`, then `research/loco/loco-gate.ts`): `balanced` F1 / F1 of keeping all 20 was CISI',
  '1.00–1.10×, Cranfield 1.32–1.41×, MED 0.90–0.98×, NFCorpus 1.18–1.28×, SciFact 1.81–2.44×, with no query that has a relevant',
  'passage in its top 20 left with nothing; reranking in the order the gate returns was above BM25 on every held-out',
  'collection at every seed (+0.93 % to +10.49 %; `research/loco/loco-blend-rules.ts`). Tables: research/loco/NOTES.md, "The gate across',
  'split seeds" and "Choosing λ".',
];

const f3 = (v: number | null | undefined): string => (v === null || v === undefined ? 'n/a' : v.toFixed(3));

export function renderOperatingPointsSection(tests: readonly TestResult[], gateK: number): string[] {
  const first = tests.find((t) => t.withRank.operatingPoints !== null);
  const lines = ['## Operating points (the gate decision by intent)', ''];
  if (first === undefined || first.withRank.operatingPoints === null) {
    lines.push(
      "This model's folder has no operating-points file (`operating-points.json`, written by `relevance-gate fit-points`), so",
      "`createGate({ scorer })` uses the absolute threshold; pass `policy.operatingPoints` to use `mode: 'balanced'` etc.",
      '',
    );
  } else {
    lines.push(
      "`createGate({ scorer })` with this model decides by the `balanced` operating point; `policy: { mode: 'precise' | 'balanced' | 'related' }`",
      'selects one (docs/gate.md, "Operating points"). Each keeps as many pairs as the head of the request\'s own list (relevance',
      'descending) that maximises the expected F_beta of the kept set after a logit shift of the probabilities, so it adapts',
      'to the list rather than to one absolute threshold, and takes them from the head of the order it returns (the `ranking`',
      "signal: the ranked cut). Parameters (src/gate/policies/operating-points.ts, keyed by this model's id), fitted on the",
      `relevance head of the validation + test queries' BM25 top ${gateK} of the training collections (research/loco/loco-gate.ts --shipped):`,
      '',
      '| point | beta | shift | floor |',
      '|---|---|---|---|',
      ...first.withRank.operatingPoints.map(
        (r) => `| ${r.name} | ${r.point.beta} | ${r.point.shift} | ${r.point.floor} |`,
      ),
      '',
      `On the TEST queries (BM25 top ${gateK}, pooled; these queries were part of the fit, so this table is optimistic: the`,
      'leave-one-collection-out table below is the measurement on collections the model never saw):',
      '',
      '| collection | point | precision kept | recall kept | F1 kept | F1 keep-all | F1 ratio | nothing kept (queries with a relevant) | kept / query | nDCG@10 kept list |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...tests.flatMap((t) =>
        (t.withRank.operatingPoints ?? []).map(
          (r) =>
            `| ${t.name} | ${r.name} | ${f3(r.precision)} | ${f3(r.recall)} | ${f3(r.f1)} | ${f3(r.f1KeepAll)} | ${r.f1Ratio.toFixed(2)}× | ${r.nothingKept} / ${r.queriesWithRelevant} | ${r.keptPerQuery.toFixed(2)} | ${f3(r.ndcg10Kept)} |`,
        ),
      ),
      '',
    );
  }
  lines.push(...LOCO_OPERATING_POINTS_LINES, '', ...SPLIT_SEED_LINES, '');
  return lines;
}
