import { describe, expect, it } from 'vitest';
import {
  createDefaultRoutingRules,
  createGate,
  DEFAULT_ROUTING_RULES,
  InvalidPolicyError,
  type RoutingRule,
  type SignalProbabilities,
} from '../../src/index.js';
import { passages, tableScorer } from './helpers.js';

/** Neutral signals that reach the evidence rule and pass it. */
const BASE: SignalProbabilities = { injection: 0.1, contradicts_premise: 0.1, relevant: 0.9, evidence: 0.9 };

async function routeOf(signals: SignalProbabilities, rules: readonly RoutingRule[] = DEFAULT_ROUTING_RULES) {
  const gate = createGate({ scorer: tableScorer({ p0: signals }), policy: { rules } });
  const r = await gate.filter('q', passages(1));
  const item = [...r.included, ...r.conflicting, ...r.excluded][0];
  return { route: item.route, rule: item.rule, reason: item.reason };
}

describe('default routing rules', () => {
  it('is exported in evaluation order: injection, contradicts-premise, relevance-floor, evidence', () => {
    expect(DEFAULT_ROUTING_RULES.map((r) => r.name)).toEqual([
      'injection',
      'contradicts-premise',
      'relevance-floor',
      'evidence',
    ]);
    expect(Object.isFrozen(DEFAULT_ROUTING_RULES)).toBe(true);
  });

  it('injection > 0.5 (strict) → excluded, straddled by 0.01', async () => {
    expect(await routeOf({ ...BASE, injection: 0.51 })).toMatchObject({ route: 'excluded', rule: 'injection' });
    expect(await routeOf({ ...BASE, injection: 0.5 })).toMatchObject({ route: 'included', rule: 'evidence' });
    expect(await routeOf({ ...BASE, injection: 0.49 })).toMatchObject({ route: 'included', rule: 'evidence' });
  });

  it('contradicts_premise > 0.5 (strict) → conflicting, straddled by 0.01', async () => {
    expect(await routeOf({ ...BASE, contradicts_premise: 0.51 })).toMatchObject({
      route: 'conflicting',
      rule: 'contradicts-premise',
    });
    expect(await routeOf({ ...BASE, contradicts_premise: 0.5 })).toMatchObject({ route: 'included' });
    expect(await routeOf({ ...BASE, contradicts_premise: 0.49 })).toMatchObject({ route: 'included' });
  });

  it('relevant < 0.3 (strict) → excluded, straddled by 0.01', async () => {
    expect(await routeOf({ ...BASE, relevant: 0.29 })).toMatchObject({ route: 'excluded', rule: 'relevance-floor' });
    expect(await routeOf({ ...BASE, relevant: 0.3 })).toMatchObject({ route: 'included' });
    expect(await routeOf({ ...BASE, relevant: 0.31 })).toMatchObject({ route: 'included' });
  });

  it('evidence ≥ 0.5 (inclusive) → included, otherwise the default route (excluded), straddled by 0.01', async () => {
    expect(await routeOf({ ...BASE, evidence: 0.51 })).toMatchObject({ route: 'included', rule: 'evidence' });
    expect(await routeOf({ ...BASE, evidence: 0.5 })).toMatchObject({ route: 'included', rule: 'evidence' });
    expect(await routeOf({ ...BASE, evidence: 0.49 })).toMatchObject({ route: 'excluded', rule: 'default' });
  });

  it('security first: an injected passage is excluded even if it also contradicts and has evidence', async () => {
    expect(await routeOf({ injection: 0.9, contradicts_premise: 0.9, relevant: 0.9, evidence: 0.9 })).toMatchObject({
      route: 'excluded',
      rule: 'injection',
    });
  });

  it('contradiction is checked before evidence and before the relevance floor', async () => {
    expect(await routeOf({ ...BASE, contradicts_premise: 0.8, evidence: 0.95 })).toMatchObject({
      route: 'conflicting',
    });
    expect(await routeOf({ ...BASE, contradicts_premise: 0.8, relevant: 0.1 })).toMatchObject({ route: 'conflicting' });
  });

  it('declares what a pair lacking a signal does: injection fails closed, contradiction and evidence skip', () => {
    expect(DEFAULT_ROUTING_RULES.map((r) => [r.name, r.whenMissing])).toEqual([
      ['injection', 'fail-closed'],
      ['contradicts-premise', 'skip'],
      ['relevance-floor', 'fail-closed'],
      ['evidence', 'skip'],
    ]);
  });

  it('a pair without injection fails closed: an unchecked passage never reads as safe', async () => {
    const { injection: _i, ...noInjection } = BASE;
    expect(await routeOf(noInjection)).toMatchObject({
      route: 'excluded',
      rule: 'fail-closed',
      reason: 'missing-signal',
    });
    // failOpen includes it, flagged with the reason.
    const gate = createGate({
      scorer: tableScorer({ p0: noInjection }),
      policy: { rules: DEFAULT_ROUTING_RULES, failOpen: true },
    });
    const r = await gate.filter('q', passages(1));
    expect(r.included.map((i) => [i.rule, i.reason])).toEqual([['fail-open', 'missing-signal']]);
  });

  it('a pair without contradicts_premise or evidence skips those rules and goes on', async () => {
    const { contradicts_premise: _c, ...noContradiction } = BASE;
    expect(await routeOf(noContradiction)).toMatchObject({ route: 'included', rule: 'evidence', reason: undefined });
    expect(await routeOf({ ...noContradiction, relevant: 0.1 })).toMatchObject({
      route: 'excluded',
      rule: 'relevance-floor',
    });
    const { evidence: _e, ...noEvidence } = BASE;
    // No evidence to include it: the default route, not a failure (and fallback-eligible).
    expect(await routeOf(noEvidence)).toMatchObject({ route: 'excluded', rule: 'default', reason: undefined });
    expect(await routeOf({ ...noEvidence, contradicts_premise: 0.9 })).toMatchObject({ route: 'conflicting' });
    // Relevance and injection only (no contradiction or evidence signal): the default route, which fallback may promote.
    expect(await routeOf({ injection: 0.1, relevant: 0.9 })).toMatchObject({ route: 'excluded', rule: 'default' });
    const gate = createGate({
      scorer: tableScorer({ p0: { injection: 0.1, relevant: 0.9 } }),
      policy: { rules: DEFAULT_ROUTING_RULES, minKept: 1 },
    });
    const r = await gate.filter('q', passages(1));
    expect(r.included.map((i) => i.rule)).toEqual(['fallback-top']);
  });

  it('a signal is only required when evaluation reaches its rule', async () => {
    const { relevant: _r, ...noRelevance } = BASE;
    const rules: RoutingRule[] = [
      { name: 'inj', when: { signal: 'injection', op: '>', value: 0.5 }, route: 'excluded' },
      { name: 'ev', when: { signal: 'evidence', op: '>=', value: 0.5 }, route: 'included' },
    ];
    const { evidence: _e, ...noEvidence } = BASE;
    expect(await routeOf({ ...noEvidence, injection: 0.9 }, rules)).toMatchObject({ route: 'excluded', rule: 'inj' });
    expect(await routeOf(noEvidence, rules)).toMatchObject({ rule: 'fail-closed', reason: 'missing-signal' });
    // The relevance signal itself is always required (it orders and gates every pair).
    expect(await routeOf(noRelevance, rules)).toMatchObject({ rule: 'fail-closed', reason: 'missing-signal' });
  });

  it('createDefaultRoutingRules moves the limits', async () => {
    const rules = createDefaultRoutingRules({
      injectionLimit: 0.2,
      contradictionLimit: 0.7,
      relevanceFloor: 0.5,
      evidenceLevel: 0.8,
    });
    expect(await routeOf({ ...BASE, injection: 0.21 }, rules)).toMatchObject({ rule: 'injection' });
    expect(await routeOf({ ...BASE, injection: 0.19, contradicts_premise: 0.69 }, rules)).toMatchObject({
      route: 'included',
    });
    expect(await routeOf({ ...BASE, injection: 0.19, relevant: 0.49 }, rules)).toMatchObject({
      rule: 'relevance-floor',
    });
    expect(await routeOf({ ...BASE, injection: 0.19, evidence: 0.79 }, rules)).toMatchObject({ rule: 'default' });
  });

  it('groups a mixed request and orders conflicting by relevance', async () => {
    const scorer = tableScorer({
      p0: { ...BASE, relevant: 0.6 },
      p1: { ...BASE, contradicts_premise: 0.7, relevant: 0.5 },
      p2: { ...BASE, injection: 0.99 },
      p3: { ...BASE, contradicts_premise: 0.7, relevant: 0.8 },
      p4: { ...BASE, relevant: 0.95 },
    });
    const r = await createGate({ scorer, policy: { rules: DEFAULT_ROUTING_RULES } }).filter('q', passages(5));
    expect(r.included.map((i) => i.id)).toEqual(['p4', 'p0']);
    expect(r.conflicting.map((i) => i.id)).toEqual(['p3', 'p1']);
    expect(r.excluded.map((i) => i.id)).toEqual(['p2']);
    expect(r.stats).toMatchObject({ passed: 2, returned: 2, conflicting: 2, excluded: 1 });
  });
});

