/**
 * The drift summary of a log: the earlier half of its requests is the baseline, the later half
 * the current window, compared with the same alert rules /metrics is watched with
 * (evaluateDriftAlerts). Logged decisions are read as they were made (no re-deciding).
 */
import {
  DriftCounter,
  type DriftAlert,
  type DriftSnapshot,
  type DriftTolerances,
  evaluateDriftAlerts,
  windowBetween,
} from './drift.js';
import { resultOfRecord } from './replay.js';
import type { DecisionRecord } from './types.js';

export interface DriftSummary {
  readonly baseline: DriftSnapshot;
  readonly current: DriftSnapshot;
  readonly alerts: readonly DriftAlert[];
}

export function summarizeDrift(
  decisions: readonly DecisionRecord[],
  tolerances: Partial<DriftTolerances> = {},
): DriftSummary {
  // A shadow model's decisions are not the traffic's: the live ones only.
  const live = decisions.filter((d) => d.shadowOf === undefined);
  const counter = new DriftCounter();
  const half = Math.floor(live.length / 2);
  for (let i = 0; i < half; i++) counter.observe(resultOfRecord(live[i]));
  const baseline = counter.snapshot();
  for (let i = half; i < live.length; i++) counter.observe(resultOfRecord(live[i]));
  const current = windowBetween(baseline, counter.snapshot());
  return { baseline, current, alerts: evaluateDriftAlerts(baseline, current, tolerances) };
}
