import { describe, expect, it } from 'vitest';
import { createGate, DEFAULT_ROUTING_RULES, InvalidArgumentError, rerouteResult } from '../../src/index.js';
import { ids, passages, relevanceScorer, tableScorer } from './helpers.js';

describe('reroute without rescoring', () => {
  it('re-decides stored signals under a new threshold; the scorer is not called again', async () => {
    const scorer = relevanceScorer([0.9, 0.4, 0.6, 0.2]);
    const gate = createGate({ scorer, policy: { threshold: 0.5 } });
    const first = await gate.filter('q', passages(4));
    expect(ids(first.included)).toEqual(['p0', 'p2']);
    const lower = gate.reroute(first, { threshold: 0.3 });
    expect(ids(lower.included)).toEqual(['p0', 'p2', 'p1']);
    const capped = gate.reroute(lower, { maxKept: 1 });
    expect(ids(capped.included)).toEqual(['p0']);
    expect(scorer.calls).toHaveLength(1);
    expect(lower.stats).toMatchObject({ threshold: 0.3, scored: 4, passed: 3 });
    expect(lower.timings.scoringMs).toBe(0);
    // the previous result is untouched
    expect(ids(first.included)).toEqual(['p0', 'p2']);
    expect(first.included[0].passage).toBe(lower.included[0].passage);
  });

  it('switches from threshold to rules and back; unscored and early-stopped pairs stay so', async () => {
    const scorer = tableScorer({
      p0: { relevant: 0.9, evidence: 0.9, injection: 0.9, contradicts_premise: 0 },
      p1: { relevant: 0.8, evidence: 0.8, injection: 0, contradicts_premise: 0 },
      p2: { relevant: Number.NaN },
      p3: { relevant: 0.1, evidence: 0.1, injection: 0, contradicts_premise: 0 },
      p4: { relevant: 0.9, evidence: 0.9, injection: 0, contradicts_premise: 0 },
    });
    const gate = createGate({ scorer, policy: { earlyStop: { window: 1, minRate: 1, chunk: 4 } } });
    const first = await gate.filter('q', passages(5));
    expect(ids(first.included)).toEqual(['p0', 'p1']);
    expect(first.stats.skippedByEarlyStop).toBe(1);
    const ruled = gate.reroute(first, { rules: DEFAULT_ROUTING_RULES });
    expect(ids(ruled.included)).toEqual(['p1']);
    expect(ruled.excluded.map((i) => [i.id, i.rule, i.reason])).toEqual([
      ['p0', 'injection', undefined],
      ['p2', 'fail-closed', 'invalid-signal'],
      ['p3', 'relevance-floor', undefined],
      ['p4', 'early-stop', undefined],
    ]);
    const open = gate.reroute(ruled, { failOpen: true });
    expect(open.included.find((i) => i.id === 'p2')).toMatchObject({ rule: 'fail-open', reason: 'invalid-signal' });
    expect(open.stats.skippedByEarlyStop).toBe(1);
    expect(scorer.calls).toHaveLength(1);
  });

  it('query-adaptive thresholds re-read the stored query and an optional new class', async () => {
    const scorer = relevanceScorer([0.35, 0.65]);
    const gate = createGate({ scorer, policy: { thresholdByQueryClass: { broad: 0.3 } } });
    const first = await gate.filter('q', passages(2));
    expect(first.stats.returned).toBe(1);
    expect(gate.reroute(first, undefined, { queryClass: 'broad' }).stats.returned).toBe(2);
  });

  it('rerouteResult takes a complete policy; malformed previous results are refused', async () => {
    const scorer = relevanceScorer([0.35, 0.65]);
    const first = await createGate({ scorer }).filter('q', passages(2));
    expect(rerouteResult(first, { threshold: 0.3 }).stats.returned).toBe(2);
    expect(() => rerouteResult({} as never, {})).toThrow(InvalidArgumentError);
    const broken = { ...first, excluded: [{ ...first.excluded[0], rank: 1 }] };
    expect(() => rerouteResult(broken, {})).toThrow(/repeated rank/);
  });
});
