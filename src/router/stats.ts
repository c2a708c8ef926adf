/**
 * The router's counters: what each call answered, on which tier, and what it degraded; and the
 * stats snapshot (counters plus every tier's live cost model).
 */
import type { TierState } from './config.js';
import type { RoutedPairScore, RouterStats, TierLoadStats } from './types.js';

export interface Counters {
  calls: number;
  pairs: number;
  byTier: Record<string, number>;
  cacheHitsBySource: Record<string, number>;
  degradedPairs: number;
  shedPairs: number;
  deadlinePairs: number;
  errorPairs: number;
  cancelledPairs: number;
  unscoredPairs: number;
  lateCalls: number;
  backgroundPairs: number;
  backgroundSubmissions: number;
}

export function newCounters(): Counters {
  return {
    calls: 0,
    pairs: 0,
    byTier: {},
    cacheHitsBySource: {},
    degradedPairs: 0,
    shedPairs: 0,
    deadlinePairs: 0,
    errorPairs: 0,
    cancelledPairs: 0,
    unscoredPairs: 0,
    lateCalls: 0,
    backgroundPairs: 0,
    backgroundSubmissions: 0,
  };
}

/** Counts a finished call's answers per label, cache source and degrade, and its lateness. */
export function recordAnswers(
  c: Counters,
  out: ReadonlyArray<RoutedPairScore | null>,
  answerBy: number | undefined,
  end: number,
): void {
  if (answerBy !== undefined && end > answerBy + 1) c.lateCalls++;
  for (const r of out) {
    if (r === null) {
      c.unscoredPairs++;
      continue;
    }
    c.byTier[r.tier] = (c.byTier[r.tier] ?? 0) + 1;
    if (r.sourceTier !== undefined) c.cacheHitsBySource[r.sourceTier] = (c.cacheHitsBySource[r.sourceTier] ?? 0) + 1;
    if (r.degraded !== undefined) c.degradedPairs++;
  }
}

function tierStats(t: TierState): TierLoadStats {
  return {
    name: t.name,
    quality: t.spec.quality,
    inline: t.inline,
    outstandingPairs: t.model.outstanding,
    msPerPair: t.model.msPerPair,
    overheadMs: t.model.overheadMs,
    residualMs: Math.sqrt(t.model.residualVar),
    samples: t.model.samples,
    predictionRatio: t.model.ratio,
    predictedMsFor20: t.model.predict(20),
    submittedPairs: t.model.submittedPairs,
    completedPairs: t.model.completedPairs,
    failedPairs: t.model.failedPairs,
    calls: t.model.calls,
    probes: t.model.probes,
  };
}

/** A copy of the counters with every tier's cost model state (nothing shared with live state). */
export function snapshotStats(c: Counters, ranked: readonly TierState[], answerLagMs: number): RouterStats {
  return {
    ...c,
    answerLagMs,
    byTier: { ...c.byTier },
    cacheHitsBySource: { ...c.cacheHitsBySource },
    tiers: ranked.map(tierStats),
  };
}