describe('custom rules', () => {
  it('first match wins; each op straddled by 0.01', async () => {
    const cases: Array<[RoutingRule['when'], number, boolean]> = [
      [{ signal: 's', op: '>', value: 0.4 }, 0.41, true],
      [{ signal: 's', op: '>', value: 0.4 }, 0.4, false],
      [{ signal: 's', op: '>=', value: 0.4 }, 0.4, true],
      [{ signal: 's', op: '>=', value: 0.4 }, 0.39, false],
      [{ signal: 's', op: '<', value: 0.4 }, 0.39, true],
      [{ signal: 's', op: '<', value: 0.4 }, 0.4, false],
      [{ signal: 's', op: '<=', value: 0.4 }, 0.4, true],
      [{ signal: 's', op: '<=', value: 0.4 }, 0.41, false],
    ];
    for (const [when, s, matches] of cases) {
      const rules: RoutingRule[] = [
        { name: 'r1', when, route: 'conflicting' },
        { name: 'r2', when: { signal: 's', op: '>=', value: 0 }, route: 'included' },
      ];
      expect((await routeOf({ relevant: 0.5, s }, rules)).rule, `${when && JSON.stringify(when)} s=${s}`).toBe(
        matches ? 'r1' : 'r2',
      );
    }
  });

  it("value 'threshold' compares with the call's threshold", async () => {
    const rules: RoutingRule[] = [
      { name: 'ok', when: { signal: 'relevant', op: '>=', value: 'threshold' }, route: 'included' },
    ];
    const gate = createGate({ scorer: tableScorer({ p0: { relevant: 0.6 } }), policy: { rules, threshold: 0.61 } });
    expect((await gate.filter('q', passages(1))).included).toHaveLength(0);
    expect((await gate.filter('q', passages(1), { policy: { threshold: 0.6 } })).included).toHaveLength(1);
  });

  it('predicate rules get signals and context; a throwing predicate fails closed', async () => {
    const rules: RoutingRule[] = [{ name: 'pred', when: (s, ctx) => s.a! > ctx.relevance, route: 'included' }];
    expect(await routeOf({ relevant: 0.3, a: 0.4 }, rules)).toMatchObject({ rule: 'pred', route: 'included' });
    expect(await routeOf({ relevant: 0.5, a: 0.4 }, rules)).toMatchObject({ rule: 'default', route: 'excluded' });
    const throwing: RoutingRule[] = [
      {
        name: 'bad',
        when: () => {
          throw new Error('boom');
        },
        route: 'included',
      },
    ];
    expect(await routeOf({ relevant: 0.9 }, throwing)).toMatchObject({ route: 'excluded', reason: 'rule-error' });
  });

  it('defaultRoute is configurable', async () => {
    const gate = createGate({
      scorer: tableScorer({ p0: { relevant: 0.9 } }),
      policy: { rules: [], defaultRoute: 'included' },
    });
    const r = await gate.filter('q', passages(1));
    expect(r.included[0]).toMatchObject({ rule: 'default', route: 'included' });
  });

  it('fallback top only promotes fallback-eligible exclusions, never injection', async () => {
    const scorer = tableScorer({
      p0: { ...BASE, injection: 0.9, relevant: 0.99 },
      p1: { ...BASE, relevant: 0.2 },
      p2: { ...BASE, evidence: 0.1, relevant: 0.4 },
    });
    const r = await createGate({ scorer, policy: { rules: DEFAULT_ROUTING_RULES, minKept: 3 } }).filter(
      'q',
      passages(3),
    );
    expect(r.included.map((i) => [i.id, i.rule])).toEqual([
      ['p2', 'fallback-top'],
      ['p1', 'fallback-top'],
    ]);
    expect(r.excluded.map((i) => i.id)).toEqual(['p0']);
    expect(r.stats.fallbackTriggered).toBe(true);
  });

  it('rejects malformed rules naming the field', () => {
    const scorer = tableScorer({});
    expect(() =>
      createGate({
        scorer,
        policy: {
          rules: [
            {
              name: 'x',
              when: { signal: 's', op: '>', value: 0.5 },
              route: 'included',
              whenMissing: 'ignore' as never,
            },
          ],
        },
      }),
    ).toThrow(/rules\[0\]\.whenMissing/);
    expect(() =>
      createGate({
        scorer,
        policy: { rules: [{ name: 'x', when: () => true, route: 'included', whenMissing: 'skip' }] },
      }),
    ).toThrow(/rules\[0\]\.whenMissing: applies to condition rules only/);
    expect(() =>
      createGate({
        scorer,
        policy: { rules: [{ name: 'x', when: { signal: 's', op: '=>' as never, value: 0.5 }, route: 'included' }] },
      }),
    ).toThrow(/rules\[0\]\.when\.op/);
    expect(() =>
      createGate({
        scorer,
        policy: { rules: [{ name: 'x', when: { signal: 's', op: '>', value: 1.5 }, route: 'included' }] },
      }),
    ).toThrow(InvalidPolicyError);
    expect(() =>
      createGate({
        scorer,
        policy: { rules: [{ name: '', when: { signal: 's', op: '>', value: 0.5 }, route: 'included' }] },
      }),
    ).toThrow(/rules\[0\]\.name/);
    expect(() =>
      createGate({
        scorer,
        policy: { rules: [{ name: 'x', when: { signal: 's', op: '>', value: 0.5 }, route: 'kept' as never }] },
      }),
    ).toThrow(/rules\[0\]\.route/);
  });
});
