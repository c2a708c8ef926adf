import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  createGate,
  DEFAULT_ROUTING_RULES,
  InvalidPolicyError,
  loadFastPathScorer,
  type Passage,
  type RoutingRule,
  type Scorer,
  type ScorerPairResult,
} from '../../src/index.js';
import { passages, tableScorer } from './helpers.js';

const request = JSON.parse(readFileSync(new URL('../../examples/request.json', import.meta.url), 'utf8')) as {
  query: string;
  passages: Passage[];
};

/** A scorer that declares `signals` and answers from a table by passage id. */
function declaring(signals: readonly string[], table: Record<string, ScorerPairResult> = {}): Scorer {
  return { ...tableScorer(table, 'declaring-model'), signals };
}

describe('rules against the signals a scorer declares', () => {
  it('a rule on a signal the scorer does not produce is a configuration error naming rule, signal and signals', () => {
    const scorer = declaring(['relevant']);
    let error: unknown;
    try {
      createGate({ scorer, policy: { rules: DEFAULT_ROUTING_RULES } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidPolicyError);
    expect((error as InvalidPolicyError).field).toBe('rules[0]');
    expect((error as Error).message).toBe(
      'policy.rules[0]: rule "injection" reads signal "injection", which scorer "declaring-model" does not produce (its signals: "relevant")',
    );
    // 'skip' rules too: a rule that can never fire is a mistake, not a no-op.
    const evidenceOnly: RoutingRule[] = [
      { name: 'evidence', when: { signal: 'evidence', op: '>=', value: 0.5 }, route: 'included', whenMissing: 'skip' },
    ];
    expect(() => createGate({ scorer, policy: { rules: evidenceOnly } })).toThrow(
      /rule "evidence" reads signal "evidence"/,
    );
  });

  it('rules on declared signals, and predicate rules, are accepted', async () => {
    const scorer = declaring(['relevant', 'injection'], {
      p0: { relevant: 0.9, injection: 0.1 },
      p1: { relevant: 0.9, injection: 0.8 },
    });
    const rules: RoutingRule[] = [
      { name: 'injection', when: { signal: 'injection', op: '>', value: 0.5 }, route: 'excluded' },
      { name: 'custom', when: (s) => (s.other ?? 0) > 0.5, route: 'conflicting' },
      { name: 'floor', when: { signal: 'relevant', op: '>=', value: 0.5 }, route: 'included' },
    ];
    const r = await createGate({ scorer, policy: { rules } }).filter('q', passages(2));
    expect(r.included.map((i) => [i.id, i.rule])).toEqual([['p0', 'floor']]);
    expect(r.excluded.map((i) => [i.id, i.rule])).toEqual([['p1', 'injection']]);
  });

  it('relevanceSignal must name at least one declared signal', () => {
    const scorer = declaring(['relevant']);
    expect(() => createGate({ scorer, policy: { relevanceSignal: 'score' } })).toThrow(
      'policy.relevanceSignal: reads "score", which scorer "declaring-model" does not produce (its signals: "relevant")',
    );
    expect(() => createGate({ scorer, policy: { relevanceSignal: ['score', 'relevant'] } })).not.toThrow();
    // The default relevance signal is checked too: a scorer that never produces it cannot be gated by default.
    expect(() => createGate({ scorer: declaring(['score']) })).toThrow(/policy\.relevanceSignal: reads "relevant"/);
    expect(() => createGate({ scorer: declaring(['score']), policy: { relevanceSignal: 'score' } })).not.toThrow();
  });

  it('per-call policy overrides are checked the same way (the call is refused, the gate keeps working)', async () => {
    const scorer = declaring(['relevant'], { p0: { relevant: 0.9 } });
    const gate = createGate({ scorer });
    await expect(gate.filter('q', passages(1), { policy: { rules: DEFAULT_ROUTING_RULES } })).rejects.toThrow(
      InvalidPolicyError,
    );
    await expect(gate.filter('q', passages(1), { policy: { relevanceSignal: 'evidence' } })).rejects.toThrow(
      /relevanceSignal/,
    );
    const ok = await gate.filter('q', passages(1));
    expect(ok.included.map((i) => i.id)).toEqual(['p0']);
    const previous = await gate.filter('q', passages(1));
    expect(() => gate.reroute(previous, { rules: DEFAULT_ROUTING_RULES })).toThrow(InvalidPolicyError);
  });

  it('a scorer that declares nothing is not checked at createGate; missing signals are handled per pair', async () => {
    const scorer = tableScorer({ p0: { relevant: 0.9 } });
    const r = await createGate({ scorer, policy: { rules: DEFAULT_ROUTING_RULES } }).filter('q', passages(1));
    expect(r.excluded.map((i) => [i.rule, i.reason])).toEqual([['fail-closed', 'missing-signal']]);
  });
});

describe('pairs degraded to a tier without a signal (run time)', () => {
  // A router declares the union of its tiers' signals; a pair it degraded carries only the fallback tier's.
  const full = { relevant: 0.9, injection: 0.05, contradicts_premise: 0.05, evidence: 0.9 };
  const degraded = { relevant: 0.9 };
  const scorer = declaring(['relevant', 'injection', 'contradicts_premise', 'evidence'], {
    p0: { probabilities: full, tier: 'cross-encoder' },
    p1: { probabilities: degraded, tier: 'fast-path' },
  });

  it('the default rules fail a degraded pair closed on injection, and say why', async () => {
    const r = await createGate({ scorer, policy: { rules: DEFAULT_ROUTING_RULES } }).filter('q', passages(2));
    expect(r.included.map((i) => [i.id, i.rule])).toEqual([['p0', 'evidence']]);
    expect(r.excluded.map((i) => [i.id, i.rule, i.reason, i.tier])).toEqual([
      ['p1', 'fail-closed', 'missing-signal', 'fast-path'],
    ]);
    expect(r.stats.unscoredByReason).toEqual({ 'missing-signal': 1 });
  });

  it("rules without an injection check route a degraded pair on, skipping 'skip' rules", async () => {
    const rules = DEFAULT_ROUTING_RULES.filter((rule) => rule.name !== 'injection');
    const r = await createGate({ scorer, policy: { rules, defaultRoute: 'included' } }).filter('q', passages(2));
    expect(r.included.map((i) => [i.id, i.rule, i.reason])).toEqual([
      ['p0', 'evidence', undefined],
      ['p1', 'default', undefined],
    ]);
    // A fail-closed custom rule (the default) still fails it.
    const strict: RoutingRule[] = [
      { name: 'needs-evidence', when: { signal: 'evidence', op: '<', value: 0.5 }, route: 'excluded' },
    ];
    const s = await createGate({ scorer, policy: { rules: strict, defaultRoute: 'included' } }).filter(
      'q',
      passages(2),
    );
    expect(s.excluded.map((i) => [i.id, i.rule, i.reason])).toEqual([['p1', 'fail-closed', 'missing-signal']]);
  });
});

describe('the shipped fast-path model with the default policy', () => {
  it('declares `relevant` and `ranking` only and excludes nothing for a missing signal', async () => {
    const scorer = await loadFastPathScorer();
    expect(scorer.signals).toEqual(['relevant', 'ranking']);
    const r = await createGate({ scorer }).filter(request.query, request.passages);
    const items = [...r.included, ...r.conflicting, ...r.excluded];
    expect(items).toHaveLength(request.passages.length);
    expect(items.filter((i) => i.reason !== undefined)).toEqual([]);
    expect(r.stats.unscored).toBe(0);
    expect(r.stats.scored).toBe(request.passages.length);
    expect(r.included.length).toBeGreaterThan(0);
    // The default rules need signals this model does not have: refused up front, not 20 silent exclusions.
    expect(() => createGate({ scorer, policy: { rules: DEFAULT_ROUTING_RULES } })).toThrow(
      /rule "injection" reads signal "injection", which scorer "fastpath\/.+" does not produce \(its signals: "relevant", "ranking"\)/,
    );
  });
});
