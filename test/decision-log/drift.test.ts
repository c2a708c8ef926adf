/**
 * Drift alerts: each rule fires when a recent window's distribution is shifted from its trailing
 * baseline, and stays quiet when both windows come from the same distribution.
 */
import { describe, expect, it } from 'vitest';
import {
  type DriftAlert,
  DriftCounter,
  type DriftAlertName,
  type DriftSnapshot,
  evaluateDriftAlerts,
  windowBetween,
} from '../../src/decision-log/index.js';
import { createGate, type GatePolicy, type Scorer, type ScorerPairResult } from '../../src/index.js';
import { isDetailedPairScore } from '../../src/types.js';
import { requests, signalScorer } from './helpers.js';

const WORK = requests(160, 10);

/** Relabels every pair's tier (a router that degraded its pairs to another tier). */
function relabelled(scorer: Scorer, tier: string): Scorer {
  return {
    ...scorer,
    async score(query, passages, options) {
      const out = await scorer.score(query, passages, options);
      return out.map((r): ScorerPairResult => (r !== null && isDetailedPairScore(r) ? { ...r, tier } : r));
    },
  };
}

/** Decides `slice` of the workload with `scorer` under `policy` into `counter`. */
async function decide(counter: DriftCounter, scorer: Scorer, policy: GatePolicy, from: number, to: number) {
  const gate = createGate({ scorer, policy });
  for (const r of WORK.slice(from, to)) counter.observe(await gate.filter(r.query, r.passages));
}

const POLICY: GatePolicy = { threshold: 0.5, minKept: 1, fallback: 'top' };

/** Baseline: requests 0–79 of the normal scorer; current: requests 80–159 of `scorer`, one counter. */
async function windows(scorer: Scorer, policy: GatePolicy = POLICY): Promise<[DriftSnapshot, DriftSnapshot]> {
  const counter = new DriftCounter();
  await decide(counter, signalScorer(), POLICY, 0, 80);
  const baseline = counter.snapshot();
  await decide(counter, scorer, policy, 80, 160);
  return [baseline, windowBetween(baseline, counter.snapshot())];
}

const names = (alerts: readonly DriftAlert[]): DriftAlertName[] => [...new Set(alerts.map((a) => a.alert))];

describe('drift alerts', () => {
  it('stay quiet on a stable run (same scorer, same policy, other queries)', async () => {
    const [baseline, current] = await windows(signalScorer());
    expect(current.requests).toBe(80);
    expect(evaluateDriftAlerts(baseline, current)).toEqual([]);
  });

  it('fire on a relevance collapse: excluded share, empty answers, the rule that excluded, the signal mean', async () => {
    // Thresholds that do not transfer / corpus drift: the relevance signal moves down by 0.45.
    const [baseline, current] = await windows(signalScorer('signal-model', -0.45), { threshold: 0.5 });
    const alerts = evaluateDriftAlerts(baseline, current);
    expect(names(alerts)).toEqual(
      expect.arrayContaining(['excluded-share', 'empty-answers', 'rule-excluded-share', 'signal-mean']),
    );
    expect(alerts.find((a) => a.alert === 'rule-excluded-share')?.subject).toBe('below-threshold');
    expect(alerts.filter((a) => a.alert === 'signal-mean').map((a) => a.subject)).toEqual(['ranking', 'relevant']);
    const excluded = alerts.find((a) => a.alert === 'excluded-share');
    expect(excluded?.current).toBeGreaterThan(0.95);
  });

  it('fire on the fallback rate when fewer pairs pass and minKept is filled from the rest', async () => {
    const [baseline, current] = await windows(signalScorer('signal-model', -0.45));
    expect(names(evaluateDriftAlerts(baseline, current))).toContain('fallback-rate');
  });

  it('fire on the tier mix when pairs move to another tier', async () => {
    const [baseline, current] = await windows(relabelled(signalScorer(), 'fast-path'));
    const alerts = evaluateDriftAlerts(baseline, current);
    expect(names(alerts)).toEqual(['tier-mix']);
    expect(alerts.map((a) => a.subject).sort()).toEqual(['fast-path', 'signal-model']);
  });

  it('say nothing below minRequests', async () => {
    const [baseline, current] = await windows(signalScorer('signal-model', -0.45));
    expect(evaluateDriftAlerts(baseline, current, { minRequests: 1000 })).toEqual([]);
  });
});

describe('the drift summary of a log', () => {
  it('compares the later half of a log with the earlier half under the same rules', async () => {
    const { createDecisionLog, readDecisionLog, summarizeDrift } = await import('../../src/decision-log/index.js');
    const { tempDir } = await import('./helpers.js');
    const t = tempDir();
    try {
      const log = createDecisionLog({ dir: t.dir });
      for (const [i, r] of WORK.entries()) {
        const scorer = i < 80 ? signalScorer() : signalScorer('signal-model', -0.45);
        const result = await createGate({ scorer, policy: { threshold: 0.5 } }).filter(r.query, r.passages);
        log.record({ requestId: `r${i}`, model: { name: 'm', scorer, policy: { threshold: 0.5 } }, result });
      }
      await log.close();
      const { decisions } = await readDecisionLog(t.dir);
      const stable = summarizeDrift(decisions.slice(0, 80));
      expect(stable.alerts).toEqual([]);
      const drifted = summarizeDrift(decisions);
      expect(names(drifted.alerts)).toEqual(expect.arrayContaining(['excluded-share', 'empty-answers']));
    } finally {
      t.remove();
    }
  });
});

describe('signal buckets', () => {
  it('put each value in the first bucket whose bound holds it (bounds inclusive, as Prometheus `le`)', () => {
    const counter = new DriftCounter();
    const values = [0, 0.05, 0.1, 0.2, 0.3, 0.30000001, 0.7, 0.9, 1];
    const items = values.map((v, i) => ({
      id: String(i),
      route: 'excluded' as const,
      rule: 'r',
      reason: undefined,
      signals: { relevant: v },
      raw: undefined,
      tier: 't',
      relevance: v,
      score: v,
      cached: false,
      rank: i,
      passage: { id: String(i), text: '' },
    }));
    counter.observe({
      query: 'q',
      queryClass: undefined,
      included: [],
      conflicting: [],
      excluded: items,
      stats: { fallbackTriggered: false } as never,
      tier: { scorer: 's', name: 't', counts: {} },
      timings: { scoringMs: 0, totalMs: 0 },
      errors: [],
    });
    expect(counter.snapshot().signals.relevant.buckets).toEqual([3, 1, 1, 1, 0, 0, 1, 0, 1, 1]);
  });
});
