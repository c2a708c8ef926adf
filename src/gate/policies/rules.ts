/**
 * Multi-signal routing: an ordered rule list, first match wins, then the default route.
 * Compiled once per policy into flat arrays so evaluating a pair allocates nothing.
 */
import type { SignalProbabilities } from '../../types.js';
import { InvalidPolicyError } from '../errors.js';
import { CONTRADICTS_PREMISE, EVIDENCE, INJECTION, RELEVANT } from '../../signals.js';
import type { Comparison, MissingSignalBehaviour, Route, RoutingRule, RulePredicate, RuleContext } from '../types.js';

export interface DefaultRoutingLimits {
  /** injection > limit → excluded (strict). Default 0.5. */
  readonly injectionLimit?: number;
  /** contradicts_premise > limit → conflicting (strict). Default 0.5. */
  readonly contradictionLimit?: number;
  /** relevant < floor → excluded (strict; fallback-eligible). Default 0.3. */
  readonly relevanceFloor?: number;
  /** evidence ≥ level → included (inclusive). Default 0.5. */
  readonly evidenceLevel?: number;
}

/**
 * The default rule set, in evaluation order. Security first (an injected passage is never
 * shown, whatever else it says); premise contradiction before evidence (a passage that denies
 * the premise usually also states usable facts, so it must be flagged, not silently included).
 * Pairs matching none go to the default route ('excluded').
 *
 * A pair lacking a signal (degraded to a tier that does not produce it): `injection` and the
 * relevance floor fail it closed (an unchecked passage must not read as safe, an unknown
 * relevance must not read as relevant); `contradicts-premise` and `evidence` are skipped (a
 * missing flag or a missing bonus changes nothing, so the pair goes on to the next rule).
 */
export function createDefaultRoutingRules(limits: DefaultRoutingLimits = {}): readonly RoutingRule[] {
  return Object.freeze([
    Object.freeze({
      name: 'injection',
      when: Object.freeze({ signal: INJECTION, op: '>', value: limits.injectionLimit ?? 0.5 }),
      route: 'excluded',
      whenMissing: 'fail-closed',
    }),
    Object.freeze({
      name: 'contradicts-premise',
      when: Object.freeze({ signal: CONTRADICTS_PREMISE, op: '>', value: limits.contradictionLimit ?? 0.5 }),
      route: 'conflicting',
      whenMissing: 'skip',
    }),
    Object.freeze({
      name: 'relevance-floor',
      when: Object.freeze({ signal: RELEVANT, op: '<', value: limits.relevanceFloor ?? 0.3 }),
      route: 'excluded',
      fallbackEligible: true,
      whenMissing: 'fail-closed',
    }),
    Object.freeze({
      name: 'evidence',
      when: Object.freeze({ signal: EVIDENCE, op: '>=', value: limits.evidenceLevel ?? 0.5 }),
      route: 'included',
      whenMissing: 'skip',
    }),
  ] as RoutingRule[]);
}

export const DEFAULT_ROUTING_RULES: readonly RoutingRule[] = createDefaultRoutingRules();

const OP_GT = 0;
const OP_GE = 1;
const OP_LT = 2;
const OP_LE = 3;
const OPS: Readonly<Record<Comparison, number>> = { '>': OP_GT, '>=': OP_GE, '<': OP_LT, '<=': OP_LE };
const ROUTES: ReadonlySet<string> = new Set<Route>(['included', 'conflicting', 'excluded']);

export interface CompiledRules {
  readonly count: number;
  readonly names: readonly string[];
  /** Signal name per rule ('' for predicates). */
  readonly signals: readonly string[];
  readonly ops: Int8Array;
  /** Comparison value; NaN means "the call's threshold". */
  readonly values: Float64Array;
  readonly predicates: ReadonlyArray<RulePredicate | undefined>;
  readonly routes: readonly Route[];
  readonly fallbackEligible: readonly boolean[];
  /** 1 where a pair lacking the rule's signal skips the rule, 0 where it fails closed. */
  readonly skipWhenMissing: Uint8Array;
}

export function isRoute(value: unknown): value is Route {
  return typeof value === 'string' && ROUTES.has(value);
}

