/**
 * The limits and overrides of one postprocessNodes call: the postprocessor's own, merged with the
 * call's. Signals combine (either aborts), budgets and deadlines keep the smaller, the call's
 * policy is merged over the postprocessor's, so a per-request bound copy can only tighten.
 */
import type { GatePolicy } from '../../index.js';

/** Options of one call, merged over the postprocessor's own. */
export interface PostprocessOptions {
  /** Aborts scoring; the call rejects with the signal's reason. Combined with the postprocessor's signal. */
  readonly signal?: AbortSignal;
  /** Scoring budget in ms; pairs not scored in time are excluded (fail closed). The smaller one wins. */
  readonly budgetMs?: number;
  /** Absolute deadline (Date.now() ms). The earlier one wins. */
  readonly deadline?: number;
  /** Policy override for the call (merged over the gate's policy). */
  readonly policy?: GatePolicy;
  readonly queryClass?: string;
}

export const CALL_KEYS: ReadonlySet<string> = new Set(['signal', 'budgetMs', 'deadline', 'policy', 'queryClass']);

function combineSignals(a: AbortSignal | undefined, b: AbortSignal | undefined): AbortSignal | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return AbortSignal.any([a, b]);
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** `call` merged over `base`: also the gate's FilterOptions for the call (the same fields). */
export function mergeCallOptions(base: PostprocessOptions, call: PostprocessOptions): PostprocessOptions {
  const out: { -readonly [K in keyof PostprocessOptions]: PostprocessOptions[K] } = {};
  const signal = combineSignals(base.signal, call.signal);
  const budgetMs = minDefined(base.budgetMs, call.budgetMs);
  const deadline = minDefined(base.deadline, call.deadline);
  const policy = call.policy === undefined ? base.policy : { ...base.policy, ...call.policy };
  const queryClass = call.queryClass ?? base.queryClass;
  if (signal !== undefined) out.signal = signal;
  if (budgetMs !== undefined) out.budgetMs = budgetMs;
  if (deadline !== undefined) out.deadline = deadline;
  if (policy !== undefined) out.policy = policy;
  if (queryClass !== undefined) out.queryClass = queryClass;
  return out;
}
