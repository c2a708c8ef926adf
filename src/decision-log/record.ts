/**
 * The log's records as objects: the policy line of a model, and the decision record of a request
 * (what a decision line parses back to). The writer does not build decision records: it writes
 * their JSON directly (line.ts, held equal to `JSON.stringify(decisionRecordOf(...))` by a test).
 */
import { countWords } from '../gate/policies/adaptive.js';
import type { GateItem } from '../gate/types.js';
import type { Passage } from '../types.js';
import { canonicalValue, holdsFunction, passageHash, policyHashOf, sha256Hex } from './hash.js';
import {
  DECISION_LOG_VERSION,
  type DecisionEntry,
  type DecisionLogModel,
  type DecisionRecord,
  type PassageRecord,
  type PolicyRecord,
} from './types.js';
import type { GatePolicy } from '../gate/types.js';

/** The policy line of a model: hashed once per model object (the caller keeps the model object stable). */
export function policyRecordOf(model: DecisionLogModel): PolicyRecord {
  const scorer = {
    id: model.scorer.id,
    signals: model.scorer.signals === undefined ? null : [...model.scorer.signals],
    decisions: model.scorer.decisions === undefined ? null : model.scorer.decisions,
  };
  const policy = canonicalValue(model.policy) as GatePolicy;
  return {
    kind: 'policy',
    v: DECISION_LOG_VERSION,
    policyHash: policyHashOf({ model: model.name, scorer, policy }),
    model: model.name,
    scorer,
    policy,
    replayable: !holdsFunction(model.policy),
  };
}

export interface BuildOptions {
  readonly includeQuery: boolean;
  readonly includeText: boolean;
}

function passageRecord(item: GateItem, includeText: boolean): PassageRecord {
  const record: PassageRecord = {
    id: item.id,
    rank: item.rank,
    hash: passageHash(item.passage.text),
    route: item.route,
    rule: item.rule,
    reason: item.reason ?? null,
    tier: item.tier ?? null,
    cached: item.cached,
    relevance: item.relevance,
    score: item.score,
    signals: item.signals == null ? null : { ...item.signals },
    raw: item.raw == null ? null : { ...item.raw },
  };
  return includeText ? { ...record, text: item.passage.text } : record;
}

export function decisionRecordOf<P extends Passage>(
  entry: DecisionEntry<P>,
  policyHash: string,
  options: BuildOptions,
  time: Date,
): DecisionRecord {
  const { result } = entry;
  const items: GateItem<P>[] = [...result.included, ...result.conflicting, ...result.excluded];
  items.sort((a, b) => a.rank - b.rank);
  const passages = items.map((item) => passageRecord(item, options.includeText));
  const stats = result.stats;
  const record: DecisionRecord = {
    kind: 'decision',
    v: DECISION_LOG_VERSION,
    time: time.toISOString(),
    requestId: entry.requestId,
    endpoint: entry.endpoint ?? 'library',
    ...(entry.shadowOf === undefined ? {} : { shadowOf: entry.shadowOf }),
    model: entry.model.name,
    scorerId: result.tier.scorer,
    policyHash,
    override: entry.override === undefined ? null : (canonicalValue(entry.override) as GatePolicy),
    queryHash: sha256Hex(result.query),
    queryWords: countWords(result.query),
    queryClass: result.queryClass ?? null,
    threshold: stats.threshold,
    rankingCut: stats.rankingCut,
    sufficiency: stats.sufficiency,
    fallbackTriggered: stats.fallbackTriggered,
    insufficientContext: stats.insufficientContext,
    counts: {
      included: result.included.length,
      conflicting: result.conflicting.length,
      excluded: result.excluded.length,
    },
    timings: { scoringMs: result.timings.scoringMs, totalMs: result.timings.totalMs, serverMs: entry.serverMs ?? null },
    tiers: { ...result.tier.counts },
    passages,
  };
  return options.includeQuery ? { ...record, query: result.query } : record;
}
