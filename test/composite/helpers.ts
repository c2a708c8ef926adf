/**
 * Shared pieces of the composite tests: member scorers that answer from a deterministic function
 * of (query, passage, label) and record their calls, and the default routing rules written out
 * independently of the gate (the table in docs/gate.md) to check the gate's routes against.
 */
import type { Passage, Scorer, ScoreOptions, ScorerPairResult } from '../../src/index.js';
import { CONTRADICTS_PREMISE, EVIDENCE, INJECTION, RELEVANT } from '../../src/signals.js';

export interface MemberCall {
  readonly query: string;
  readonly ids: string[];
  readonly options: ScoreOptions | undefined;
}

export interface FakeMember extends Scorer {
  readonly signals: readonly string[];
  readonly calls: MemberCall[];
}

/** FNV-1a of a string → [0, 1): a stable, spread "probability" per (query, passage, label). */
export function pseudoProbability(...parts: string[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join('\u0000')) {
    h ^= ch.codePointAt(0) as number;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return (h % 10_007) / 10_007;
}

/** The logit whose sigmoid is p (the raw value a fake reports). */
export function logitOf(p: number): number {
  const q = Math.min(Math.max(p, 1e-9), 1 - 1e-9);
  return Math.log(q / (1 - q));
}

export interface FakeMemberOptions {
  /** Called before answering; may throw, wait, or hang. */
  readonly before?: (call: MemberCall) => Promise<void> | void;
  /** Answers for one pair (default: detailed record with every label). */
  readonly answer?: (query: string, passage: Passage, labels: readonly string[]) => ScorerPairResult;
  readonly metadataKeys?: readonly string[];
}

/** A member with `labels`, answering pseudoProbability(id, query, passage id + text, label) for each. */
export function fakeMember(id: string, labels: readonly string[], options: FakeMemberOptions = {}): FakeMember {
  const calls: MemberCall[] = [];
  const answer =
    options.answer ??
    ((query: string, passage: Passage, ls: readonly string[]): ScorerPairResult => {
      const probabilities: Record<string, number> = {};
      const raw: Record<string, number> = {};
      for (const label of ls) {
        const p = pseudoProbability(id, query, passage.id, passage.text, label);
        probabilities[label] = p;
        raw[label] = logitOf(p);
      }
      return { probabilities, raw, tier: `fake-${id}` };
    });
  return {
    id,
    signals: Object.freeze([...labels]),
    calls,
    ...(options.metadataKeys === undefined ? {} : { metadataKeys: options.metadataKeys }),
    async score(query, passages, scoreOptions) {
      const call = { query, ids: passages.map((p) => p.id), options: scoreOptions };
      calls.push(call);
      await options.before?.(call);
      return passages.map((p) => answer(query, p, labels));
    },
  };
}

/** The value fakeMember(id, …) gives for a label of a pair. */
export function fakeValue(id: string, query: string, passage: Passage, label: string): number {
  return pseudoProbability(id, query, passage.id, passage.text, label);
}

export const NLI_LABELS = ['CONTRADICTION', 'NEUTRAL', 'ENTAILMENT'] as const;
export const INJECTION_LABELS = ['safe', 'prompt_injection'] as const;

export type ProductSignals = Partial<Record<string, number>>;

export interface ExpectedDecision {
  readonly route: 'included' | 'conflicting' | 'excluded';
  readonly rule: string;
}

/**
 * The default routing rules (docs/gate.md), written out by hand: relevance is required first; then
 * injection > 0.5 → excluded (missing: fail closed); contradicts_premise > 0.5 → conflicting
 * (missing: skip); relevant < 0.3 → excluded; evidence ≥ 0.5 → included (missing: skip); else excluded.
 */
export function expectedDefaultDecision(s: ProductSignals): ExpectedDecision {
  const relevant = s[RELEVANT];
  if (relevant === undefined) return { route: 'excluded', rule: 'fail-closed' };
  const injection = s[INJECTION];
  if (injection === undefined) return { route: 'excluded', rule: 'fail-closed' };
  if (injection > 0.5) return { route: 'excluded', rule: 'injection' };
  const contradiction = s[CONTRADICTS_PREMISE];
  if (contradiction !== undefined && contradiction > 0.5) return { route: 'conflicting', rule: 'contradicts-premise' };
  if (relevant < 0.3) return { route: 'excluded', rule: 'relevance-floor' };
  const evidence = s[EVIDENCE];
  if (evidence !== undefined && evidence >= 0.5) return { route: 'included', rule: 'evidence' };
  return { route: 'excluded', rule: 'default' };
}

/** Whether any value is within `eps` of a default rule boundary (a route there may flip on float noise). */
export function nearBoundary(s: ProductSignals, eps = 1e-4): boolean {
  const limits: Array<[string, number]> = [
    [INJECTION, 0.5],
    [CONTRADICTS_PREMISE, 0.5],
    [RELEVANT, 0.3],
    [EVIDENCE, 0.5],
  ];
  return limits.some(([name, limit]) => s[name] !== undefined && Math.abs((s[name] as number) - limit) < eps);
}

export function passagesOf(texts: readonly string[], prefix = 'p'): Passage[] {
  return texts.map((text, i) => ({ id: `${prefix}${i}`, text }));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
