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

/** The verdict on lists with nothing relevant, held out (`relevance-gate fit-points`; docs/eval.md). */
const JUNK_LIST_LINES: readonly string[] = [
  '#### Lists that hold nothing relevant',
  '',
  "Each collection's queries retrieved from another collection's corpus (BM25 top 20: every candidate off-topic), with the",
  'points, floor and verdict fitted on the other four collections (`relevance-gate fit-points`, docs/eval.md "Lists that hold',
  'nothing relevant"): `balanced` leaves 88.2 % (CISI), 93.5 % (Cranfield), 66.3 % (MED), 20.4 % (NFCorpus) and 20.6 % (SciFact)',
  "of those lists empty, at 3.4 / 0.0 / 8.3 / 3.2 / 0.5 % of the real lists with a relevant passage; fitted on the collection's",
  'own lists the same signals could reach 97.6 / 99.5 / 90.0 / 84.5 / 81.3 %. Another biomedical query over a biomedical',
  'corpus shares much of its vocabulary: a lexical model cannot tell such a list from a real one reliably. The',
  'leave-one-collection-out tables below were measured before the floor and the verdict existed (points only).',
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
      'signal: the ranked cut). Two absolute rules come first: a per-pair floor (no pair under it is kept) and a sufficiency',
      'verdict (a logistic rule over the best and top-3 relevance and ranking logits of the list): when it judges that the list',
      'holds nothing relevant, nothing is kept and the result says `insufficientContext` (rule `insufficient-context`).',
      `Parameters: \`operating-points.json\` in this folder, written by \`relevance-gate fit-points\` on the validation + test queries' BM25 top ${gateK}`,
      "of the training collections, with the other collections' queries retrieved from each corpus as lists that hold nothing relevant:",
      '',
      '| point | beta | shift | floor | gamma | empty below | verdict bias |',
      '|---|---|---|---|---|---|---|',
      ...first.withRank.operatingPoints.map(
        (r) =>
          `| ${r.name} | ${r.point.beta} | ${r.point.shift} | ${r.point.floor} | ${r.point.gamma ?? 0} | ${r.point.emptyBelow ?? 0} | ${r.point.sufficiency === undefined ? 'none' : r.point.sufficiency.bias.toFixed(3)} |`,
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
  lines.push(...JUNK_LIST_LINES, '', ...LOCO_OPERATING_POINTS_LINES, '', ...SPLIT_SEED_LINES, '');
  return lines;
}