export function compileRules(rules: readonly RoutingRule[]): CompiledRules {
  if (!Array.isArray(rules)) throw new InvalidPolicyError('rules', 'must be an array of rules');
  const n = rules.length;
  const names: string[] = [];
  const signals: string[] = [];
  const ops = new Int8Array(n);
  const values = new Float64Array(n);
  const predicates: (RulePredicate | undefined)[] = [];
  const routes: Route[] = [];
  const eligible: boolean[] = [];
  const skipWhenMissing = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const rule = rules[i] as RoutingRule | undefined;
    const field = `rules[${i}]`;
    if (typeof rule !== 'object' || rule === null) throw new InvalidPolicyError(field, 'must be an object');
    if (typeof rule.name !== 'string' || rule.name.length === 0)
      throw new InvalidPolicyError(`${field}.name`, 'must be a non-empty string');
    if (!isRoute(rule.route))
      throw new InvalidPolicyError(
        `${field}.route`,
        `must be 'included', 'conflicting' or 'excluded', got ${String(rule.route)}`,
      );
    if (rule.fallbackEligible !== undefined && typeof rule.fallbackEligible !== 'boolean')
      throw new InvalidPolicyError(`${field}.fallbackEligible`, 'must be a boolean');
    const whenMissing = rule.whenMissing as MissingSignalBehaviour | undefined;
    if (whenMissing !== undefined && whenMissing !== 'fail-closed' && whenMissing !== 'skip')
      throw new InvalidPolicyError(
        `${field}.whenMissing`,
        `must be 'fail-closed' or 'skip', got ${JSON.stringify(whenMissing)}`,
      );
    names.push(rule.name);
    routes.push(rule.route);
    eligible.push(rule.fallbackEligible === true);
    skipWhenMissing[i] = whenMissing === 'skip' ? 1 : 0;
    const when = rule.when;
    if (typeof when === 'function') {
      if (whenMissing !== undefined)
        throw new InvalidPolicyError(
          `${field}.whenMissing`,
          'applies to condition rules only (a predicate handles a missing signal itself)',
        );
      signals.push('');
      predicates.push(when);
      ops[i] = -1;
      continue;
    }
    if (typeof when !== 'object' || when === null)
      throw new InvalidPolicyError(
        `${field}.when`,
        'must be a condition { signal, op, value } or a predicate function',
      );
    if (typeof when.signal !== 'string' || when.signal.length === 0)
      throw new InvalidPolicyError(`${field}.when.signal`, 'must be a non-empty string');
    const op = OPS[when.op as Comparison];
    if (op === undefined || !Object.hasOwn(OPS, when.op))
      throw new InvalidPolicyError(`${field}.when.op`, `must be one of > >= < <=, got ${String(when.op)}`);
    if (when.value === 'threshold') values[i] = Number.NaN;
    else if (typeof when.value === 'number' && when.value >= 0 && when.value <= 1) values[i] = when.value;
    else
      throw new InvalidPolicyError(
        `${field}.when.value`,
        `must be a number in [0, 1] or 'threshold', got ${String(when.value)}`,
      );
    signals.push(when.signal);
    predicates.push(undefined);
    ops[i] = op;
  }
  return { count: n, names, signals, ops, values, predicates, routes, fallbackEligible: eligible, skipWhenMissing };
}

/**
 * Refuses rules that read a signal the scorer never produces (when it declares `signals`): such a
 * rule would fail every pair closed, or never fire. Predicate rules are not checked (what they read
 * is not declared).
 */
export function assertRulesReadDeclaredSignals(
  rules: CompiledRules,
  scorer: { readonly id: string; readonly signals?: readonly string[] },
): void {
  const declared = scorer.signals;
  if (declared === undefined) return;
  for (let i = 0; i < rules.count; i++) {
    const signal = rules.signals[i];
    if (signal === '' || declared.includes(signal)) continue;
    throw new InvalidPolicyError(
      `rules[${i}]`,
      `rule ${JSON.stringify(rules.names[i])} reads signal ${JSON.stringify(signal)}, which scorer ${JSON.stringify(scorer.id)} does not produce (its signals: ${declared.map((s) => JSON.stringify(s)).join(', ') || 'none'})`,
    );
  }
}

/** Outcome codes of evaluateRules beyond a rule index. */
export const NO_RULE_MATCHED = -1;
export const RULE_MISSING_SIGNAL = -2;
export const RULE_THREW = -3;

/**
 * Index of the first matching rule, NO_RULE_MATCHED, or a failure code. A pair lacking a rule's
 * signal skips the rule when it says `whenMissing: 'skip'`, and otherwise fails closed
 * (RULE_MISSING_SIGNAL): a missing injection score must not read as "safe".
 */
export function evaluateRules(
  rules: CompiledRules,
  signals: SignalProbabilities,
  threshold: number,
  relevance: number,
): number {
  for (let i = 0; i < rules.count; i++) {
    const op = rules.ops[i];
    if (op < 0) {
      let matched: boolean;
      try {
        const context: RuleContext = { threshold, relevance };
        matched = (rules.predicates[i] as RulePredicate)(signals, context) === true;
      } catch {
        return RULE_THREW;
      }
      if (matched) return i;
      continue;
    }
    const v = signals[rules.signals[i]];
    if (v === undefined) {
      if (rules.skipWhenMissing[i] === 1) continue;
      return RULE_MISSING_SIGNAL;
    }
    let limit = rules.values[i];
    if (Number.isNaN(limit)) limit = threshold;
    if (op === OP_GT ? v > limit : op === OP_GE ? v >= limit : op === OP_LT ? v < limit : v <= limit) return i;
  }
  return NO_RULE_MATCHED;
}
