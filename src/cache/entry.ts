/**
 * What the cache stores per pair: the scorer's result (every signal it returned: probabilities,
 * raw values, tier) as an immutable copy, plus when it was scored. Also validates results that
 * come back from outside the process (Redis, snapshot files).
 */
import type { DetailedPairScore, ScorerPairResult, SignalProbabilities } from '../types.js';

export type CacheableResult = Exclude<ScorerPairResult, null>;

export interface CacheEntry {
  readonly result: CacheableResult;
  /** Date.now()-clock milliseconds at which the scorer produced the result. */
  readonly scoredAt: number;
}

/**
 * A frozen copy of `value` if it is a well-formed pair result (probabilities in [0, 1], finite raw
 * values, string tier), else undefined. The same rule applies to what a scorer returns and to what
 * comes back from Redis or a snapshot file: nothing the gate would refuse is ever stored. Copying drops fields outside the ScorerPairResult shape and makes the cached
 * object safe to hand to many callers: nobody can change another request's scores through it.
 */
export function toCacheableResult(value: unknown): CacheableResult | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const detailed = value as { probabilities?: unknown; raw?: unknown; tier?: unknown };
  if (detailed.probabilities !== undefined && typeof detailed.probabilities === 'object') {
    const probabilities = numberRecord(detailed.probabilities, true);
    if (probabilities === undefined) return undefined;
    let raw: Readonly<Record<string, number>> | undefined;
    if (detailed.raw !== undefined) {
      raw = numberRecord(detailed.raw, false);
      if (raw === undefined) return undefined;
    }
    if (detailed.tier !== undefined && typeof detailed.tier !== 'string') return undefined;
    const out: { probabilities: SignalProbabilities; raw?: Readonly<Record<string, number>>; tier?: string } = {
      probabilities,
    };
    if (raw !== undefined) out.raw = raw;
    if (detailed.tier !== undefined) out.tier = detailed.tier as string;
    return Object.freeze(out) as DetailedPairScore;
  }
  return numberRecord(value, true);
}

/** Whether `result` carries at least one of `signals` (an empty list accepts any result). */
export function hasAnySignal(result: CacheableResult, signals: readonly string[]): boolean {
  if (signals.length === 0) return true;
  const probabilities = (result as { probabilities?: unknown }).probabilities;
  const record = (typeof probabilities === 'object' && probabilities !== null ? probabilities : result) as Readonly<
    Record<string, number>
  >;
  for (const name of signals) if (Object.hasOwn(record, name)) return true;
  return false;
}

function numberRecord(value: unknown, probabilities: boolean): Readonly<Record<string, number>> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value))
    return undefined;
  const out: Record<string, number> = {};
  let count = 0;
  for (const name of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[name];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    if (probabilities && !(v >= 0 && v <= 1)) return undefined;
    out[name] = v;
    count++;
  }
  return count === 0 ? undefined : Object.freeze(out);
}
