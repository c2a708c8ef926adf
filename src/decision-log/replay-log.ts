/** replayDecisionLog: reads a log directory, replays it and summarises its drift (what `relevance-gate replay` runs). */
import { readDecisionLog } from './read.js';
import { replayDecisions, type ReplayOptions, type ReplayReport } from './replay.js';
import { type DriftSummary, summarizeDrift } from './summary.js';

export interface ReplayLogReport extends ReplayReport {
  readonly files: number;
  readonly malformedLines: number;
  /** The log's later half against its earlier half, under the drift alert rules (as logged, not replayed). */
  readonly drift: DriftSummary;
}

export async function replayDecisionLog(dir: string, options: ReplayOptions = {}): Promise<ReplayLogReport> {
  const log = await readDecisionLog(dir);
  const report = replayDecisions(log.decisions, log.policies, options);
  return {
    ...report,
    files: log.files.length,
    malformedLines: log.malformedLines,
    drift: summarizeDrift(log.decisions),
  };
}
