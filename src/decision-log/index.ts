/**
 * The decision log: an opt-in, sampled, bounded NDJSON record of what the gate decided, its
 * replay under another policy from the stored signals, and the drift figures and alert rules over
 * decided requests. See docs/decision-log.md.
 */
export { createDecisionLog, type DecisionLog } from './log.js';
export {
  DECISION_LOG_VERSION,
  READABLE_DECISION_LOG_VERSIONS,
  type DecisionEntry,
  type DecisionLogModel,
  type DecisionLogOptions,
  type DecisionLogStats,
  type DecisionRecord,
  type DropReason,
  type LogRecord,
  type PassageRecord,
  type PolicyRecord,
} from './types.js';
export { readDecisionLog, parseDecisionLines, type DecisionLogContents } from './read.js';
export {
  replayDecisions,
  createReplayer,
  resultOfRecord,
  type Replayer,
  type ReplayOptions,
  type ReplayReport,
  type ReplayRequest,
  type ReplayMove,
  type RouteCounts,
  type RuleCounts,
  type RetrievalFigures,
  type ShadowDisagreement,
} from './replay.js';
export { replayDecisionLog, type ReplayLogReport } from './replay-log.js';
export { parseJudgments, readJudgments, type Judgments } from './qrels.js';
export {
  DriftCounter,
  windowBetween,
  evaluateDriftAlerts,
  SIGNAL_BUCKETS,
  DEFAULT_DRIFT_TOLERANCES,
  type DriftAlert,
  type DriftAlertName,
  type DriftSnapshot,
  type DriftTolerances,
  type SignalHistogram,
} from './drift.js';
export { summarizeDrift, type DriftSummary } from './summary.js';
export { sha256Hex, passageHash, policyHashOf } from './hash.js';
export { DecisionLogOptionError, DecisionLogFormatError, ReplayError } from './errors.js';
