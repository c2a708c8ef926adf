/**
 * Four-signal routing on SciFact's held-out (test) claims, read against the evidence labels
 * (evidence_labels.tsv, test split: SUPPORT / CONTRADICT / NOINFO per judged pair): where each
 * labelled pair is routed when a claim's BM25 top k (plus its labelled documents the first stage
 * missed, appended) goes through the gate.
 *
 *   npx tsx scripts/route-scifact-evidence.ts <signals model dir> [scifact dir] [k=20]
 *
 * Rows: the shipped relevance-only model under its default policy (`balanced`: included or
 * excluded, nothing can be flagged; the signals variant decides the same, its `relevant` logits and
 * operating points being the shipped model's: scripts/carry-operating-points.ts), then the signals model (scripts/train-signal-heads.sh) under
 * the default routing rules that read the signals it produces. SciFact's abstracts are trusted text
 * and no injection model is trained here, so the injection rule (which fails every pair closed
 * without an injection signal) is left out, as is any rule on a signal the model does not produce
 * (createGate refuses those).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createGate } from '../src/gate/gate.js';
import { createDefaultRoutingRules } from '../src/gate/policies/rules.js';
import type { Route, RoutingRule } from '../src/gate/types.js';
import { createCrossEncoder } from '../src/tiers/cross-encoder/cross-encoder.js';
import { createCrossEncoderScorer } from '../src/tiers/cross-encoder/scorer.js';
import { SHIPPED_CROSS_ENCODER_MODEL_DIR } from '../src/tiers/cross-encoder/shipped-model.js';
import { buildCandidateLists, toPassage } from '../src/tooling/eval/candidates.js';
import { loadCollection } from '../src/tooling/eval/collection.js';
import { createBm25FirstStage } from '../src/tooling/eval/first-stage.js';
import type { Passage } from '../src/types.js';

const [signalsDir, dataDir = '../shared/data/scifact', kArg = '20'] = process.argv.slice(2);
if (signalsDir === undefined) throw new Error('usage: route-scifact-evidence.ts <signals model dir> [scifact dir] [k]');
const k = Number(kArg);
const LABELS = ['SUPPORT', 'CONTRADICT', 'NOINFO', 'unlabelled'] as const;
type Label = (typeof LABELS)[number];

const labels = new Map<string, Map<string, Label>>();
for (const line of readFileSync(join(dataDir, 'evidence_labels.tsv'), 'utf8').split('\n').slice(1)) {
  const [q, d, split, label] = line.split('\t');
  if (split !== 'test' || q === undefined || d === undefined) continue;
  if (!labels.has(q)) labels.set(q, new Map());
  labels.get(q)?.set(d, label as Label);
}
const collection = loadCollection(dataDir);
const lists = buildCandidateLists(collection, createBm25FirstStage(collection), [...labels.keys()], k);
const requests = lists.map((l) => {
  const ids = l.candidates.map((c) => c.docId);
  for (const d of labels.get(l.queryId)?.keys() ?? []) if (!ids.includes(d)) ids.push(d);
  const passages: Passage[] = ids.map((id) => {
    const doc = collection.docById.get(id);
    if (doc === undefined) throw new Error(`unknown document ${id}`);
    return toPassage(doc);
  });
  return { queryId: l.queryId, query: l.queryText, passages };
});

type Counts = Record<Label, Record<Route, number>>;

/** The default rules a model producing `declared` can run, the injection rule left out (above). */
function rulesFor(declared: readonly string[]): RoutingRule[] {
  const rules = createDefaultRoutingRules().filter(
    (r) => r.name !== 'injection' && typeof r.when !== 'function' && declared.includes(r.when.signal),
  );
  console.log(`\nrules: ${rules.map((r) => r.name).join(', ')} (signals: ${declared.join(', ')})`);
  return rules;
}
async function route(modelDir: string, withRules: boolean): Promise<Counts> {
  const encoder = await createCrossEncoder({ modelDir });
  const scorer = createCrossEncoderScorer(encoder);
  const gate = withRules
    ? createGate({ scorer, policy: { rules: rulesFor(scorer.signals ?? []) } })
    : createGate({ scorer });
  const counts = Object.fromEntries(LABELS.map((l) => [l, { included: 0, conflicting: 0, excluded: 0 }])) as Counts;
  try {
    for (const r of requests) {
      const result = await gate.filter(r.query, r.passages, { budgetMs: 60_000 });
      for (const item of [...result.included, ...result.conflicting, ...result.excluded]) {
        const label = labels.get(r.queryId)?.get(item.id ?? '') ?? 'unlabelled';
        counts[label][item.route] += 1;
      }
    }
  } finally {
    await encoder.close();
  }
  return counts;
}

function print(name: string, counts: Counts): void {
  console.log(`\n${name}`);
  console.log('| label | pairs | included | conflicting | excluded |');
  console.log('|---|---:|---:|---:|---:|');
  for (const label of LABELS) {
    const c = counts[label];
    const n = c.included + c.conflicting + c.excluded;
    const pct = (x: number) => `${((100 * x) / Math.max(n, 1)).toFixed(1)} %`;
    console.log(`| ${label} | ${n} | ${pct(c.included)} | ${pct(c.conflicting)} | ${pct(c.excluded)} |`);
  }
}

console.log(`${requests.length} held-out claims with evidence labels; BM25 top ${k} + missed labelled documents`);
print('shipped model, relevance only, default policy (balanced)', await route(SHIPPED_CROSS_ENCODER_MODEL_DIR, false));
print('signals model, default routing rules (limits 0.5 / 0.3 / 0.5)', await route(signalsDir, true));
